"""CUDA random fills: the counter-based generator of ``backends/rng.py`` on the GPU.

Number ``k`` of a random stream is a pure function of ``(seed, offset + k)``
(see :mod:`minitorch.backends.rng`), so any thread can compute any element.
The kernels below run the shared bodies that the CPU runs
(``cpu/random.py``), with one thread per element (per pair for
``fill_normal``, per row for ``multinomial``): the GPU gives **the same
numbers as the CPU** for the same seed.  The Fisher-Yates shuffle of
``randperm`` is sequential by nature and runs on a single GPU thread.
"""

import numpy as np
from numba import cuda

from .bodies import rng
from .launch import kernel


@kernel
def fill_uniform(out, seed, offset, low, high):
    """``out[i] = low + (high - low) * u_i``; counter ``offset + i`` (``rng.uniform_value``)."""
    lo = np.float64(low)
    width = np.float64(high) - lo
    use_24_bits = out.itemsize == 4
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[i] = rng.uniform_value(seed, offset, i, lo, width, use_24_bits)


@kernel
def fill_normal(out, seed, offset, mean, std):
    """Box-Muller, one thread per pair; pair ``j`` uses counters ``offset + 2j`` and ``+ 2j + 1``."""
    n = out.shape[0]
    mu = np.float64(mean)
    sigma = np.float64(std)
    for pair in range(cuda.grid(1), (n + 1) // 2, cuda.gridsize(1)):
        i = 2 * pair
        z0, z1 = rng.normal_pair(seed, offset, i)
        out[i] = mu + sigma * z0
        if i + 1 < n:
            out[i + 1] = mu + sigma * z1


@kernel
def fill_randint(out, seed, offset, low, high):
    """``out[i]`` uniform in ``[low, high)`` (int64), exactly unbiased."""
    lo = np.uint64(np.int64(low))
    span = np.uint64(np.int64(high)) - lo
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[i] = rng.randint_value(seed, offset, i, lo, span)


@kernel
def fill_bernoulli(out, probs, seed, offset):
    """``out[i] = u_i < probs[i]``."""
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[i] = rng.bernoulli_value(seed, offset, i, probs[i])


@kernel
def fill_bernoulli_scalar(out, p, seed, offset):
    """``out[i] = u_i < p``."""
    prob = np.float64(p)
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[i] = rng.bernoulli_value(seed, offset, i, prob)


@kernel
def randperm(out, seed, offset):
    """Fisher-Yates (``rng.shuffle``) on one thread."""
    if cuda.grid(1) == 0:
        rng.shuffle(out, seed, offset)


@kernel
def multinomial(probs, num_samples, replacement, out, seed, offset, scratch, order, order_tmp):
    """One thread per row; the draws of the CPU (``rng.multinomial_row``).

    ``scratch`` (float64) and ``order``/``order_tmp`` (int64) hold a work row
    per row of ``probs`` (``order`` and ``order_tmp`` have rows of length 0
    with replacement), since a GPU thread cannot allocate memory.
    """
    k = probs.shape[1]
    per_row = num_samples if replacement else k
    for r in range(cuda.grid(1), probs.shape[0], cuda.gridsize(1)):
        rng.multinomial_row(probs[r], num_samples, replacement, out[r], seed,
                            rng.multinomial_first_counter(offset, r, per_row), scratch[r],
                            order[r], order_tmp[r])

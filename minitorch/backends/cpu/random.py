"""CPU random fills: loops around the counter-based generator of ``backends/rng.py``.

Number ``k`` of a random stream is a pure function of ``(seed, offset + k)``
(see :mod:`minitorch.backends.rng` for the design), so element ``i`` of a
fill can be computed on its own.  Each kernel here is a serial loop over
the elements of a preallocated, contiguous ``out`` that calls the shared
body for one element; the GPU runs the same bodies (``cuda/random.py``), so
both devices give the same numbers for the same seed.

Because element ``i`` depends only on counter ``offset + i``, a slice
``out[s:e]`` filled with offset ``offset + s`` gets exactly the numbers the
whole fill would put there, so the ``*_parallel`` drivers just fill chunks
of ``CHUNK`` elements on different threads.  The backend uses a driver only
for large fills on more than one thread (see
:mod:`minitorch.backends.cpu.elementwise`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .bodies import rng

# Elements per parallel task (even, so that fill_normal's pairs never straddle
# two chunks).
CHUNK = 16384

# The fills use NumPy's error model, as they did inside a prange loop: no
# zero test (and ZeroDivisionError) before a division, which would keep
# LLVM from vectorising the loops.
_JIT = dict(cache=True, error_model="numpy")
_PARALLEL = dict(parallel=True, **_JIT)


@njit(**_JIT)
def fill_uniform(out, seed, offset, low, high):
    """``out[i] = low + (high - low) * u_i``, ``u_i`` uniform in [0, 1) (``rng.uniform_value``).

    ``out`` is float32 (24 random bits per value) or float64 (53 bits).
    Consumes ``len(out)`` counters.
    """
    lo = np.float64(low)
    width = np.float64(high) - lo
    use_24_bits = out.itemsize == 4       # float32 output
    for i in range(out.shape[0]):
        out[i] = rng.uniform_value(seed, offset, i, lo, width, use_24_bits)


@njit(**_JIT)
def fill_normal(out, seed, offset, mean, std):
    """``out[i] = mean + std * z_i``, ``z_i`` standard normal, a pair at a time (Box–Muller).

    Consumes ``rng.normal_counters(len(out))`` counters (with odd ``n`` the last
    pair's second value is thrown away); see ``rng.normal_pair``.
    """
    n = out.shape[0]
    mu = np.float64(mean)
    sigma = np.float64(std)
    for pair in range((n + 1) // 2):
        i = 2 * pair
        z0, z1 = rng.normal_pair(seed, offset, i)
        out[i] = mu + sigma * z0
        if i + 1 < n:
            out[i + 1] = mu + sigma * z1


@njit(**_JIT)
def fill_randint(out, seed, offset, low, high):
    """``out[i]`` uniform in the integers ``[low, high)`` (int64; the caller checks ``low < high``).

    Consumes ``len(out)`` counters.
    """
    lo = np.uint64(np.int64(low))
    span = np.uint64(np.int64(high)) - lo
    for i in range(out.shape[0]):
        out[i] = rng.randint_value(seed, offset, i, lo, span)


@njit(**_JIT)
def fill_bernoulli(out, probs, seed, offset):
    """``out[i] = u_i < probs[i]``: True with probability ``probs[i]``.  ``len(out)`` counters."""
    for i in range(out.shape[0]):
        out[i] = rng.bernoulli_value(seed, offset, i, probs[i])


@njit(**_JIT)
def fill_bernoulli_scalar(out, p, seed, offset):
    """``out[i] = u_i < p``: each True with the same probability ``p``.  ``len(out)`` counters."""
    prob = np.float64(p)
    for i in range(out.shape[0]):
        out[i] = rng.bernoulli_value(seed, offset, i, prob)


@njit(inline='always', cache=True)
def _chunk(n, c):
    """Start and end of chunk ``c`` of ``n`` elements, and the start as a uint64."""
    s = c * CHUNK
    return s, min(n, s + CHUNK), np.uint64(s)


@njit(**_PARALLEL)
def fill_uniform_parallel(out, seed, offset, low, high):
    n = out.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        s, e, us = _chunk(n, c)
        fill_uniform(out[s:e], seed, np.uint64(offset) + us, low, high)


@njit(**_PARALLEL)
def fill_normal_parallel(out, seed, offset, mean, std):
    n = out.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        s, e, us = _chunk(n, c)
        fill_normal(out[s:e], seed, np.uint64(offset) + us, mean, std)


@njit(**_PARALLEL)
def fill_randint_parallel(out, seed, offset, low, high):
    n = out.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        s, e, us = _chunk(n, c)
        fill_randint(out[s:e], seed, np.uint64(offset) + us, low, high)


@njit(**_PARALLEL)
def fill_bernoulli_parallel(out, probs, seed, offset):
    n = out.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        s, e, us = _chunk(n, c)
        fill_bernoulli(out[s:e], probs[s:e], seed, np.uint64(offset) + us)


@njit(**_PARALLEL)
def fill_bernoulli_scalar_parallel(out, p, seed, offset):
    n = out.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        s, e, us = _chunk(n, c)
        fill_bernoulli_scalar(out[s:e], p, seed, np.uint64(offset) + us)


@njit(cache=True)
def randperm(out, seed, offset):
    """A uniformly random permutation of ``0 .. n-1`` into int64 ``out`` (``rng.shuffle``).

    Consumes ``len(out)`` counters.
    """
    rng.shuffle(out, seed, offset)


@njit(parallel=True, cache=True)
def multinomial(probs, num_samples, replacement, out, seed, offset):
    """Draw ``num_samples`` category indices per row of ``probs`` into ``out``.

    ``probs`` is a contiguous float64 array ``(rows, k)`` of non-negative
    weights, ``out`` an int64 array ``(rows, num_samples)``.  Rows are
    independent and run in parallel, each with its own work rows (see
    ``rng.multinomial_row``).  Consumes
    ``rng.multinomial_counters(rows, k, num_samples, replacement)`` counters.
    """
    rows = probs.shape[0]
    k = probs.shape[1]
    per_row = num_samples if replacement else k
    for r in prange(rows):
        scratch = np.empty(k, np.float64)
        m = 0 if replacement else k
        order = np.empty(m, np.int64)
        order_tmp = np.empty(m, np.int64)
        rng.multinomial_row(probs[r], num_samples, replacement, out[r], seed,
                            rng.multinomial_first_counter(offset, r, per_row), scratch, order,
                            order_tmp)

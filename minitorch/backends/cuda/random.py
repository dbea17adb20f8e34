"""CUDA random fills: the CPU's counter-based generator, compiled for the GPU.

Number ``k`` of a random stream is a pure function of ``(seed, offset + k)``
(see ``cpu/random.py`` for the design), so any thread can compute any
element and the GPU gives **the same numbers as the CPU** for the same seed.
To guarantee that, the hash is not rewritten here: the helpers of
``cpu/random.py`` (``mix64``, ``random_bits``, ``bits_to_float32``,
``random_below``, ...) are compiled a second time from their own Python code
objects, for the GPU (:func:`~minitorch.backends.cuda.launch.device_function`).
They share one namespace in which each name already compiled is replaced
by its GPU version, so ``random_bits`` calls the GPU ``mix64``.

The kernels below mirror the CPU kernels one for one, with one thread per
element (per pair for ``fill_normal``, per row for ``multinomial``).  The
Fisher-Yates shuffle of ``randperm`` is sequential by nature and runs on a
single GPU thread.
"""

import math

import numpy as np
from numba import cuda

from ..cpu import random as rk
from .launch import device_function

# Numba's disk cache checks only this file's text, not cpu/random.py, whose
# helpers are compiled into the kernels below: this is that file's hash
# (checked by tests/test_cuda.py).
CPU_RANDOM_SHA256 = "93bb57d3d96a8eb0a54a6871629ba85234fa651ba0094ffc5e0154199702747a"

_namespace = dict(vars(rk))
for _name in ("mix64", "random_bits", "counter_at", "bits_to_float64", "bits_to_float32",
              "bits_to_open_float64", "mulhi64", "random_below"):
    _namespace[_name] = device_function(getattr(rk, _name), _namespace)

random_bits = _namespace["random_bits"]
counter_at = _namespace["counter_at"]
bits_to_float64 = _namespace["bits_to_float64"]
bits_to_float32 = _namespace["bits_to_float32"]
bits_to_open_float64 = _namespace["bits_to_open_float64"]
random_below = _namespace["random_below"]

_TWO_PI = 2.0 * math.pi


@cuda.jit(cache=True)
def fill_uniform(out, seed, offset, low, high):
    """``out[i] = low + (high - low) * u_i``; counter ``offset + i`` (as ``rk.fill_uniform``)."""
    n = out.shape[0]
    lo = np.float64(low)
    width = np.float64(high) - lo
    use_24_bits = out.itemsize == 4
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        bits = random_bits(seed, counter_at(offset, i))
        if use_24_bits:
            u = np.float64(bits_to_float32(bits))
        else:
            u = bits_to_float64(bits)
        out[i] = lo + width * u


@cuda.jit(cache=True)
def fill_normal(out, seed, offset, mean, std):
    """Box-Muller; output pair ``j`` uses counters ``offset + 2j`` and ``+ 2j + 1``."""
    n = out.shape[0]
    mu = np.float64(mean)
    sigma = np.float64(std)
    for pair in range(cuda.grid(1), (n + 1) // 2, cuda.gridsize(1)):
        i = 2 * pair
        u1 = bits_to_open_float64(random_bits(seed, counter_at(offset, i)))
        u2 = bits_to_float64(random_bits(seed, counter_at(offset, i + 1)))
        r = math.sqrt(-2.0 * math.log(u1))
        theta = _TWO_PI * u2
        out[i] = mu + sigma * (r * math.cos(theta))
        if i + 1 < n:
            out[i + 1] = mu + sigma * (r * math.sin(theta))


@cuda.jit(cache=True)
def fill_randint(out, seed, offset, low, high):
    """``out[i]`` uniform in ``[low, high)`` (int64), exactly unbiased."""
    n = out.shape[0]
    lo = np.uint64(np.int64(low))
    span = np.uint64(np.int64(high)) - lo
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        r = random_below(seed, counter_at(offset, i), span)
        out[i] = np.int64(lo + r)


@cuda.jit(cache=True)
def fill_bernoulli(out, probs, seed, offset):
    """``out[i] = u_i < probs[i]``."""
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        u = bits_to_float64(random_bits(seed, counter_at(offset, i)))
        out[i] = u < probs[i]


@cuda.jit(cache=True)
def fill_bernoulli_scalar(out, p, seed, offset):
    """``out[i] = u_i < p``."""
    prob = np.float64(p)
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        u = bits_to_float64(random_bits(seed, counter_at(offset, i)))
        out[i] = u < prob


@cuda.jit(cache=True)
def randperm(out, seed, offset):
    """Fisher-Yates on one thread (launch ``[1, 1]``); step ``i`` uses counter ``offset + i``."""
    if cuda.grid(1) != 0:
        return
    n = out.shape[0]
    for i in range(n):
        out[i] = i
    for i in range(n - 1, 0, -1):
        j = np.int64(random_below(seed, counter_at(offset, i), np.uint64(i + 1)))
        tmp = out[i]
        out[i] = out[j]
        out[j] = tmp


@cuda.jit(cache=True)
def multinomial(probs, num_samples, replacement, out, seed, offset, arrival):
    """One thread per row; the same draws as ``rk.multinomial``.

    *With replacement* the CPU searches the running sum of the row
    (``np.searchsorted(cumsum, u * total, 'right')``); a linear scan adding
    the weights in the same order finds the same category.  *Without
    replacement* each category gets its arrival time ``-log(u) / p`` (in the
    scratch rows ``arrival``), and the ``num_samples`` earliest are picked in
    order of arrival, ties to the lower index: what the CPU's stable
    argsort gives.
    """
    rows = probs.shape[0]
    k = probs.shape[1]
    for r in range(cuda.grid(1), rows, cuda.gridsize(1)):
        if replacement:
            total = 0.0
            for j in range(k):
                total += probs[r, j]
            last = k - 1
            while last > 0 and probs[r, last] <= 0.0:
                last -= 1
            first_counter = np.uint64(offset) + np.uint64(r) * np.uint64(num_samples)
            for s in range(num_samples):
                u = bits_to_float64(random_bits(seed, counter_at(first_counter, s)))
                x = u * total
                c = 0.0
                pick = k
                for j in range(k):
                    c += probs[r, j]
                    if c > x:
                        pick = j
                        break
                out[r, s] = min(pick, last)
        else:
            first_counter = np.uint64(offset) + np.uint64(r) * np.uint64(k)
            for j in range(k):
                if probs[r, j] > 0.0:
                    u = bits_to_open_float64(random_bits(seed, counter_at(first_counter, j)))
                    arrival[r, j] = -math.log(u) / probs[r, j]
                else:
                    arrival[r, j] = math.inf
            for s in range(num_samples):
                best = math.inf
                best_j = 0
                for j in range(k):
                    if arrival[r, j] < best:
                        best = arrival[r, j]
                        best_j = j
                out[r, s] = best_j
                arrival[r, best_j] = math.inf       # taken

"""CPU random-fill kernels built on a *counter-based* random number generator.

Why counter-based?
------------------
A classic generator (Mersenne Twister, PCG, ...) is a little state machine: to
get number 1000 you must first compute numbers 0..999.  That is awkward for two
reasons:

* **Parallelism.**  Threads cannot fill different parts of a tensor at the same
  time, because thread 2 would need the state that thread 1 has not reached yet.
* **Reproducibility across devices.**  A CUDA kernel with 10,000 threads cannot
  copy the CPU's step-by-step order, so CPU and GPU would give different numbers.

A counter-based generator drops the state machine.  Number ``k`` of a stream is
simply a hash of two integers::

    bits_k = random_bits(seed, offset + k)

so any element can be computed on its own, in any order, by any thread or
device.  The generator's whole state is the pair ``(seed, offset)`` of 64-bit
unsigned integers.  A kernel that uses ``N`` counters reads
``offset, offset + 1, ..., offset + N - 1``, and the caller then moves the
generator on by ``N`` (each kernel's docstring says what ``N`` is), so the next
call gets fresh numbers.  This is the same design as PyTorch's CUDA generator
(Philox with ``seed`` and ``offset``) and JAX's ``PRNGKey``.

The hash
--------
We build the hash from the *SplitMix64 finaliser* ``mix64`` (Steele, Lea &
Flood, 2014; the constants are David Stafford's "Mix13").  ``mix64`` is a
bijection on 64-bit integers — xor-shifts and odd multiplications can both be
undone — with strong avalanche: flipping one input bit flips each output bit
with probability close to 1/2.

SplitMix64 itself is already counter-based: its ``k``-th output for a starting
value ``key`` is ``mix64(key + k * GOLDEN_GAMMA)``, where ``GOLDEN_GAMMA`` is the
odd integer nearest ``2**64 / phi``.  Those outputs pass the BigCrush test
suite.  Its one weakness is that every key walks the *same* Weyl sequence
``key + k * GOLDEN_GAMMA``, so the streams of two seeds are shifted copies of
each other.  We therefore hash in three small steps::

    key  = mix64(seed + GOLDEN_GAMMA)          # 1. scramble the seed
    z    = mix64(key + counter * GOLDEN_GAMMA) # 2. SplitMix64 output number `counter`
    bits = mix64(z ^ key)                      # 3. a second round keyed by the seed

Step 3 mixes the key in again, so shifted copies no longer line up: two seeds
give unrelated streams.  For a fixed seed the map ``counter -> bits`` is still a
bijection, so a stream never repeats a 64-bit value within ``2**64`` draws.
All arithmetic is modulo ``2**64`` — exactly what ``uint64`` does in Numba,
NumPy and CUDA — so a CUDA port gives bit-identical ``bits``.

From bits to numbers
--------------------
* **Uniform floats in [0, 1).**  Keep the top 53 bits (float64) or 24 bits
  (float32) — the number of bits in the type's significand — and scale by
  ``2**-53`` or ``2**-24``.  Every result is exact and the largest one is
  ``1 - 2**-53`` (``1 - 2**-24``), so 1.0 never occurs.  The dtype of ``out``
  decides which one a kernel uses.
* **Normal floats** use the Box–Muller transform on a pair of uniforms.
* **Bounded integers** in ``[0, span)`` use Lemire's multiply-shift method with
  rejection, which is exactly unbiased for every ``span`` up to ``2**64 - 1``.
* **Permutations** use Fisher–Yates; **multinomial** sampling uses a CDF search
  (with replacement) or the "exponential race" (without replacement).

Numba notes
-----------
Mixing ``uint64`` with a signed ``int64`` in Numba gives a ``float64`` (NumPy's
promotion rule), which would silently destroy the low bits.  So every integer
that enters the hash is converted with ``np.uint64(...)`` first, and all shift
amounts and constants are ``np.uint64`` too.  The small helpers are compiled
with ``inline='always'`` so they cost nothing inside the kernels' loops.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

__all__ = [
    "GOLDEN_GAMMA", "mix64", "random_bits", "counter_at",
    "bits_to_float64", "bits_to_float32", "bits_to_open_float64",
    "mulhi64", "random_below",
    "fill_uniform", "fill_normal", "fill_randint", "fill_bernoulli",
    "fill_bernoulli_scalar", "randperm", "multinomial",
    "fill_uniform_parallel", "fill_normal_parallel", "fill_randint_parallel",
    "fill_bernoulli_parallel", "fill_bernoulli_scalar_parallel",
    "normal_counters", "multinomial_counters",
]

# --------------------------------------------------------------------------
# Constants (module globals are frozen into the compiled code by Numba).
# --------------------------------------------------------------------------

#: Odd integer nearest 2**64 / golden ratio: the SplitMix64 Weyl-sequence step.
GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX_MUL_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_MUL_2 = np.uint64(0x94D049BB133111EB)
#: Step between the derived seeds used by random_below's rare retries.
_RETRY_GAMMA = np.uint64(0xD1B54A32D192ED03)

_U1 = np.uint64(1)
_U11 = np.uint64(11)
_U27 = np.uint64(27)
_U30 = np.uint64(30)
_U31 = np.uint64(31)
_U32 = np.uint64(32)
_U40 = np.uint64(40)
_LOW32_MASK = np.uint64(0xFFFFFFFF)
_UZERO = np.uint64(0)

_TWO_POW_MINUS_53 = 1.0 / 9007199254740992.0        # 2.0 ** -53, a float64
_TWO_POW_MINUS_24 = np.float32(1.0 / 16777216.0)    # 2.0 ** -24, a float32
_TWO_PI = 2.0 * math.pi


# --------------------------------------------------------------------------
# The counter-based hash.
# --------------------------------------------------------------------------

@njit(inline='always', cache=True)
def mix64(z):
    """SplitMix64's finaliser: a bijective, strongly avalanching uint64 -> uint64 map."""
    z = (z ^ (z >> _U30)) * _MIX_MUL_1
    z = (z ^ (z >> _U27)) * _MIX_MUL_2
    return z ^ (z >> _U31)


@njit(inline='always', cache=True)
def random_bits(seed, counter):
    """64 random bits: number ``counter`` of the stream named ``seed``.

    Both arguments are reinterpreted as uint64 (a negative int64 seed wraps
    around, as it does in C).  See the module docstring for the design.
    """
    s = np.uint64(seed)
    c = np.uint64(counter)
    key = mix64(s + GOLDEN_GAMMA)
    z = mix64(key + c * GOLDEN_GAMMA)
    return mix64(z ^ key)


@njit(inline='always', cache=True)
def counter_at(offset, i):
    """The counter for element ``i`` of a kernel that starts at ``offset`` (mod 2**64)."""
    return np.uint64(offset) + np.uint64(i)


# --------------------------------------------------------------------------
# From 64 random bits to numbers.
# --------------------------------------------------------------------------

@njit(inline='always', cache=True)
def bits_to_float64(bits):
    """A float64 in [0, 1) from the top 53 bits: one of 2**53 equally spaced values."""
    return np.float64(bits >> _U11) * _TWO_POW_MINUS_53


@njit(inline='always', cache=True)
def bits_to_float32(bits):
    """A float32 in [0, 1) from the top 24 bits: one of 2**24 equally spaced values."""
    return np.float32(bits >> _U40) * _TWO_POW_MINUS_24


@njit(inline='always', cache=True)
def bits_to_open_float64(bits):
    """A float64 in (0, 1] from the top 53 bits: safe to pass to ``log``."""
    return np.float64((bits >> _U11) + _U1) * _TWO_POW_MINUS_53


@njit(inline='always', cache=True)
def mulhi64(a, b):
    """The high 64 bits of the 128-bit product ``a * b`` of two uint64s.

    Numba has no 128-bit integers, so we multiply like on paper with 32-bit
    "digits": ``a = a1 * 2**32 + a0`` and ``b = b1 * 2**32 + b0``.  Each
    partial product of two digits fits in 64 bits, and so does ``middle``
    (at most ``(2**32 - 1)**2 + 2 * (2**32 - 1) = 2**64 - 1``).
    (The *low* 64 bits are simply ``a * b``, which wraps modulo ``2**64``.)
    """
    a0 = a & _LOW32_MASK
    a1 = a >> _U32
    b0 = b & _LOW32_MASK
    b1 = b >> _U32
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    middle = (p00 >> _U32) + (p01 & _LOW32_MASK) + p10
    return p11 + (middle >> _U32) + (p01 >> _U32)


@njit(inline='always', cache=True)
def random_below(seed, counter, span):
    """A uniform integer in ``[0, span)`` (uint64, ``1 <= span < 2**64``). Exactly unbiased.

    Lemire's method (2019): think of ``x / 2**64`` as a uniform number in
    [0, 1); then ``floor(x * span / 2**64)``, the high half of the 128-bit
    product, is in ``[0, span)``.  Because ``2**64`` is usually not a multiple
    of ``span``, some results would have one more preimage ``x`` than others.
    The fix is to reject the ``2**64 mod span`` offending values of ``x``,
    which are recognised by the *low* half of the product.  A rejection is
    rare (probability below ``span / 2**64``: below ``2**-32`` for any span
    under ``2**32``), and the cheap test ``low < span`` rules it out without a
    division almost always.

    A rejected draw must not use another counter of this stream — the kernels
    promise a fixed counter count — so retry number ``r`` uses the same
    counter in a *derived* stream with seed ``seed ^ (r * _RETRY_GAMMA)``.
    """
    s = np.uint64(span)
    x = random_bits(seed, counter)
    low = x * s                           # low 64 bits of the 128-bit product
    if low < s:                           # only then can x be one to reject
        threshold = (_UZERO - s) % s      # 2**64 mod span, in uint64 arithmetic
        retry = _UZERO
        while low < threshold:
            retry += _U1
            x = random_bits(np.uint64(seed) ^ (retry * _RETRY_GAMMA), counter)
            low = x * s
    return mulhi64(x, s)


# --------------------------------------------------------------------------
# Counter bookkeeping for the kernels whose count is not simply len(out).
# --------------------------------------------------------------------------

def normal_counters(n: int) -> int:
    """Counters used by :func:`fill_normal` for ``n`` outputs: 2 per *pair* of outputs."""
    return 2 * ((n + 1) // 2)


def multinomial_counters(rows: int, num_categories: int, num_samples: int,
                         replacement: bool) -> int:
    """Counters used by :func:`multinomial`.

    With replacement: one per sample, ``rows * num_samples``.
    Without replacement: one per category, ``rows * num_categories``.
    """
    return rows * (num_samples if replacement else num_categories)


# --------------------------------------------------------------------------
# Kernels.  Each fills a preallocated, contiguous 1-D ``out`` (2-D for
# multinomial) and reads counters offset, offset + 1, ...
#
# The fills are serial loops.  Because element ``i`` depends only on counter
# ``offset + i``, a slice ``out[s:e]`` filled with offset ``offset + s`` gets
# exactly the numbers the whole fill would put there, so the ``*_parallel``
# drivers below just fill chunks of ``CHUNK`` elements on different threads.
# The backend uses a driver only for large fills on more than one thread
# (see :mod:`minitorch.backends.cpu.elementwise`).
# --------------------------------------------------------------------------

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
    """``out[i] = low + (high - low) * u_i`` with ``u_i`` uniform in [0, 1).

    ``out`` is float32 (24 random bits per value) or float64 (53 bits).  The
    affine map is computed in float64 and rounded once to ``out``'s dtype;
    as in NumPy, that rounding can (rarely) produce exactly ``high`` when
    ``low``/``high`` are not representable on the grid of ``u``.

    Consumes ``len(out)`` counters: element ``i`` uses counter ``offset + i``.
    """
    n = out.shape[0]
    lo = np.float64(low)
    width = np.float64(high) - lo
    use_24_bits = out.itemsize == 4       # float32 output
    for i in range(n):
        bits = random_bits(seed, counter_at(offset, i))
        if use_24_bits:
            u = np.float64(bits_to_float32(bits))
        else:
            u = bits_to_float64(bits)
        out[i] = lo + width * u


@njit(**_JIT)
def fill_normal(out, seed, offset, mean, std):
    """``out[i] = mean + std * z_i`` with ``z_i`` standard normal (Box–Muller).

    Box–Muller turns two independent uniforms into two independent standard
    normals: with ``u1`` in (0, 1] and ``u2`` in [0, 1),
    ``r = sqrt(-2 log u1)`` and ``theta = 2 pi u2`` give
    ``z0 = r cos(theta)`` and ``z1 = r sin(theta)``.  Drawing ``u1`` from
    (0, 1] means ``log`` never sees 0.

    Output pair ``j`` (elements ``2j`` and ``2j + 1``) uses counters
    ``offset + 2j`` (for ``u1``) and ``offset + 2j + 1`` (for ``u2``).  So a
    fill of ``n`` values continues exactly where a fill of an *even* number
    of values left off.  The uniforms always have 53 bits and the transform
    runs in float64 (tails reach about 8.6 standard deviations); a float32
    ``out`` only rounds the final result.

    Consumes ``normal_counters(n) = 2 * ceil(n / 2)`` counters (with odd
    ``n`` the last ``sin`` value is thrown away).
    """
    n = out.shape[0]
    mu = np.float64(mean)
    sigma = np.float64(std)
    for pair in range((n + 1) // 2):
        i = 2 * pair
        u1 = bits_to_open_float64(random_bits(seed, counter_at(offset, i)))
        u2 = bits_to_float64(random_bits(seed, counter_at(offset, i + 1)))
        r = math.sqrt(-2.0 * math.log(u1))
        theta = _TWO_PI * u2
        out[i] = mu + sigma * (r * math.cos(theta))
        if i + 1 < n:
            out[i + 1] = mu + sigma * (r * math.sin(theta))


@njit(**_JIT)
def fill_randint(out, seed, offset, low, high):
    """``out[i]`` uniform in the integers ``[low, high)``; ``out`` is int64.

    Needs ``low < high`` (the caller checks).  Any int64 bounds work, so the
    span ``high - low`` can be as large as ``2**64 - 1``; it is computed in
    wrapping uint64 arithmetic.  Exactly unbiased (see :func:`random_below`).

    Consumes ``len(out)`` counters: element ``i`` uses counter ``offset + i``.
    """
    n = out.shape[0]
    lo = np.uint64(np.int64(low))
    span = np.uint64(np.int64(high)) - lo
    for i in range(n):
        r = random_below(seed, counter_at(offset, i), span)
        out[i] = np.int64(lo + r)         # wraps back into the signed range


@njit(**_JIT)
def fill_bernoulli(out, probs, seed, offset):
    """``out[i] = u_i < probs[i]``: True with probability ``probs[i]``.

    ``out`` is bool and ``probs`` a float32 or float64 array of the same
    length.  ``u_i`` always has 53 bits, so ``p = 0`` never and ``p = 1``
    always gives True.

    Consumes ``len(out)`` counters: element ``i`` uses counter ``offset + i``.
    """
    n = out.shape[0]
    for i in range(n):
        u = bits_to_float64(random_bits(seed, counter_at(offset, i)))
        out[i] = u < probs[i]


@njit(**_JIT)
def fill_bernoulli_scalar(out, p, seed, offset):
    """``out[i] = u_i < p``: each True with the same probability ``p``.

    Consumes ``len(out)`` counters: element ``i`` uses counter ``offset + i``
    (so it agrees with :func:`fill_bernoulli` given a constant ``probs``).
    """
    n = out.shape[0]
    prob = np.float64(p)
    for i in range(n):
        u = bits_to_float64(random_bits(seed, counter_at(offset, i)))
        out[i] = u < prob


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
    """Write a uniformly random permutation of ``0 .. n-1`` into int64 ``out``.

    Fisher–Yates shuffle: for ``i = n-1, ..., 1`` swap ``out[i]`` with
    ``out[j]``, ``j`` uniform in ``[0, i]``.  Each of the ``n!`` orders comes
    out with probability exactly ``1/n!`` because every ``j`` is exactly
    uniform.  The loop is sequential (each swap sees the previous ones).

    Consumes ``len(out)`` counters: step ``i`` uses counter ``offset + i``
    (counter ``offset + 0`` is reserved but unused).
    """
    n = out.shape[0]
    for i in range(n):
        out[i] = i
    for i in range(n - 1, 0, -1):
        j = np.int64(random_below(seed, counter_at(offset, i), np.uint64(i + 1)))
        tmp = out[i]
        out[i] = out[j]
        out[j] = tmp


@njit(parallel=True, cache=True)
def multinomial(probs, num_samples, replacement, out, seed, offset):
    """Draw ``num_samples`` category indices per row of ``probs`` into ``out``.

    ``probs`` is a contiguous float64 array ``(rows, k)`` of non-negative
    weights (each row needs a positive sum; no need to normalise), ``out`` an
    int64 array ``(rows, num_samples)``.  Rows are independent and run in
    parallel.  A category of weight 0 is never drawn.  The caller has checked
    the arguments (without replacement: ``num_samples`` is at most the number
    of positive weights in every row).

    *With replacement*: build the running sum ``cdf`` of the row, draw ``u``
    in [0, 1) and pick the first category whose ``cdf`` exceeds
    ``u * total`` (binary search).  Sample ``s`` of row ``r`` uses counter
    ``offset + r * num_samples + s``.

    *Without replacement*: the "exponential race" (Efraimidis & Spirakis).
    Give category ``j`` an arrival time ``E_j / p_j`` with ``E_j ~ Exp(1)``;
    the categories that arrive first are a sample *without* replacement with
    exactly the distribution of drawing one category at a time (probability
    proportional to weight) and removing it.  Category ``j`` of row ``r``
    uses counter ``offset + r * k + j``.  (This is PyTorch's CPU method too;
    with Gumbel noise it is known as the Gumbel-top-k trick.)

    Consumes ``multinomial_counters(rows, k, num_samples, replacement)``
    counters: ``rows * num_samples`` with replacement, ``rows * k`` without.
    """
    rows = probs.shape[0]
    k = probs.shape[1]
    for r in prange(rows):
        weights = probs[r]
        if replacement:
            cdf = np.cumsum(weights)
            total = cdf[k - 1]
            # Rounding could make u * total reach `total`; clamp to the last
            # category that can actually be drawn.
            last = k - 1
            while last > 0 and weights[last] <= 0.0:
                last -= 1
            first_counter = np.uint64(offset) + np.uint64(r) * np.uint64(num_samples)
            for s in range(num_samples):
                u = bits_to_float64(random_bits(seed, counter_at(first_counter, s)))
                j = np.searchsorted(cdf, u * total, side='right')
                out[r, s] = min(j, last)
        else:
            arrival = np.empty(k, dtype=np.float64)
            first_counter = np.uint64(offset) + np.uint64(r) * np.uint64(k)
            for j in range(k):
                if weights[j] > 0.0:
                    u = bits_to_open_float64(random_bits(seed, counter_at(first_counter, j)))
                    arrival[j] = -math.log(u) / weights[j]   # Exp(1) / p_j
                else:
                    arrival[j] = np.inf                      # never arrives
            order = np.argsort(arrival, kind='mergesort')
            for s in range(num_samples):
                out[r, s] = order[s]

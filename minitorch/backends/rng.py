"""The counter-based random number generator: one body for every device.

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
generator on by ``N`` (each body's docstring says what ``N`` is), so the next
call gets fresh numbers.  This is the same design as PyTorch's CUDA generator
(Philox with ``seed`` and ``offset``) and JAX's ``PRNGKey``.

The functions below are plain Python.  The CPU compiles them with
``numba.njit`` and the GPU with ``numba.cuda.jit(device=True)`` (see
:mod:`minitorch.backends.shared_bodies`), so both devices run the very same
arithmetic and give **bit-identical numbers** for the same seed.

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
NumPy and CUDA.

From bits to numbers
--------------------
* **Uniform floats in [0, 1).**  Keep the top 53 bits (float64) or 24 bits
  (float32) — the number of bits in the type's significand — and scale by
  ``2**-53`` or ``2**-24``.  Every result is exact and the largest one is
  ``1 - 2**-53`` (``1 - 2**-24``), so 1.0 never occurs.  The dtype of the
  output decides which one a fill uses.
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
amounts and constants are ``np.uint64`` too.
"""

from __future__ import annotations

import math

import numpy as np

from . import rows

# --------------------------------------------------------------------------
# Constants (module globals are frozen into the compiled code by Numba).
# --------------------------------------------------------------------------

#: Odd integer nearest 2**64 / golden ratio: the SplitMix64 Weyl-sequence step.
GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)
MIX_MUL_1 = np.uint64(0xBF58476D1CE4E5B9)
MIX_MUL_2 = np.uint64(0x94D049BB133111EB)
#: Step between the derived seeds used by random_below's rare retries.
RETRY_GAMMA = np.uint64(0xD1B54A32D192ED03)

U1 = np.uint64(1)
U11 = np.uint64(11)
U27 = np.uint64(27)
U30 = np.uint64(30)
U31 = np.uint64(31)
U32 = np.uint64(32)
U40 = np.uint64(40)
LOW32_MASK = np.uint64(0xFFFFFFFF)
UZERO = np.uint64(0)

TWO_POW_MINUS_53 = 1.0 / 9007199254740992.0        # 2.0 ** -53, a float64
TWO_POW_MINUS_24 = np.float32(1.0 / 16777216.0)    # 2.0 ** -24, a float32
TWO_PI = 2.0 * math.pi


# --------------------------------------------------------------------------
# The counter-based hash.
# --------------------------------------------------------------------------
def mix64(z):
    """SplitMix64's finaliser: a bijective, strongly avalanching uint64 -> uint64 map."""
    z = (z ^ (z >> U30)) * MIX_MUL_1
    z = (z ^ (z >> U27)) * MIX_MUL_2
    return z ^ (z >> U31)


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


def counter_at(offset, i):
    """The counter for element ``i`` of a fill that starts at ``offset`` (mod 2**64)."""
    return np.uint64(offset) + np.uint64(i)


# --------------------------------------------------------------------------
# From 64 random bits to numbers.
# --------------------------------------------------------------------------
def bits_to_float64(bits):
    """A float64 in [0, 1) from the top 53 bits: one of 2**53 equally spaced values."""
    return np.float64(bits >> U11) * TWO_POW_MINUS_53


def bits_to_float32(bits):
    """A float32 in [0, 1) from the top 24 bits: one of 2**24 equally spaced values."""
    return np.float32(bits >> U40) * TWO_POW_MINUS_24


def bits_to_open_float64(bits):
    """A float64 in (0, 1] from the top 53 bits: safe to pass to ``log``."""
    return np.float64((bits >> U11) + U1) * TWO_POW_MINUS_53


def mulhi64(a, b):
    """The high 64 bits of the 128-bit product ``a * b`` of two uint64s.

    Numba has no 128-bit integers, so we multiply like on paper with 32-bit
    "digits": ``a = a1 * 2**32 + a0`` and ``b = b1 * 2**32 + b0``.  Each
    partial product of two digits fits in 64 bits, and so does ``middle``
    (at most ``(2**32 - 1)**2 + 2 * (2**32 - 1) = 2**64 - 1``).
    (The *low* 64 bits are simply ``a * b``, which wraps modulo ``2**64``.)
    """
    a0 = a & LOW32_MASK
    a1 = a >> U32
    b0 = b & LOW32_MASK
    b1 = b >> U32
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    middle = (p00 >> U32) + (p01 & LOW32_MASK) + p10
    return p11 + (middle >> U32) + (p01 >> U32)


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

    A rejected draw must not use another counter of this stream — the fills
    promise a fixed counter count — so retry number ``r`` uses the same
    counter in a *derived* stream with seed ``seed ^ (r * RETRY_GAMMA)``.
    """
    s = np.uint64(span)
    x = random_bits(seed, counter)
    low = x * s                           # low 64 bits of the 128-bit product
    if low < s:                           # only then can x be one to reject
        threshold = (UZERO - s) % s       # 2**64 mod span, in uint64 arithmetic
        retry = UZERO
        while low < threshold:
            retry += U1
            x = random_bits(np.uint64(seed) ^ (retry * RETRY_GAMMA), counter)
            low = x * s
    return mulhi64(x, s)


# --------------------------------------------------------------------------
# One element of each fill.  Element ``i`` of a fill that starts at
# ``offset`` depends only on counter ``offset + i``, so the device may
# compute the elements in any order, on any thread.
# --------------------------------------------------------------------------
def uniform_value(seed, offset, i, low, width, use_24_bits):
    """Element ``i`` of ``uniform_(low, low + width)``: ``low + width * u``, ``u`` in [0, 1).

    ``use_24_bits`` for a float32 output (24 random bits), else 53.  The
    affine map is computed in float64 and rounded once to the output's dtype
    by the store; as in NumPy, that rounding can (rarely) give exactly
    ``high`` when ``low``/``high`` are not on the grid of ``u``.  Uses
    counter ``offset + i``: a fill of ``n`` elements uses ``n`` counters.
    """
    bits = random_bits(seed, counter_at(offset, i))
    if use_24_bits:
        u = np.float64(bits_to_float32(bits))
    else:
        u = bits_to_float64(bits)
    return low + width * u


def normal_pair(seed, offset, i):
    """Elements ``i`` and ``i + 1`` (``i`` even) of a standard normal fill: Box–Muller.

    Box–Muller turns two independent uniforms into two independent standard
    normals: with ``u1`` in (0, 1] and ``u2`` in [0, 1),
    ``r = sqrt(-2 log u1)`` and ``theta = 2 pi u2`` give
    ``z0 = r cos(theta)`` and ``z1 = r sin(theta)``.  Drawing ``u1`` from
    (0, 1] means ``log`` never sees 0.  The pair uses counters ``offset + i``
    (for ``u1``) and ``offset + i + 1`` (for ``u2``), so a fill of ``n``
    values uses :func:`normal_counters` ``(n)`` counters and continues
    exactly where a fill of an even number of values left off.  The
    transform runs in float64 (tails reach about 8.6 standard deviations).
    """
    u1 = bits_to_open_float64(random_bits(seed, counter_at(offset, i)))
    u2 = bits_to_float64(random_bits(seed, counter_at(offset, i + 1)))
    r = math.sqrt(-2.0 * math.log(u1))
    theta = TWO_PI * u2
    return r * math.cos(theta), r * math.sin(theta)


def randint_value(seed, offset, i, low, span):
    """Element ``i`` of ``randint``: ``low + r`` with ``r`` uniform in ``[0, span)``.

    ``low`` and ``span`` are uint64 (``low`` an int64 reinterpreted, ``span =
    high - low`` in wrapping arithmetic, so any int64 bounds work); the
    result wraps back into the signed range.  Exactly unbiased (see
    :func:`random_below`).  Uses counter ``offset + i``.
    """
    return np.int64(low + random_below(seed, counter_at(offset, i), span))


def bernoulli_value(seed, offset, i, p):
    """Element ``i`` of ``bernoulli``: True with probability ``p``.

    ``u`` always has 53 bits, so ``p = 0`` never and ``p = 1`` always gives
    True.  Uses counter ``offset + i`` (a constant ``p`` and a tensor of
    probabilities all equal to ``p`` give the same draws).
    """
    return bits_to_float64(random_bits(seed, counter_at(offset, i))) < p


def shuffle(out, seed, offset):
    """Write a uniformly random permutation of ``0 .. n-1`` into int64 ``out``.

    Fisher–Yates: for ``i = n-1, ..., 1`` swap ``out[i]`` with ``out[j]``,
    ``j`` uniform in ``[0, i]``.  Each of the ``n!`` orders comes out with
    probability exactly ``1/n!`` because every ``j`` is exactly uniform.  The
    loop is sequential (each swap sees the previous ones), so every device
    runs it on one thread.  Uses ``len(out)`` counters: step ``i`` uses
    counter ``offset + i`` (counter ``offset + 0`` is reserved but unused).
    """
    n = out.shape[0]
    for i in range(n):
        out[i] = i
    for i in range(n - 1, 0, -1):
        j = np.int64(random_below(seed, counter_at(offset, i), np.uint64(i + 1)))
        tmp = out[i]
        out[i] = out[j]
        out[j] = tmp


def multinomial_row(weights, num_samples, replacement, out, seed, first_counter, scratch,
                    order, order_tmp):
    """Draw ``num_samples`` category indices from one row of non-negative ``weights``.

    ``out`` (int64, ``num_samples``) receives them.  The row needs a positive
    sum (no need to normalise), and a category of weight 0 is never drawn;
    the caller has checked the arguments (without replacement:
    ``num_samples`` is at most the number of positive weights).  ``scratch``
    (float64) and ``order``/``order_tmp`` (int64) are work rows of the
    row's length (``order`` and ``order_tmp`` are used only without
    replacement): the CPU allocates them per row, the GPU gets them from the
    host, since a GPU thread cannot allocate.

    *With replacement*: ``scratch`` holds the running sum (the CDF) of the
    row; each sample draws ``u`` in [0, 1) and picks the first category whose
    CDF exceeds ``u * total`` (a binary search).  Sample ``s`` uses counter
    ``first_counter + s``.

    *Without replacement*: the "exponential race" (Efraimidis & Spirakis).
    Give category ``j`` an arrival time ``E_j / p_j`` with ``E_j ~ Exp(1)``;
    the categories that arrive first are a sample *without* replacement with
    exactly the distribution of drawing one category at a time (probability
    proportional to weight) and removing it.  The arrival times are sorted
    with the stable row sort (:func:`minitorch.backends.rows.sort_positions`),
    so ties go to the lower index.  Category ``j`` uses counter
    ``first_counter + j``.  (This is PyTorch's CPU method too; with Gumbel
    noise it is known as the Gumbel-top-k trick.)
    """
    k = weights.shape[0]
    if replacement:
        total = 0.0
        for j in range(k):
            total += weights[j]
            scratch[j] = total
        # Rounding could make u * total reach `total`; clamp to the last
        # category that can actually be drawn.
        last = k - 1
        while last > 0 and weights[last] <= 0.0:
            last -= 1
        for s in range(num_samples):
            x = bits_to_float64(random_bits(seed, counter_at(first_counter, s))) * total
            lo = 0                       # the first j with scratch[j] > x (binary search)
            hi = k
            while lo < hi:
                mid = (lo + hi) // 2
                if scratch[mid] <= x:
                    lo = mid + 1
                else:
                    hi = mid
            out[s] = min(lo, last)
    else:
        for j in range(k):
            if weights[j] > 0.0:
                u = bits_to_open_float64(random_bits(seed, counter_at(first_counter, j)))
                scratch[j] = -math.log(u) / weights[j]       # Exp(1) / p_j
            else:
                scratch[j] = math.inf                       # never arrives
        rows.sort_positions(scratch, order, order_tmp, False)
        for s in range(num_samples):
            out[s] = order[s]


# --------------------------------------------------------------------------
# Counter bookkeeping for the fills whose count is not simply len(out)
# (plain Python, for the host).
# --------------------------------------------------------------------------
def normal_counters(n: int) -> int:
    """Counters used by a normal fill of ``n`` outputs: 2 per *pair* of outputs."""
    return 2 * ((n + 1) // 2)


def multinomial_counters(num_rows: int, num_categories: int, num_samples: int,
                         replacement: bool) -> int:
    """Counters used by ``multinomial``: row ``r`` starts at ``offset + r * (per row)``.

    With replacement: one per sample, ``num_rows * num_samples``.
    Without replacement: one per category, ``num_rows * num_categories``.
    """
    return num_rows * (num_samples if replacement else num_categories)


def multinomial_first_counter(offset, r, per_row):
    """The first counter of row ``r`` of a multinomial draw (``per_row`` counters a row)."""
    return np.uint64(offset) + np.uint64(r) * np.uint64(per_row)

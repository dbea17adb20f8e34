"""exp, sigmoid and tanh for the CPU, written as arithmetic that LLVM vectorises.

In a Numba kernel ``math.exp(x)`` becomes a call to the C library's
``exp``: one call per element, so the loop cannot use the SIMD registers
that hold 8 or 16 floats at once, and it runs several times slower than
NumPy.  (Numba vectorises such calls only with Intel's SVML library, which
minitorch does not depend on.)  This module computes ``exp`` from additions,
multiplications and bit operations only -- the method libm itself uses.  A
loop of those has no calls, and LLVM turns it into vector code
(``vfmadd...ps``/``pd`` on ``ymm``/``zmm`` registers on x86).  Four ideas:

1. **Range reduction.**  Write ``x = n*ln2 + r`` with ``n = round(x/ln2)``
   an integer, so that ``|r| <= ln2/2 ~ 0.347``.  Then
   ``exp(x) = 2**n * exp(r)``, and ``exp(r)`` on that small interval is a
   short polynomial.  For float32 it is the Taylor series
   ``1 + r + r**2/2! + ... + r**7/7!``, whose error ``|r|**8/8!`` is below
   float32's precision (``2**-24``).  float64 (``2**-53``) would need 13
   Taylor terms; a polynomial *fitted* to exp on the interval spreads its
   error evenly instead of piling it up at the ends, and 11 terms suffice
   (two fewer multiply-adds, about 8% faster).

   Computing ``r = x - n*ln2`` naively would lose accuracy: ``n*ln2``
   rounded to a float is off by up to half an ulp of ``n*ln2``, far more
   than an ulp of the small ``r``.  The *Cody-Waite* trick splits
   ``ln2 = LN2_HI + LN2_LO`` where ``LN2_HI`` has only a few significant
   bits, so that ``n*LN2_HI`` is exact for every ``n`` we meet, and so is
   ``x - n*LN2_HI`` (two nearby numbers); the small correction
   ``n*LN2_LO`` adds only a tiny rounding error.

   We keep ``q = exp(r) - 1``, the polynomial without its leading 1: that
   is ``expm1`` with full relative accuracy for small arguments, which
   ``tanh`` needs near 0, where ``1 - exp(-2|x|)`` would cancel badly.

2. **Powers of two from their bits.**  A float is
   ``2**exponent * 1.mantissa``, so ``2**n`` is the float whose exponent
   field holds ``n`` plus the bias (127 for float32, 1023 for float64) and
   whose other bits are 0.  We get those bits without converting ``n`` to
   an integer: ``t = n + (2**23 + 127)`` is a float32 between ``2**23`` and
   ``2**24``, where floats are spaced exactly 1 apart, so the low bits of
   its mantissa field hold the integer ``n + 127``.  Reinterpret ``t``'s 32
   bits as an integer (``.view(np.int32)``: the same bits, no conversion),
   shift them left by the 23 mantissa bits, and ``n + 127`` lands in the
   exponent field with zeros below it: reinterpreted back as a float, that
   is ``2**n``.  (float64: ``2**52 + 1023`` and a shift by 52.)

3. **The edges, as NumPy and PyTorch give them.**  Above ~88.7 (float32) or
   ~709.8 (float64) ``exp`` overflows to ``inf``; we clamp ``x`` just beyond
   that, so ``n`` stays small, and the final product overflows by itself.
   Below ~-87.3 / -708.4 the results are *subnormal*: ``2**n`` itself is then
   not a normal float, and its bits cannot be built as above.  So ``2**n`` is
   applied as two factors ``2**h * 2**(n-h)`` (``h = floor(n/2)``), each a
   normal float: ``(1+q) * 2**h`` is exact and the second product rounds
   once, into the subnormals or to 0, as a correctly rounded ``exp`` does.
   The low clamp (-104 / -746) is where ``exp`` rounds to 0 for good, and
   ``exp(-inf)`` is 0.  A NaN passes the clamps (comparisons with NaN are
   false) and flows through the arithmetic: ``q`` is NaN, so the result is.

4. **Why the loop vectorises.**  Each element is a fixed sequence of
   arithmetic: no calls, no inner loops, no data-dependent branches.  The
   clamps are ``if`` statements that LLVM turns into *selects* (compute
   both, keep one: a blend or masked move), and ``np.rint``, ``np.floor``,
   ``abs`` and ``math.copysign`` are LLVM intrinsics with vector forms.  See
   for yourself: ``vmath_contiguous.inspect_asm(sig)`` (with
   ``NUMBA_CACHE_DIR`` pointing to an empty folder, since code loaded from
   the disk cache cannot be inspected).  The kernel also allows the
   ``contract`` fast-math flag and no other: it lets LLVM fuse ``a*b + c``
   into one FMA instruction, which rounds once instead of twice (on a CPU
   without FMA the results differ by an ulp here and there, within the same
   bounds).  The other flags would let LLVM assume there are no NaNs or
   infinities, and the edges above depend on them.

One kernel serves float32 and float64 (two compiled signatures).  The
arithmetic must stay in the input's type, and in Numba ``float32 * 0.5`` is
float64 (a Python float is a float64).  So every constant is a NumPy scalar
of a chosen type.  The generic code (``_exp``, ``_sigmoid``, ``_tanh``) uses
float32 constants that are exact (1, 2, 0.5, ...): float32 with float32 stays
float32, and float64 with float32 is float64 with the same value.  What
differs per type (ln2, the polynomial, the bit layout) is in
``_reduce_f32``/``_pow2_f32`` and their float64 twins, and the generic code
calls ``_reduce``/``_pow2``, two Numba *overloads* that pick the version for
the argument's type while Numba compiles, so no branch on the type is left
in the compiled loop.

Accuracy, measured against a wider type: ``exp`` within 1 ulp (every
float32 checked), ``sigmoid`` and float32 ``tanh`` within 2 ulps, float64
``tanh`` within 3 (rarely more than 1; NumPy's ``tanh`` is within 1).
"""

import math

import numba
import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from .. import scalar_ops

# contract: fuse a*b + c into FMA (see the module docstring); nothing else.
_PARALLEL = dict(parallel=True, cache=True, error_model="numpy", fastmath={"contract"})
_INLINE = dict(cache=True, error_model="numpy", fastmath={"contract"})

# The kernel's own codes for its three functions.  The backend passes
# scalar_ops' op codes; unary_contiguous translates them in Python, so
# scalar_ops' numbering is never compiled into (and cached with) this file.
_EXP, _SIGMOID, _TANH = 0, 1, 2
KIND = {scalar_ops.EXP: _EXP, scalar_ops.SIGMOID: _SIGMOID, scalar_ops.TANH: _TANH}
OPS = frozenset(KIND)
DTYPES = frozenset((np.dtype(np.float32), np.dtype(np.float64)))

# Constants exactly representable in float32: float32 with float32 stays
# float32, and float64 with float32 is float64 (with the same exact value).
_ZERO = np.float32(0.0)
_ONE = np.float32(1.0)
_TWO = np.float32(2.0)
_HALF = np.float32(0.5)
# tanh(x) rounds to 1 for |x| > 9.1 (float32) and > 19.1 (float64); clamping
# |x| at 20 keeps 2**n normal in both (n >= -58) and changes no result.
_TANH_CLAMP = np.float32(20.0)

# ---------------------------------------------------------------------------
# float32 constants
# ---------------------------------------------------------------------------
_LO_F32 = np.float32(-104.0)     # exp(x) < 2**-150 (rounds to 0) below this
_HI_F32 = np.float32(89.0)       # exp(x) > FLT_MAX (rounds to inf) above this
_LOG2E_F32 = np.float32(1.4426950408889634)
_LN2_HI_F32 = np.float32(0.693359375)   # 355/512: 9 significant bits, n*HI exact
_LN2_LO_F32 = np.float32(-2.1219444005469057e-4)   # ln2 - LN2_HI
# Taylor: q = r + r**2 * (1/2! + r/3! + ... + r**5/7!)
_C2_F32, _C3_F32, _C4_F32, _C5_F32, _C6_F32, _C7_F32 = (
    np.float32(1.0 / math.factorial(k)) for k in range(2, 8))
_MAGIC_F32 = np.float32(2**23 + 127)    # see _pow2_f32

# ---------------------------------------------------------------------------
# float64 constants (the split of ln2 is fdlibm's)
# ---------------------------------------------------------------------------
_LO_F64 = np.float64(-746.0)     # exp(x) < 2**-1075 (rounds to 0) below this
_HI_F64 = np.float64(710.0)      # exp(x) > DBL_MAX (rounds to inf) above this
_LOG2E_F64 = np.float64(1.4426950408889634)
_LN2_HI_F64 = np.float64(6.93147180369123816490e-01)  # 32 significant bits
_LN2_LO_F64 = np.float64(1.90821492927058770002e-10)
# q = r + r**2 * P(r), P of degree 9 fitted to (exp(r) - 1 - r) / r**2 on
# |r| <= 0.35 (close to 1/2!, 1/3!, ... 1/11!, adjusted for the missing
# terms).  Computed with
#   mpmath.chebyfit(lambda r: (mpmath.expm1(r) - r) / r**2 if r else 0.5,
#                   [-0.35, 0.35], 10)   (at mpmath.mp.dps = 50)
# which interpolates at Chebyshev points: nearly the best (minimax) fit.
(_C2_F64, _C3_F64, _C4_F64, _C5_F64, _C6_F64, _C7_F64, _C8_F64, _C9_F64, _C10_F64,
 _C11_F64) = (np.float64(c) for c in (
     0.5000000000000001, 0.16666666666666669, 0.04166666666662068, 0.008333333333329796,
     0.0013888888918918907, 0.00019841269864364933, 2.4801518672268355e-05,
     2.7557266442353424e-06, 2.7621324269313687e-07, 2.5101335854788522e-08))
_MAGIC_F64 = np.float64(2**52 + 1023)   # see _pow2_f64


@njit(**_INLINE)
def _reduce_f32(w):
    """``(q, n)`` with ``exp(w) = (1 + q) * 2**n`` for float32 ``w``.

    ``n`` is an integer held in a float; ``q = exp(r) - 1`` for the reduced
    argument ``r``.
    """
    if w < _LO_F32:          # a NaN fails both tests and stays NaN
        w = _LO_F32
    if w > _HI_F32:
        w = _HI_F32
    n = np.rint(w * _LOG2E_F32)                  # round(w / ln2)
    r = (w - n * _LN2_HI_F32) - n * _LN2_LO_F32  # |r| <= ln2/2 (Cody-Waite)
    q = r + r * r * (_C2_F32 + r * (_C3_F32 + r * (_C4_F32 + r * (
        _C5_F32 + r * (_C6_F32 + r * _C7_F32)))))
    return q, n


@njit(**_INLINE)
def _pow2_f32(n):
    """``2.0**n`` for an integer-valued float32 ``n`` in [-126, 127], from its bits.

    float32 bits: sign (1) | exponent + 127 (8) | mantissa (23).  The low
    mantissa bits of ``n + 2**23 + 127`` are ``n + 127``; shifting them up
    by 23 puts them in the exponent field.
    """
    bits = np.float32(n + _MAGIC_F32).view(np.int32)
    return np.int32(bits << 23).view(np.float32)


@njit(**_INLINE)
def _reduce_f64(w):
    """``(q, n)`` with ``exp(w) = (1 + q) * 2**n`` for float64 ``w``."""
    if w < _LO_F64:
        w = _LO_F64
    if w > _HI_F64:
        w = _HI_F64
    n = np.rint(w * _LOG2E_F64)
    r = (w - n * _LN2_HI_F64) - n * _LN2_LO_F64
    q = r + r * r * (_C2_F64 + r * (_C3_F64 + r * (_C4_F64 + r * (_C5_F64 + r * (
        _C6_F64 + r * (_C7_F64 + r * (_C8_F64 + r * (_C9_F64 + r * (
            _C10_F64 + r * _C11_F64)))))))))
    return q, n


@njit(**_INLINE)
def _pow2_f64(n):
    """``2.0**n`` for an integer-valued float64 ``n`` in [-1022, 1023], from its bits.

    float64 bits: sign (1) | exponent + 1023 (11) | mantissa (52).
    """
    bits = np.float64(n + _MAGIC_F64).view(np.int64)
    # (np.int64(...) marks the type for Numba, whose .view needs a NumPy scalar.)
    return np.int64(bits << 52).view(np.float64)


# Numba compiles a function once per argument type, from the same source.
# The generic code below calls _reduce and _pow2; these two overloads run
# while Numba compiles it: they see the *type* of the argument (not a value)
# and return the implementation for that type.  The plain Python functions
# are only names for the overloads.
def _reduce(w):
    raise NotImplementedError("only callable from compiled code")


def _pow2(n):
    raise NotImplementedError("only callable from compiled code")


@overload(_reduce, jit_options=_INLINE)
def _reduce_typed(w):
    if w == types.float32:
        return lambda w: _reduce_f32(w)
    if w == types.float64:
        return lambda w: _reduce_f64(w)
    return None


@overload(_pow2, jit_options=_INLINE)
def _pow2_typed(n):
    if n == types.float32:
        return lambda n: _pow2_f32(n)
    if n == types.float64:
        return lambda n: _pow2_f64(n)
    return None


# ---------------------------------------------------------------------------
# The three functions, written once for both float types.
# ---------------------------------------------------------------------------
@njit(**_INLINE)
def _exp(x):
    """``exp(x) = (1 + q) * 2**h * 2**(n-h)``, ``h = floor(n/2)``.

    Two factors, each a normal float even when ``2**n`` is not (n < -126 for
    a subnormal result, or n = 128 at the float32 overflow edge).
    ``(1 + q) * 2**h`` is exact; the second product rounds once.
    """
    q, n = _reduce(x)
    h = np.floor(n * _HALF)
    return ((_ONE + q) * _pow2(h)) * _pow2(n - h)


@njit(**_INLINE)
def _sigmoid(x):
    """``1 / (1 + exp(-x))``, from ``z = exp(-|x|)`` so that exp never overflows.

    x >= 0: ``1 / (1 + z)``;  x < 0: ``z / (1 + z)`` (which keeps tiny results,
    down to subnormals, instead of rounding them to 0 as ``1/(1 + huge)`` would).
    """
    z = _exp(-abs(x))
    return (_ONE if x >= _ZERO else z) / (_ONE + z)


@njit(**_INLINE)
def _tanh(x):
    """``tanh(x) = -expm1(-2|x|) / (2 + expm1(-2|x|))``, with x's sign.

    With ``e = expm1(w) = exp(w) - 1`` for ``w = -2|x|``: ``(1 - exp(w)) /
    (1 + exp(w)) = -e / (2 + e)``.  Through expm1 there is no cancellation
    for small |x| (``1 - exp(w)`` would lose most digits).  ``e`` comes from
    the reduction as ``(s - 1) + s*q`` with ``s = 2**n``: both terms are
    exact or nearly, and for small |x|, n = 0 and ``e`` is just ``q``.
    """
    ax = abs(x)
    if ax > _TANH_CLAMP:     # tanh is 1 to the last bit there; keeps n >= -58
        ax = _TANH_CLAMP
    q, n = _reduce(-_TWO * ax)
    s = _pow2(n)             # n >= -58: one normal factor is enough
    e = (s - _ONE) + s * q
    return math.copysign(-e / (_TWO + e), x)   # copysign keeps tanh(-0.0) = -0.0


# ---------------------------------------------------------------------------
# The kernel.  One loop per function (no op-code test inside a loop): each
# loop body is straight-line arithmetic, so each loop is vectorised.
# ---------------------------------------------------------------------------
@njit(**_INLINE)
def vmath_contiguous(kind, a, out):
    """``out[i] = f(a[i])`` for f = exp, sigmoid or tanh (``kind`` 0, 1, 2).

    ``a`` and ``out`` are 1-D runs of the same float type (float32 or
    float64) and of the same length.
    """
    n = out.shape[0]
    if kind == _EXP:
        for i in range(n):
            out[i] = _exp(a[i])
    elif kind == _SIGMOID:
        for i in range(n):
            out[i] = _sigmoid(a[i])
    else:
        for i in range(n):
            out[i] = _tanh(a[i])


CHUNK = 16384    # elements per parallel task, as in elementwise.py


@njit(**_PARALLEL)
def vmath_contiguous_parallel(kind, a, out):
    """:func:`vmath_contiguous` on chunks of ``CHUNK`` elements, one ``prange`` task each.

    (A separate driver, as in elementwise.py: a process on one thread never
    compiles this ``parallel=True`` function, which takes longer to compile.)
    """
    n = out.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        vmath_contiguous(kind, a[s:e], out[s:e])


def unary_contiguous(op, a, out, p0=0.0, p1=0.0):
    """Drop-in for the 'math' family's contiguous kernel, for exp/sigmoid/tanh.

    ``op`` is a scalar_ops code in ``OPS``; ``p0``/``p1`` are unused.  More
    than one chunk of work on more than one thread runs the parallel driver.
    """
    n = out.shape[0]
    if n > CHUNK and numba.get_num_threads() > 1:
        vmath_contiguous_parallel(KIND[op], a, out)
    else:
        vmath_contiguous(KIND[op], a, out)

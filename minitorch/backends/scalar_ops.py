"""The scalar functions every elementwise kernel applies, one op code each.

(They call no helper functions of their own: a backend compiles each of
these functions, and a plain Python helper could not be called from the
compiled code.)

These are plain Python functions of numbers.  Each backend compiles them for
its device (``numba.njit`` on the CPU, ``numba.cuda.jit(device=True)`` on the
GPU), so an op's arithmetic is written once for both backends.

A kernel receives an *op code*, an integer, and calls ``unary``/``binary``/
``compare`` with it for each element.  Because the op code does not change
inside the loop, LLVM hoists the ``if`` chain out of it ("loop unswitching")
and the loop runs as fast as one written for a single op, while one compiled
kernel serves the whole family.  That keeps compile time and the disk cache
small.
"""

import math

# ---------------------------------------------------------------------------
# Unary op codes: out = f(x, p0, p1).  p0 and p1 carry parameters such as the
# bounds of clamp or the slope of leaky_relu.
# ---------------------------------------------------------------------------
IDENTITY = 0      # also a cast: the store converts to the output dtype
NEG = 1
ABS = 2
EXP = 3
LOG = 4
SQRT = 5
SIN = 6
COS = 7
TAN = 8
TANH = 9
SIGMOID = 10
RELU = 11
FLOOR = 12
CEIL = 13
ROUND = 14        # round half to even, as torch.round
TRUNC = 15
SIGN = 16
RECIPROCAL = 17
LOG1P = 18
EXPM1 = 19
LOG2 = 20
LOG10 = 21
ASIN = 22
ACOS = 23
ATAN = 24
SINH = 25
COSH = 26
ERF = 27
RSQRT = 28
SQUARE = 29
CLAMP = 30        # p0 = min (or -inf), p1 = max (or +inf)
LEAKY_RELU = 31   # p0 = negative slope
POW_SCALAR = 32   # x ** p0
RPOW_SCALAR = 33  # p0 ** x
ELU = 34          # p0 = alpha
SOFTPLUS = 35     # p0 = beta, p1 = threshold
GELU = 36         # exact (erf) form
GELU_TANH = 37
SILU = 38
LOG_SIGMOID = 39
FRAC = 40
LOGICAL_NOT = 41
BITWISE_NOT = 42
IS_NAN = 43       # 43-45 give bools: the caller passes a bool output array
IS_INF = 44
IS_FINITE = 45
ASINH = 46
ACOSH = 47
ATANH = 48
ERFC = 49
HARDTANH = 50     # p0 = min, p1 = max (same arithmetic as clamp)
MISH = 51
SIGMOID_GRAD = 52  # s * (1 - s) given s = sigmoid(x): used by fused backward kernels
NAN_TO_NUM = 53    # p0 = nan value (posinf/neginf handled by clamp afterwards)
EXP2 = 54          # 2 ** x


UNARY_FAST_OPS = (IDENTITY, NEG, ABS, RELU, SQUARE, CLAMP, LEAKY_RELU)


def unary_fast(op, x, p0, p1):
    """The cheap unary ops, a family small enough for LLVM to unswitch and vectorise."""
    if op == NEG:
        return -x
    elif op == ABS:
        return abs(x)
    elif op == RELU:
        # Not ``x * 0``: that is -0.0 for negative x and NaN for -inf.  NaN stays NaN.
        return x if x > 0 or x != x else 0.0
    elif op == SQUARE:
        return x * x
    elif op == CLAMP:
        # NaN stays NaN: comparisons with NaN are false.
        # A NaN bound makes every result NaN, as min(max(x, lo), hi) in PyTorch.
        if p0 != p0 or p1 != p1:
            return p0 + p1
        if x < p0:
            return p0
        if x > p1:
            return p1
        return x
    elif op == LEAKY_RELU:
        return x if x > 0 else x * p0
    return x


def unary(op, x, p0, p1):
    """Apply unary op ``op`` to one floating-point number ``x``.

    Compiled for float32 and float64 only; integer tensors either use
    :func:`unary_int` or are converted to float first (``sqrt`` of an int
    tensor is a float tensor in PyTorch too).  The kernels run with NumPy's
    error model, so ``1.0 / 0.0`` is ``inf`` rather than an exception.
    """
    if op == IDENTITY:
        return x
    elif op == NEG:
        return -x
    elif op == ABS:
        return abs(x)
    elif op == EXP:
        return math.exp(x)
    elif op == LOG:
        if x < 0:
            return math.nan
        if x == 0:
            return -math.inf
        return math.log(x)
    elif op == SQRT:
        if x < 0:
            return math.nan
        return math.sqrt(x)
    elif op == SIN:
        return math.sin(x)
    elif op == COS:
        return math.cos(x)
    elif op == TAN:
        return math.tan(x)
    elif op == TANH:
        return math.tanh(x)
    elif op == SIGMOID:
        # Written so that exp never overflows: for x < 0 use e^x / (1 + e^x).
        if x >= 0:
            return 1.0 / (1.0 + math.exp(-x))
        z = math.exp(x)
        return z / (1.0 + z)
    elif op == RELU:
        return x if x > 0 or x != x else 0.0
    # The rounding ops stay in floating point, as in PyTorch: floor(1e20) is 1e20.
    # Compiled, math.floor returns an int64, which NaN, inf and anything beyond
    # 2**63 do not fit; but every float of magnitude >= 2**52 is already whole,
    # so those (and NaN, inf) come back unchanged.  copysign keeps the sign of
    # a zero result: ceil(-0.5) is -0.0.
    elif op == FLOOR:
        if not abs(x) < 4503599627370496.0:
            return x
        return math.copysign(math.floor(x), x)
    elif op == CEIL:
        if not abs(x) < 4503599627370496.0:
            return x
        return math.copysign(math.ceil(x), x)
    elif op == ROUND:
        # Python's round() is round-half-to-even, like torch.round.
        if not abs(x) < 4503599627370496.0:
            return x
        return math.copysign(round(x), x)
    elif op == TRUNC:
        # floor or ceil towards zero (math.trunc would do, but NumPy's float32,
        # which the CUDA simulator computes with, has no __trunc__).
        if not abs(x) < 4503599627370496.0:
            return x
        return math.copysign(math.floor(x) if x >= 0 else math.ceil(x), x)
    elif op == SIGN:
        # PyTorch: sign(nan) and sign(-0.0) are both 0.
        if x > 0:
            return 1
        elif x < 0:
            return -1
        return 0
    elif op == RECIPROCAL:
        return 1.0 / x
    elif op == LOG1P:
        if x < -1:
            return math.nan
        if x == -1:
            return -math.inf
        return math.log1p(x)
    elif op == EXPM1:
        return math.expm1(x)
    elif op == LOG2:
        if x < 0:
            return math.nan
        if x == 0:
            return -math.inf
        return math.log2(x)
    elif op == LOG10:
        if x < 0:
            return math.nan
        if x == 0:
            return -math.inf
        return math.log10(x)
    elif op == ASIN:
        if x < -1 or x > 1:
            return math.nan
        return math.asin(x)
    elif op == ACOS:
        if x < -1 or x > 1:
            return math.nan
        return math.acos(x)
    elif op == ATAN:
        return math.atan(x)
    elif op == SINH:
        return math.sinh(x)
    elif op == COSH:
        return math.cosh(x)
    elif op == ERF:
        return math.erf(x)
    elif op == RSQRT:
        if x < 0:
            return math.nan
        return 1.0 / math.sqrt(x)
    elif op == SQUARE:
        return x * x
    elif op == CLAMP or op == HARDTANH:
        # NaN stays NaN: comparisons with NaN are false.
        # A NaN bound makes every result NaN, as min(max(x, lo), hi) in PyTorch.
        if p0 != p0 or p1 != p1:
            return p0 + p1
        if x < p0:
            return p0
        if x > p1:
            return p1
        return x
    elif op == LEAKY_RELU:
        return x if x > 0 else x * p0
    elif op == POW_SCALAR:
        # C's pow() results where Python's ``**`` would raise or go complex:
        # 0 ** negative is inf (-inf for -0.0 to an odd power), a finite
        # negative base to a non-integer power is NaN.  Compiled, math.floor
        # returns an int64, so it is only called below 2**52 (every float
        # beyond is a whole, even number).
        if x == 0 and p0 < 0:
            if p0 > -4503599627370496.0 and math.floor(p0) == p0 \
                    and math.floor(p0 * 0.5) != p0 * 0.5:
                return math.copysign(math.inf, x)
            return math.inf
        if x < 0 and x != -math.inf and abs(p0) < 4503599627370496.0 and math.floor(p0) != p0:
            return math.nan
        return x ** p0
    elif op == RPOW_SCALAR:
        if p0 == 0 and x < 0:
            if x > -4503599627370496.0 and math.floor(x) == x and math.floor(x * 0.5) != x * 0.5:
                return math.copysign(math.inf, p0)
            return math.inf
        if p0 < 0 and p0 != -math.inf and abs(x) < 4503599627370496.0 and math.floor(x) != x:
            return math.nan
        return p0 ** x
    elif op == ELU:
        return x if x > 0 else p0 * math.expm1(x)
    elif op == SOFTPLUS:
        # softplus(x) = log(1 + e^(beta x)) / beta, linear above the threshold.
        bx = x * p0
        if bx > p1:
            return x
        return math.log1p(math.exp(bx)) / p0
    elif op == GELU:
        return 0.5 * x * (1.0 + math.erf(x * 0.7071067811865476))
    elif op == GELU_TANH:
        inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + math.tanh(inner))
    elif op == SILU:
        if x >= 0:
            return x / (1.0 + math.exp(-x))
        z = math.exp(x)
        return x * z / (1.0 + z)
    elif op == LOG_SIGMOID:
        # log(sigmoid(x)) = -softplus(-x), computed without overflow.
        if x >= 0:
            return -math.log1p(math.exp(-x))
        return x - math.log1p(math.exp(x))
    elif op == FRAC:
        # x - trunc(x), in floating point (see FLOOR): 0 for huge x, NaN for inf.
        if x == math.inf or x == -math.inf:
            return math.nan
        if not abs(x) < 4503599627370496.0:
            return x - x
        return x - (math.floor(x) if x >= 0 else math.ceil(x))     # x - trunc(x), see TRUNC
    elif op == IS_NAN:
        return x != x
    elif op == IS_INF:
        return x == math.inf or x == -math.inf
    elif op == IS_FINITE:
        return x == x and x != math.inf and x != -math.inf
    elif op == ASINH:
        return math.asinh(x)
    elif op == ACOSH:
        if x < 1:
            return math.nan
        return math.acosh(x)
    elif op == ATANH:
        if x < -1 or x > 1:
            return math.nan
        if x == 1:
            return math.inf
        if x == -1:
            return -math.inf
        return math.atanh(x)
    elif op == ERFC:
        return math.erfc(x)
    elif op == MISH:
        # x * tanh(softplus(x))
        sp = x if x > 20.0 else math.log1p(math.exp(x))
        return x * math.tanh(sp)
    elif op == SIGMOID_GRAD:
        return x * (1.0 - x)
    elif op == NAN_TO_NUM:
        return p0 if x != x else x
    elif op == EXP2:
        return 2.0 ** x
    return x


# ---------------------------------------------------------------------------
# Binary op codes: out = f(x, y)
# ---------------------------------------------------------------------------
ADD = 0
SUB = 1
MUL = 2
DIV = 3           # true division (the caller promotes ints to float first)
POW = 4
MAXIMUM = 5       # NaN-propagating, like torch.maximum
MINIMUM = 6
FMOD = 7          # sign of the dividend (C's fmod)
REMAINDER = 8     # sign of the divisor (Python's %)
FLOOR_DIVIDE = 9
ATAN2 = 10
BITWISE_AND = 11
BITWISE_OR = 12
BITWISE_XOR = 13
HYPOT = 14
COPYSIGN = 15
RSUB = 16         # y - x, so that ``2 - t`` can use the scalar fast path
RDIV = 17         # y / x
FMAX = 20         # NaN-ignoring maximum
FMIN = 21
XLOGY = 22        # x * log(y), 0 where x == 0
SQUARED_DIFF = 23
LERP_HALF = 24    # reserved
THRESHOLD_MASK = 25  # 0 where x <= 0 else y: relu backward (x is the output)


ARITH_OPS = (ADD, SUB, MUL, DIV, RSUB, RDIV, THRESHOLD_MASK)


def arith(op, x, y):
    """The four rules of arithmetic (and their reversed forms) on floats, and ReLU's backward.

    A family of seven, kept apart from the long ``binary`` switch below (ReLU's
    backward ran five times slower there).  LLVM does not lift the op test out
    of a kernel's loop even for these seven, so the CPU backend runs ``+ - *
    /`` and ReLU's backward in kernels with the op fixed, which it vectorises
    (``cpu/elementwise.py``: ``ARITH_TWINS``, ``threshold_backward``).
    IEEE semantics: x / 0 is inf or nan.
    """
    if op == ADD:
        return x + y
    elif op == SUB:
        return x - y
    elif op == MUL:
        return x * y
    elif op == DIV:
        return x / y
    elif op == RSUB:
        return y - x
    elif op == THRESHOLD_MASK:
        # Not ``y * 0``: an inf gradient where the output was <= 0 gives 0, not NaN.
        # ``x <= 0``, not ``not x > 0``: a NaN passes its gradient, as PyTorch's
        # threshold_backward does.  ``x - x`` (x is a ReLU output, so 0 here) and
        # not ``0.0``: a zero of x's own type keeps every branch of this function
        # returning one type, which LLVM needs to vectorise them all.
        return x - x if x <= 0 else y
    return y / x


def binary(op, x, y):
    """Apply binary op ``op`` to two floating-point numbers (see :func:`binary_int`)."""
    if op == ADD:
        return x + y
    elif op == SUB:
        return x - y
    elif op == MUL:
        return x * y
    elif op == DIV:
        return x / y
    elif op == POW:
        # As POW_SCALAR in ``unary``.
        if x == 0 and y < 0:
            if y > -4503599627370496.0 and math.floor(y) == y and math.floor(y * 0.5) != y * 0.5:
                return math.copysign(math.inf, x)
            return math.inf
        if x < 0 and x != -math.inf and abs(y) < 4503599627370496.0 and math.floor(y) != y:
            return math.nan
        return x ** y
    elif op == MAXIMUM:
        if x != x:
            return x
        if y != y:
            return y
        return x if x > y else y
    elif op == MINIMUM:
        if x != x:
            return x
        if y != y:
            return y
        return x if x < y else y
    elif op == FMOD or op == REMAINDER or op == FLOOR_DIVIDE:
        # fmod: x - trunc(x / y) * y, with the sign of x (C's fmod); remainder:
        # Python's %, with the sign of y; floor_divide: Python's //, which is
        # (x - fmod(x, y)) / y rounded, so 1 // 0.1 is 9 (1 = 9 * 0.1 + 0.0999...)
        # where floor(1 / 0.1) would give 10.  All in floating point: 1e20 // 3
        # is 3.3e19 (compiled, math.floor returns an int64, so it is only
        # called below 2**52, where every float is whole already).
        if y == 0:
            return x / y if op == FLOOR_DIVIDE else math.nan
        if x != x or y != y or x == math.inf or x == -math.inf:
            return math.nan
        xd = x + 0.0                               # float64 (widens float32)
        yd = y + 0.0
        if yd == math.inf or yd == -math.inf:
            r = xd
        else:
            # fmod by long division in binary: take away the largest y * 2**k
            # that fits, then halve.  Each subtraction is exact (t <= r < 2t),
            # so the remainder is exact, whatever the size of x / y.
            ay = abs(yd)
            r = abs(xd)
            t = ay
            while t <= r * 0.5:
                t = t * 2.0
            while t >= ay:
                if r >= t:
                    r = r - t
                t = t * 0.5
            r = math.copysign(r, xd)
        if op == FMOD:
            return r
        if op == REMAINDER:
            if r != 0 and (r < 0) != (yd < 0):
                r += yd
            return r
        if yd == math.inf or yd == -math.inf:
            if xd == 0 or (xd < 0) == (yd < 0):
                return math.copysign(0.0, xd / yd)
            return -1.0
        div = (xd - r) / yd
        if r != 0 and (yd < 0) != (r < 0):
            div -= 1.0
        if div == 0:
            return math.copysign(0.0, xd / yd)
        if not abs(div) < 4503599627370496.0:
            return div
        fl = math.floor(div) + 0.0
        if div - fl > 0.5:
            fl += 1.0
        return fl
    elif op == ATAN2:
        return math.atan2(x, y)
    elif op == HYPOT:
        return math.hypot(x, y)
    elif op == COPYSIGN:
        return math.copysign(x, y)
    elif op == RSUB:
        return y - x
    elif op == RDIV:
        return y / x
    elif op == FMAX:
        if x != x:
            return y
        if y != y:
            return x
        return x if x > y else y
    elif op == FMIN:
        if x != x:
            return y
        if y != y:
            return x
        return x if x < y else y
    elif op == XLOGY:
        if y != y:
            return y
        if x == 0:
            return x * 0
        if y <= 0:
            return math.nan if y < 0 else -math.inf * x
        return x * math.log(y)
    elif op == SQUARED_DIFF:
        d = x - y
        return d * d
    elif op == THRESHOLD_MASK:
        # Not ``y * 0``: an inf gradient where the input was <= 0 gives 0, not NaN.
        # ``x <= 0``, not ``not x > 0``: a NaN passes its gradient, as PyTorch's
        # threshold_backward does.
        return 0.0 if x <= 0 else y
    return x


# ---------------------------------------------------------------------------
# Integer families.  Kept apart from the float functions because Numba types
# every branch of a function for the argument types: ``~x`` does not exist for
# floats, and routing int64 through float64 math would lose precision above
# 2**53.  These are compiled for integer (and bool) dtypes only.
# ---------------------------------------------------------------------------
UNARY_INT_OPS = (IDENTITY, NEG, ABS, SIGN, SQUARE, BITWISE_NOT, RELU)
BINARY_INT_OPS = (ADD, SUB, MUL, MAXIMUM, MINIMUM, FMAX, FMIN, FMOD, REMAINDER, FLOOR_DIVIDE,
                  BITWISE_AND, BITWISE_OR, BITWISE_XOR, RSUB, POW, SQUARED_DIFF,
                  THRESHOLD_MASK)


def unary_int(op, x):
    """Unary ops that keep integers integers."""
    # Widen to int64 first (``x + 0`` does it for every integer type): then
    # every branch returns int64, and storing into a narrower output (uint8,
    # int32) wraps around as in PyTorch.  Without it Numba would unify an
    # unsigned branch with a signed one into float64.
    x = x + 0
    if op == NEG:
        return -x
    elif op == ABS:
        return -x if x < 0 else x
    elif op == SIGN:
        return 1 if x > 0 else (-1 if x < 0 else 0)
    elif op == SQUARE:
        return x * x
    elif op == BITWISE_NOT:
        return ~x
    elif op == RELU:
        return x if x > 0 else x * 0
    return x


def binary_int(op, x, y):
    """Binary ops on integers, with PyTorch's integer semantics.

    Division by zero is checked by the caller before the kernel runs (PyTorch
    raises "ZeroDivisionError"), so ``//`` and ``%`` here never see y == 0.
    Operands are widened to int64 first, as in :func:`unary_int`.
    """
    x = x + 0
    y = y + 0
    if op == ADD:
        return x + y
    elif op == SUB:
        return x - y
    elif op == MUL:
        return x * y
    elif op == MAXIMUM or op == FMAX:
        # (fmax and fmin differ from maximum and minimum only for NaN, which integers lack.)
        return x if x > y else y
    elif op == MINIMUM or op == FMIN:
        return x if x < y else y
    elif op == FMOD:
        # C semantics: the result has the sign of the dividend.
        r = x % y
        if r != 0 and ((r < 0) != (x < 0)):
            r -= y
        return r
    elif op == REMAINDER:
        return x % y
    elif op == FLOOR_DIVIDE:
        return x // y
    elif op == BITWISE_AND:
        return x & y
    elif op == BITWISE_OR:
        return x | y
    elif op == BITWISE_XOR:
        return x ^ y
    elif op == RSUB:
        return y - x
    elif op == POW:
        # Exponentiation by squaring; negative exponents are rejected earlier.
        result = x * 0 + 1
        base = x
        e = y
        while e > 0:
            if e & 1:
                result *= base
            base *= base
            e >>= 1
        return result
    elif op == SQUARED_DIFF:
        d = x - y
        return d * d
    elif op == THRESHOLD_MASK:
        return y if x > 0 else y * 0
    return x


# ---------------------------------------------------------------------------
# Comparison and logical op codes: out (bool) = f(x, y)
# ---------------------------------------------------------------------------
EQ = 0
NE = 1
LT = 2
LE = 3
GT = 4
GE = 5
LOGICAL_AND = 6
LOGICAL_OR = 7
LOGICAL_XOR = 8


def compare(op, x, y):
    """Apply comparison or logical op ``op``; always returns a bool."""
    if op == EQ:
        return x == y
    elif op == NE:
        return x != y
    elif op == LT:
        return x < y
    elif op == LE:
        return x <= y
    elif op == GT:
        return x > y
    elif op == GE:
        return x >= y
    elif op == LOGICAL_AND:
        return (x != 0) and (y != 0)
    elif op == LOGICAL_OR:
        return (x != 0) or (y != 0)
    elif op == LOGICAL_XOR:
        return (x != 0) != (y != 0)
    return False

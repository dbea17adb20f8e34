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
        return x if x > 0 else x * 0
    elif op == SQUARE:
        return x * x
    elif op == CLAMP:
        # NaN stays NaN: comparisons with NaN are false.
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
        return x if x > 0 else x * 0
    elif op == FLOOR:
        return math.floor(x)
    elif op == CEIL:
        return math.ceil(x)
    elif op == ROUND:
        # Python's round() is round-half-to-even, like torch.round.
        return round(x)
    elif op == TRUNC:
        return math.trunc(x)
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
        if x < p0:
            return p0
        if x > p1:
            return p1
        return x
    elif op == LEAKY_RELU:
        return x if x > 0 else x * p0
    elif op == POW_SCALAR:
        # IEEE results where Python's ``**`` would raise.
        if x == 0 and p0 < 0:
            return math.inf
        if x < 0 and p0 != math.floor(p0):
            return math.nan
        return x ** p0
    elif op == RPOW_SCALAR:
        if p0 == 0 and x < 0:
            return math.inf
        if p0 < 0 and x != math.floor(x):
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
        return x - math.trunc(x)
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
THRESHOLD_MASK = 25  # y where x > 0 else 0: relu backward (x is the input)


ARITH_OPS = (ADD, SUB, MUL, DIV, RSUB, RDIV)


def arith(op, x, y):
    """The four rules of arithmetic (and their reversed forms) on floats.

    A family of six, small enough that LLVM lifts the op test out of the loop
    and vectorises each case.  IEEE semantics: x / 0 is inf or nan.
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
        if x == 0 and y < 0:
            return math.inf
        if x < 0 and y != math.floor(y):
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
    elif op == FMOD:
        # x - trunc(x / y) * y, computed in float64 (``+ 0.0`` widens float32),
        # where it is exact for float32 inputs.  When x / y rounds up to a whole
        # number the quotient is one too big and the residual gets the wrong
        # sign; one divisor put back fixes it (NumPy/C fmod has x's sign).
        if y == 0 or x != x or y != y:
            return math.nan
        xd = x + 0.0
        yd = y + 0.0
        r = xd - math.trunc(xd / yd) * yd
        if r != 0 and (r < 0) != (xd < 0):
            r += abs(yd) if xd > 0 else -abs(yd)
        return r
    elif op == REMAINDER:
        # Python's %: the result takes the divisor's sign.  Computed like NumPy,
        # as fmod then a shift by y, which stays right when x / y underflows.
        if y == 0 or x != x or y != y:
            return math.nan
        xd = x + 0.0
        yd = y + 0.0
        r = xd - math.trunc(xd / yd) * yd          # fmod, as above
        if r != 0 and (r < 0) != (xd < 0):
            r += abs(yd) if xd > 0 else -abs(yd)
        if r != 0 and (r < 0) != (yd < 0):
            r += yd
        return r
    elif op == FLOOR_DIVIDE:
        q = x / y
        if q != q or q == math.inf or q == -math.inf:
            return q
        return math.floor(q)
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
        return y if x > 0 else y * 0
    return x


# ---------------------------------------------------------------------------
# Integer families.  Kept apart from the float functions because Numba types
# every branch of a function for the argument types: ``~x`` does not exist for
# floats, and routing int64 through float64 math would lose precision above
# 2**53.  These are compiled for integer (and bool) dtypes only.
# ---------------------------------------------------------------------------
UNARY_INT_OPS = (IDENTITY, NEG, ABS, SIGN, SQUARE, BITWISE_NOT, RELU)
BINARY_INT_OPS = (ADD, SUB, MUL, MAXIMUM, MINIMUM, FMOD, REMAINDER, FLOOR_DIVIDE,
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
        return (x > 0) - (x < 0)
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
    elif op == MAXIMUM:
        return x if x > y else y
    elif op == MINIMUM:
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

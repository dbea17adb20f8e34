"""Elementwise ops: arithmetic, math functions, comparisons, ``where``, ``clamp``.

Each differentiable op is one ``Function``.  Its forward calls a kernel
through :mod:`.kernels`; its backward is written with other ops, so that with
``create_graph=True`` the backward is recorded too and can be differentiated
again.

Binary ops broadcast, so their backward must undo the broadcast: the
gradient for an input of shape (3, 1) of an output of shape (2, 3, 4) is
the output gradient summed over the stretched dims (``sum_to_shape``).
"""

from __future__ import annotations

import math
import builtins
from typing import Any, Callable

from ..autograd.function import Function
from ..autograd import forward_ad, grad_mode
from ..autograd.grad_mode import backward_builds_graph
from ..autograd.forward_ad import STATE as FORWARD_AD
from ..autocast_mode import STATE as AUTOCAST
from ..trace_mode import STATE as TRACE
from ..backends import scalar_ops
from ..dtype import bool_, get_default_dtype, result_type, can_cast, int64
from ..layout import broadcast_shapes
from ..tensor_base import TensorBase
from . import kernels
from .views import sum_to_shape
from .registry import declare
from .inplace_views import rebase_history
from .views import clone
from ..autograd import graph
from ..dtype import float64

__all__ = ["add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod",
           "pow", "neg", "maximum", "minimum", "fmax", "fmin", "atan2", "where", "clamp",
           "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
           "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
           "isnan", "isinf", "isfinite", "inplace", "lerp", "addcmul", "addcdiv",
           "copysign", "hypot", "xlogy", "nan_to_num", "square", "float_power", "isclose",
           "allclose", "equal"]


def _float_result(x: Any) -> Any:
    """int and bool inputs of a float function give the default float dtype."""
    return x.dtype if x.dtype.is_floating_point else get_default_dtype()


def _meta(x: Any) -> tuple | None:
    """What backward needs to know about an input: its shape and dtype (None for numbers)."""
    return (x._shape, x.dtype) if isinstance(x, TensorBase) else None


def _reduce_grad(g: TensorBase | None, meta: tuple | None) -> TensorBase | None:
    """The gradient for an input with ``meta`` (None if the input was a number)."""
    if g is None or meta is None:
        return None
    shape, dt = meta
    if not isinstance(g, TensorBase):
        return None
    if g._shape == shape and g.dtype is dt:
        return g                # the commonest case: no broadcast to undo, no cast
    g = sum_to_shape(g, shape)
    if g.dtype is not dt and dt.is_floating_point:
        g = g.to(dt)
    return g


# ---------------------------------------------------------------------------
# Binary arithmetic
# ---------------------------------------------------------------------------
class Add(Function):
    _backward_name = "AddBackward0"
    _number_edges = (0, 1)   # x * 2 has two edges, as in PyTorch

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any, alpha: Any = 1) -> TensorBase:
        ctx.alpha = alpha
        ctx.a, ctx.b = _meta(a), _meta(b)
        if alpha != 1:
            b = kernels.arith(b, alpha, scalar_ops.MUL) if isinstance(b, TensorBase) else b * alpha
        return kernels.arith(a, b, scalar_ops.ADD)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        ga = _reduce_grad(g, ctx.a) if ctx.needs_input_grad[0] else None
        gb = None
        if ctx.needs_input_grad[1]:
            gb = _reduce_grad(g if ctx.alpha == 1 else g * ctx.alpha, ctx.b)
        return ga, gb, None


class Sub(Function):
    _backward_name = "SubBackward0"
    _number_edges = (0, 1)

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any, alpha: Any = 1) -> TensorBase:
        ctx.alpha = alpha
        ctx.a, ctx.b = _meta(a), _meta(b)
        if alpha != 1:
            b = kernels.arith(b, alpha, scalar_ops.MUL) if isinstance(b, TensorBase) else b * alpha
        return kernels.arith(a, b, scalar_ops.SUB)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        ga = _reduce_grad(g, ctx.a) if ctx.needs_input_grad[0] else None
        gb = _reduce_grad(-g * ctx.alpha if ctx.alpha != 1 else -g, ctx.b) \
            if ctx.needs_input_grad[1] else None
        return ga, gb, None


class RSub(Sub):
    _backward_name = "RsubBackward1"
    _number_edges = ()       # 2 - x: one edge (PyTorch's rsub.Scalar)


class Mul(Function):
    _backward_name = "MulBackward0"
    _number_edges = (0, 1)

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> TensorBase:
        ctx.a, ctx.b = _meta(a), _meta(b)
        # Save only what backward needs: d/da needs b, d/db needs a.
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None,
                              b if (ctx.needs_input_grad[0] and isinstance(b, TensorBase)) else None)
        ctx.b_number = None if isinstance(b, TensorBase) else b
        return kernels.arith(a, b, scalar_ops.MUL)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        """The gradients of ``a * b`` for ``a`` and for ``b``.

        Args:
            ctx: what :meth:`forward` kept: ``ctx.saved_tensors`` is ``(a, b)``, each
            ``None`` unless the *other* input wants a gradient (a number ``b``
            is in ``ctx.b_number`` instead); ``ctx.a``/``ctx.b`` are the inputs'
            ``(shape, dtype)`` (``None`` for a number); ``ctx.needs_input_grad``.

            g: the gradient of the loss for ``a * b`` (the broadcast shape).

        Returns:
            ``(grad_a, grad_b)``: each has its input's shape and dtype (the
            gradient of an input that was broadcast is summed back to its shape:
            ``_reduce_grad`` does that), or is ``None`` for an input that wants no
            gradient.  Write it with tensor ops, so that with ``create_graph=True``
            the gradients can be differentiated again.  Example: ``a = [1., 2.]``,
            ``b = [[3.], [4.]]`` and ``g`` all ones of shape (2, 2) give
            ``grad_a = [7., 7.]`` and ``grad_b = [[3.], [3.]]``.
        """
        # Task 3.4: the gradients of a * b for a and for b, each with its input's shape and dtype.
        ### BEGIN SOLUTION
        a, b = ctx.saved_tensors
        if b is None:
            b = ctx.b_number
        ga = _reduce_grad(g * b, ctx.a) if ctx.needs_input_grad[0] else None
        gb = _reduce_grad(g * a, ctx.b) if ctx.needs_input_grad[1] else None
        return ga, gb
        ### END SOLUTION


class Div(Function):
    _backward_name = "DivBackward0"
    _number_edges = (0, 1)

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> TensorBase:
        ctx.a, ctx.b = _meta(a), _meta(b)
        ctx.save_for_backward(a if (ctx.needs_input_grad[1] and isinstance(a, TensorBase)) else None,
                              b if isinstance(b, TensorBase) else None)
        ctx.b_number = None if isinstance(b, TensorBase) else b
        ctx.a_number = None if isinstance(a, TensorBase) else a
        if not _dtype_of(a).is_floating_point and not _dtype_of(b).is_floating_point:
            # True division of integers gives the default float dtype.
            dt = get_default_dtype()
            a = kernels.cast(a, dt) if isinstance(a, TensorBase) else a
            b = kernels.cast(b, dt) if isinstance(b, TensorBase) else float(b)
        return kernels.arith(a, b, scalar_ops.DIV)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        """The gradients of ``a / b`` for ``a`` and for ``b``.

        Args:
            ctx: what :meth:`forward` kept: ``ctx.saved_tensors`` is ``(a, b)`` (``a``
            is ``None`` unless ``b`` wants a gradient; a number ``a`` or ``b`` is in
            ``ctx.a_number``/``ctx.b_number`` instead); ``ctx.a``/``ctx.b`` are the
            inputs' ``(shape, dtype)``; ``ctx.needs_input_grad``.

            g: the gradient of the loss for ``a / b``.

        Returns:
            ``(grad_a, grad_b)``, each with its input's shape and dtype, or ``None``
            for an input that wants no gradient; written with tensor ops (so that
            ``create_graph=True`` works).  Example: ``a = 3.``, ``b = 2.`` and
            ``g = 1.`` give ``(0.5, -0.75)``.
        """
        # Task 3.7: the gradients of a / b for a and for b, each with its input's shape and dtype.
        ### BEGIN SOLUTION
        a, b = ctx.saved_tensors
        if b is None:
            b = ctx.b_number
        if a is None:
            a = ctx.a_number
        ga = _reduce_grad(g / b, ctx.a) if ctx.needs_input_grad[0] else None
        gb = _reduce_grad(-g * a / (b * b), ctx.b) if ctx.needs_input_grad[1] else None
        return ga, gb
        ### END SOLUTION


def _dtype_of(x: Any):
    if isinstance(x, TensorBase):
        return x.dtype
    if isinstance(x, bool):
        return bool_
    return int64 if isinstance(x, int) else get_default_dtype()


class Pow(Function):
    _backward_name = "PowBackward1"

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> TensorBase:
        ctx.a, ctx.b = _meta(a), _meta(b)
        out = _pow_raw(a, b)
        ctx.save_for_backward(a if isinstance(a, TensorBase) else None,
                              b if isinstance(b, TensorBase) else None, out)
        ctx.a_number = None if isinstance(a, TensorBase) else a
        ctx.b_number = None if isinstance(b, TensorBase) else b
        return out

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        a, b, out = ctx.saved_tensors
        a = ctx.a_number if a is None else a
        b = ctx.b_number if b is None else b
        ga = gb = None
        if ctx.needs_input_grad[0]:
            if isinstance(b, TensorBase):
                # 0 where b == 0, as PyTorch's: 0 * a**-1 would be NaN at a == 0.
                ga = where(b == 0, 0.0, g * b * pow(a, b - 1))
            else:
                # d/da a**b = b * a**(b-1); 0 where b == 0 (PyTorch's convention).
                ga = g * 0 if b == 0 else g * b * pow(a, b - 1)
            ga = _reduce_grad(ga, ctx.a)
        if ctx.needs_input_grad[1]:
            # d/db a**b = a**b * log(a), taken as 0 where a == 0 and b >= 0.
            log_a = _log(a) if isinstance(a, TensorBase) else math.log(a) if a > 0 else \
                (float("-inf") if a == 0 else float("nan"))
            term = out * log_a
            if isinstance(a, TensorBase):
                term = where((a == 0) & (b >= 0), 0.0, term)
            elif a == 0:
                term = where(b >= 0, 0.0, term)
            gb = _reduce_grad(g * term, ctx.b)
        return ga, gb


class PowScalar(Pow):
    _backward_name = "PowBackward0"


def _pow_raw(a: Any, b: Any) -> TensorBase:
    dt = result_type(a, b)
    if not dt.is_floating_point:
        if isinstance(b, TensorBase):
            if bool((b < 0).any()):
                return _int_pow_negative(a, b)
        elif b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return kernels.arith(a, b, scalar_ops.POW)
    if isinstance(a, TensorBase) and not isinstance(b, TensorBase):
        if b == 2:
            return kernels.unary(kernels.cast(a, dt), scalar_ops.SQUARE)
        return kernels.unary(kernels.cast(a, dt), scalar_ops.POW_SCALAR, dt, float(b))
    if isinstance(b, TensorBase) and not isinstance(a, TensorBase):
        return kernels.unary(kernels.cast(b, dt), scalar_ops.RPOW_SCALAR, dt, float(a))
    return kernels.arith(a, b, scalar_ops.POW)


def _int_pow_negative(a: Any, b: TensorBase) -> TensorBase:
    """Integer ``a ** b`` where some exponents are negative: C's integer result.

    ``1 ** -n`` is 1, ``(-1) ** -n`` is +-1 by parity, any other base gives 0
    (the reciprocal truncated), as in PyTorch.
    """
    one = kernels.arith(kernels.arith(a, 0, scalar_ops.MUL), 1, scalar_ops.ADD) if isinstance(a, TensorBase) else 1
    positive = kernels.arith(a, kernels.arith(b, 0, scalar_ops.MAXIMUM), scalar_ops.POW)
    odd = kernels.compare(kernels.arith(b, 2, scalar_ops.REMAINDER), 0, scalar_ops.NE)
    minus_one = where(odd, kernels.arith(one, -1, scalar_ops.MUL), one)
    small = where(kernels.compare(a, 1, scalar_ops.EQ), one, where(kernels.compare(a, -1, scalar_ops.EQ), minus_one, 0))
    return where(kernels.compare(b, 0, scalar_ops.LT), small, positive).to(positive.dtype)


def _log(x: TensorBase) -> TensorBase:
    return Log.apply(x)


class _Binary(Function):
    """Base for binary ops whose backward is given by ``grad_formula``."""

    op = scalar_ops.ADD
    grad_formula: Callable = None

    @classmethod
    def forward(cls, ctx: Any, a: Any, b: Any) -> TensorBase:
        ctx.a, ctx.b = _meta(a), _meta(b)
        ctx.save_for_backward(a if isinstance(a, TensorBase) else None,
                              b if isinstance(b, TensorBase) else None)
        ctx.numbers = (a, b)
        dt = result_type(a, b)
        if not dt.is_floating_point and cls.op in (scalar_ops.ATAN2, scalar_ops.HYPOT, scalar_ops.COPYSIGN, scalar_ops.XLOGY):
            dt = get_default_dtype()
            a = kernels.cast(a, dt) if isinstance(a, TensorBase) else float(a)
            b = kernels.cast(b, dt) if isinstance(b, TensorBase) else float(b)
        return kernels.arith(a, b, cls.op)

    @classmethod
    def backward(cls, ctx: Any, g: TensorBase):
        a, b = ctx.saved_tensors
        a = ctx.numbers[0] if a is None else a
        b = ctx.numbers[1] if b is None else b
        ga, gb = cls.grad_formula(a, b, g)
        return (_reduce_grad(ga, ctx.a) if ctx.needs_input_grad[0] else None,
                _reduce_grad(gb, ctx.b) if ctx.needs_input_grad[1] else None)


def _binary_op(name: str, op: int, formula: Callable | None) -> type:
    cls = type(name, (_Binary,), {"_backward_name": name + "Backward0", "op": op,
                                  "grad_formula": staticmethod(formula) if formula else None})
    return cls


def _max_grad(a: Any, b: Any, g: TensorBase) -> tuple:
    # Where a == b the gradient is split equally, as in PyTorch.
    mask_a = (a > b).to(g.dtype) + (a == b).to(g.dtype) * 0.5
    return g * mask_a, g * (1 - mask_a)


def _min_grad(a: Any, b: Any, g: TensorBase) -> tuple:
    mask_a = (a < b).to(g.dtype) + (a == b).to(g.dtype) * 0.5
    return g * mask_a, g * (1 - mask_a)


Maximum = _binary_op("Maximum", scalar_ops.MAXIMUM, _max_grad)
Minimum = _binary_op("Minimum", scalar_ops.MINIMUM, _min_grad)
Fmax = _binary_op("Fmax", scalar_ops.FMAX, _max_grad)
Fmin = _binary_op("Fmin", scalar_ops.FMIN, _min_grad)
Atan2 = _binary_op("Atan2", scalar_ops.ATAN2, lambda a, b, g: _atan2_grad(a, b, g))
Fmod = _binary_op("Fmod", scalar_ops.FMOD, lambda a, b, g: (g, -g * _trunc_div(a, b)))
Remainder = _binary_op("Remainder", scalar_ops.REMAINDER,
                       lambda a, b, g: (g, -g * floor_divide(a, b)))
Hypot = _binary_op("Hypot", scalar_ops.HYPOT, lambda a, b, g: (g * a / hypot(a, b), g * b / hypot(a, b)))
Copysign = _binary_op("Copysign", scalar_ops.COPYSIGN,
                      lambda a, b, g: (_copysign_grad(a, b, g), g * 0))


def _atan2_grad(a: Any, b: Any, g: TensorBase) -> tuple:
    """d atan2(a, b): ``(b, -a) / (a^2 + b^2)``; 0 at the origin (PyTorch takes the
    reciprocal of the denominator as 0 there, so no NaN flows back)."""
    denominator = a * a + b * b
    recip = where(denominator == 0, 0.0, 1 / denominator)
    return g * b * recip, g * -a * recip


def _copysign_grad(a: TensorBase, b: Any, g: TensorBase) -> TensorBase:
    """d copysign(a, b) / da: +-1 (the signs of a and b agree or not), 0 where a == 0 (PyTorch's)."""
    one = g.new_ones(())
    return where(a == 0, 0.0, g * copysign(one, a) * copysign(one, b))
Xlogy = _binary_op("Xlogy", scalar_ops.XLOGY,
                   lambda a, b, g: (g * where(a == 0, 0.0, _log(_as_tensor_like(b, g))),
                                    g * a / b))


def _trunc_div(a: Any, b: Any) -> TensorBase:
    return Trunc.apply(div(a, b))


# ---------------------------------------------------------------------------
# Unary ops, from one table
# ---------------------------------------------------------------------------
class _Unary(Function):
    """Base for unary ops: ``grad_formula(x, y, g)`` gives d(loss)/dx from y = f(x)."""

    op = scalar_ops.IDENTITY
    float_only = True
    grad_formula: Callable = None

    @classmethod
    def compute(cls, x: TensorBase, p0: float = 0.0, p1: float = 0.0) -> TensorBase:
        """``f(x)`` itself: what ``forward`` computes, without recording anything."""
        if cls.float_only or x.dtype.is_floating_point:
            out_dt = _float_result(x) if cls.float_only else x.dtype
            return kernels.unary(kernels.cast(x, out_dt) if out_dt is not x.dtype else x,
                                 cls.op, out_dt, p0, p1)
        return kernels.unary(x, cls.op, x.dtype, integer=True)

    @classmethod
    def forward(cls, ctx: Any, x: TensorBase, p0: float = 0.0, p1: float = 0.0) -> TensorBase:
        y = cls.compute(x, p0, p1)
        ctx.save_for_backward(x, y)
        ctx.params = (p0, p1)
        return y

    @classmethod
    def backward(cls, ctx: Any, g: TensorBase):
        x, y = ctx.saved_tensors
        return cls.grad_formula(x, y, g, *ctx.params), None, None


def _unary_op(name: str, op: int, formula: Callable, float_only: bool = True,
              backward_name: str | None = None) -> type:
    return type(name, (_Unary,), {"_backward_name": backward_name or name + "Backward0",
                                  "op": op, "float_only": float_only,
                                  "grad_formula": staticmethod(formula)})


def _zero_grad(x: TensorBase, y: TensorBase, g: TensorBase, *p: Any) -> TensorBase:
    # zeros, not g * 0: an infinite g would give NaN (PyTorch: zeros_like(grad)).
    return g.new_zeros(g.shape)


#                 class name   op code          d(loss)/dx, given x, y = f(x), g = d(loss)/dy
Neg = _unary_op("Neg", scalar_ops.NEG, lambda x, y, g, *p: -g, float_only=False)
Abs = _unary_op("Abs", scalar_ops.ABS, lambda x, y, g, *p: g * sign(x), float_only=False)
Exp = _unary_op("Exp", scalar_ops.EXP, lambda x, y, g, *p: g * y)
Log = _unary_op("Log", scalar_ops.LOG, lambda x, y, g, *p: g / x)
Log2 = _unary_op("Log2", scalar_ops.LOG2, lambda x, y, g, *p: g / (x * math.log(2.0)))
Log10 = _unary_op("Log10", scalar_ops.LOG10, lambda x, y, g, *p: g / (x * math.log(10.0)))
Log1p = _unary_op("Log1p", scalar_ops.LOG1P, lambda x, y, g, *p: g / (x + 1),
                  backward_name="Log1PBackward0")
Exp2 = _unary_op("Exp2", scalar_ops.EXP2, lambda x, y, g, *p: g * y * math.log(2.0))
Expm1 = _unary_op("Expm1", scalar_ops.EXPM1, lambda x, y, g, *p: g * (y + 1))
Sqrt = _unary_op("Sqrt", scalar_ops.SQRT, lambda x, y, g, *p: g / (2 * y))
Rsqrt = _unary_op("Rsqrt", scalar_ops.RSQRT, lambda x, y, g, *p: g * -0.5 * y / x)
Sin = _unary_op("Sin", scalar_ops.SIN, lambda x, y, g, *p: g * cos(x))
Cos = _unary_op("Cos", scalar_ops.COS, lambda x, y, g, *p: -g * sin(x))
Tan = _unary_op("Tan", scalar_ops.TAN, lambda x, y, g, *p: g * (1 + y * y))
Tanh = _unary_op("Tanh", scalar_ops.TANH, lambda x, y, g, *p: g * (1 - y * y))
Sigmoid = _unary_op("Sigmoid", scalar_ops.SIGMOID, lambda x, y, g, *p: g * y * (1 - y))
Asin = _unary_op("Asin", scalar_ops.ASIN, lambda x, y, g, *p: g * rsqrt(1 - x * x))
Acos = _unary_op("Acos", scalar_ops.ACOS, lambda x, y, g, *p: -g * rsqrt(1 - x * x))
Atan = _unary_op("Atan", scalar_ops.ATAN, lambda x, y, g, *p: g / (1 + x * x))
Sinh = _unary_op("Sinh", scalar_ops.SINH, lambda x, y, g, *p: g * cosh(x))
Cosh = _unary_op("Cosh", scalar_ops.COSH, lambda x, y, g, *p: g * sinh(x))
Asinh = _unary_op("Asinh", scalar_ops.ASINH, lambda x, y, g, *p: g * rsqrt(x * x + 1))
Acosh = _unary_op("Acosh", scalar_ops.ACOSH, lambda x, y, g, *p: g * rsqrt(x * x - 1))
Atanh = _unary_op("Atanh", scalar_ops.ATANH, lambda x, y, g, *p: g / (1 - x * x))
Erf = _unary_op("Erf", scalar_ops.ERF,
                lambda x, y, g, *p: g * (2 / math.sqrt(math.pi)) * exp(-(x * x)))
Erfc = _unary_op("Erfc", scalar_ops.ERFC,
                 lambda x, y, g, *p: g * (-2 / math.sqrt(math.pi)) * exp(-(x * x)))
Reciprocal = _unary_op("Reciprocal", scalar_ops.RECIPROCAL, lambda x, y, g, *p: -g * y * y)
Square = _unary_op("Square", scalar_ops.SQUARE, lambda x, y, g, *p: g * 2 * x, float_only=False,
                   backward_name="PowBackward0")
Relu = _unary_op("Relu", scalar_ops.RELU, lambda x, y, g, *p: _relu_grad(y, g),
                 float_only=False, backward_name="ReluBackward0")
Floor = _unary_op("Floor", scalar_ops.FLOOR, _zero_grad)
Ceil = _unary_op("Ceil", scalar_ops.CEIL, _zero_grad)
Round = _unary_op("Round", scalar_ops.ROUND, _zero_grad)
Trunc = _unary_op("Trunc", scalar_ops.TRUNC, _zero_grad)
Frac = _unary_op("Frac", scalar_ops.FRAC, lambda x, y, g, *p: g)
Sign = _unary_op("Sign", scalar_ops.SIGN, _zero_grad, float_only=False)
Clamp = _unary_op("Clamp", scalar_ops.CLAMP,
                  lambda x, y, g, lo, hi: where((x >= lo) & (x <= hi), g, 0.0),
                  float_only=False, backward_name="ClampBackward1")
LeakyRelu = _unary_op("LeakyRelu", scalar_ops.LEAKY_RELU,
                      lambda x, y, g, slope, _: where(x > 0, g, g * slope))
Elu = _unary_op("Elu", scalar_ops.ELU,
                lambda x, y, g, alpha, _: g * where(x > 0, 1.0, y + alpha).to(g.dtype))
Softplus = _unary_op("Softplus", scalar_ops.SOFTPLUS,
                     lambda x, y, g, beta, thr: g * where(x * beta > thr, 1.0,
                                                          sigmoid(x * beta)).to(g.dtype))
Gelu = _unary_op("Gelu", scalar_ops.GELU,
                 lambda x, y, g, *p: g * (0.5 * (1 + erf(x * 0.7071067811865476))
                                          + x * exp(-0.5 * x * x) * 0.3989422804014327))
GeluTanh = _unary_op("GeluTanh", scalar_ops.GELU_TANH, lambda x, y, g, *p: g * _gelu_tanh_grad(x),
                     backward_name="GeluBackward0")
Silu = _unary_op("Silu", scalar_ops.SILU,
                 lambda x, y, g, *p: g * (sigmoid(x) * (1 + x * (1 - sigmoid(x)))))
LogSigmoid = _unary_op("LogSigmoid", scalar_ops.LOG_SIGMOID,
                       lambda x, y, g, *p: g * sigmoid(-x),
                       backward_name="LogSigmoidBackward0")
Mish = _unary_op("Mish", scalar_ops.MISH, lambda x, y, g, *p: g * _mish_grad(x))
PowTensorScalar = _unary_op("PowTensorScalar", scalar_ops.POW_SCALAR,
                            lambda x, y, g, e, _: g * 0 if e == 0 else g * e * pow(x, e - 1),
                            backward_name="PowBackward0")


def _relu_grad(y: TensorBase, g: TensorBase) -> TensorBase:
    """0 where the output ``y`` is <= 0, else ``g`` (PyTorch's threshold_backward: an inf
    ``g`` gives 0 there, not NaN, and a NaN output passes its gradient)."""
    if backward_builds_graph():
        return where(y <= 0, 0.0, g)          # the formula
    return kernels.threshold_backward(y, g)       # one kernel, no mask tensor


def _gelu_tanh_grad(x: TensorBase) -> TensorBase:
    k = 0.7978845608028654
    inner = k * (x + 0.044715 * x * x * x)
    t = tanh(inner)
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)


def _mish_grad(x: TensorBase) -> TensorBase:
    sp = Softplus.apply(x, 1.0, 20.0)
    t = tanh(sp)
    return t + x * (1 - t * t) * sigmoid(x)


def _unary_public(cls: type) -> Callable:
    def fn(input: TensorBase, *, out: TensorBase | None = None) -> TensorBase:
        if out is None and _untracked(input, None):
            return cls.compute(input)      # nothing to record: skip the Function machinery
        result = cls.apply(input)
        return write_out(result, out)
    fn.__name__ = cls.__name__.lower()
    fn.__doc__ = f"Elementwise ``{fn.__name__}`` (recorded as ``{cls._backward_name}``)."
    return fn


def write_out(result: TensorBase, out: TensorBase | None) -> TensorBase:
    if out is None:
        return result
    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {result.dtype._legacy} can't be cast to the desired "
                           f"output type {out.dtype._legacy}")
    if out._shape != result._shape:
        resize_out(out, result._shape)
    kernels.copy_into(out, result)
    return out


def resize_out(out: TensorBase, shape: tuple) -> None:
    if out.numel() != 0 and out._shape != shape:
        import warnings
        warnings.warn(f"An output with one or more elements was resized since it had shape "
                      f"{list(out._shape)}, which does not match the required output shape "
                      f"{list(shape)}.", UserWarning, stacklevel=3)
    out.resize_(shape)


exp = _unary_public(Exp)
exp2 = _unary_public(Exp2)
log = _unary_public(Log)
log2 = _unary_public(Log2)
log10 = _unary_public(Log10)
log1p = _unary_public(Log1p)
expm1 = _unary_public(Expm1)
sqrt = _unary_public(Sqrt)
rsqrt = _unary_public(Rsqrt)
sin = _unary_public(Sin)
cos = _unary_public(Cos)
tan = _unary_public(Tan)
tanh = _unary_public(Tanh)
sigmoid = _unary_public(Sigmoid)
asin = _unary_public(Asin)
acos = _unary_public(Acos)
atan = _unary_public(Atan)
sinh = _unary_public(Sinh)
cosh = _unary_public(Cosh)
asinh = _unary_public(Asinh)
acosh = _unary_public(Acosh)
atanh = _unary_public(Atanh)
erf = _unary_public(Erf)
erfc = _unary_public(Erfc)
reciprocal = _unary_public(Reciprocal)
def _not_implemented(x: TensorBase, name: str) -> NotImplementedError:
    return NotImplementedError(f'"{name}" not implemented for \'{x.dtype._legacy}\'')


def _rounding_public(cls: type, kernel_name: str) -> Callable:
    """floor/ceil/trunc/round: integers are already whole, so they come back unchanged."""
    public = _unary_public(cls)

    def fn(input: TensorBase, *, out: TensorBase | None = None) -> TensorBase:
        if input.dtype is bool_:
            raise _not_implemented(input, kernel_name)
        if not input.dtype.is_floating_point:
            return write_out(clone(input), out)
        return public(input, out=out)
    fn.__name__, fn.__doc__ = public.__name__, public.__doc__
    return fn


floor = _rounding_public(Floor, "floor_vml_cpu")
ceil = _rounding_public(Ceil, "ceil_vml_cpu")
trunc = _rounding_public(Trunc, "trunc_vml_cpu")


def frac(input: TensorBase, *, out: TensorBase | None = None) -> TensorBase:
    if not input.dtype.is_floating_point:
        raise _not_implemented(input, "frac_cpu")
    return write_out(Frac.apply(input), out)


sign = _unary_public(Sign)
def abs(input: TensorBase, *, out: TensorBase | None = None) -> TensorBase:  # noqa: A001
    if input.dtype is bool_:
        raise _not_implemented(input, "abs_cpu")
    return write_out(Abs.apply(input), out)


def neg(input: TensorBase, *, out: TensorBase | None = None) -> TensorBase:
    if input.dtype is bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return write_out(Neg.apply(input), out)


negative = neg
_relu = _unary_public(Relu)
_square = _unary_public(Square)


def relu(input: TensorBase, *, out: TensorBase | None = None) -> TensorBase:
    """``max(x, 0)`` elementwise; NaN stays NaN and negatives give +0.0 (recorded as ``ReluBackward0``)."""
    if input.dtype is bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return _relu(input, out=out)


def square(input: TensorBase, *, out: TensorBase | None = None) -> TensorBase:
    """``input * input``; a bool tensor squares to int64, as ``pow(bool, 2)`` does in PyTorch."""
    if input.dtype is bool_:
        input = kernels.cast(input, int64)
    return _square(input, out=out)
silu = _unary_public(Silu)
mish = _unary_public(Mish)
absolute = abs
arcsin, arccos, arctan = asin, acos, atan
fix = trunc


def round(input: TensorBase, *, decimals: int = 0, out: TensorBase | None = None) -> TensorBase:  # noqa: A001
    if not input.dtype.is_floating_point:
        if input.dtype is bool_ or decimals != 0:      # PyTorch rounds integers to 0 places only
            raise _not_implemented(input, "round_cpu")
        return write_out(clone(input), out)
    if decimals == 0:
        return write_out(Round.apply(input), out)
    scale = 10.0 ** decimals
    return write_out(Round.apply(input * scale) / scale, out)


def gelu(input: TensorBase, approximate: str = "none") -> TensorBase:
    if approximate == "tanh":
        return GeluTanh.apply(input)
    if approximate != "none":
        raise RuntimeError("approximate argument must be either none or tanh.")
    return Gelu.apply(input)


def leaky_relu(input: TensorBase, negative_slope: float = 0.01) -> TensorBase:
    return LeakyRelu.apply(input, float(negative_slope))


def elu(input: TensorBase, alpha: float = 1.0) -> TensorBase:
    return Elu.apply(input, float(alpha))


def softplus(input: TensorBase, beta: float = 1.0, threshold: float = 20.0) -> TensorBase:
    return Softplus.apply(input, float(beta), float(threshold))


def logsigmoid(input: TensorBase) -> TensorBase:
    return LogSigmoid.apply(input)


def clamp(input: TensorBase, min: Any = None, max: Any = None, *,  # noqa: A002
          out: TensorBase | None = None) -> TensorBase:
    """Limit each element to [min, max]; min and max may be numbers or tensors."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, TensorBase) or isinstance(max, TensorBase):
        result = input
        # (Maximum/Minimum themselves: one bound may be a number.)
        if min is not None:
            result = Maximum.apply(result, min)
        if max is not None:
            result = Minimum.apply(result, max)
        return write_out(result, out)
    # The result's dtype comes from the bounds as given (clamp(int_tensor, 0.5, -2)
    # is float), before a crossed pair is resolved below.
    float_bound = next((b for b in (min, max) if isinstance(b, float)), None)
    if min is not None and max is not None and min > max:
        min = max            # PyTorch computes min(max(x, min), max): everything becomes max
    lo = -math.inf if min is None else min
    hi = math.inf if max is None else max
    if not input.dtype.is_floating_point:
        if float_bound is not None:
            # clamp(int_tensor, 0.5) promotes like PyTorch: result is float.
            input = input.to(result_type(input, float_bound))
        else:
            # Integer bounds on an integer tensor: exact integer arithmetic.
            result = input
            if min is not None:
                result = kernels.arith(result, min, scalar_ops.MAXIMUM)
            if max is not None:
                result = kernels.arith(result, max, scalar_ops.MINIMUM)
            return write_out(result if result is not input else input.clone(), out)
    return write_out(Clamp.apply(input, float(lo), float(hi)), out)


clip = clamp


def clamp_min(input: TensorBase, min: Any) -> TensorBase:  # noqa: A002
    return clamp(input, min=min)


def clamp_max(input: TensorBase, max: Any) -> TensorBase:  # noqa: A002
    return clamp(input, max=max)


# ---------------------------------------------------------------------------
# Public binary functions
# ---------------------------------------------------------------------------
def _check_operand(x: Any, name: str) -> None:
    if not isinstance(x, (TensorBase, int, float, bool)) and not kernels.is_number(x):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(x).__name__}")


def _untracked(a: Any, b: Any) -> bool:
    """Would no graph be recorded?  Grad mode is off, or no tensor input requires grad.

    Then an op is just its forward computation, and the hot arithmetic ops
    call it directly, skipping the ``Function`` machinery (the backward pass
    itself runs such ops: gradients of gradients are not recorded).
    """
    if FORWARD_AD.enabled or AUTOCAST.enabled or TRACE.recorder is not None:
        return False        # tangents, autocast's casts, a compiler's trace: in Function.apply
    if not grad_mode.STATE.grad_enabled:
        return True
    return not (isinstance(a, TensorBase) and a.requires_grad
                or isinstance(b, TensorBase) and b.requires_grad)


def add(input: Any, other: Any, *, alpha: Any = 1, out: TensorBase | None = None) -> TensorBase:
    """``input + alpha * other`` with broadcasting and type promotion."""
    _check_operand(other, "add")
    _check_alpha(input, other, alpha)
    if not isinstance(input, TensorBase):
        input, other = other, input
    if alpha == 1 and out is None and _untracked(input, other):
        return kernels.arith(input, other, scalar_ops.ADD)
    return write_out(Add.apply(input, other, alpha), out)


def _check_alpha(input: Any, other: Any, alpha: Any) -> None:
    if isinstance(alpha, float) and not result_type(input, other).is_floating_point:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


def sub(input: Any, other: Any, *, alpha: Any = 1, out: TensorBase | None = None) -> TensorBase:
    _check_operand(other, "sub")
    _check_alpha(input, other, alpha)
    if _dtype_of(input) is bool_ and _dtype_of(other) is bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if _dtype_of(input) is bool_ or _dtype_of(other) is bool_:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    if not isinstance(input, TensorBase):
        if alpha == 1 and out is None and _untracked(other, None):
            return kernels.arith(other, input, scalar_ops.RSUB)     # 2 - t: t (rsub) 2
        return write_out(RSub.apply(input, other, alpha), out)
    if alpha == 1 and out is None and _untracked(input, other):
        return kernels.arith(input, other, scalar_ops.SUB)
    return write_out(Sub.apply(input, other, alpha), out)


subtract = sub


def mul(input: Any, other: Any, *, out: TensorBase | None = None) -> TensorBase:
    _check_operand(other, "mul")
    if not isinstance(input, TensorBase):
        input, other = other, input
    if out is None and _untracked(input, other):
        return kernels.arith(input, other, scalar_ops.MUL)
    return write_out(Mul.apply(input, other), out)


multiply = mul


def div(input: Any, other: Any, *, rounding_mode: str | None = None,
        out: TensorBase | None = None) -> TensorBase:
    """True division; ``rounding_mode='trunc'`` or ``'floor'`` rounds the quotient."""
    _check_operand(other, "div")
    if rounding_mode is None:
        if not isinstance(input, TensorBase) and isinstance(other, TensorBase):
            # number / tensor is number * reciprocal(tensor), as PyTorch records it.
            return write_out(Mul.apply(Reciprocal.apply(other), input), out)
        if (out is None and isinstance(input, TensorBase) and _untracked(input, other)
                and (_dtype_of(input).is_floating_point or _dtype_of(other).is_floating_point)):
            return kernels.arith(input, other, scalar_ops.DIV)
        return write_out(Div.apply(input, other), out)
    if rounding_mode == "floor":
        with grad_mode.no_grad():
            q = floor_divide(input, other)
        return write_out(DivRounded.apply(input, other, q), out)
    if rounding_mode == "trunc":
        dt = result_type(input, other)
        if dt.is_floating_point:
            with grad_mode.no_grad():
                q = Trunc.apply(Div.apply(input, other))
            return write_out(DivRounded.apply(input, other, q), out)
        _check_int_zero(other, input)
        q = floor_divide(input, other)
        r = kernels.arith(input, other, scalar_ops.FMOD)
        fix = ((r != 0) & ((r < 0) != (_as_tensor_like(other, q) < 0)))
        return write_out(q + fix.to(q.dtype), out)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


divide = div
true_divide = div


def _as_tensor_like(x: Any, like: TensorBase, dtype: Any = None) -> TensorBase:
    """``x``, or the number ``x`` as a 0-d tensor on ``like``'s device, of ``dtype`` (default
    ``like``'s)."""
    return x if isinstance(x, TensorBase) else like.new_full((), x, dtype=dtype)


def _check_int_zero(other: Any, input: Any = None) -> None:
    """Integer division by zero raises (PyTorch's "ZeroDivisionError"), unless nothing is divided."""
    if any(isinstance(t, TensorBase) and t.numel() == 0 for t in (input, other)):
        return
    if isinstance(other, TensorBase):
        if not other.dtype.is_floating_point and bool((other == 0).any()):
            raise RuntimeError("ZeroDivisionError")
    elif not isinstance(other, float) and other == 0:
        raise RuntimeError("ZeroDivisionError")


class FloorDivide(Function):
    """``input // other``: recorded in the graph, but PyTorch defines no derivative for it.

    The result of ``x // 2`` requires grad when ``x`` does (it is not a leaf),
    and a backward through it raises, as in PyTorch.  (``div(x, y,
    rounding_mode='floor')`` is differentiable: its gradient is zero.)
    """

    _backward_name = "NotImplemented"
    _number_edges = (0, 1)

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> TensorBase:
        return kernels.arith(a, b, scalar_ops.FLOOR_DIVIDE)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        raise RuntimeError("derivative for aten::floor_divide is not implemented")


class DivRounded(Function):
    """``div`` with a ``rounding_mode``: a step function, so its gradient is zero."""

    _backward_name = "DivBackward2"
    _number_edges = (0, 1)

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any, rounded: TensorBase) -> TensorBase:
        ctx.a, ctx.b = _meta(a), _meta(b)
        return rounded

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        zero = g.new_zeros(g.shape)              # (not g * 0, which is NaN where g is inf)
        return _reduce_grad(zero, ctx.a), _reduce_grad(zero, ctx.b), None


def floor_divide(input: Any, other: Any, *, out: TensorBase | None = None) -> TensorBase:
    dt = result_type(input, other)
    if dt is bool_:
        raise _not_implemented(input if isinstance(input, TensorBase) else other, "div_floor_cpu")
    if not dt.is_floating_point:
        _check_int_zero(other, input)
    return write_out(FloorDivide.apply(input, other), out)


def remainder(input: Any, other: Any, *, out: TensorBase | None = None) -> TensorBase:
    if result_type(input, other) is bool_:
        raise _not_implemented(input if isinstance(input, TensorBase) else other, "remainder_cpu")
    if not result_type(input, other).is_floating_point:
        _check_int_zero(other, input)
    if not isinstance(input, TensorBase):
        # ``100.5 % int_tensor`` is a float: the number keeps its own category.
        input = _as_tensor_like(input, other, result_type(input, other))
    return write_out(Remainder.apply(input, other), out)


def fmod(input: TensorBase, other: Any, *, out: TensorBase | None = None) -> TensorBase:
    if result_type(input, other) is bool_:
        raise _not_implemented(input, "fmod_cpu")
    if not result_type(input, other).is_floating_point:
        _check_int_zero(other, input)
    return write_out(Fmod.apply(input, other), out)


def pow(input: Any, exponent: Any, *, out: TensorBase | None = None) -> TensorBase:  # noqa: A001
    """``input ** exponent``; either may be a number."""
    if not isinstance(input, TensorBase) and not isinstance(exponent, TensorBase):
        raise TypeError("pow() needs at least one tensor argument")
    broadcast_shapes(kernels.shape_of(input), kernels.shape_of(exponent))  # shapes first
    if isinstance(exponent, TensorBase) and result_type(input, exponent) is bool_:
        # bool ** bool_tensor has no kernel (bool_tensor ** True is fine).
        raise _not_implemented(exponent, "pow")
    if isinstance(input, TensorBase) and not isinstance(exponent, TensorBase):
        dt = result_type(input, exponent)
        if dt.is_floating_point:
            src = input if input.dtype is dt else input.to(dt)
            if exponent == 2:
                return write_out(Square.apply(src), out)
            return write_out(PowTensorScalar.apply(src, float(exponent)), out)
        return write_out(PowScalar.apply(input, exponent), out)
    return write_out(Pow.apply(input, exponent), out)


def float_power(input: Any, exponent: Any) -> TensorBase:
    a = input.to(float64) if isinstance(input, TensorBase) else float(input)
    b = exponent.to(float64) if isinstance(exponent, TensorBase) else float(exponent)
    return pow(a, b)


def _require_tensors(name: str, input: Any, other: Any) -> None:
    """Ops whose PyTorch signature is ``(Tensor input, Tensor other)`` take no numbers."""
    for pos, (arg, x) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(x, TensorBase):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{type(x).__name__}")


def maximum(input: TensorBase, other: TensorBase, *, out: TensorBase | None = None) -> TensorBase:
    _require_tensors("maximum", input, other)
    return write_out(Maximum.apply(input, other), out)


def minimum(input: TensorBase, other: TensorBase, *, out: TensorBase | None = None) -> TensorBase:
    _require_tensors("minimum", input, other)
    return write_out(Minimum.apply(input, other), out)


def fmax(input: TensorBase, other: TensorBase) -> TensorBase:
    _require_tensors("fmax", input, other)
    return Fmax.apply(input, other)


def fmin(input: TensorBase, other: TensorBase) -> TensorBase:
    _require_tensors("fmin", input, other)
    return Fmin.apply(input, other)


def atan2(input: TensorBase, other: TensorBase) -> TensorBase:
    _require_tensors("atan2", input, other)
    return Atan2.apply(input, other)


arctan2 = atan2


def hypot(input: TensorBase, other: TensorBase) -> TensorBase:
    _require_tensors("hypot", input, other)
    broadcast_shapes(input._shape, other._shape)             # shapes are checked first
    if not result_type(input, other).is_floating_point:
        raise _not_implemented(input, "hypot_cpu")      # no integer hypot, unlike atan2
    return Hypot.apply(input, other)


def copysign(input: Any, other: Any) -> TensorBase:
    if not isinstance(input, TensorBase):
        input = _as_tensor_like(input, other)
    return Copysign.apply(input, other)


def xlogy(input: Any, other: Any) -> TensorBase:
    if not isinstance(input, TensorBase):
        input = _as_tensor_like(input, other)
    return Xlogy.apply(input, other)


def lerp(input: TensorBase, end: TensorBase, weight: Any) -> TensorBase:
    """``input + weight * (end - input)``; ``input`` and ``end`` must have one float dtype."""
    broadcast_shapes(input._shape, end._shape)                # shapes are checked first
    if end.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {input.dtype} for `end` but got dtype {end.dtype}")
    if not input.dtype.is_floating_point:
        raise _not_implemented(input, "lerp_kernel_scalar")
    # PyTorch's two formulas: from ``input`` for small weights, from ``end`` for large ones
    # (exact at weight 1; and lerp(0, inf, 0.5) is inf - inf = nan, as there).
    diff = end - input
    if not isinstance(weight, TensorBase):
        return input + weight * diff if builtins.abs(weight) < 0.5 else end - diff * (1 - weight)
    return where(weight.abs() < 0.5, input + weight * diff, end - diff * (1 - weight))


def _pointwise_value(name: str, value: Any, *tensors: TensorBase) -> Any:
    """``value`` converted to the dtype of ``input (op) tensor1 (op) tensor2``, as PyTorch does.

    The result dtype comes from the three tensors alone (``addcmul`` of int64
    tensors is int64 even with ``value=0.5``, which becomes 0); a bool result
    has no kernel.
    """
    broadcast_shapes(*(t._shape for t in tensors))          # shapes are checked first
    dt = result_type(*tensors)
    if dt is bool_:
        raise _not_implemented(tensors[0], f"{name}_cpu_out")
    return value if dt.is_floating_point else builtins.int(value)


def addcmul(input: TensorBase, tensor1: TensorBase, tensor2: TensorBase, *, value: Any = 1) -> TensorBase:
    """``input + value * tensor1 * tensor2``, in the dtype the three tensors promote to."""
    value = _pointwise_value("addcmul", value, input, tensor1, tensor2)
    dt = result_type(input, tensor1, tensor2)
    # (Converted first: value * bool_tensor alone would be int64 where the result is int32.)
    return input + value * tensor1.to(dt) * tensor2.to(dt)


def addcdiv(input: TensorBase, tensor1: TensorBase, tensor2: TensorBase, *, value: Any = 1) -> TensorBase:
    """``input + value * tensor1 / tensor2`` (true division: integer tensor1/tensor2 are refused)."""
    broadcast_shapes(input._shape, tensor1._shape, tensor2._shape)   # shapes are checked first
    if not _dtype_of(tensor1).is_floating_point and not _dtype_of(tensor2).is_floating_point:
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future  "
                           "release addcdiv will perform a true division of tensor1 and tensor2. "
                           "The historic addcdiv behavior can be implemented as (input + value * "
                           "torch.trunc(tensor1 / tensor2)).to(input.dtype) using "
                           "torch.trunc for floating point inputs.")
    dt = result_type(input, tensor1, tensor2)
    return input + value * tensor1.to(dt) / tensor2.to(dt)


def nan_to_num(input: TensorBase, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> TensorBase:
    import numpy as np
    if not input.dtype.is_floating_point:
        return input.clone()
    info = np.finfo(input.dtype.np)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    y = where(isnan(input), nan, input)
    return where(y == math.inf, hi, where(y == -math.inf, lo, y))


# ---------------------------------------------------------------------------
# Comparisons and logic (never differentiable)
# ---------------------------------------------------------------------------
def _comparison(op: int, name: str, tensor_only: bool = False) -> Callable:
    def fn(input: Any, other: Any, *, out: TensorBase | None = None) -> TensorBase:
        if tensor_only:
            _require_tensors(name, input, other)
        if not isinstance(other, TensorBase) and not kernels.is_number(other):
            raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                            f"{type(other).__name__}")
        return write_out(kernels.compare(input, other, op), out)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}``: a bool tensor."
    return fn


eq = _comparison(scalar_ops.EQ, "eq")
ne = _comparison(scalar_ops.NE, "ne")
lt = _comparison(scalar_ops.LT, "lt")
le = _comparison(scalar_ops.LE, "le")
gt = _comparison(scalar_ops.GT, "gt")
ge = _comparison(scalar_ops.GE, "ge")
logical_and = _comparison(scalar_ops.LOGICAL_AND, "logical_and", tensor_only=True)
logical_or = _comparison(scalar_ops.LOGICAL_OR, "logical_or", tensor_only=True)
logical_xor = _comparison(scalar_ops.LOGICAL_XOR, "logical_xor", tensor_only=True)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def logical_not(input: TensorBase) -> TensorBase:
    return kernels.compare(input, 0, scalar_ops.EQ)


def _bitwise(op: int, name: str) -> Callable:
    def fn(input: Any, other: Any) -> TensorBase:
        broadcast_shapes(kernels.shape_of(input), kernels.shape_of(other))   # shapes first
        for x in (input, other):
            if isinstance(x, TensorBase) and x.dtype.is_floating_point:
                raise _not_implemented(x, f"{name}_cpu")
            if isinstance(x, float):                  # int_tensor & 0.5: a float result
                raise NotImplementedError(f'"{name}_cpu" not implemented for \'Float\'')
        return kernels.arith(input, other, op)
    fn.__name__ = name
    return fn


bitwise_and = _bitwise(scalar_ops.BITWISE_AND, "bitwise_and")
bitwise_or = _bitwise(scalar_ops.BITWISE_OR, "bitwise_or")
bitwise_xor = _bitwise(scalar_ops.BITWISE_XOR, "bitwise_xor")


def bitwise_not(input: TensorBase) -> TensorBase:
    if input.dtype.is_floating_point:
        raise _not_implemented(input, "bitwise_not_cpu")
    if input.dtype is bool_:
        return logical_not(input)
    return kernels.unary(input, scalar_ops.BITWISE_NOT, integer=True)


def isnan(input: TensorBase) -> TensorBase:
    """NaN is the only value not equal to itself."""
    return kernels.compare(input, input, scalar_ops.NE)


def isinf(input: TensorBase) -> TensorBase:
    if not input.dtype.is_floating_point:
        return kernels.compare(input, input, scalar_ops.NE)
    return kernels.unary(input, scalar_ops.IS_INF, bool_)


def isfinite(input: TensorBase) -> TensorBase:
    if not input.dtype.is_floating_point:
        return kernels.compare(input, input, scalar_ops.EQ)
    return kernels.unary(input, scalar_ops.IS_FINITE, bool_)


def isclose(input: TensorBase, other: TensorBase, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> TensorBase:
    """``|input - other| <= atol + rtol * |other|`` elementwise (a bool tensor).

    Equal values are always close (so are infinities of the same sign); NaN is
    close to NaN only with ``equal_nan``.  Both tensors must have one dtype.
    """
    if isinstance(other, TensorBase) and input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype._legacy} did not match {other.dtype._legacy}")
    if rtol < 0 or atol < 0:
        raise RuntimeError(f"{'rtol' if rtol < 0 else 'atol'} must be greater than or equal to "
                           f"zero, but got {rtol if rtol < 0 else atol}")
    with grad_mode.no_grad():
        close = eq(input, other)
        if equal_nan and input.dtype.is_floating_point:
            close = logical_or(close, logical_and(isnan(input), isnan(other)))
        if input.dtype is not bool_ and (rtol or atol):
            x = input if input.dtype.is_floating_point else input.to(get_default_dtype())
            y = other if not isinstance(other, TensorBase) or other.dtype.is_floating_point \
                else other.to(get_default_dtype())
            error = sub(x, y).abs()
            allowed = add(mul(abs(y) if isinstance(y, TensorBase) else builtins.abs(y), rtol), atol)
            close = logical_or(close, logical_and(isfinite(error), le(error, allowed)))
    return close


def allclose(input: TensorBase, other: TensorBase, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True if every element is close (see :func:`isclose`); a Python bool."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input: TensorBase, other: TensorBase) -> bool:
    """True if both have the same shape and equal elements (NaN is never equal)."""
    kernels.check_same_device(input, other)
    if input._shape != other._shape:
        return False
    with grad_mode.no_grad():
        return bool(eq(input, other).all().item())


# ---------------------------------------------------------------------------
# where
# ---------------------------------------------------------------------------
class Where(Function):
    _backward_name = "WhereBackward0"
    _nondiff_args = (0,)     # the condition
    _number_edges = (1, 2)

    @staticmethod
    def forward(ctx: Any, cond: TensorBase, a: Any, b: Any) -> TensorBase:
        ctx.save_for_backward(cond)
        ctx.a, ctx.b = _meta(a), _meta(b)
        # Not b + c * (a - b): that would turn inf and nan in the unused branch
        # into nan.  The kernel selects instead.
        dt = result_type(a, b)
        shape = _broadcast3(cond, a, b)
        out = kernels.empty_elementwise(shape, kernels.compute_dtype(dt), kernels.device_of(cond, a, b),
                                     cond, a, b)
        kernels.select(cond, a, b, out)
        return kernels.cast(out, dt)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (cond,) = ctx.saved_tensors
        ga = _reduce_grad(where(cond, g, 0.0), ctx.a) if ctx.needs_input_grad[1] else None
        gb = _reduce_grad(where(cond, 0.0, g), ctx.b) if ctx.needs_input_grad[2] else None
        return None, ga, gb


def _broadcast3(*xs: Any) -> tuple:
    return broadcast_shapes(*[kernels.shape_of(x) for x in xs])


def where(condition: TensorBase, input: Any = None, other: Any = None, *,
          out: TensorBase | None = None) -> Any:
    """Elementwise select: ``input`` where ``condition`` is true, else ``other``."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if condition.dtype is not bool_:
        if condition.dtype.is_floating_point or condition.dtype is not bool_:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                               f"tensor with dtype {condition.dtype._legacy}")
    kernels.check_same_device(condition, input, other)
    return write_out(Where.apply(condition, input, other), out)


# ---------------------------------------------------------------------------
# In-place ops
# ---------------------------------------------------------------------------
def inplace(x: TensorBase, compute: Callable[[TensorBase], TensorBase], name: str = "") -> TensorBase:
    """Run ``compute(x)`` and store the result in ``x`` itself.

    Without autograd the result is written straight into ``x``.  With
    autograd, ``x`` takes over the history of the result (its ``grad_fn``
    becomes the new node, whose inputs include ``x``'s old history), and the
    version counter is bumped so that a backward needing the old value of
    ``x`` raises instead of silently using the new one.
    """
    if 0 in x._stride and any(st == 0 and n > 1 for n, st in zip(x._shape, x._stride)):
        # An expanded tensor: several of its elements are one memory cell, so writing
        # each element's own result would leave whichever came last (PyTorch refuses too).
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    recording = grad_mode.STATE.grad_enabled
    if recording and x.grad_fn is None and x._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if recording and x._base is not None and x._base.requires_grad:
        base = x._base
        if base.grad_fn is None and base._requires_grad:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation.")
    if recording:
        first_new_node = next(graph._sequence)
    result = compute(x)
    if recording and result.grad_fn is not None:
        _snapshot_saved_inputs(result, x, first_new_node)
    if not can_cast(result.dtype, x.dtype):
        raise RuntimeError(f"result type {result.dtype._legacy} can't be cast to the "
                           f"desired output type {x.dtype._legacy}")
    if result._shape != x._shape:
        raise RuntimeError(f"output with shape {list(x._shape)} doesn't match the broadcast "
                           f"shape {list(result._shape)}")
    kernels.copy_into(x, result)
    x._bump_version()
    if FORWARD_AD.enabled:
        forward_ad.copy_tangent(x, result)      # x now holds result's values: and its tangent
    if recording and (result.requires_grad or x.requires_grad):
        if result.dtype is not x.dtype:
            # ``x.lt_(1)``: bool values written into a float x, which keeps its history (a
            # node of x's dtype: a bool result could not carry a gradient).
            result = kernels.cast(result, x.dtype)
        if not result.requires_grad and x._base is None:
            # Overwritten with values that do not depend on the graph
            # (``y.zero_()``, ``y[...] = 1.``): y keeps requiring grad, but no
            # gradient may reach its old history.  (For a view, CopySlices
            # already sends none to the overwritten region.)
            result = _Overwrite.apply(x, result)
        rebase_history(x, result)
    return x


class _Overwrite(Function):
    """The node of a tensor overwritten in place by values that need no gradient."""

    _backward_name = "CopyBackwards"

    @staticmethod
    def forward(ctx: Any, old: TensorBase, new: TensorBase) -> TensorBase:
        return new

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        # The old values had no effect on the result: a zero gradient (as PyTorch's
        # fill_ and zero_ give), not None, so that x.clone().zero_() still reaches x.
        return g.new_zeros(g.shape), None


def _snapshot_saved_inputs(result: TensorBase, x: TensorBase, first_new_node: int) -> None:
    """Let the nodes just recorded for an in-place op keep the *old* value of ``x``.

    ``x.log_()`` records a LogBackward0 node that saved ``x``; writing the
    result into ``x`` would then make that node's own backward fail the
    version check.  PyTorch saves the original ``self`` for such ops, so we
    replace each tensor saved by the new nodes that shares ``x``'s data by a
    copy taken before the write.  The copy keeps the saved tensor's place in
    the graph (its ``grad_fn``), so double backward still reaches ``x``'s
    earlier history.  Nodes recorded before (``seq < first_new_node``) keep
    their references: a backward through them must still raise.
    """
    counter = x._version_counter
    stack, seen = [result.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen or node._seq < first_new_node:
            continue
        seen.add(id(node))
        saved = getattr(node, "_saved", None)
        if saved:
            node._saved = [(_frozen_copy(t), 0) if t is not None and t._version_counter is counter
                           else (t, v) for t, v in saved]
        stack.extend(n for n, _ in node.next_functions)


def _frozen_copy(t: TensorBase) -> TensorBase:
    out = kernels.empty(t._shape, t.dtype, t.device)
    kernels.copy(t._operand(), out)
    out.grad_fn, out._output_nr, out._requires_grad = t.grad_fn, t._output_nr, t._requires_grad
    return out


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(abs, "abs", "absolute", inplace=True)
declare(allclose)
declare(equal)
declare(isclose)
declare(acos, inplace=True)
declare(acos, "arccos")
declare(acosh)
declare(add, inplace=True)
declare(addcdiv, inplace=True)
declare(addcmul, inplace=True)
declare(asin, inplace=True)
declare(asin, "arcsin")
declare(atan, inplace=True)
declare(atan, "arctan")
declare(atan2, inplace=True)
declare(atan2, "arctan2")
declare(asinh)
declare(atanh)
declare(bitwise_and, inplace=True)
declare(bitwise_not)
declare(bitwise_or, inplace=True)
declare(bitwise_xor, inplace=True)
declare(ceil, inplace=True)
declare(clamp, "clamp", "clip", inplace=True)
declare(clamp_max, inplace=True)
declare(clamp_min, inplace=True)
declare(copysign, inplace=True)
declare(cos, inplace=True)
declare(cosh, inplace=True)
declare(div, "div", "divide", "true_divide", inplace=True)
declare(eq)
declare(erf, inplace=True)
declare(erfc)
declare(exp2, inplace=True)
declare(exp, inplace=True)
declare(expm1, inplace=True)
declare(trunc, inplace=True)
declare(trunc, "fix", method=False)
declare(float_power)
declare(floor, inplace=True)
declare(floor_divide, inplace=True)
declare(fmax)
declare(fmin)
declare(fmod, inplace=True)
declare(frac, inplace=True)
declare(ge, "ge", "greater_equal")
declare(gt, "gt", "greater")
declare(hypot, inplace=True)
declare(isfinite)
declare(isinf)
declare(isnan)
declare(le, "le", "less_equal")
declare(lerp, inplace=True)
declare(lt, "lt", "less")
declare(log, inplace=True)
declare(log10, inplace=True)
declare(log1p, inplace=True)
declare(log2, inplace=True)
declare(logical_and)
declare(logical_not, inplace=True)
declare(logical_or)
declare(logical_xor)
declare(maximum, inplace=True)
declare(minimum, inplace=True)
declare(mul, "mul", "multiply", inplace=True)
declare(nan_to_num, inplace=True)
declare(ne, "ne", "not_equal")
declare(neg, "neg", "negative", inplace=True)
declare(pow, inplace=True)
declare(reciprocal, inplace=True)
declare(relu, inplace=True)
declare(remainder, inplace=True)
declare(round, inplace=True)
declare(rsqrt, inplace=True)
declare(sigmoid, inplace=True)
declare(sign, inplace=True)
declare(sin, inplace=True)
declare(sinh, inplace=True)
declare(sqrt, inplace=True)
declare(square, inplace=True)
declare(sub, "sub", "subtract", inplace=True)
declare(tan, inplace=True)
declare(tanh, inplace=True)
declare(where, method=False)
declare(xlogy, inplace=True)

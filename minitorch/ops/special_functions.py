"""Special functions of ``torch.special`` that no other op computes: built from other ops.

``erfinv`` is the inverse of the error function: ``erf(erfinv(y)) == y`` for
``-1 < y < 1``.  It has no kernel of its own.  A polynomial in
``w = -log(1 - y*y)`` gives a first guess good to about 7 digits (M. Giles,
"Approximating the erfinv function", 2010), and two steps of Newton's method
on ``erf(x) - y`` make it exact to double precision; the work is done in
float64 and rounded to the input's dtype.  Its derivative is the inverse of
``erf``'s: ``d erfinv(y) / dy = sqrt(pi) / 2 * exp(erfinv(y) ** 2)``.

``ndtr`` (the standard normal distribution function), ``ndtri`` (its
inverse), ``entr`` and ``xlog1py`` are one line each of other ops.
"""

from __future__ import annotations

import math

from ..autograd.function import Function
from ..dtype import float64, get_default_dtype
from ..tensor_base import TensorBase
from . import elementwise as ew
from .elementwise import where
from .registry import declare

__all__ = ["erfinv", "ndtr", "ndtri", "entr", "xlog1py"]

# Giles' coefficients: the central region (w < 5, in w - 2.5) and the tails (in sqrt(w) - 3),
# highest power first.
_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
            -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_TAILS = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
          -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _horner(coefficients: tuple, w: TensorBase) -> TensorBase:
    """The polynomial with ``coefficients`` (highest power first) at ``w``."""
    p = w * 0.0 + coefficients[0]
    for c in coefficients[1:]:
        p = p * w + c
    return p


def _erfinv_float64(y: TensorBase) -> TensorBase:
    w = -ew.log((1.0 - y) * (1.0 + y))
    x = where(w < 5.0, _horner(_CENTRAL, w - 2.5), _horner(_TAILS, ew.sqrt(w) - 3.0)) * y
    for _ in range(2):        # Newton's method on erf(x) - y: each step doubles the digits
        x = x - (ew.erf(x) - y) / (_TWO_OVER_SQRT_PI * ew.exp(-(x * x)))
    x = where(y.abs() == 1.0, y * math.inf, x)          # erfinv(+-1) = +-inf
    return where(y.abs() > 1.0, math.nan, x)            # outside [-1, 1] (and NaN): nan


class Erfinv(Function):
    _backward_name = "ErfinvBackward0"

    @staticmethod
    def forward(ctx, y: TensorBase) -> TensorBase:
        result = y.dtype if y.dtype.is_floating_point else get_default_dtype()
        x = _erfinv_float64(y.to(float64)).to(result)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, g: TensorBase):
        (x,) = ctx.saved_tensors
        return g * (math.sqrt(math.pi) / 2.0) * ew.exp(x * x)


def erfinv(input: TensorBase, *, out: TensorBase | None = None) -> TensorBase:
    """The inverse error function: ``erf(erfinv(y)) == y`` for ``-1 < y < 1``.

    >>> import minitorch
    >>> minitorch.erfinv(minitorch.tensor([0.0, 0.5, -0.5, 1.0]))
    tensor([ 0.0000,  0.4769, -0.4769,     inf])
    """
    return ew.write_out(Erfinv.apply(input), out)


def ndtr(input: TensorBase) -> TensorBase:
    """The standard normal distribution function, ``P(Z <= x)``: ``erfc(-x / sqrt(2)) / 2``."""
    return ew.erfc(-input / math.sqrt(2.0)) * 0.5


def ndtri(input: TensorBase) -> TensorBase:
    """The inverse of :func:`ndtr`: the ``x`` with ``P(Z <= x) = p``."""
    return erfinv(input * 2.0 - 1.0) * math.sqrt(2.0)


def entr(input: TensorBase) -> TensorBase:
    """``-x * log(x)`` elementwise: 0 at 0, ``-inf`` for negative ``x`` (a NaN stays NaN)."""
    x = input if input.dtype.is_floating_point else input.to(get_default_dtype())
    inside = where(x > 0, x, 1.0)                      # no log of 0 or of a negative
    return where(x > 0, -x * ew.log(inside), where(x == 0, 0.0, where(x < 0, -math.inf, x)))


def xlog1py(input: TensorBase, other: TensorBase) -> TensorBase:
    """``input * log1p(other)``, and 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    x = ew._as_tensor_like(input, other)
    y = ew._as_tensor_like(other, x)
    product = x * ew.log1p(y)
    return where((x == 0) & (y == y), 0.0, product)


declare(erfinv, inplace=True)

"""Math functions built from other ops, and PyTorch's other names for existing ops.

Each function here is a short composition of differentiable ops (no kernel
of its own), so its gradient comes from autograd: ``logaddexp`` is
``m + log(exp(a - m) + exp(b - m))`` with ``m = max(a, b)``, ``cdist`` is a
``vector_norm`` of broadcast differences, ``cov`` is a centred matrix
product, and so on.

The second half of the module only *declares*: PyTorch has several names
for many ops (``arccosh`` for ``acosh``, ``greater_`` for ``gt_``) and
in-place forms of ops defined elsewhere (``acosh_``, ``eq_``, ``tril_``);
a ``declare`` line gives each its public forms (see ops/registry.py).
"""

from __future__ import annotations

import math
from typing import Any

from ..dtype import bool_, float32
from ..layout import normalize_dim
from ..tensor_base import TensorBase
from . import elementwise as ew
from .elementwise import where
from .linalg import addmm, baddbmm, matmul, outer
from .linalg_ops import vector_norm
from .registry import declare
from .views import cat

__all__ = ["logaddexp", "logaddexp2", "deg2rad", "rad2deg", "sinc", "heaviside", "signbit",
           "isposinf", "isneginf", "isreal", "positive", "sgn", "logit", "hardshrink", "diff",
           "dist", "cdist", "renorm", "cov", "corrcoef", "nanmean", "ldexp", "gcd", "lcm",
           "addmv", "addr", "addbmm", "is_nonzero", "is_same_size", "is_signed"]


def _float(x: TensorBase) -> TensorBase:
    """``x`` as a floating-point tensor (integers and bools become the default float)."""
    return x if x.dtype.is_floating_point else x.to(float32)


def logaddexp(input: TensorBase, other: TensorBase) -> TensorBase:
    """``log(exp(a) + exp(b))`` without overflow: ``m + log(exp(a-m) + exp(b-m))``, ``m = max(a, b)``."""
    a, b = _float(input), _float(other)
    m = ew.maximum(a, b)
    # m is +-inf where both are: shifting by it would make inf - inf = NaN.
    shift = where(ew.isinf(m), m.new_zeros(()), m).detach()
    return shift + ew.log(ew.exp(a - shift) + ew.exp(b - shift))


def logaddexp2(input: TensorBase, other: TensorBase) -> TensorBase:
    """``log2(2**a + 2**b)`` without overflow."""
    ln2 = math.log(2.0)
    return logaddexp(_float(input) * ln2, _float(other) * ln2) / ln2


def deg2rad(input: TensorBase) -> TensorBase:
    """Degrees to radians."""
    return _float(input) * (math.pi / 180.0)


def rad2deg(input: TensorBase) -> TensorBase:
    """Radians to degrees."""
    return _float(input) * (180.0 / math.pi)


def sinc(input: TensorBase) -> TensorBase:
    """``sin(pi x) / (pi x)``, and 1 at 0."""
    x = _float(input)
    px = x * math.pi
    safe = where(x == 0, x.new_ones(()), px)
    return where(x == 0, x.new_ones(()), ew.sin(safe) / safe)


def heaviside(input: TensorBase, values: TensorBase) -> TensorBase:
    """The step function: 0 for x < 0, 1 for x > 0, ``values`` at x == 0."""
    if input.dtype is not values.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes")
    zero, one = input.new_zeros(()), input.new_ones(())
    return where(input == 0, values, where(input > 0, one, zero))


def signbit(input: TensorBase) -> TensorBase:
    """Whether the sign bit is set (True for -0.0 and negative NaN-free values)."""
    if not input.dtype.is_floating_point:
        return input < 0
    return (input < 0) | ((input == 0) & ((1.0 / input) < 0))


def isposinf(input: TensorBase) -> TensorBase:
    return input == math.inf if input.dtype.is_floating_point else input.new_zeros(
        input._shape, dtype=bool_)


def isneginf(input: TensorBase) -> TensorBase:
    return input == -math.inf if input.dtype.is_floating_point else input.new_zeros(
        input._shape, dtype=bool_)


def isreal(input: TensorBase) -> TensorBase:
    """All True: minitorch has no complex dtypes."""
    return input.new_ones(input._shape, dtype=bool_)


def positive(input: TensorBase) -> TensorBase:
    """``input`` itself (PyTorch returns the same tensor); an error for bool, as ``+x``."""
    if input.dtype is bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def sgn(input: TensorBase) -> TensorBase:
    """``sign`` (for real numbers, ``x / |x|`` and 0 at 0)."""
    return ew.sign(input)


def logit(input: TensorBase, eps: float | None = None) -> TensorBase:
    """``log(p / (1 - p))``; with ``eps``, ``p`` is first clamped to ``[eps, 1 - eps]``."""
    p = _float(input)
    if eps is not None:
        p = p.clamp(eps, 1.0 - eps)
    return ew.log(p / (1.0 - p))


def hardshrink(input: TensorBase, lambd: float = 0.5) -> TensorBase:
    """``x`` where ``|x| > lambd``, else 0 (a NaN stays NaN, as in PyTorch)."""
    return where(input.abs() <= lambd, input.new_zeros(()), input)


def diff(input: TensorBase, n: int = 1, dim: int = -1, prepend: TensorBase | None = None,
         append: TensorBase | None = None) -> TensorBase:
    """The ``n``-th forward difference along ``dim``: ``x[i+1] - x[i]``, repeated ``n`` times."""
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = normalize_dim(dim, input.dim())
    x = input
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = cat([p if p.dim() else p.expand(x._shape[:d] + (1,) + x._shape[d + 1:])
                 for p in parts], d)
    for _ in range(n):
        size = x._shape[d]
        if size == 0:
            break
        later, earlier = x.narrow(d, 1, size - 1), x.narrow(d, 0, size - 1)
        x = (later != earlier) if x.dtype is bool_ else later - earlier
    return x


def dist(input: TensorBase, other: TensorBase, p: float = 2) -> TensorBase:
    """``vector_norm(input - other, p)``."""
    return vector_norm(input - other, p)


def cdist(x1: TensorBase, x2: TensorBase, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> TensorBase:
    """All pairwise ``p``-norm distances between the rows of ``x1`` (.., P, M) and ``x2`` (.., R, M)."""
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1._shape[-1] != x2._shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1._shape[-1]} X2: {x2._shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    return vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, -1)


def renorm(input: TensorBase, p: float, dim: int, maxnorm: float) -> TensorBase:
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to norm ``maxnorm``."""
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} "
                           "dimensions")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported")
    d = normalize_dim(dim, input.dim())
    others = tuple(i for i in range(input.dim()) if i != d)
    norms = vector_norm(input, p, others, keepdim=True)
    # PyTorch's factor, with its 1e-7 guard against dividing by a zero norm.
    factor = where(norms > maxnorm, maxnorm / (norms + 1e-7), norms.new_ones(()))
    return input * factor


def cov(input: TensorBase, *, correction: int = 1, fweights: TensorBase | None = None,
        aweights: TensorBase | None = None) -> TensorBase:
    """The covariance matrix of the variables in the rows of ``input`` (observations in columns)."""
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    x = _float(input)
    x = x.reshape(1, -1) if x.dim() < 2 else x
    n = x._shape[1]
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights.to(x.dtype)
    if w is None:
        avg = x.mean(1, keepdim=True)
        total = float(n)
        norm = total - correction
    else:
        total_w = w.sum()
        avg = (x * w).sum(1, keepdim=True) / total_w
        if correction == 0:
            norm = total_w
        elif aweights is None:
            norm = total_w - correction
        else:
            norm = total_w - correction * (w * aweights.to(x.dtype)).sum() / total_w
    centred = x - avg
    weighted = centred if w is None else centred * w
    c = matmul(weighted, centred.t()) / (norm.clamp(min=0) if isinstance(norm, TensorBase)
                                         else max(norm, 0))
    return c.reshape(()) if input.dim() < 2 else c


def corrcoef(input: TensorBase) -> TensorBase:
    """Pearson correlation coefficients of the rows of ``input``, clipped to [-1, 1]."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = ew.sqrt(c.diagonal())
    return (c / d.unsqueeze(1) / d.unsqueeze(0)).clamp(-1, 1)


def nanmean(input: TensorBase, dim: Any = None, keepdim: bool = False, *,
            dtype: Any = None) -> TensorBase:
    """The mean of the non-NaN elements."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {input.dtype._legacy}")
    x = input if dtype is None else input.to(dtype)
    keep = ~ew.isnan(x)
    total = where(keep, x, x.new_zeros(())).sum(dim, keepdim) if dim is not None else \
        where(keep, x, x.new_zeros(())).sum()
    count = keep.sum(dim, keepdim) if dim is not None else keep.sum()
    return total / count


def ldexp(input: TensorBase, other: TensorBase) -> TensorBase:
    """``input * 2**other``."""
    return _float(input) * ew.exp2(_float(other))


def gcd(input: TensorBase, other: TensorBase) -> TensorBase:
    """Greatest common divisor of integers, elementwise (Euclid's algorithm, whole tensors at once)."""
    if input.dtype.is_floating_point or other.dtype.is_floating_point:
        raise RuntimeError(f"\"gcd_cpu\" not implemented for '{input.dtype._legacy}'")
    a, b = ew.abs(input), ew.abs(other)
    a, b = (a + b * 0), (b + a * 0)                       # broadcast to one shape
    while bool((b != 0).any()):
        nonzero = b != 0
        safe = where(nonzero, b, b.new_ones(()))
        a, b = where(nonzero, b, a), where(nonzero, ew.remainder(a, safe), b)
    return a


def lcm(input: TensorBase, other: TensorBase) -> TensorBase:
    """Least common multiple of integers, elementwise: ``|a b| / gcd(a, b)`` (0 if either is 0)."""
    g = gcd(input, other)
    safe = where(g == 0, g.new_ones(()), g)
    return ew.abs(ew.floor_divide(input, safe) * other)


def addmv(input: TensorBase, mat: TensorBase, vec: TensorBase, *, beta: Any = 1,
          alpha: Any = 1) -> TensorBase:
    """``beta * input + alpha * (mat @ vec)``."""
    prod = matmul(mat, vec)
    prod = prod * alpha if alpha != 1 else prod
    return prod + (input if beta == 1 else input * beta)


def addr(input: TensorBase, vec1: TensorBase, vec2: TensorBase, *, beta: Any = 1,
         alpha: Any = 1) -> TensorBase:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    prod = outer(vec1, vec2)
    prod = prod * alpha if alpha != 1 else prod
    return prod + (input if beta == 1 else input * beta)


def addbmm(input: TensorBase, batch1: TensorBase, batch2: TensorBase, *, beta: Any = 1,
           alpha: Any = 1) -> TensorBase:
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]``."""
    prod = matmul(batch1, batch2).sum(0)
    prod = prod * alpha if alpha != 1 else prod
    return prod + (input if beta == 1 else input * beta)


def is_nonzero(input: TensorBase) -> bool:
    """Whether a one-element tensor is not zero."""
    if input.numel() != 1:
        if input.numel() == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_same_size(input: TensorBase, other: TensorBase) -> bool:
    return input._shape == other._shape


def is_signed(input: TensorBase) -> bool:
    return input.dtype.is_floating_point or input.dtype.name in ("int8", "int16", "int32",
                                                                 "int64")


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(addbmm, inplace=True)
declare(addmv, inplace=True)
declare(addr, inplace=True)
declare(cdist, method=False)
declare(corrcoef)
declare(cov)
declare(deg2rad, inplace=True)
declare(diff)
declare(dist)
declare(gcd, inplace=True)
declare(hardshrink)
declare(heaviside, inplace=True)
declare(is_nonzero)
declare(is_same_size)
declare(is_signed)
declare(isneginf)
declare(isposinf)
declare(isreal)
declare(lcm, inplace=True)
declare(ldexp, inplace=True)
declare(logaddexp)
declare(logaddexp2)
declare(logit, inplace=True)
declare(nanmean)
declare(positive)
declare(rad2deg, inplace=True)
declare(renorm, inplace=True)
declare(sgn, inplace=True)
declare(signbit)
declare(sinc, inplace=True)

# Other names and in-place forms of ops defined elsewhere.
declare(ew.acosh, "arccosh")
declare(ew.asinh, "arcsinh")
declare(ew.atanh, "arctanh")
declare(ew.acosh, "acosh", "arccosh", function=False, method=False, inplace=True)
declare(ew.asinh, "asinh", "arcsinh", function=False, method=False, inplace=True)
declare(ew.atanh, "atanh", "arctanh", function=False, method=False, inplace=True)
declare(ew.acos, "arccos", function=False, method=False, inplace=True)
declare(ew.asin, "arcsin", function=False, method=False, inplace=True)
declare(ew.atan, "arctan", function=False, method=False, inplace=True)
declare(ew.atan2, "arctan2", function=False, method=False, inplace=True)
declare(ew.trunc, "fix", function=False, inplace=True)
declare(ew.bitwise_not, function=False, method=False, inplace=True)
declare(ew.erfc, function=False, method=False, inplace=True)
declare(ew.float_power, function=False, method=False, inplace=True)
declare(ew.eq, function=False, method=False, inplace=True)
declare(ew.ne, "ne", "not_equal", function=False, method=False, inplace=True)
declare(ew.ge, "ge", "greater_equal", function=False, method=False, inplace=True)
declare(ew.gt, "gt", "greater", function=False, method=False, inplace=True)
declare(ew.le, "le", "less_equal", function=False, method=False, inplace=True)
declare(ew.lt, "lt", "less", function=False, method=False, inplace=True)
declare(ew.logical_and, function=False, method=False, inplace=True)
declare(ew.logical_or, function=False, method=False, inplace=True)
declare(ew.logical_xor, function=False, method=False, inplace=True)
declare(baddbmm, function=False, inplace=True)
declare(addmm, function=False, method=False, inplace=True)

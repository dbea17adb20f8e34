"""Reductions (sum, mean, max, ...), scans (cumsum) and softmax-like ops.

A reduction folds the chosen dims away (``keepdim=True`` keeps them as size
1).  Its backward spreads the gradient back over the folded elements: for a
sum every element gets the whole gradient (``expand``); for a max only the
chosen element does.

``softmax``, ``log_softmax`` and ``logsumexp`` subtract the maximum before
exponentiating, so ``exp`` never overflows: ``softmax(x) == softmax(x - c)``
for any constant ``c``.
"""

from __future__ import annotations

import builtins
import collections
import math
from typing import Any

from ..autograd.function import Function
from ..autograd.grad_mode import backward_builds_graph, is_grad_enabled
from ..backends import scalar_ops
from ..dtype import bool_, dtype as dtype_cls, int64, get_default_dtype, as_dtype, float64, uint8
from ..layout import normalize_dim, normalize_dims, numel
from ..tensor_base import TensorBase
from . import kernels
from .views import expand, reshape, unsqueeze
from .registry import declare
from .creation import arange
from .elementwise import isinf, isnan, maximum, minimum, where
from .views import cat, flip, stack

__all__ = ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "all",
           "any", "var", "std", "var_mean", "std_mean", "logsumexp", "softmax",
           "log_softmax", "cumsum", "cumprod", "norm", "count_nonzero", "nansum",
           "aminmax", "return_types"]


def _return_type(name: str, fields: list) -> type:
    """A named tuple that prints like PyTorch's ``torch.return_types.max(...)``."""
    base = collections.namedtuple(name, fields)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"minitorch.return_types.{name}(\n{body})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                                "__module__": "minitorch.return_types"})


class return_types:
    """Named tuples returned by ops with two results, like ``torch.return_types``."""

    max = _return_type("max", ["values", "indices"])
    min = _return_type("min", ["values", "indices"])
    sort = _return_type("sort", ["values", "indices"])
    topk = _return_type("topk", ["values", "indices"])
    kthvalue = _return_type("kthvalue", ["values", "indices"])
    median = _return_type("median", ["values", "indices"])
    mode = _return_type("mode", ["values", "indices"])
    aminmax = _return_type("aminmax", ["min", "max"])
    cummax = _return_type("cummax", ["values", "indices"])
    cummin = _return_type("cummin", ["values", "indices"])
    # torch.linalg and the matrix functions (ops/linalg_ops.py)
    slogdet = _return_type("slogdet", ["sign", "logabsdet"])
    linalg_slogdet = _return_type("linalg_slogdet", ["sign", "logabsdet"])
    linalg_inv_ex = _return_type("linalg_inv_ex", ["inverse", "info"])
    linalg_solve_ex = _return_type("linalg_solve_ex", ["result", "info"])
    linalg_cholesky_ex = _return_type("linalg_cholesky_ex", ["L", "info"])
    qr = _return_type("qr", ["Q", "R"])
    linalg_qr = _return_type("linalg_qr", ["Q", "R"])
    svd = _return_type("svd", ["U", "S", "V"])
    linalg_svd = _return_type("linalg_svd", ["U", "S", "Vh"])
    linalg_eigh = _return_type("linalg_eigh", ["eigenvalues", "eigenvectors"])
    linalg_lstsq = _return_type("linalg_lstsq", ["solution", "residuals", "rank",
                                                 "singular_values"])
    linalg_lu_factor = _return_type("linalg_lu_factor", ["LU", "pivots"])
    linalg_lu_factor_ex = _return_type("linalg_lu_factor_ex", ["LU", "pivots", "info"])
    linalg_lu = _return_type("linalg_lu", ["P", "L", "U"])
    lu_unpack = _return_type("lu_unpack", ["P", "L", "U"])
    nanmedian = _return_type("nanmedian", ["values", "indices"])     # ops/tensor_extras.py
    histogram = _return_type("histogram", ["hist", "bin_edges"])


def _dims(x: TensorBase, dim: Any) -> tuple:
    """Normalised reduction dims; ``None`` or ``()`` means all dims.

    A 0-d tensor accepts dim 0 or -1 (as PyTorch does) and has nothing to
    reduce, so its dims are always ``()``.
    """
    if dim is None:
        return tuple(range(x.dim()))
    if isinstance(dim, int):
        dims = normalize_dims((dim,), x.dim())
    else:
        dims = tuple(dim)
        if not dims:
            return tuple(range(x.dim()))
        dims = normalize_dims(dims, x.dim())
    return dims if x.dim() else ()


def _expand_back(g: TensorBase, in_shape: tuple, dims: tuple, keepdim: bool) -> TensorBase:
    """Re-insert reduced dims into ``g`` and broadcast it over the input's shape."""
    if not keepdim:
        for d in sorted(dims):
            g = unsqueeze(g, d)
    return expand(g, in_shape)


def _as_dtype_first(x: TensorBase, requested: Any, dt: dtype_cls) -> TensorBase:
    """With an explicit ``dtype=``, the input is converted *before* the reduction, as in
    PyTorch: ``int_tensor.prod(dtype=float32)`` multiplies floats, it does not overflow
    in int64 and convert the wrapped-around product."""
    return x.to(dt) if requested is not None and x.dtype is not dt else x


def _sum_dtype(x: TensorBase, dt: Any) -> dtype_cls:
    """The result dtype of sum/prod/cumsum/cumprod: ``dt``, else x's float dtype, else int64."""
    if dt is not None:
        dt = as_dtype(dt)
        if not dt.is_floating_point and x.requires_grad and is_grad_enabled():
            # An integer result cannot carry a gradient back to x.
            raise RuntimeError(f"Autograd not support dtype: {dt._legacy}")
        return dt
    return x.dtype if x.dtype.is_floating_point else int64


# ---------------------------------------------------------------------------
# sum / mean / prod
# ---------------------------------------------------------------------------
class Sum(Function):
    _backward_name = "SumBackward1"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dims: tuple, keepdim: bool, dt: dtype_cls) -> TensorBase:
        ctx.in_shape, ctx.dims, ctx.keepdim = x._shape, dims, keepdim
        return kernels.reduce(x, "sum", dims, keepdim, dt)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return _expand_back(g, ctx.in_shape, ctx.dims, ctx.keepdim), None, None, None


class SumAll(Sum):
    _backward_name = "SumBackward0"


def sum(input: TensorBase, dim: Any = None, keepdim: bool = False, *,  # noqa: A001
        dtype: Any = None) -> TensorBase:
    """Sum over ``dim`` (all dims if None); ints and bools sum to int64."""
    if isinstance(dim, dtype_cls):
        dim, dtype = None, dim
    dims = _dims(input, dim)
    dt = _sum_dtype(input, dtype)
    input = _as_dtype_first(input, dtype, dt)
    if dim is None:
        return SumAll.apply(input, dims, False, dt)
    return Sum.apply(input, dims, keepdim, dt)


def nansum(input: TensorBase, dim: Any = None, keepdim: bool = False, *,
           dtype: Any = None) -> TensorBase:
    """``sum`` with NaN counted as zero; integers (which have no NaN) sum as ``sum`` does, to int64."""
    if input.dtype.is_floating_point:
        input = where(isnan(input), 0.0, input)
    return sum(input, dim, keepdim, dtype=dtype)


class Mean(Function):
    _backward_name = "MeanBackward1"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dims: tuple, keepdim: bool) -> TensorBase:
        ctx.in_shape, ctx.dims, ctx.keepdim = x._shape, dims, keepdim
        n = numel([x._shape[d] for d in dims])
        ctx.n = n
        s = kernels.reduce(x, "sum", dims, keepdim, x.dtype)
        return kernels.arith(s, float(n) if n else math.nan, scalar_ops.DIV, out=s) if n else \
            kernels.arith(s, math.nan, scalar_ops.MUL, out=s)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return _expand_back(g / ctx.n, ctx.in_shape, ctx.dims, ctx.keepdim), None, None


class MeanAll(Mean):
    _backward_name = "MeanBackward0"


def mean(input: TensorBase, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> TensorBase:
    """The average over ``dim``; only floating-point tensors (as in PyTorch)."""
    if dtype is not None:
        input = input.to(as_dtype(dtype))
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {input.dtype.name.title()}")
    dims = _dims(input, dim)
    if dim is None:
        return MeanAll.apply(input, dims, False)
    return Mean.apply(input, dims, keepdim)


class Prod(Function):
    _backward_name = "ProdBackward1"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dims: tuple, keepdim: bool, dt: dtype_cls) -> TensorBase:
        ctx.in_shape, ctx.dims, ctx.keepdim = x._shape, dims, keepdim
        y = kernels.reduce(x, "prod", dims, keepdim, dt)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        x, y = ctx.saved_tensors
        # d(prod)/dx_i = prod of the others.  Where x has no zeros that is y / x_i;
        # with zeros we compute products of the others explicitly (by exclusive
        # cumulative products along a flattened reduced axis).
        yb = _expand_back(y, ctx.in_shape, ctx.dims, ctx.keepdim)
        gb = _expand_back(g, ctx.in_shape, ctx.dims, ctx.keepdim)
        if not bool((x == 0).any()):
            return gb * yb / x, None, None, None
        others = _prod_of_others(x, ctx.dims)
        return gb * others, None, None, None


def _prod_of_others(x: TensorBase, dims: tuple) -> TensorBase:
    """For each element, the product of the other elements along ``dims``."""
    keep = [d for d in range(x.dim()) if d not in dims]
    perm = keep + list(dims)
    xp = x.permute(perm)
    kshape = xp._shape[:len(keep)]
    flat = reshape(xp.contiguous(), kshape + (-1,))
    ones = flat.new_ones(kshape + (1,))
    left = cumprod(_cat_last(ones, flat[..., :-1]), -1)
    right = flip(cumprod(_cat_last(ones, flip(flat, (-1,))[..., :-1]), -1), (-1,))
    others = reshape(left * right, xp._shape)
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return others.permute(inverse)


def _cat_last(a: TensorBase, b: TensorBase) -> TensorBase:
    return cat([a, b], -1)


class ProdAll(Prod):
    _backward_name = "ProdBackward0"


def prod(input: TensorBase, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> TensorBase:
    dt = _sum_dtype(input, dtype)
    input = _as_dtype_first(input, dtype, dt)
    if dim is None:
        return ProdAll.apply(input, _dims(input, None), False, dt)
    return Prod.apply(input, _dims(input, dim), keepdim, dt)


# ---------------------------------------------------------------------------
# max / min / argmax / argmin
# ---------------------------------------------------------------------------
class _MaxMinDim(Function):
    kind = "max"

    @classmethod
    def forward(cls, ctx: Any, x: TensorBase, dim: int, keepdim: bool):
        values, idx = kernels.reduce(x, cls.kind, (dim,), keepdim, x.dtype, want_index=True)
        ctx.in_shape, ctx.dim, ctx.keepdim = x._shape, dim, keepdim
        ctx.save_for_backward(idx)
        ctx.mark_non_differentiable(idx)
        return values, idx

    @classmethod
    def backward(cls, ctx: Any, g: TensorBase, _gi: Any = None):
        (idx,) = ctx.saved_tensors
        return _route_to_index(g, idx, ctx.in_shape, ctx.dim, ctx.keepdim), None, None


class MaxDim(_MaxMinDim):
    _backward_name = "MaxBackward0"
    kind = "max"


class MinDim(_MaxMinDim):
    _backward_name = "MinBackward0"
    kind = "min"


def _route_to_index(g: TensorBase, idx: TensorBase, in_shape: tuple, dim: int, keepdim: bool) -> TensorBase:
    """Gradient that goes only to the element ``idx`` picked along ``dim``."""
    if not keepdim:
        g = unsqueeze(g, dim)
        idx = unsqueeze(idx, dim)
    pos_shape = [1] * len(in_shape)
    pos_shape[dim] = in_shape[dim]
    positions = reshape(arange(in_shape[dim], device=g.device), tuple(pos_shape))
    mask = (positions == idx).to(g.dtype)
    return mask * g


class _MaxMinAll(Function):
    """max()/min() of everything: ties share the gradient evenly (like PyTorch)."""

    kind = "max"

    @classmethod
    def forward(cls, ctx: Any, x: TensorBase) -> TensorBase:
        if x.numel() == 0:
            raise RuntimeError(f"{cls.kind}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        y = kernels.reduce(x, cls.kind, tuple(range(x.dim())), False, x.dtype)
        ctx.save_for_backward(x, y)
        return y

    @classmethod
    def backward(cls, ctx: Any, g: TensorBase):
        x, y = ctx.saved_tensors
        mask = (x == y).to(g.dtype)
        return g * mask / mask.sum()


class MaxAll(_MaxMinAll):
    _backward_name = "MaxBackward1"
    kind = "max"


class MinAll(_MaxMinAll):
    _backward_name = "MinBackward1"
    kind = "min"


class _AmaxAmin(Function):
    kind = "max"

    @classmethod
    def forward(cls, ctx: Any, x: TensorBase, dims: tuple, keepdim: bool) -> TensorBase:
        y = kernels.reduce(x, cls.kind, dims, keepdim, x.dtype)
        ctx.save_for_backward(x, y)
        ctx.dims, ctx.keepdim, ctx.in_shape = dims, keepdim, x._shape
        return y

    @classmethod
    def backward(cls, ctx: Any, g: TensorBase):
        x, y = ctx.saved_tensors
        yb = _expand_back(y, ctx.in_shape, ctx.dims, ctx.keepdim)
        mask = (x == yb).to(g.dtype)
        count = mask.sum(ctx.dims, keepdim=True)
        return _expand_back(g, ctx.in_shape, ctx.dims, ctx.keepdim) * mask / count, None, None


class Amax(_AmaxAmin):
    _backward_name = "AmaxBackward0"
    kind = "max"


class Amin(_AmaxAmin):
    _backward_name = "AminBackward0"
    kind = "min"


def _check_nonempty_dim(x: TensorBase, d: int, name: str) -> None:
    if x.dim() and x._shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def max(input: TensorBase, dim: Any = None, keepdim: bool = False, *,  # noqa: A001
        out: Any = None) -> Any:
    """``max(x)``: the largest element; ``max(x, dim)``: ``(values, indices)``; ``max(x, y)``: elementwise."""
    if isinstance(dim, TensorBase):
        return maximum(input, dim)
    if dim is None:
        return MaxAll.apply(input)
    d = normalize_dim(dim, input.dim())
    _check_nonempty_dim(input, d, "max")
    if input.dim() == 0:        # one element: itself, at index 0
        values, idx = MaxDim.apply(reshape(input, (1,)), 0, False)
    else:
        values, idx = MaxDim.apply(input, d, keepdim)
    return return_types.max(values, idx)


def min(input: TensorBase, dim: Any = None, keepdim: bool = False, *,  # noqa: A001
        out: Any = None) -> Any:
    if isinstance(dim, TensorBase):
        return minimum(input, dim)
    if dim is None:
        return MinAll.apply(input)
    d = normalize_dim(dim, input.dim())
    _check_nonempty_dim(input, d, "min")
    if input.dim() == 0:
        values, idx = MinDim.apply(reshape(input, (1,)), 0, False)
    else:
        values, idx = MinDim.apply(input, d, keepdim)
    return return_types.min(values, idx)


def _check_dims_given(input: TensorBase, dim: Any, name: str) -> None:
    if input.numel() == 0 and input.dim() and (dim is None or dim == () or dim == []):
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' argument.")


def amax(input: TensorBase, dim: Any = (), keepdim: bool = False) -> TensorBase:
    _check_dims_given(input, dim, "amax")
    dims = _dims(input, dim)
    for d in dims:
        _check_nonempty_dim(input, d, "amax")
    return Amax.apply(input, dims, keepdim)


def amin(input: TensorBase, dim: Any = (), keepdim: bool = False) -> TensorBase:
    _check_dims_given(input, dim, "amin")
    dims = _dims(input, dim)
    for d in dims:
        _check_nonempty_dim(input, d, "amin")
    return Amin.apply(input, dims, keepdim)


def aminmax(input: TensorBase, *, dim: Any = None, keepdim: bool = False) -> Any:
    return return_types.aminmax(amin(input, () if dim is None else dim, keepdim),
                                amax(input, () if dim is None else dim, keepdim))


def _arg(input: TensorBase, dim: Any, keepdim: bool, kind: str) -> TensorBase:
    if input.dtype is bool_:
        raise RuntimeError(f"{kind}(): does not support bool input")
    if dim is None:
        if input.numel() == 0:
            raise IndexError(f"{kind}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
        flat = input.reshape(-1)
        _, idx = kernels.reduce(flat, kind[3:], (0,), False, flat.dtype, want_index=True)
        if keepdim:
            idx = idx.reshape((1,) * input.dim())
        return idx
    d = normalize_dim(dim, input.dim())
    _check_nonempty_dim(input, d, kind)
    if input.dim() == 0:
        return input.new_zeros((), dtype=int64)
    _, idx = kernels.reduce(input, kind[3:], (d,), keepdim, input.dtype, want_index=True)
    return idx


def argmax(input: TensorBase, dim: Any = None, keepdim: bool = False) -> TensorBase:
    return _arg(input, dim, keepdim, "argmax")


def argmin(input: TensorBase, dim: Any = None, keepdim: bool = False) -> TensorBase:
    return _arg(input, dim, keepdim, "argmin")


def _truth_dtype(input: TensorBase) -> Any:
    """``all``/``any`` give bool, except of uint8, which stays uint8 (PyTorch keeps NumPy's
    old convention for it: ``tensor([1, 2], dtype=uint8).all()`` is ``tensor(1, dtype=uint8)``)."""
    return uint8 if input.dtype is uint8 else bool_


def all(input: TensorBase, dim: Any = None, keepdim: bool = False) -> TensorBase:  # noqa: A001
    return kernels.reduce(input, "all", _dims(input, dim), keepdim if dim is not None else False,
                          _truth_dtype(input))


def any(input: TensorBase, dim: Any = None, keepdim: bool = False) -> TensorBase:  # noqa: A001
    return kernels.reduce(input, "any", _dims(input, dim), keepdim if dim is not None else False,
                          _truth_dtype(input))


def count_nonzero(input: TensorBase, dim: Any = None) -> TensorBase:
    return sum((input != 0).to(int64), dim)


# ---------------------------------------------------------------------------
# var / std (composed of differentiable ops, so higher derivatives work)
# ---------------------------------------------------------------------------
def _correction(dim: Any, unbiased: Any, correction: Any) -> tuple:
    """Sort out ``var(x, dim, unbiased)``, ``var(x, unbiased)`` and ``correction=``."""
    if isinstance(dim, bool):            # var(x, False): the legacy unbiased flag
        dim, unbiased = None, dim
    if isinstance(unbiased, bool) and correction is None:
        correction = 1 if unbiased else 0
    return dim, 1 if correction is None else correction


def _var_forward(x: TensorBase, dims: tuple, correction: Any, keepdim: bool) -> TensorBase:
    """The variance, in float64 (the caller rounds): the squares of float32 deviations
    beyond ~1.8e19 would overflow, while their standard deviation need not."""
    if x.dtype.is_floating_point and x.dtype.itemsize < 8:
        x = x.to(float64)
    n = numel([x._shape[d] for d in dims])
    mu = mean(x, dims, keepdim=True)
    total = sum((x - mu).square(), dims, keepdim=keepdim)
    if n - correction <= 0:
        import warnings
        warnings.warn("var(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=6)   # the caller of var()/std()
    # PyTorch divides by max(0, n - correction): x / 0 gives inf, 0 / 0 nan.
    return total / float(builtins.max(0, n - correction))


class Var(Function):
    _backward_name = "VarBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dims: tuple, correction: Any, keepdim: bool) -> TensorBase:
        ctx.save_for_backward(x)
        ctx.dims, ctx.correction, ctx.keepdim = dims, correction, keepdim
        return _var_forward(x, dims, correction, keepdim).to(x.dtype)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (x,) = ctx.saved_tensors
        n = numel([x._shape[d] for d in ctx.dims])
        gb = _expand_back(g, x._shape, ctx.dims, ctx.keepdim)
        centred = x - mean(x, ctx.dims, keepdim=True)
        return gb * centred * 2.0 / float(builtins.max(0, n - ctx.correction)), None, None, None


class Std(Function):
    _backward_name = "StdBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dims: tuple, correction: Any, keepdim: bool) -> TensorBase:
        y = _var_forward(x, dims, correction, keepdim).sqrt().to(x.dtype)
        ctx.save_for_backward(x, y)
        ctx.dims, ctx.correction, ctx.keepdim = dims, correction, keepdim
        return y

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        x, y = ctx.saved_tensors
        n = numel([x._shape[d] for d in ctx.dims])
        gb = _expand_back(g, x._shape, ctx.dims, ctx.keepdim)
        yb = _expand_back(y, x._shape, ctx.dims, ctx.keepdim)
        centred = x - mean(x, ctx.dims, keepdim=True)
        grad = gb * centred / (yb * float(builtins.max(0, n - ctx.correction)))
        # Where the std is 0 every element equals the mean: PyTorch's gradient is 0.
        return where(yb == 0, 0.0, grad), None, None, None


def _check_var_dtype(input: TensorBase) -> None:
    if not input.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")


def var(input: TensorBase, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> TensorBase:
    """Variance with Bessel's correction by default (``correction=1``)."""
    _check_var_dtype(input)
    dim, correction = _correction(dim, unbiased, correction)
    return Var.apply(input, _dims(input, dim), correction, keepdim)


def std(input: TensorBase, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> TensorBase:
    """Standard deviation: the square root of :func:`var`."""
    _check_var_dtype(input)
    dim, correction = _correction(dim, unbiased, correction)
    return Std.apply(input, _dims(input, dim), correction, keepdim)


def var_mean(input: TensorBase, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple:
    dim, correction = _correction(dim, unbiased, correction)
    return (var(input, dim, keepdim=keepdim, correction=correction),
            mean(input, _dims(input, dim), keepdim))


def std_mean(input: TensorBase, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple:
    dim, correction = _correction(dim, unbiased, correction)
    return (std(input, dim, keepdim=keepdim, correction=correction),
            mean(input, _dims(input, dim), keepdim))


def norm(input: TensorBase, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: Any = None) -> TensorBase:
    """Vector p-norm (``p='fro'`` is the 2-norm of all elements)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {input.dtype._legacy}")
    dims = _dims(input, dim)
    if p == "fro" or p == 2:
        return Norm2.apply(input, dims, keepdim)
    if p in (math.inf, -math.inf, "inf"):
        for d in dims or range(input.dim()):
            if input.dim() and input._shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {p} norm on the "
                                   f"dimension {d}because this dimension is empty and the "
                                   "operation does not have an identity")
    if p == math.inf or p == "inf":
        return amax(input.abs(), dims, keepdim)
    if p == -math.inf:
        return amin(input.abs(), dims, keepdim)
    if p == 1:
        return sum(input.abs(), dims, keepdim)
    if p == 0:
        # The count of nonzeros, recorded with a zero gradient (as PyTorch's).
        return CountNonzeroNorm.apply(input, dims, keepdim)
    return NormP.apply(input, p, dims, keepdim)


class Norm2(Function):
    """The 2-norm ``sqrt(sum(x**2))`` over ``dims``, as one node.

    Squares and sums in float64: the squares of float32 values beyond ~1.8e19
    (float16 ones beyond 256) would overflow, their norm need not.  Its
    gradient ``g * x / norm`` is taken as 0 where the norm is 0 (PyTorch's
    subgradient), where ``sqrt``'s own derivative would give NaN.
    """

    _backward_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dims: tuple, keepdim: bool) -> TensorBase:
        wide = kernels.cast(x, float64)
        squares = kernels.arith(wide, wide, scalar_ops.MUL)
        total = kernels.reduce(squares, "sum", dims, keepdim, float64)
        y = kernels.cast(kernels.unary(total, scalar_ops.SQRT), x.dtype)
        ctx.save_for_backward(x, y)
        ctx.dims, ctx.keepdim = dims, keepdim
        return y

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        x, y = ctx.saved_tensors
        g = _expand_back(g, x._shape, ctx.dims, ctx.keepdim)
        y = _expand_back(y, x._shape, ctx.dims, ctx.keepdim)
        return where(y == 0, 0.0, g * x / y), None, None


class NormP(Function):
    """The p-norm ``sum(|x|**p) ** (1/p)`` for other ``p``, with PyTorch's gradient
    ``x * |x|**(p-2) * g / norm**(p-1)``, taken as 0 where the norm is 0."""

    _backward_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, p: float, dims: tuple, keepdim: bool) -> TensorBase:
        y = sum(x.abs() ** p, dims, keepdim) ** (1.0 / p)      # (forward records nothing)
        ctx.save_for_backward(x, y)
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        return y

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        x, y = ctx.saved_tensors
        p = ctx.p
        g = _expand_back(g, x._shape, ctx.dims, ctx.keepdim)
        y = _expand_back(y, x._shape, ctx.dims, ctx.keepdim)
        return where(y == 0, 0.0, x * x.abs() ** (p - 2) * g / y ** (p - 1)), None, None, None


class CountNonzeroNorm(Function):
    """The 0-"norm": how many elements are nonzero.  A step function: zero gradient."""

    _backward_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dims: tuple, keepdim: bool) -> TensorBase:
        ctx.in_shape, ctx.dims, ctx.keepdim = x._shape, dims, keepdim
        nonzero = kernels.cast(kernels.compare(x, 0, scalar_ops.NE), x.dtype)
        return kernels.reduce(nonzero, "sum", dims, keepdim, x.dtype)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        # PyTorch's derivative of the 0-norm is undefined: x.grad stays None.
        return None, None, None


# ---------------------------------------------------------------------------
# logsumexp, softmax, log_softmax
# ---------------------------------------------------------------------------
class LogSumExp(Function):
    """``log(sum(exp(x)))`` over some dims: a whole Function, forward and backward."""

    _backward_name = "LogsumexpBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dims: tuple, keepdim: bool) -> TensorBase:
        """``log(sum(exp(x)))`` over ``dims``, for every finite or infinite ``x``.

        Args:
            ctx: the node; keep for :meth:`backward` (its contract):
            ``ctx.save_for_backward(x, y)`` with ``y`` the result returned
            here, ``ctx.dims = dims`` and ``ctx.keepdim = keepdim``.

            x: a floating-point tensor.

            dims: the dims to reduce, normalised (0 <= d < x.dim()), sorted, no repeats.

            keepdim: whether the reduced dims stay, with size 1.

        Returns:
            A tensor of ``x``'s dtype: ``x``'s shape without ``dims`` (or with them
            of size 1 if ``keepdim``).  It must not overflow: ``x = [1000., 1000.]``
            gives ``1000 + log 2``, not ``inf``; a row of ``-inf`` gives ``-inf``.
            Example: over dim 1 of ``[[0., 0.], [1., 1.]]`` it is
            ``[log 2, 1 + log 2]``.

        Compute it with the engine's kernels (``kernels.reduce``,
        ``kernels.arith``, ``kernels.unary``) or with tensor ops: inside
        ``forward`` nothing is recorded.
        """
        # Task 3.8: log(sum(exp(x))) over dims without overflow, keepdim as asked; keep for
        # backward what the docstring says.
        ### BEGIN SOLUTION
        m = kernels.reduce(x, "max", dims, True, x.dtype)
        m = where(isinf(m), 0.0, m)         # an infinite max would give inf - inf = nan below
        e = kernels.unary(kernels.arith(x, m, scalar_ops.SUB), scalar_ops.EXP)
        s = kernels.reduce(e, "sum", dims, True, x.dtype)
        y = kernels.arith(kernels.unary(s, scalar_ops.LOG), m, scalar_ops.ADD)
        if not keepdim:
            y = y.reshape(tuple(n for d, n in enumerate(x._shape) if d not in dims))
        ctx.save_for_backward(x, y)
        ctx.dims = dims
        ctx.keepdim = keepdim
        return y
        ### END SOLUTION

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        """The gradient of ``logsumexp`` for ``x``.

        Args:
            ctx: what :meth:`forward` kept: ``ctx.saved_tensors == (x, y)``,
            ``ctx.dims``, ``ctx.keepdim``.

            g: the gradient of the loss for ``y`` (``y``'s shape).

        Returns:
            ``(grad_x, None, None)``: ``grad_x`` has ``x``'s shape; ``dims`` and
            ``keepdim`` get no gradient.  Write it with tensor ops so that
            ``create_graph=True`` can differentiate it again;
            ``_expand_back(t, x.shape, dims, keepdim)`` shows a tensor of ``y``'s
            shape over ``x``'s.  Example: for ``x = [0., 0.]`` reduced over dim 0
            with ``g = 1.``, ``grad_x = [0.5, 0.5]``.
        """
        # Task 3.9: the gradient of logsumexp for x, with x's shape, written with tensor ops.
        ### BEGIN SOLUTION
        x, y = ctx.saved_tensors
        dims, keepdim = ctx.dims, ctx.keepdim
        softmax = (x - _expand_back(y, x._shape, dims, keepdim)).exp()
        return _expand_back(g, x._shape, dims, keepdim) * softmax, None, None
        ### END SOLUTION


def logsumexp(input: TensorBase, dim: Any, keepdim: bool = False) -> TensorBase:
    """``log(sum(exp(x)))`` over ``dim``, computed without overflow."""
    if not input.dtype.is_floating_point:
        input = input.to(get_default_dtype())
    return LogSumExp.apply(input, _dims(input, dim), keepdim)


def _softmax_rows(x: TensorBase, dim: int, log: bool) -> TensorBase:
    """softmax / log_softmax of ``x`` along ``dim`` with the fused row kernel."""
    src = kernels.cast(x, kernels.compute_dtype(x.dtype))
    if src.numel() == 0:
        return kernels.empty(x._shape, x.dtype, x.device)
    moved, rows = kernels.rows_along(src, dim)
    out = kernels.empty(moved._shape, src.dtype, x.device)
    kernels.softmax_rows(rows, kernels.array_of(out, rows.shape), log, x.device)
    return kernels.cast(kernels.from_rows(out, src, dim), x.dtype)


def _softmax_grad_rows(g: TensorBase, y: TensorBase, dim: int, log: bool) -> TensorBase:
    """The fused backward of softmax / log_softmax (``y`` is the forward's output)."""
    dt = kernels.compute_dtype(y.dtype)
    if y.numel() == 0:
        return kernels.empty(y._shape, y.dtype, y.device)
    _, g_rows = kernels.rows_along(kernels.cast(g, dt), dim)
    moved, y_rows = kernels.rows_along(kernels.cast(y, dt), dim)
    out = kernels.empty(moved._shape, dt, y.device)
    kernels.softmax_rows_backward(g_rows, y_rows, kernels.array_of(out, y_rows.shape), log,
                                  y.device)
    return kernels.cast(kernels.from_rows(out, y, dim), y.dtype)


class Softmax(Function):
    _backward_name = "SoftmaxBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int) -> TensorBase:
        y = _softmax_rows(x, dim, log=False)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (y,) = ctx.saved_tensors
        if backward_builds_graph():     # the formula; else one kernel
            return y * (g - (g * y).sum(ctx.dim, keepdim=True)), None
        return _softmax_grad_rows(g, y, ctx.dim, log=False), None


class LogSoftmax(Function):
    _backward_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int) -> TensorBase:
        y = _softmax_rows(x, dim, log=True)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (y,) = ctx.saved_tensors
        if backward_builds_graph():     # the formula; else one kernel
            return g - y.exp() * g.sum(ctx.dim, keepdim=True), None
        return _softmax_grad_rows(g, y, ctx.dim, log=True), None


def _softmax_input(input: TensorBase, dim: Any, dtype: Any) -> tuple:
    if dim is not None:
        normalize_dim(dim, input.dim())          # a bad dim is reported first, as in PyTorch
    if dtype is not None:
        input = input.to(as_dtype(dtype))
    elif not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"softmax_lastdim_kernel_impl\" not implemented for "
                                  f"'{input.dtype._legacy}'")
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1   # PyTorch's legacy implicit choice
    return input, normalize_dim(dim, input.dim())


def softmax(input: TensorBase, dim: Any = None, dtype: Any = None) -> TensorBase:
    """``exp(x) / sum(exp(x))`` along ``dim``: non-negative, sums to 1."""
    input, d = _softmax_input(input, dim, dtype)
    if input.dim() == 0:
        return Softmax.apply(input.reshape(1), 0).reshape(())
    return Softmax.apply(input, d)


def log_softmax(input: TensorBase, dim: Any = None, dtype: Any = None) -> TensorBase:
    """``log(softmax(x))`` computed stably as ``x - logsumexp(x)``."""
    input, d = _softmax_input(input, dim, dtype)
    if input.dim() == 0:
        return LogSoftmax.apply(input.reshape(1), 0).reshape(())
    return LogSoftmax.apply(input, d)


# ---------------------------------------------------------------------------
# cumulative sums and products
# ---------------------------------------------------------------------------
class CumSum(Function):
    _backward_name = "CumsumBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, dt: dtype_cls) -> TensorBase:
        ctx.dim = dim
        return kernels.scan(x, "cumsum", dim, dt)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return flip(cumsum(flip(g, (ctx.dim,)), ctx.dim), (ctx.dim,)), None, None


class CumProd(Function):
    _backward_name = "CumprodBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, dt: dtype_cls) -> TensorBase:
        y = kernels.scan(x, "cumprod", dim, dt)
        ctx.save_for_backward(x, y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        x, y = ctx.saved_tensors
        d = ctx.dim
        if not bool((x == 0).any()):
            # dy_j/dx_i = y_j / x_i for j >= i: a reversed cumsum of g * y, over x.
            return flip(cumsum(flip(g * y, (d,)), d), (d,)) / x, None, None
        # With zeros: sum_{j >= i} g_j * prod_{k <= j, k != i} x_k, done densely.
        n = x._shape[d]
        xm = x.movedim(d, -1)
        gm = g.movedim(d, -1)
        cols = []
        for i in range(n):
            xi_one = xm.clone()
            xi_one[..., i] = 1.0
            p = cumprod(xi_one, -1)
            cols.append((gm[..., i:] * p[..., i:]).sum(-1))
        return stack(cols, -1).movedim(-1, d), None, None


def cumsum(input: TensorBase, dim: int, *, dtype: Any = None) -> TensorBase:
    if input.dim() == 0:                      # a scan of one element: work on shape (1,)
        return cumsum(input.reshape(1), normalize_dim(dim, 1), dtype=dtype).reshape(())
    d = normalize_dim(dim, input.dim())
    dt = _sum_dtype(input, dtype)
    return CumSum.apply(_as_dtype_first(input, dtype, dt), d, dt)


def cumprod(input: TensorBase, dim: int, *, dtype: Any = None) -> TensorBase:
    if input.dim() == 0:
        return cumprod(input.reshape(1), normalize_dim(dim, 1), dtype=dtype).reshape(())
    d = normalize_dim(dim, input.dim())
    dt = _sum_dtype(input, dtype)
    return CumProd.apply(_as_dtype_first(input, dtype, dt), d, dt)


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(all)
declare(amax)
declare(amin)
declare(aminmax)
declare(any)
declare(argmax)
declare(argmin)
declare(count_nonzero)
declare(cumprod, inplace=True)
declare(cumsum, inplace=True)
declare(log_softmax)
declare(logsumexp)
declare(max)
declare(mean)
declare(min)
declare(nansum)
declare(norm)
declare(prod)
declare(softmax)
declare(std)
declare(std_mean, method=False)
declare(sum)
declare(var)
declare(var_mean, method=False)

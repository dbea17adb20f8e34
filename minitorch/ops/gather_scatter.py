"""``gather``, ``scatter``, ``scatter_add``, ``take`` and ``take_along_dim``.

``gather(x, dim, index)`` reads ``x`` at ``index`` along ``dim``:
``out[i][j] = x[index[i][j]][j]`` for ``dim=0``; ``scatter`` writes at those
positions, ``scatter_add`` adds there.  The two are each other's backward:
the gradient of a gather is a scatter_add of the output gradient, and the
gradient of a scatter_add's source is a gather.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..autograd.function import Function
from ..dtype import int32, int64
from ..layout import broadcast_shapes, normalize_dim, numel
from ..tensor_base import TensorBase
from . import kernels
from .elementwise import write_out
from .index_helpers import (as_index, at_least_1d, check_dtype, check_index, dim_size,
                            header, index_inplace, type_name, unaliased, with_size,
                            wrap_index, zeros_like_grad)
from .index_ops import index_add, index_select_raw
from .registry import declare
from .views import raw_copy


def _gather_raw(x: TensorBase, dim: int, index: TensorBase) -> TensorBase:
    """``out[p] = x[p with coordinate dim replaced by index[p]]`` (index checked, int64)."""
    out = kernels.empty(index._shape, x.dtype, x.device)
    x1, i1, o1 = at_least_1d(x), at_least_1d(index), at_least_1d(out)
    kernels.gather(x1, dim, i1, o1)
    return out


def _scatter_into(target: TensorBase, dim: int, index: TensorBase, src: Any, op: str) -> None:
    """``target[.. index[p] ..] (op)= src[p]`` in place; ``src`` a tensor or a number."""
    t1, i1 = at_least_1d(target), at_least_1d(index)
    if isinstance(src, TensorBase):
        s1 = at_least_1d(src)
        src_op = kernels.operand(s1, i1._shape)
    else:
        src_op = kernels.number_operand(src, target.dtype, i1._shape, target)
    kernels.scatter(op, t1, dim, i1, src_op)


def _scatter_raw(x: TensorBase, dim: int, index: TensorBase, src: Any, op: str) -> TensorBase:
    out = raw_copy(x)
    _scatter_into(out, dim, index, src, op)
    return out


def _check_gather_shapes(x: TensorBase, dim: int, index: TensorBase) -> None:
    if index.numel() == 0:       # nothing is read: PyTorch checks no shapes
        return
    if max(index.dim(), 1) != max(x.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    for d in range(index.dim()):
        if d != dim and index._shape[d] > x._shape[d]:
            raise RuntimeError(f"Size does not match at dimension {d} expected index "
                               f"{list(index._shape)} to be no larger than self "
                               f"{list(x._shape)} apart from dimension {dim}")


def _check_scatter_shapes(x: TensorBase, dim: int, index: TensorBase, src: Any) -> None:
    if index.numel() == 0:       # nothing is written: PyTorch checks no shapes
        return
    if max(index.dim(), 1) != max(x.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self "
                           "tensor")
    is_tensor = isinstance(src, TensorBase)
    if is_tensor and max(src.dim(), 1) != max(x.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src "
                           "tensor")
    i_shape = index._shape or (1,)
    for d in range(len(i_shape)):
        # a 0-d self or src holds one element: it counts as size 1
        too_big = (d != dim and i_shape[d] > (x._shape or (1,))[d]) or (
            is_tensor and i_shape[d] > (src._shape or (1,))[d])
        if too_big:
            msg = (f"Expected index {list(index._shape)} to be no larger than self "
                   f"{list(x._shape)} apart from dimension {dim}")
            if is_tensor:
                msg += f" and to be no larger size than src {list(src._shape)}"
            raise RuntimeError(msg)


def _prepare_gather_index(name: str, x: TensorBase, dim: int, index: TensorBase) -> TensorBase:
    """Dtype, shape and bounds checks shared by gather and the scatters."""
    kernels.check_same_device(x, index)
    check_dtype(index, (int64, int32), lambda: RuntimeError(
        f"{name}(): Expected dtype int32/int64 for index"))
    index = as_index(index)
    size = dim_size(x, dim)
    check_index(index, size, lambda v: RuntimeError(
        f"index {v} is out of bounds for dimension {dim} with size {size}"))
    return index


def _pad_to(g: TensorBase, shape: tuple) -> TensorBase:
    """``g`` placed in the leading corner of zeros of ``shape`` (differentiable)."""
    if g._shape == tuple(shape):
        return g
    out = zeros_like_grad(g, shape)
    out[tuple(slice(0, n) for n in g._shape)] = g
    return out


class Gather(Function):
    _backward_name = "GatherBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, index: TensorBase) -> TensorBase:
        ctx.dim, ctx.shape = dim, x._shape
        ctx.save_for_backward(index)
        return _gather_raw(x, dim, index)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (index,) = ctx.saved_tensors
        # Each output element was read from one input position: send its
        # gradient back there, adding where several outputs read one input.
        return scatter_add(zeros_like_grad(g, ctx.shape), ctx.dim, index, g), None, None


def gather(input: TensorBase, dim: int, index: TensorBase, *, sparse_grad: bool = False,
           out: TensorBase | None = None) -> TensorBase:
    """``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (and likewise for other dims).

    ``index`` has as many dims as ``input`` and is no larger than it except
    along ``dim``; the result has ``index``'s shape.
    """
    d = normalize_dim(dim, input.dim())
    idx = _prepare_gather_index("gather", input, d, index)
    _check_gather_shapes(input, d, idx)
    result = Gather.apply(input, d, idx)
    return write_out(result, out)


class Scatter(Function):
    _backward_name = "ScatterBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, index: TensorBase, src: TensorBase) -> TensorBase:
        ctx.dim, ctx.src_shape = dim, src._shape
        ctx.save_for_backward(index)
        return _scatter_raw(x, dim, index, src, "set")

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (index,) = ctx.saved_tensors
        gx = scatter(g, ctx.dim, index, 0.0) if ctx.needs_input_grad[0] else None
        gs = _pad_to(gather(g, ctx.dim, index), ctx.src_shape) if ctx.needs_input_grad[3] \
            else None
        return gx, None, None, gs


class ScatterValue(Function):
    _backward_name = "ScatterBackward1"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, index: TensorBase, value: Any) -> TensorBase:
        ctx.dim = dim
        ctx.save_for_backward(index)
        return _scatter_raw(x, dim, index, value, "set")

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (index,) = ctx.saved_tensors
        return scatter(g, ctx.dim, index, 0.0), None, None, None


class ScatterReduce(Function):
    """``scatter(..., reduce='add'|'multiply')``: PyTorch has no derivative for it either."""

    _backward_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, index: TensorBase, src: Any, op: str) -> TensorBase:
        return _scatter_raw(x, dim, index, src, op)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        raise RuntimeError("the derivative for 'scatter' with the reduce argument is not "
                           "implemented")


class ScatterAdd(Function):
    _backward_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, index: TensorBase, src: TensorBase) -> TensorBase:
        ctx.dim, ctx.src_shape = dim, src._shape
        ctx.save_for_backward(index)
        return _scatter_raw(x, dim, index, src, "add")

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (index,) = ctx.saved_tensors
        gs = _pad_to(gather(g, ctx.dim, index), ctx.src_shape) if ctx.needs_input_grad[3] \
            else None
        return g, None, None, gs


_REDUCE = {"add": "add", "multiply": "multiply"}


def _scatter_args(name: str, input: TensorBase, dim: int, index: TensorBase, src: Any, value: Any,
                  reduce: str | None) -> tuple:
    if src is None:
        src = value
    if src is None:
        raise TypeError(f"{name}() missing required argument 'src' or 'value'")
    d = normalize_dim(dim, input.dim())
    idx = _prepare_gather_index(name, input, d, index)
    kernels.check_same_device(input, src)
    if isinstance(src, TensorBase):
        if src.dtype is not input.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    elif not kernels.is_number(src):
        raise TypeError(f"{name}(): argument 'src' must be Tensor or Number, not "
                        f"{type(src).__name__}")
    _check_scatter_shapes(input, d, idx, src)
    if reduce is not None:
        if reduce not in _REDUCE:
            raise RuntimeError("reduce argument must be either add or multiply.")
        if isinstance(src, TensorBase):
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated "
                          "and will be removed in a future PyTorch release. Use "
                          "torch.scatter_reduce instead for more reduction options.",
                          UserWarning, stacklevel=3)
    return d, idx, src


def _scatter_apply(input: TensorBase, d: int, idx: TensorBase, src: Any, reduce: str | None) -> TensorBase:
    if reduce is not None:
        return ScatterReduce.apply(input, d, idx, src, _REDUCE[reduce])
    if isinstance(src, TensorBase):
        return Scatter.apply(input, d, idx, src)
    return ScatterValue.apply(input, d, idx, src)


def scatter(input: TensorBase, dim: int, index: TensorBase, src: Any = None, value: Any = None, *,
            reduce: str | None = None) -> TensorBase:
    """A copy of ``input`` with ``src[p]`` (or ``value``) written at ``index[p]`` along ``dim``.

    For ``dim=0``: ``out[index[i][j]][j] = src[i][j]``.  The inverse of
    :func:`gather`.  Where two entries of ``index`` name the same place, the
    later one wins (in row-major order).  ``reduce='add'`` or ``'multiply'``
    combines instead of overwriting.
    """
    d, idx, src = _scatter_args("scatter", input, dim, index, src, value, reduce)
    return _scatter_apply(input, d, idx, src, reduce)


def scatter_(self: TensorBase, dim: int, index: TensorBase, src: Any = None, value: Any = None, *,
             reduce: str | None = None) -> TensorBase:
    """In-place :func:`scatter`."""
    d, idx, src = _scatter_args("scatter", self, dim, index, src, value, reduce)

    def write(t: TensorBase) -> None:
        _scatter_into(t, d, idx, unaliased(src, t), _REDUCE.get(reduce, "set"))
    return index_inplace(self, (src,), lambda t: _scatter_apply(t, d, idx, src, reduce), write)


def scatter_add(input: TensorBase, dim: int, index: TensorBase, src: TensorBase) -> TensorBase:
    """A copy of ``input`` with ``src[p]`` *added* at ``index[p]`` along ``dim``.

    Repeated indices accumulate.  This is the backward of :func:`gather`.
    """
    if not isinstance(src, TensorBase):
        raise TypeError(f"scatter_add(): argument 'src' (position 3) must be Tensor, not "
                        f"{type(src).__name__}")
    d, idx, src = _scatter_args("scatter_add", input, dim, index, src, None, None)
    return ScatterAdd.apply(input, d, idx, src)


def scatter_add_(self: TensorBase, dim: int, index: TensorBase, src: TensorBase) -> TensorBase:
    """In-place :func:`scatter_add`."""
    if not isinstance(src, TensorBase):
        raise TypeError(f"scatter_add_(): argument 'src' (position 3) must be Tensor, not "
                        f"{type(src).__name__}")
    d, idx, src = _scatter_args("scatter_add", self, dim, index, src, None, None)
    return index_inplace(
        self, (src,), lambda t: ScatterAdd.apply(t, d, idx, src),
        lambda t: _scatter_into(t, d, idx, unaliased(src, t), "add"))


class Take(Function):
    _backward_name = "TakeBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, index: TensorBase) -> TensorBase:
        ctx.shape = x._shape
        ctx.save_for_backward(index)
        flat = kernels.contiguous(x)
        flat = header(flat, (flat.numel(),))
        out = index_select_raw(flat, 0, header(index, (index.numel(),)))
        return header(out, index._shape)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (index,) = ctx.saved_tensors
        n = numel(ctx.shape)
        flat = index_add(zeros_like_grad(g, (n,)), 0, index.reshape(-1), g.reshape(-1))
        return flat.reshape(ctx.shape), None


def take(input: TensorBase, index: TensorBase) -> TensorBase:
    """``input`` read as if flattened to 1-D, at the positions in ``index`` (``index``'s shape)."""
    check_dtype(index, (int64,), lambda: RuntimeError(
        f"take(): Expected a long tensor for index, but got {type_name(index.dtype)}"))
    kernels.check_same_device(input, index)
    n = input.numel()
    if n == 0 and index.numel():
        raise IndexError("take(): tried to take from an empty tensor")
    idx = as_index(index)
    if check_index(idx, n, lambda v: IndexError(
            f"out of range: tried to access index {v} on a tensor of {n} elements."),
            negative=True):
        idx = wrap_index(idx, n)
    return Take.apply(input, idx)


def take_along_dim(input: TensorBase, indices: TensorBase, dim: int | None = None, *,
                   out: TensorBase | None = None) -> TensorBase:
    """``gather`` with broadcasting: picks values along ``dim`` at ``indices``.

    ``indices`` usually comes from ``argsort``/``argmax(keepdim=True)``.
    Without ``dim``, both are flattened first.  Unlike PyTorch (which wraps
    out-of-range indices silently here), any index outside ``[-n, n)``
    raises.
    """
    check_dtype(indices, (int64,), lambda: RuntimeError(
        f"torch.take_along_dim(): dtype of indices should be Long but got "
        f"{type_name(indices.dtype)}"))
    kernels.check_same_device(input, indices)
    if dim is None:
        return write_out(gather(input.reshape(-1), 0, indices.reshape(-1)), out)
    if input.dim() != indices.dim():
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.dim()} dimensions for input, "
                           f"and {indices.dim()} dimensions for indices")
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = normalize_dim(dim, input.dim())
    size = dim_size(input, d)
    idx = as_index(indices)
    if check_index(idx, size, lambda v: RuntimeError(
            f"index {v} is out of bounds for dimension {d} with size {size}"), negative=True):
        idx = wrap_index(idx, size)
    if input.dim():
        shape = list(broadcast_shapes(with_size(input._shape, d, 1), with_size(idx._shape, d, 1)))
        x_shape = tuple(with_size(shape, d, input._shape[d]))
        i_shape = tuple(with_size(shape, d, idx._shape[d]))
        if x_shape != input._shape:
            input = input.expand(x_shape)
        if i_shape != idx._shape:
            idx = kernels.contiguous(TensorBase._make(idx._storage, i_shape,
                                               kernels.broadcast_operand(idx, i_shape).strides,
                                               idx._offset, int64))
    return write_out(Gather.apply(input, d, idx), out)


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(gather)
declare(scatter)
declare(scatter_add)
declare(take)
declare(take_along_dim)
declare(scatter_, function=False)
declare(scatter_add_, function=False)

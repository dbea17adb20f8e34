"""``index_select``, ``index_add``, ``index_copy`` and ``index_fill``: whole slices by index.

``index_select(x, dim, index)`` picks the slices ``x.select(dim, i)`` for each
``i`` in the 1-d ``index``; ``index_add`` adds slices of a source at those
positions.  The backward of ``index_select`` is ``index_add`` of the
gradient, and the other way round.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..dtype import int32, int64
from ..layout import normalize_dim, numel
from ..tensor_base import TensorBase
from . import kernels
from .elementwise import write_out
from .index_helpers import (as_index, at_least_1d, check_dtype, check_index, dim_size,
                            header, index_inplace, type_name, unaliased, with_size,
                            wrap_index, zeros_like_grad)
from .registry import declare
from .views import raw_copy
from ..backends import scalar_ops


def index_select_raw(x: TensorBase, dim: int, index: TensorBase) -> TensorBase:
    """Rows (slices along ``dim``) of ``x`` picked by the 1-D checked int64 ``index``."""
    x1 = at_least_1d(x)
    shape = x1._shape[:dim] + (index.numel(),) + x1._shape[dim + 1:]
    out = kernels.empty(shape, x.dtype, x.device)
    kernels.index_select(x1._operand(), dim, kernels.flat(index), out)
    return out


def _index_reduce_into(target: TensorBase, dim: int, index: TensorBase, src: Any, op: str) -> None:
    """``target[.., index[k], ..] (op)= src[.., k, ..]`` in place (``src`` tensor or number)."""
    t1 = at_least_1d(target)
    shape = t1._shape[:dim] + (index.numel(),) + t1._shape[dim + 1:]
    if isinstance(src, TensorBase):
        src_op = kernels.broadcast_operand(src, shape) if src.dim() else \
            kernels.operand(src, shape, (0,) * len(shape))
    else:
        src_op = kernels.number_operand(src, target.dtype, shape, target)
    kernels.index_reduce(op, t1, dim, kernels.flat(index), src_op)


def _index_reduce_raw(x: TensorBase, dim: int, index: TensorBase, src: Any, op: str) -> TensorBase:
    out = raw_copy(x)
    _index_reduce_into(out, dim, index, src, op)
    return out


def _vector_index(index: TensorBase) -> TensorBase:
    """A checked 1-D view of a 0-d or 1-d index (int64, contiguous)."""
    index = as_index(index)
    return header(index, (index.numel(),)) if index.dim() == 0 else index


class IndexSelect(Function):
    _backward_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, index: TensorBase) -> TensorBase:
        ctx.dim, ctx.shape = dim, x._shape
        ctx.save_for_backward(index)
        out = index_select_raw(x, dim, index)
        return header(out, ()) if x.dim() == 0 else out

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (index,) = ctx.saved_tensors
        return index_add(zeros_like_grad(g, ctx.shape), ctx.dim, index, g), None, None


def index_select(input: TensorBase, dim: int, index: TensorBase, *, out: TensorBase | None = None
                 ) -> TensorBase:
    """The slices of ``input`` along ``dim`` listed by the 1-D ``index``, in that order.

    ``x.index_select(0, idx)`` is ``x[idx]`` for a 1-D ``idx``; embedding
    lookups are index_select on the rows of a weight matrix.
    """
    d = normalize_dim(dim, input.dim())
    check_dtype(index, (int64, int32), lambda: RuntimeError(
        "index_select(): Expected dtype int32 or int64 for index"))
    kernels.check_same_device(input, index)
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if input.dim() == 0 and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{index.numel()} value(s)")
    idx = _vector_index(index)
    check_index(idx, dim_size(input, d), lambda v: IndexError("index out of range in self"))
    return write_out(IndexSelect.apply(input, d, idx), out)


def _check_index_source(name: str, x: TensorBase, dim: int, idx: TensorBase, source: TensorBase) -> None:
    """``source`` must have ``x``'s shape except along ``dim``, where it has len(index)."""
    if x.dim() == 0 and source.dim() != 0:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x._shape)} "
                           f"source.shape = {list(source._shape)}")
    if dim > 0 and dim >= source.dim():
        raise RuntimeError(f"{name}(): Indexing dim {dim} is out of bounds of the source "
                           f"tensor with dim {source.dim()}")
    if source.dim() == 0 and x.dim() != 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    src_shape = source._shape or (1,)
    n = idx.numel()
    src_n = src_shape[dim] if len(src_shape) > dim else 1
    if n != src_n:
        raise RuntimeError(f"{name}(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({src_n}), for dim: {dim}")
    x_shape = x._shape if x.dim() else (1,)
    if len(src_shape) != len(x_shape) or any(
            a != b for d, (a, b) in enumerate(zip(src_shape, x_shape)) if d != dim):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x._shape)} "
                           f"source.shape = {list(source._shape)}")


class IndexAdd(Function):
    _backward_name = "IndexAddBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, index: TensorBase, source: TensorBase,
                alpha: Any) -> TensorBase:
        ctx.dim, ctx.alpha, ctx.src_shape = dim, alpha, source._shape
        ctx.save_for_backward(index)
        if alpha != 1:
            source = kernels.arith(source, alpha, scalar_ops.MUL)
            source = kernels.cast(source, x.dtype)
        return _index_reduce_raw(x, dim, index, source, "add")

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (index,) = ctx.saved_tensors
        gs = None
        if ctx.needs_input_grad[3]:
            gs = index_select(g, ctx.dim, index).reshape(ctx.src_shape)
            if ctx.alpha != 1:
                gs = gs * ctx.alpha
        return g, None, None, gs, None


def _index_add_args(input: TensorBase, dim: int, index: TensorBase, source: TensorBase) -> tuple:
    d = normalize_dim(dim, input.dim())
    kernels.check_same_device(input, index, source)
    check_dtype(index, (int64, int32), lambda: RuntimeError(
        f"index_add_(): Expected dtype int32/int64 for index but got: "
        f"{type_name(index.dtype)}"))
    if index.dim() > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{index.dim()} with type: {type_name(index.dtype)} and size: "
                         f"{list(index._shape)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_add_(): self ({type_name(input.dtype)}) and source "
                           f"({type_name(source.dtype)}) must have the same scalar type")
    idx = _vector_index(index)
    _check_index_source("index_add_", input, d, idx, source)
    size = dim_size(input, d)
    if input.dim() <= 1:
        check_index(idx, size, lambda v: IndexError("index out of range in self"))
    else:
        check_index(idx, size, lambda v: RuntimeError(
            f"index {v} is out of bounds for dimension {d} with size {size}"))
    return d, idx


def index_add(input: TensorBase, dim: int, index: TensorBase, source: TensorBase, *, alpha: Any = 1
              ) -> TensorBase:
    """A copy of ``input`` with ``alpha * source[.., k, ..]`` added to slice ``index[k]``.

    Repeated indices accumulate.  The backward of :func:`index_select`.
    """
    d, idx = _index_add_args(input, dim, index, source)
    return IndexAdd.apply(input, d, idx, source, alpha)


def index_add_(self: TensorBase, dim: int, index: TensorBase, source: TensorBase, *, alpha: Any = 1
               ) -> TensorBase:
    """In-place :func:`index_add`."""
    d, idx = _index_add_args(self, dim, index, source)

    def write(t: TensorBase) -> None:
        src = unaliased(source, t)
        if alpha != 1:
            src = kernels.cast(kernels.arith(src, alpha, scalar_ops.MUL), t.dtype)
        _index_reduce_into(t, d, idx, src, "add")
    return index_inplace(self, (source,), lambda t: IndexAdd.apply(t, d, idx, source, alpha),
                          write)


class IndexCopy(Function):
    _backward_name = "IndexCopyBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, index: TensorBase, source: TensorBase) -> TensorBase:
        ctx.dim, ctx.src_shape = dim, source._shape
        ctx.save_for_backward(index)
        return _index_reduce_raw(x, dim, index, source, "set")

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (index,) = ctx.saved_tensors
        gx = index_fill(g, ctx.dim, index, 0.0) if ctx.needs_input_grad[0] else None
        gs = index_select(g, ctx.dim, index).reshape(ctx.src_shape) \
            if ctx.needs_input_grad[3] else None
        return gx, None, None, gs


def _index_copy_args(input: TensorBase, dim: int, index: TensorBase, source: TensorBase) -> tuple:
    d = normalize_dim(dim, input.dim())
    kernels.check_same_device(input, index, source)
    check_dtype(index, (int64,), lambda: RuntimeError(
        f"index_copy_(): Expected a long tensor for index, but got {type_name(index.dtype)}"))
    if index.dim() > 1:
        raise IndexError("index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{index.dim()})")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {type_name(input.dtype)} and (source) "
                           f"{type_name(source.dtype)}")
    idx = _vector_index(index)
    if source.dim() == 0 and idx.numel() != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element "
                         f"(got {idx.numel()})")
    if input.dim() and source.dim() and input.dim() != source.dim():
        raise IndexError("index_copy_(): When source and destination are not scalars, their "
                         "dimensionality must match. Source dimensionality "
                         f"({source.dim()}), destination dimensionality ({input.dim()})")
    x_shape, s_shape = input._shape or (1,), source._shape or (1,)
    if any(a != b for k, (a, b) in enumerate(zip(x_shape, s_shape)) if k != d) or \
            len(x_shape) != len(s_shape):
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination shape {list(input._shape)} and source shape "
                           f"{list(source._shape)} differ outside dimension {d}.")
    src_n = s_shape[d]
    if idx.numel() != src_n:
        raise IndexError(f"index_copy_(): Number of indices ({idx.numel()}) should be equal "
                         f"to source.size(dim) ({src_n})")
    size = dim_size(input, d)
    check_index(idx, size, lambda v: IndexError(
        f"index_copy_(): index {v} is out of bounds for dimension {d} with size {size}"))
    return d, idx


def index_copy(input: TensorBase, dim: int, index: TensorBase, source: TensorBase) -> TensorBase:
    """A copy of ``input`` whose slice ``index[k]`` along ``dim`` is ``source[.., k, ..]``."""
    d, idx = _index_copy_args(input, dim, index, source)
    return IndexCopy.apply(input, d, idx, source)


def index_copy_(self: TensorBase, dim: int, index: TensorBase, source: TensorBase) -> TensorBase:
    """In-place :func:`index_copy`."""
    d, idx = _index_copy_args(self, dim, index, source)
    return index_inplace(self, (source,), lambda t: IndexCopy.apply(t, d, idx, source),
                          lambda t: _index_reduce_into(t, d, idx, unaliased(source, t),
                                                       "set"))


class IndexFill(Function):
    _backward_name = "IndexFillBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, index: TensorBase, value: Any) -> TensorBase:
        ctx.dim = dim
        ctx.save_for_backward(index)
        return _index_reduce_raw(x, dim, index, value, "set")

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (index,) = ctx.saved_tensors
        return index_fill(g, ctx.dim, index, 0.0), None, None, None


class IndexFillTensor(Function):
    _backward_name = "IndexFillBackward1"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, index: TensorBase, value: TensorBase) -> TensorBase:
        ctx.dim, ctx.value_dtype = dim, value.dtype
        ctx.save_for_backward(index)
        return _index_reduce_raw(x, dim, index, kernels.cast(value, x.dtype), "set")

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (index,) = ctx.saved_tensors
        kept = index_fill(g, ctx.dim, index, 0.0)
        gv = None
        if ctx.needs_input_grad[3]:
            # value landed on every filled element once (repeated indices fill
            # the same place), so its gradient is the sum of g over those places.
            gv = (g.sum() - kept.sum()).to(ctx.value_dtype)
        return kept, None, None, gv


def _index_fill_args(input: TensorBase, dim: int, index: TensorBase, value: Any) -> tuple:
    d = normalize_dim(dim, input.dim())
    kernels.check_same_device(input, index)
    check_dtype(index, (int64,), lambda: IndexError(
        "index_fill_(): Expected dtype int64 for index."))
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, TensorBase) and value.dim() != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.dim()} dimension(s).")
    idx = _vector_index(index)
    size = dim_size(input, d)
    if input.dim() and numel(with_size(input._shape, d, 1)) == 0:
        return d, idx[:0]        # other dims are empty: nothing is filled, nothing checked
    if check_index(idx, size, lambda v: IndexError(
            f"index {v} is out of bounds for dimension {d} with size {size}"), negative=True):
        idx = wrap_index(idx, size)
    return d, idx


def _index_fill_apply(input: TensorBase, d: int, idx: TensorBase, value: Any) -> TensorBase:
    if isinstance(value, TensorBase):
        return IndexFillTensor.apply(input, d, idx, value)
    return IndexFill.apply(input, d, idx, value)


def index_fill(input: TensorBase, dim: int, index: TensorBase, value: Any) -> TensorBase:
    """A copy of ``input`` with every slice ``index[k]`` along ``dim`` set to ``value``."""
    d, idx = _index_fill_args(input, dim, index, value)
    return _index_fill_apply(input, d, idx, value)


def index_fill_(self: TensorBase, dim: int, index: TensorBase, value: Any) -> TensorBase:
    """In-place :func:`index_fill`."""
    d, idx = _index_fill_args(self, dim, index, value)

    def write(t: TensorBase) -> None:
        v = kernels.cast(value, t.dtype) if isinstance(value, TensorBase) else value
        _index_reduce_into(t, d, idx, v, "set")
    return index_inplace(self, (value,), lambda t: _index_fill_apply(t, d, idx, value), write)


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(index_add)
declare(index_copy)
declare(index_fill)
declare(index_select)
declare(index_add_, function=False)
declare(index_copy_, function=False)
declare(index_fill_, function=False)

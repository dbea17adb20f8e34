"""Masked ops: ``masked_fill``, ``masked_select``, ``masked_scatter``, ``nonzero``, ``argwhere``.

A mask is a bool tensor that broadcasts to the input: ``masked_fill`` writes a
value where it is True, ``masked_select`` reads those elements into a 1-d
tensor (its size depends on the data, so it is computed on the host), and
``masked_scatter`` writes consecutive source elements there; the backward of
``masked_select`` is ``masked_scatter`` of the gradient.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..autograd.function import Function
from ..dtype import bool_, dtype as dtype_cls, int64, check_fill_value
from ..layout import broadcast_shapes, contiguous_strides, numel
from ..tensor_base import TensorBase
from . import kernels
from .elementwise import write_out
from .index_helpers import header, index_inplace, type_name, zeros_like_grad
from .registry import declare
from .views import sum_to_shape
from .views import cat
from ..backends import scalar_ops
from ..storage import UntypedStorage


_C_TYPE = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
           "uint8": "unsigned char", "float32": "float", "float64": "double",
           "float16": "c10::Half"}


def _check_mask(mask: Any, message: Callable[[TensorBase], str]) -> None:
    if not isinstance(mask, TensorBase):
        raise TypeError(f"mask must be a Tensor, not {type(mask).__name__}")
    if mask.dtype is not bool_:
        raise RuntimeError(message(mask))


def _masked_fill_raw(x: TensorBase, mask: TensorBase, value: Any) -> TensorBase:
    shape = broadcast_shapes(x._shape, mask._shape)
    out = kernels.empty(shape, x.dtype, x.device)
    kernels.copy(kernels.broadcast_operand(x, shape), out)
    kernels.masked_fill(out, kernels.broadcast_operand(mask, shape), value)
    return out


def _scalar_value(value: Any, dt: dtype_cls) -> Any:
    """A Python number, or the number held by a 0-d tensor, converted to ``dt``'s kind."""
    if isinstance(value, TensorBase):
        value = value.item()
    return np.array([value]).astype(dt.np)[0]


class MaskedFill(Function):
    _backward_name = "MaskedFillBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, mask: TensorBase, value: Any) -> TensorBase:
        ctx.shape = x._shape
        ctx.save_for_backward(mask)
        return _masked_fill_raw(x, mask, _scalar_value(value, x.dtype))

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (mask,) = ctx.saved_tensors
        return sum_to_shape(masked_fill(g, mask, 0.0), ctx.shape), None, None


class MaskedFillTensor(Function):
    _backward_name = "MaskedFillBackward1"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, mask: TensorBase, value: TensorBase) -> TensorBase:
        ctx.shape, ctx.value_dtype = x._shape, value.dtype
        ctx.save_for_backward(mask)
        return _masked_fill_raw(x, mask, _scalar_value(value, x.dtype))

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (mask,) = ctx.saved_tensors
        gx = sum_to_shape(masked_fill(g, mask, 0.0), ctx.shape) if ctx.needs_input_grad[0] \
            else None
        gv = masked_select(g, mask).sum().to(ctx.value_dtype) if ctx.needs_input_grad[2] \
            else None
        return gx, None, gv


def _masked_fill_args(mask: Any, value: Any) -> None:
    _check_mask(mask, lambda m: f"masked_fill_ only supports boolean masks, but got mask with "
                                f"dtype {_C_TYPE.get(m.dtype.name, m.dtype.name)}")
    if isinstance(value, TensorBase) and value.dim() != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.dim()} dimension(s).")
    if not isinstance(value, TensorBase) and not kernels.is_number(value):
        raise TypeError(f"masked_fill(): argument 'value' must be Number or Tensor, not "
                        f"{type(value).__name__}")


def _masked_fill_apply(input: TensorBase, mask: TensorBase, value: Any) -> TensorBase:
    if isinstance(value, TensorBase):
        return MaskedFillTensor.apply(input, mask, value)
    return MaskedFill.apply(input, mask, value)


def masked_fill(input: TensorBase, mask: TensorBase, value: Any) -> TensorBase:
    """A copy of ``input`` (broadcast with ``mask``) with ``value`` where ``mask`` is True."""
    _masked_fill_args(mask, value)
    if not isinstance(value, TensorBase):
        check_fill_value(value, input.dtype)       # 2**40 into int32 raises, as in PyTorch
    kernels.check_same_device(input, mask)
    return _masked_fill_apply(input, mask, value)


def masked_fill_(self: TensorBase, mask: TensorBase, value: Any) -> TensorBase:
    """In-place :func:`masked_fill`; ``mask`` must broadcast to ``self``'s shape."""
    _masked_fill_args(mask, value)
    if not isinstance(value, TensorBase):
        check_fill_value(value, self.dtype)
    kernels.check_same_device(self, mask)
    shape = broadcast_shapes(self._shape, mask._shape)
    if shape != self._shape:
        raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")

    def write(t: TensorBase) -> None:
        v = _scalar_value(value, t.dtype)
        if t.is_contiguous():
            kernels.masked_fill(t, kernels.broadcast_operand(mask, t._shape), v)
        else:
            kernels.copy_into(t, _masked_fill_raw(t, mask, v))
    return index_inplace(self, (value,), lambda t: _masked_fill_apply(t, mask, value), write)


def _masked_select_raw(x: TensorBase, mask: TensorBase) -> TensorBase:
    shape = broadcast_shapes(x._shape, mask._shape)
    data = kernels.masked_select(kernels.broadcast_operand(x, shape),
                                 kernels.broadcast_operand(mask, shape), x.device)
    return TensorBase._make(UntypedStorage(data, x.device), (data.shape[0],), (1,), 0, x.dtype)


class MaskedSelect(Function):
    _backward_name = "MaskedSelectBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, mask: TensorBase) -> TensorBase:
        ctx.shape = x._shape
        ctx.save_for_backward(mask)
        return _masked_select_raw(x, mask)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (mask,) = ctx.saved_tensors
        shape = broadcast_shapes(ctx.shape, mask._shape)
        return sum_to_shape(masked_scatter(zeros_like_grad(g, shape), mask, g),
                            ctx.shape), None


def masked_select(input: TensorBase, mask: TensorBase, *, out: TensorBase | None = None) -> TensorBase:
    """The elements of ``input`` where ``mask`` is True, as a 1-D tensor (row-major order)."""
    _check_mask(mask, lambda m: "masked_select: expected BoolTensor for mask")
    kernels.check_same_device(input, mask)
    return write_out(MaskedSelect.apply(input, mask), out)


def _masked_scatter_raw(x: TensorBase, mask: TensorBase, source: TensorBase) -> TensorBase:
    shape = broadcast_shapes(x._shape, mask._shape)
    out = kernels.empty(shape, x.dtype, x.device)
    kernels.copy(kernels.broadcast_operand(x, shape), out)
    mask_op = kernels.broadcast_operand(mask, shape)
    if kernels.count_true(mask_op, out.device) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    src = kernels.contiguous(source)
    kernels.masked_scatter(out, mask_op, src)
    return out


class MaskedScatter(Function):
    _backward_name = "MaskedScatterBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, mask: TensorBase, source: TensorBase) -> TensorBase:
        ctx.shape, ctx.src_shape = x._shape, source._shape
        ctx.save_for_backward(mask)
        return _masked_scatter_raw(x, mask, source)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (mask,) = ctx.saved_tensors
        gx = sum_to_shape(masked_fill(g, mask, 0.0), ctx.shape) if ctx.needs_input_grad[0] \
            else None
        gs = None
        if ctx.needs_input_grad[2]:
            # source's first `count` elements went to the masked places, in order;
            # the rest were not used and get zero gradient.
            picked = masked_select(g, mask)
            n = numel(ctx.src_shape)
            if picked.numel() < n:
                picked = cat([picked, zeros_like_grad(g, (n - picked.numel(),))])
            gs = picked.reshape(ctx.src_shape)
        return gx, None, gs


def _masked_scatter_args(input: TensorBase, mask: Any, source: Any) -> None:
    _check_mask(mask, lambda m: f"masked_scatter_ only supports boolean masks, but got mask "
                                f"with dtype {_C_TYPE.get(m.dtype.name, m.dtype.name)}")
    if not isinstance(source, TensorBase):
        raise TypeError(f"masked_scatter(): argument 'source' must be Tensor, not "
                        f"{type(source).__name__}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{type_name(input.dtype)} and {type_name(source.dtype)}")
    kernels.check_same_device(input, mask, source)


def masked_scatter(input: TensorBase, mask: TensorBase, source: TensorBase) -> TensorBase:
    """A copy of ``input`` whose masked elements are, in order, the first elements of ``source``."""
    _masked_scatter_args(input, mask, source)
    return MaskedScatter.apply(input, mask, source)


def masked_scatter_(self: TensorBase, mask: TensorBase, source: TensorBase) -> TensorBase:
    """In-place :func:`masked_scatter`; ``mask`` must broadcast to ``self``'s shape."""
    _masked_scatter_args(self, mask, source)
    try:
        kernels.broadcast_operand(mask, self._shape)
    except RuntimeError:
        raise RuntimeError(f"expand(CPUBoolType{{{list(mask._shape)}}}, size="
                           f"{list(self._shape)}): the number of sizes provided "
                           f"({self.dim()}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({mask.dim()})") from None

    def write(t: TensorBase) -> None:
        kernels.copy_into(t, _masked_scatter_raw(t, mask, source))
    return index_inplace(self, (source,), lambda t: MaskedScatter.apply(t, mask, source),
                          write)


def _as_bool(x: TensorBase) -> TensorBase:
    if x.dtype is bool_:
        return x
    return kernels.compare(x, 0, scalar_ops.NE)


def nonzero(input: TensorBase, *, out: TensorBase | None = None, as_tuple: bool = False) -> Any:
    """The coordinates of the non-zero elements: a ``(count, ndim)`` int64 tensor.

    With ``as_tuple=True``, one 1-D tensor per dim instead (usable as an
    index: ``x[x.nonzero(as_tuple=True)]`` is ``x[x != 0]``).
    """
    mask = _as_bool(input)
    if as_tuple and mask.dim() == 0:
        mask = header(kernels.contiguous(mask), (1,))
    coords = kernels.nonzero(mask)     # a (count, ndim) buffer
    result = TensorBase._make(UntypedStorage(coords.reshape(-1), input.device), coords.shape,
                          contiguous_strides(coords.shape), 0, int64)
    if as_tuple:
        return tuple(kernels.contiguous(TensorBase._make(result._storage, (coords.shape[0],),
                                                  (max(mask.dim(), 1),), d, int64))
                     for d in range(mask.dim()))
    return write_out(result, out)


def argwhere(input: TensorBase) -> TensorBase:
    """Same as ``nonzero(input)``: one row of coordinates per non-zero element."""
    return nonzero(input)


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(argwhere)
declare(masked_fill)
declare(masked_scatter)
declare(masked_select)
declare(nonzero)
declare(masked_fill_, function=False)
declare(masked_scatter_, function=False)

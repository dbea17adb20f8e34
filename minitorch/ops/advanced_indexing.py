"""Advanced indexing: ``x[idx]`` and ``x[idx] = v`` with lists, int/bool tensors or arrays.

A key is *advanced* when it holds an integer or boolean tensor (or a list or
NumPy array, which become tensors).  Unlike basic indexing, the result is a
**copy**: the selected elements are, in general, not evenly spaced in memory.

How a key is taken apart (PyTorch's rules, which differ from NumPy's only
in that plain ints are always basic indices):

1. Ints, slices, ``None`` and ``...`` are applied first as basic indexing
   (a view).  Each tensor index keeps its dim for now; a boolean mask of
   ``k`` dims stands for ``k`` integer indices (its ``nonzero()``); a bare
   ``True``/``False`` adds a new dim of size 1 indexed by ``[0]``/``[]``.
2. The index tensors are broadcast together to one shape ``B``.
3. The indexed dims are replaced by ``B``.  If they were next to each other,
   ``B`` goes where they were: ``x[:, [0, 1], [2, 3]]`` on a ``(5, 6, 7)``
   tensor has shape ``(5, 2)``.  If something separates them, ``B`` goes
   first: ``x[[0, 1], :, [2, 3]]`` has shape ``(2, 6)``.

For the kernel, all indexed dims fold into one: an element ``(i, j)`` of the
indexed dims lives ``i * stride_i + j * stride_j`` storage elements from the
start.  These offsets (one per element of ``B``) are computed once, then
``x[idx]`` is ``index_select`` along the folded dim (a gather), and
``x[idx] = v`` is ``index_copy``/``index_add`` along it (a scatter).

Gradients: the backward of a read at some positions (``IndexBackward0``) is
an accumulating write at the same positions (``index_put(...,
accumulate=True)``), and the backward of a write (``IndexPutBackward0``)
reads the written positions of the gradient for the values.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..autograd import grad_mode
from ..autograd.function import Function
from ..dtype import bool_, int8, int16, int32, int64, uint8
from ..layout import broadcast_shapes, contiguous_strides, expand_strides, numel, view_strides
from ..tensor_base import TensorBase
from . import kernels
from .kernels import Operand
from .basic_indexing import basic_getitem, basic_setitem, copy_like
from .creation import tensor
from .elementwise import inplace
from .index_helpers import check_index, check_writable, fresh, type_name
from .masked import nonzero
from .views import raw_copy, sum_to_shape
from .registry import declare
from ..backends import scalar_ops

__all__ = ["getitem", "setitem", "index_put", "index_put_", "AdvancedIndex"]

_INT_DTYPES = (int64, int32, int16, int8)


# ---------------------------------------------------------------------------
# The parsed key
# ---------------------------------------------------------------------------
class AdvancedIndex:
    """The advanced part of a key, after basic indexing, for a tensor of ``shape``.

    ``dims`` are the indexed dims (increasing); ``indices`` one int64
    contiguous tensor per dim, broadcast to ``bshape`` and already wrapped
    into ``[0, size)``.  Nothing here depends on strides, so the same object
    indexes the forward input and, in backward, a contiguous gradient.
    """

    def __init__(self, shape: tuple, dims: list, indices: list, bshape: tuple) -> None:
        self.shape = tuple(shape)
        self.dims = list(dims)
        self.indices = indices
        self.bshape = tuple(bshape)
        adjacent = all(b == a + 1 for a, b in zip(self.dims, self.dims[1:]))
        self.pos = self.dims[0] if adjacent else 0   # where B goes among the other dims
        self.rest = [d for d in range(len(self.shape)) if d not in self.dims]

    def result_shape(self) -> tuple:
        rest = [self.shape[d] for d in self.rest]
        return tuple(rest[:self.pos]) + self.bshape + tuple(rest[self.pos:])

    def _folded(self, t: TensorBase) -> tuple:
        """``(operand, offsets)``: ``t`` read with the indexed dims folded into one dim.

        The folded dim sits at ``self.pos``; ``offsets[k] * stride`` is where
        its ``k``-th element starts.  One index tensor needs no offsets: its
        values, times that dim's stride, are the positions.
        """
        nb = numel(self.bshape)
        if len(self.dims) == 1:
            offsets = kernels.flat(self.indices[0])
            stride = t._stride[self.dims[0]]
        else:
            acc = fresh((nb,), int64, t.device, 0)
            for d, idx in zip(self.dims, self.indices):
                kernels.add_index_offsets(acc, idx, self.shape[d], t._stride[d])
            offsets, stride = kernels.flat(acc), 1
        rest_shape = [t._shape[d] for d in self.rest]
        rest_st = [t._stride[d] for d in self.rest]
        p = self.pos
        shape = tuple(rest_shape[:p]) + (nb,) + tuple(rest_shape[p:])
        strides = tuple(rest_st[:p]) + (stride,) + tuple(rest_st[p:])
        return kernels.operand(t, shape, strides), offsets

    def gather(self, t: TensorBase) -> TensorBase:
        """``t[key]`` as a new contiguous tensor (no autograd)."""
        src, offsets = self._folded(t)
        out = kernels.empty(src.shape, t.dtype, t.device)
        kernels.index_select(src, self.pos, offsets, out)
        shape = self.result_shape()
        return TensorBase._make(out._storage, shape, contiguous_strides(shape), 0, t.dtype)

    def put(self, t: TensorBase, values: Any, accumulate: bool) -> None:
        """``t[key] = values`` (or ``+=`` with ``accumulate``), in place, no autograd.

        ``values`` is a number or a tensor of ``t``'s dtype that broadcasts
        to the result shape.
        """
        tgt, offsets = self._folded(t)
        kernels.index_reduce("add" if accumulate else "set", t, self.pos, offsets,
                             self._values_operand(values, t, tgt.shape), folded=tgt)

    def _values_operand(self, values: Any, t: TensorBase, folded: tuple) -> Operand:
        if not isinstance(values, TensorBase):
            return kernels.number_operand(values, t.dtype, folded, t)
        rshape = self.result_shape()
        values = _strip_leading_ones(values, len(rshape))
        _, strides = expand_strides(values._shape, values._stride, rshape)
        st = view_strides(rshape, strides, folded)
        if st is None:   # the broadcast B dims do not fold into one: copy them out
            tmp = kernels.empty(rshape, values.dtype, values.device)
            kernels.copy(kernels.operand(values, rshape, strides), tmp)
            return kernels.operand(tmp, folded, contiguous_strides(folded), 0)
        return kernels.operand(values, folded, st)


def _strip_leading_ones(values: TensorBase, ndim: int) -> TensorBase:
    """PyTorch drops leading size-1 dims of a value that has more dims than the target."""
    while values.dim() > ndim and values._shape[0] == 1:
        values = TensorBase._make(values._storage, values._shape[1:], values._stride[1:],
                              values._offset, values.dtype)
    return values


# ---------------------------------------------------------------------------
# Parsing keys
# ---------------------------------------------------------------------------
def _treat_sequence_as_tuple(seq: list) -> bool:
    """NumPy's old heuristic (still PyTorch's): a list holding slices, None, ...,
    tensors or sequences is a tuple of indices, not one index."""
    if len(seq) >= 32:
        return False
    return any(isinstance(k, (TensorBase, list, tuple, slice, np.ndarray)) or k is None or
               k is Ellipsis for k in seq)


def _index_error() -> IndexError:
    return IndexError("tensors used as indices must be long, int, byte or bool tensors")


def _to_index_tensor(k: Any, device: Any) -> TensorBase:
    """A list or NumPy array used as an index, as an int64 or bool tensor."""
    if isinstance(k, np.ndarray):
        if k.dtype.kind not in "iub":
            raise _index_error()
        k = k.astype(np.bool_ if k.dtype.kind == "b" else np.int64)
        return tensor(k, device=device)
    try:
        t = tensor(k, device=device)
    except (TypeError, ValueError):
        raise _index_error() from None
    if t.dtype.is_floating_point:
        if t.numel() == 0:
            return kernels.cast(t, int64)
        raise _index_error()
    return t


def as_key_tuple(key: Any) -> tuple:
    """The key as a tuple of items: ``x[a]`` is ``x[(a,)]``, except for some lists.

    A list holding slices, None, ``...``, tensors or sequences is read as a
    tuple (NumPy's old rule, deprecated in PyTorch): ``x[[[0, 1], [1, 2]]]``
    is ``x[[0, 1], [1, 2]]``.
    """
    if isinstance(key, tuple):
        return key
    if isinstance(key, list) and _treat_sequence_as_tuple(key):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated "
                      "and will be changed in pytorch 2.9; use x[tuple(seq)] instead of "
                      "x[seq].", UserWarning, stacklevel=5)
        return tuple(key)
    return (key,)


def _normalize_items(x: TensorBase, key: tuple) -> list:
    """Each key item as None, Ellipsis, slice, int, ('mask', bool tensor) or ('index', tensor)."""
    items = []
    for k in key:
        if isinstance(k, (bool, np.bool_)):
            items.append(("scalar_mask", bool(k)))
            continue
        if k is None or k is Ellipsis or isinstance(k, slice):
            items.append(k)
            continue
        if isinstance(k, (list, tuple, np.ndarray)) and not (
                isinstance(k, np.ndarray) and k.ndim == 0 and k.dtype.kind in "iu"):
            k = _to_index_tensor(k, x.device)
        if isinstance(k, TensorBase):
            if k.dtype is uint8:
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a "
                              "dtype torch.bool instead.", UserWarning, stacklevel=4)
                k = kernels.compare(k, 0, scalar_ops.NE)
            if k.dtype is bool_:
                items.append(("scalar_mask", bool(k.item())) if k.dim() == 0 else ("mask", k))
            elif k.dtype in _INT_DTYPES:
                # a 0-d integer tensor is an int (PyTorch selects: a view)
                items.append(int(k.item()) if k.dim() == 0 else ("index", k))
            else:
                raise _index_error()
            continue
        if hasattr(k, "__index__"):
            items.append(k.__index__())
            continue
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                         "Variables are valid indices (got " + type(k).__name__ + ")")
    return items


def _consumed(item: Any) -> int:
    """How many dims of the indexed tensor an item uses."""
    if item is None or item is Ellipsis or (isinstance(item, tuple) and
                                            item[0] == "scalar_mask"):
        return 0
    if isinstance(item, tuple) and item[0] == "mask":
        return item[1].dim()
    return 1


def parse(x: TensorBase, key: tuple) -> tuple:
    """Split ``key`` into a basic key and an :class:`AdvancedIndex` (``None`` if all basic).

    Returns ``(basic_key, adv)`` where ``adv`` is a list of ``(dim, kind,
    tensor_or_bool)`` describing the advanced items on the dims of
    ``x[basic_key]``.
    """
    items = _normalize_items(x, as_key_tuple(key))
    used = sum(_consumed(k) for k in items)
    if used > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()}")
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    basic, adv = [], []
    out_dim = 0
    for k in items:
        if k is Ellipsis:
            n = x.dim() - used
            basic.extend([slice(None)] * n)
            out_dim += n
        elif k is None:
            basic.append(None)
            out_dim += 1
        elif isinstance(k, slice):
            basic.append(k)
            out_dim += 1
        elif isinstance(k, tuple) and k[0] == "scalar_mask":
            basic.append(None)                       # a new dim of size 1 ...
            adv.append((out_dim, "scalar_mask", k[1]))  # ... indexed by [0] or []
            out_dim += 1
        elif isinstance(k, tuple) and k[0] == "mask":
            n = k[1].dim()
            basic.extend([slice(None)] * n)
            adv.append((out_dim, "mask", k[1]))
            out_dim += n
        elif isinstance(k, tuple):
            basic.append(slice(None))
            adv.append((out_dim, "index", k[1]))
            out_dim += 1
        else:
            basic.append(k)
    return tuple(basic), adv


def _build(view: TensorBase, adv: list) -> AdvancedIndex:
    """Check every advanced item against ``view`` (= x[basic key]) and build the index."""
    dims, tensors = [], []
    for d, kind, value in adv:
        if kind == "scalar_mask":
            t = fresh((1 if value else 0,), int64, view.device, 0)
            dims.append(d)
            tensors.append(t)
        elif kind == "mask":
            mask = value
            for j in range(mask.dim()):
                if mask._shape[j] != view._shape[d + j]:
                    raise IndexError(f"The shape of the mask {list(mask._shape)} at index {j} "
                                     f"does not match the shape of the indexed tensor "
                                     f"{list(view._shape)} at index {d + j}")
            for j, t in enumerate(nonzero(mask, as_tuple=True)):
                dims.append(d + j)
                tensors.append(t)
        else:
            dims.append(d)
            tensors.append(value)
    try:
        bshape = broadcast_shapes(*[t._shape for t in tensors])
    except RuntimeError:
        shapes = ", ".join(str(list(t._shape)) for t in tensors)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together "
                         f"with shapes {shapes}") from None
    ready = []
    for d, t in zip(dims, tensors):
        size = view._shape[d]
        t = kernels.contiguous(kernels.cast(t, int64))
        if size == 0 and t.numel():
            raise IndexError("index is out of bounds for dimension with size 0")
        check_index(t, size, lambda v, d=d, size=size: IndexError(
            f"index {v} is out of bounds for dimension {d} with size {size}"), negative=True)
        # broadcast to B and wrap negatives in one pass (always a fresh tensor we own)
        full = fresh(bshape, int64, view.device, 0)
        src = kernels.contiguous(TensorBase._make(t._storage, bshape,
                                           kernels.broadcast_operand(t, bshape).strides,
                                           t._offset, int64))
        kernels.add_index_offsets(full, src, size, 1)
        ready.append(full)
    return AdvancedIndex(view._shape, dims, ready, bshape)


def _is_trivial(basic: tuple) -> bool:
    return all(isinstance(k, slice) and k == slice(None) for k in basic)


def _prepare(x: TensorBase, key: tuple) -> tuple:
    """``(basic, view, index)``: the basic part of ``key``, ``x[basic]``, the advanced part.

    ``index`` is ``None`` when the key turned out to be basic (a 0-d integer
    tensor is an int; a list holding slices is a tuple); then ``view`` is too.
    """
    basic, adv = parse(x, key)
    if not adv:
        return basic, None, None
    view = x if _is_trivial(basic) else basic_getitem(x, basic)
    return basic, view, _build(view, adv)


# ---------------------------------------------------------------------------
# Autograd functions
# ---------------------------------------------------------------------------
class Index(Function):
    _backward_name = "IndexBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, index: AdvancedIndex) -> TensorBase:
        ctx.index = index
        return index.gather(x)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        zeros = fresh(ctx.index.shape, g.dtype, g.device, 0)
        return IndexPut.apply(zeros, ctx.index, g, True), None


class IndexPut(Function):
    _backward_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, index: AdvancedIndex, values: Any,
                accumulate: bool) -> TensorBase:
        ctx.index, ctx.accumulate = index, accumulate
        ctx.values_shape = values._shape if isinstance(values, TensorBase) else None
        out = raw_copy(x)
        index.put(out, values, accumulate)
        return out

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        index = ctx.index
        gx = None
        if ctx.needs_input_grad[0]:
            # overwritten elements do not reach the output: zero their gradient
            gx = g if ctx.accumulate else IndexPut.apply(g, index, 0.0, False)
        gv = None
        if ctx.needs_input_grad[2]:
            gv = Index.apply(g, index)
            shape = ctx.values_shape
            stripped = shape
            while len(stripped) > gv.dim() and stripped[0] == 1:
                stripped = stripped[1:]
            gv = sum_to_shape(gv, stripped)
            if stripped != shape:
                gv = gv.reshape(shape)
        return gx, None, gv, None


# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------
def getitem(x: TensorBase, key: tuple) -> TensorBase:
    """``x[key]`` for a key with advanced items: a new tensor (grad_fn ``IndexBackward0``)."""
    basic, view, index = _prepare(x, key)
    if index is None:
        return basic_getitem(x, basic)
    return Index.apply(view, index)


def _value_tensor(value: Any, like: TensorBase) -> Any:
    """The value of ``x[key] = value``: a number, or a tensor of ``like``'s dtype."""
    if isinstance(value, TensorBase):
        return value if value.dtype is like.dtype else value.to(like.dtype)
    if kernels.is_number(value):
        return value
    return tensor(value, dtype=like.dtype, device=like.device)


def _check_values(values: Any, index: AdvancedIndex) -> None:
    if not isinstance(values, TensorBase):
        return
    rshape = index.result_shape()
    stripped = _strip_leading_ones(values, len(rshape))
    try:
        ok = broadcast_shapes(stripped._shape, rshape) == rshape
    except RuntimeError:
        ok = False
    if not ok:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values._shape)} "
                           f"cannot be broadcast to indexing result of shape {list(rshape)}")


def _put(x: TensorBase, key: tuple, values: Any, accumulate: bool) -> TensorBase:
    """Write ``values`` into ``x[key]`` in place, recording autograd history if needed."""
    basic, view, index = _prepare(x, key)
    if index is None:
        basic_setitem(x, basic, values)
        return x
    _check_values(values, index)
    check_writable(view)
    recording = grad_mode.STATE.grad_enabled and (
        x.requires_grad or (isinstance(values, TensorBase) and values.requires_grad))
    if recording:
        inplace(view, lambda t: IndexPut.apply(t, index, values, accumulate))
        return x
    if isinstance(values, TensorBase) and values._storage is x._storage:
        values = raw_copy(values)      # never read what we are writing
    index.put(view, values, accumulate)
    x._bump_version()
    return x


def setitem(x: TensorBase, key: tuple, value: Any) -> None:
    """``x[key] = value``: writes into ``x``'s memory (through views), broadcasting ``value``.

    Repeated positions keep the last value written, as in PyTorch.  As in
    PyTorch, a tensor ``value`` must have ``x``'s dtype, except a one-element
    value assigned through a single boolean mask (``x[x > 0] = v``), which
    is converted.
    """
    if isinstance(value, TensorBase) and value.dtype is not x.dtype:
        _, adv = parse(x, key)
        if not (value.numel() == 1 and len(adv) == 1 and adv[0][1] == "mask"):
            raise RuntimeError(f"Index put requires the source and destination dtypes match, "
                               f"got {type_name(x.dtype)} for the destination and "
                               f"{type_name(value.dtype)} for the source.")
    _put(x, key, _value_tensor(value, x), False)


def _index_put_args(x: TensorBase, indices: Any, values: Any) -> tuple:
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    for i, t in enumerate(indices):
        if not isinstance(t, TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    if len(indices) > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()} (got "
                         f"{len(indices)})")
    if not isinstance(values, TensorBase):
        raise TypeError(f"index_put(): argument 'values' must be Tensor, not "
                        f"{type(values).__name__}")
    if values.dtype is not x.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{type_name(x.dtype)} for the destination and "
                           f"{type_name(values.dtype)} for the source.")
    return tuple(indices)


def index_put_(input: TensorBase, indices: Any, values: TensorBase, accumulate: bool = False
               ) -> TensorBase:
    """``input[indices] = values`` in place (``+=`` with ``accumulate``, repeats add up)."""
    key = _index_put_args(input, indices, values)
    if not key:
            return inplace(input, lambda t: t + copy_like(values, t) if accumulate else
                       copy_like(values, t))
    return _put(input, key, values, bool(accumulate))


def index_put(input: TensorBase, indices: Any, values: TensorBase, accumulate: bool = False
              ) -> TensorBase:
    """A copy of ``input`` with ``values`` written (or added) at ``indices``."""
    key = _index_put_args(input, indices, values)
    index = _prepare(input, key)[2] if key else None
    if index is None:
        out = input.clone()
        return index_put_(out, indices, values, accumulate)
    _check_values(values, index)
    return IndexPut.apply(input, index, values, bool(accumulate))


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(index_put)
declare(index_put_)

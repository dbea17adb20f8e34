"""Indexing: ``t[...]`` and ``t[...] = value``.

*Basic* indexing (ints, slices with steps, ``None``, ``...``) only changes
the header, so ``t[1:, ::2]`` is a view that shares storage with ``t``:

* an int ``i`` in dim d removes that dim and moves the offset by ``i*stride[d]``;
* a slice ``a:b:s`` keeps the dim with size ``ceil((b-a)/s)``, offset
  ``+a*stride[d]`` and stride ``stride[d]*s``;
* ``None`` inserts a dim of size 1; ``...`` stands for all the dims not named.

Assignment ``t[key] = value`` takes the same view and copies ``value`` into
it (broadcasting), so it writes through to every tensor sharing the storage.
Keys with lists, integer or boolean tensors or arrays are *advanced*
indexing, handled in :mod:`.advanced_indexing`.

The second half of this module holds the named index ops, which all read or
write "at positions given by an index tensor": ``gather``, ``scatter``,
``scatter_add``, ``index_select``, ``index_add``, ``index_copy``,
``index_fill``, ``masked_fill``, ``masked_select``, ``masked_scatter``,
``take``, ``take_along_dim``, ``nonzero``, ``argwhere`` and ``embedding``.
Each one

1. checks the index tensor's dtype and shape, with PyTorch's message;
2. checks that every index is in range (:func:`check_index`) *before* any
   kernel runs: kernels do not bounds-check, so an unchecked index would
   read or write outside the tensor's memory;
3. runs its kernel on a fresh output (the in-place forms ``scatter_`` etc.
   write straight into ``self`` when autograd is not recording);
4. has a backward written with the other index ops: the gradient of a
   *read* at some positions is a *write* (an add) at the same positions,
   and vice versa.  ``gather`` <-> ``scatter_add``, ``index_select`` <->
   ``index_add``, ``masked_select`` <-> ``masked_scatter``.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ..autograd import grad_mode
from ..autograd.function import Function
from ..backends import Operand
from ..dtype import bool_, dtype as dtype_cls, int32, int64
from ..layout import broadcast_shapes, contiguous_strides, normalize_dim, numel
from ..tensor_base import TensorBase
from . import _raw
from .creation import full_like, tensor
from .elementwise import inplace, write_out
from .views import _copy, strided_view, sum_to_shape
from .registry import declare

__all__ = ["getitem", "setitem", "basic_index_layout", "copy_like", "gather", "scatter",
           "scatter_add", "index_select", "index_add", "index_copy", "index_fill",
           "masked_fill", "masked_select", "masked_scatter", "take", "take_along_dim",
           "nonzero", "argwhere", "embedding", "check_index", "as_index"]


def _is_basic(key: tuple) -> bool:
    return all(k is None or k is Ellipsis or isinstance(k, slice) or
               (isinstance(k, int) and not isinstance(k, bool)) or
               (hasattr(k, "__index__") and not isinstance(k, (TensorBase, bool, list, np.bool_))
                and not (isinstance(k, np.ndarray) and k.ndim > 0))
               for k in key)


def _normalize_key(key: Any) -> tuple:
    if not isinstance(key, tuple):
        key = (key,)
    return key


def _expand_ellipsis(key: tuple, ndim: int) -> tuple:
    """Replace ``...`` by the right number of full slices; pad with full slices."""
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    out = []
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (ndim - used))
        else:
            out.append(k)
    if not n_ell:
        out.extend([slice(None)] * (ndim - used))
    return tuple(out)


def basic_index_layout(key: tuple, shape: tuple, stride: tuple, offset: int) -> tuple:
    """The (shape, stride, offset) that ``key`` (basic indices only) selects."""
    new_shape, new_stride = [], []
    d = 0
    for k in key:
        if k is None:
            new_shape.append(1)
            # Any stride works for a size-1 dim; this is PyTorch's choice.
            new_stride.append(stride[d] * shape[d] if d < len(shape) else 1)
            continue
        size = shape[d]
        if isinstance(k, slice):
            start, stop, step = k.start, k.stop, k.step
            step = 1 if step is None else int(step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start, stop, _ = slice(start, stop, step).indices(size)
            n = max(0, (stop - start + step - 1) // step)
            if n:
                offset += start * stride[d]
            new_shape.append(n)
            new_stride.append(stride[d] * step)
        else:
            i = k.__index__()
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {d} with size "
                                 f"{size}")
            offset += (i + size if i < 0 else i) * stride[d]
        d += 1
    return tuple(new_shape), tuple(new_stride), offset


def _view_name(key: tuple) -> str:
    if all(isinstance(k, slice) or k is None for k in key):
        return "SliceBackward0" if any(isinstance(k, slice) and k != slice(None)
                                       for k in key) else (
            "UnsqueezeBackward0" if any(k is None for k in key) else "AliasBackward0")
    return "SelectBackward0"


def getitem(self: TensorBase, key: Any) -> TensorBase:
    """``self[key]``: a view for basic indices."""
    raw_key, key = key, _normalize_key(key)
    if not _is_basic(key):
        from . import advanced_indexing
        return advanced_indexing.getitem(self, raw_key)
    if self.dim() == 0 and any(k is not None and k is not Ellipsis for k in key):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    full = _expand_ellipsis(key, self.dim())
    # Validate now (a clear IndexError before any view is made).
    basic_index_layout(full, self._shape, self._stride, self._offset)

    def fn(shape, stride, offset, full=full):
        return basic_index_layout(full, shape, stride, offset)
    return strided_view(self, fn, _view_name(full))


def copy_like(src: Any, like: TensorBase) -> TensorBase:
    """``src`` broadcast to ``like``'s shape and converted to its dtype (differentiably)."""
    if isinstance(src, TensorBase):
        out = src.to(like.dtype) if src.dtype is not like.dtype else src
        out = out.expand(like._shape) if out._shape != like._shape else out
        # A plain expand would alias src; inplace() copies the values out anyway.
        return out + like * 0 if like.requires_grad and not out.requires_grad else out
    return full_like(like, src)


def setitem(self: TensorBase, key: Any, value: Any) -> None:
    """``self[key] = value``: write ``value`` (broadcast) into the selected elements."""
    raw_key, key = key, _normalize_key(key)
    if not _is_basic(key):
        from . import advanced_indexing
        advanced_indexing.setitem(self, raw_key, value)
        return
    if not isinstance(value, TensorBase) and not _raw.is_number(value):
        value = tensor(value, dtype=self.dtype, device=self.device)
    target = getitem(self, key)
    if isinstance(value, TensorBase):
        from ..layout import broadcast_shapes
        # PyTorch drops leading size-1 dims of the value first: b[0] = ones(1, 3).
        while value.dim() > target.dim() and value._shape[0] == 1:
            value = value.squeeze(0)
        if broadcast_shapes(value._shape, target._shape) != target._shape:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(value._shape)} "
                               f"cannot be broadcast to indexing result of shape "
                               f"{list(target._shape)}")
    inplace(target, lambda x: copy_like(value, x))


def fill_(self: TensorBase, value: Any) -> TensorBase:
    """Write ``value`` (a number or a 0-d tensor) into every element of ``self``."""
    if isinstance(value, TensorBase):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.dim()} dimensions.")
        return inplace(self, lambda x: value.expand(x._shape).to(x.dtype) + x * 0)
    return inplace(self, lambda x: full_like(x, value))


def zero_(self: TensorBase) -> TensorBase:
    """Write zeros into every element of ``self``."""
    return fill_(self, 0)


def copy_(self: TensorBase, src: TensorBase, non_blocking: bool = False) -> TensorBase:
    """Copy ``src``'s values into ``self`` (broadcasting, casting, differentiable)."""
    if not isinstance(src, TensorBase):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(src).__name__}")
    if src._shape != self._shape:
        src.expand(self._shape)          # raises PyTorch's error if src does not broadcast
    return inplace(self, lambda x: copy_like(src, x))


# ===========================================================================
# The named index ops
# ===========================================================================
# ---------------------------------------------------------------------------
# Raw helpers: headers, copies and index tensors (no autograd)
# ---------------------------------------------------------------------------
def _header(t: TensorBase, shape: tuple, strides: tuple | None = None) -> TensorBase:
    """A new header over ``t``'s storage (no history); contiguous strides by default."""
    return TensorBase._make(t._storage, tuple(shape),
                        contiguous_strides(shape) if strides is None else tuple(strides),
                        t._offset, t.dtype)


def _at_least_1d(t: TensorBase) -> TensorBase:
    """A 0-d tensor seen as shape (1,); PyTorch's index ops treat them alike."""
    return _header(t, (1,), (1,)) if t.dim() == 0 else t


def _flat(t: TensorBase):
    """The buffer slice holding a contiguous tensor's elements."""
    return t._storage._data[t._offset: t._offset + t.numel()]


def _fresh(shape: tuple, dt: dtype_cls, device: Any, fill: Any = None) -> TensorBase:
    out = _raw.empty(tuple(shape), dt, device)
    if fill is not None and out.numel():
        out._backend.fill(out._operand(), fill)
    return out


def _zeros_like_grad(g: TensorBase, shape: tuple) -> TensorBase:
    """Differentiable-friendly zeros (a plain new tensor) with ``g``'s dtype and device."""
    return _fresh(shape, g.dtype, g.device, 0)


def _type_name(dt: dtype_cls) -> str:
    return dt._legacy


def as_index(index: TensorBase) -> TensorBase:
    """``index`` as a contiguous int64 tensor: every kernel sees one index dtype.

    (One dtype means one compiled kernel per data dtype, not two.)
    """
    if index.dtype is not int64:
        index = _raw.cast(index, int64)
    return _raw.contiguous(index)


def index_range(index: TensorBase) -> tuple | None:
    """``(min, max)`` of a contiguous int64 tensor, or ``None`` if it is empty."""
    if index.numel() == 0:
        return None
    return index._backend.index_bounds(_flat(index))


def check_index(index: TensorBase, size: int, error: Callable[[int], Exception], *,
                negative: bool = False) -> bool:
    """Raise ``error(bad_value)`` unless every index lies in ``[0, size)``.

    With ``negative=True``, ``[-size, 0)`` is allowed too (counting from the
    end).  Returns True if some index is negative (so the caller must wrap).
    This is the guard that keeps kernels, which never bounds-check, inside
    the tensor's memory.
    """
    bounds = index_range(index)
    if bounds is None:
        return False
    lo, hi = bounds
    if hi >= size:
        raise error(hi)
    if lo < (-size if negative else 0):
        raise error(lo)
    return lo < 0


def wrap_index(index: TensorBase, size: int) -> TensorBase:
    """A copy of a (checked) int64 index with negative entries replaced by ``i + size``."""
    out = _fresh(index._shape, int64, index.device, 0)
    out._backend.add_index_offsets(_flat(out), _flat(index), size, 1)
    return out


def _check_dtype(index: TensorBase, allowed: tuple, error: Callable[[], Exception]) -> None:
    if not isinstance(index, TensorBase):
        raise TypeError(f"expected Tensor as index, but got {type(index).__name__}")
    if index.dtype not in allowed:
        raise error()


def _check_writable(t: TensorBase) -> None:
    """In-place writes need one memory location per element (no expanded dims)."""
    if any(st == 0 and n > 1 for n, st in zip(t._shape, t._stride)):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")


def _unaliased(src: Any, target: TensorBase) -> Any:
    """``src``, copied if it shares memory with ``target``: a kernel must not read what it
    writes."""
    if isinstance(src, TensorBase) and src._storage is target._storage:
        return _copy(src)
    return src


def _index_inplace(self: TensorBase, others: tuple, functional: Callable[[TensorBase], TensorBase],
                   write: Callable[[TensorBase], None]) -> TensorBase:
    """Run an in-place index op such as ``scatter_``.

    When autograd records (``self`` or another input requires grad), the op
    runs out of place (``functional``) and ``elementwise.inplace`` stores the
    result into ``self`` and rebases its history, as for ``add_``.
    Otherwise ``write(self)`` runs the kernel straight into ``self``'s memory.
    """
    _check_writable(self)
    if grad_mode.STATE.grad_enabled and (self.requires_grad or any(
            isinstance(o, TensorBase) and o.requires_grad for o in others)):
        return inplace(self, functional)
    write(self)
    self._bump_version()
    return self


# ---------------------------------------------------------------------------
# gather / scatter / scatter_add
# ---------------------------------------------------------------------------
def _gather_raw(x: TensorBase, dim: int, index: TensorBase) -> TensorBase:
    """``out[p] = x[p with coordinate dim replaced by index[p]]`` (index checked, int64)."""
    out = _raw.empty(index._shape, x.dtype, x.device)
    x1, i1, o1 = _at_least_1d(x), _at_least_1d(index), _at_least_1d(out)
    x._backend.gather(x1._operand(), dim, i1._operand(), o1._operand())
    return out


def _scatter_into(target: TensorBase, dim: int, index: TensorBase, src: Any, op: str) -> None:
    """``target[.. index[p] ..] (op)= src[p]`` in place; ``src`` a tensor or a number."""
    t1, i1 = _at_least_1d(target), _at_least_1d(index)
    backend = target._backend
    if isinstance(src, TensorBase):
        s1 = _at_least_1d(src)
        src_op = Operand(s1._storage._data, i1._shape, s1._stride, s1._offset)
    else:
        src_op = _raw.scalar_operand(src, target.dtype, i1._shape, backend)
    backend.scatter(op, t1._operand(), dim, i1._operand(), src_op)


def _scatter_raw(x: TensorBase, dim: int, index: TensorBase, src: Any, op: str) -> TensorBase:
    out = _copy(x)
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


def _dim_size(x: TensorBase, dim: int) -> int:
    return x._shape[dim] if x.dim() else 1


def _prepare_gather_index(name: str, x: TensorBase, dim: int, index: TensorBase) -> TensorBase:
    """Dtype, shape and bounds checks shared by gather and the scatters."""
    _raw.check_same_device(x, index)
    _check_dtype(index, (int64, int32), lambda: RuntimeError(
        f"{name}(): Expected dtype int32/int64 for index"))
    index = as_index(index)
    size = _dim_size(x, dim)
    check_index(index, size, lambda v: RuntimeError(
        f"index {v} is out of bounds for dimension {dim} with size {size}"))
    return index


def _pad_to(g: TensorBase, shape: tuple) -> TensorBase:
    """``g`` placed in the leading corner of zeros of ``shape`` (differentiable)."""
    if g._shape == tuple(shape):
        return g
    out = _zeros_like_grad(g, shape)
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
        return scatter_add(_zeros_like_grad(g, ctx.shape), ctx.dim, index, g), None, None


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
    _raw.check_same_device(input, src)
    if isinstance(src, TensorBase):
        if src.dtype is not input.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    elif not _raw.is_number(src):
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
        _scatter_into(t, d, idx, _unaliased(src, t), _REDUCE.get(reduce, "set"))
    return _index_inplace(self, (src,), lambda t: _scatter_apply(t, d, idx, src, reduce), write)


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
    return _index_inplace(
        self, (src,), lambda t: ScatterAdd.apply(t, d, idx, src),
        lambda t: _scatter_into(t, d, idx, _unaliased(src, t), "add"))


# ---------------------------------------------------------------------------
# index_select / index_add / index_copy / index_fill
# ---------------------------------------------------------------------------
def _index_select_raw(x: TensorBase, dim: int, index: TensorBase) -> TensorBase:
    """Rows (slices along ``dim``) of ``x`` picked by the 1-D checked int64 ``index``."""
    x1 = _at_least_1d(x)
    shape = x1._shape[:dim] + (index.numel(),) + x1._shape[dim + 1:]
    out = _raw.empty(shape, x.dtype, x.device)
    x._backend.index_select(x1._operand(), dim, _flat(index), out._operand())
    return out


def _index_reduce_into(target: TensorBase, dim: int, index: TensorBase, src: Any, op: str) -> None:
    """``target[.., index[k], ..] (op)= src[.., k, ..]`` in place (``src`` tensor or number)."""
    t1 = _at_least_1d(target)
    shape = t1._shape[:dim] + (index.numel(),) + t1._shape[dim + 1:]
    backend = target._backend
    if isinstance(src, TensorBase):
        src_op = _raw.broadcast_operand(src, shape) if src.dim() else \
            Operand(src._storage._data, shape, (0,) * len(shape), src._offset)
    else:
        src_op = _raw.scalar_operand(src, target.dtype, shape, backend)
    backend.index_reduce(op, t1._operand(), dim, _flat(index), src_op)


def _index_reduce_raw(x: TensorBase, dim: int, index: TensorBase, src: Any, op: str) -> TensorBase:
    out = _copy(x)
    _index_reduce_into(out, dim, index, src, op)
    return out


def _vector_index(index: TensorBase) -> TensorBase:
    """A checked 1-D view of a 0-d or 1-d index (int64, contiguous)."""
    index = as_index(index)
    return _header(index, (index.numel(),)) if index.dim() == 0 else index


class IndexSelect(Function):
    _backward_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, index: TensorBase) -> TensorBase:
        ctx.dim, ctx.shape = dim, x._shape
        ctx.save_for_backward(index)
        out = _index_select_raw(x, dim, index)
        return _header(out, ()) if x.dim() == 0 else out

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (index,) = ctx.saved_tensors
        return index_add(_zeros_like_grad(g, ctx.shape), ctx.dim, index, g), None, None


def index_select(input: TensorBase, dim: int, index: TensorBase, *, out: TensorBase | None = None
                 ) -> TensorBase:
    """The slices of ``input`` along ``dim`` listed by the 1-D ``index``, in that order.

    ``x.index_select(0, idx)`` is ``x[idx]`` for a 1-D ``idx``; embedding
    lookups are index_select on the rows of a weight matrix.
    """
    d = normalize_dim(dim, input.dim())
    _check_dtype(index, (int64, int32), lambda: RuntimeError(
        "index_select(): Expected dtype int32 or int64 for index"))
    _raw.check_same_device(input, index)
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if input.dim() == 0 and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{index.numel()} value(s)")
    idx = _vector_index(index)
    check_index(idx, _dim_size(input, d), lambda v: IndexError("index out of range in self"))
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
            from ..backends import scalar_ops as S
            source = _raw.arith(source, alpha, S.MUL)
            source = _raw.cast(source, x.dtype)
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
    _raw.check_same_device(input, index, source)
    _check_dtype(index, (int64, int32), lambda: RuntimeError(
        f"index_add_(): Expected dtype int32/int64 for index but got: "
        f"{_type_name(index.dtype)}"))
    if index.dim() > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{index.dim()} with type: {_type_name(index.dtype)} and size: "
                         f"{list(index._shape)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_add_(): self ({_type_name(input.dtype)}) and source "
                           f"({_type_name(source.dtype)}) must have the same scalar type")
    idx = _vector_index(index)
    _check_index_source("index_add_", input, d, idx, source)
    size = _dim_size(input, d)
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
        src = _unaliased(source, t)
        if alpha != 1:
            from ..backends import scalar_ops as S
            src = _raw.cast(_raw.arith(src, alpha, S.MUL), t.dtype)
        _index_reduce_into(t, d, idx, src, "add")
    return _index_inplace(self, (source,), lambda t: IndexAdd.apply(t, d, idx, source, alpha),
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
    _raw.check_same_device(input, index, source)
    _check_dtype(index, (int64,), lambda: RuntimeError(
        f"index_copy_(): Expected a long tensor for index, but got {_type_name(index.dtype)}"))
    if index.dim() > 1:
        raise IndexError("index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{index.dim()})")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_type_name(input.dtype)} and (source) "
                           f"{_type_name(source.dtype)}")
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
    size = _dim_size(input, d)
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
    return _index_inplace(self, (source,), lambda t: IndexCopy.apply(t, d, idx, source),
                          lambda t: _index_reduce_into(t, d, idx, _unaliased(source, t),
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
        return _index_reduce_raw(x, dim, index, _raw.cast(value, x.dtype), "set")

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
    _raw.check_same_device(input, index)
    _check_dtype(index, (int64,), lambda: IndexError(
        "index_fill_(): Expected dtype int64 for index."))
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, TensorBase) and value.dim() != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.dim()} dimension(s).")
    idx = _vector_index(index)
    size = _dim_size(input, d)
    if input.dim() and numel(_with(input._shape, d, 1)) == 0:
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
        v = _raw.cast(value, t.dtype) if isinstance(value, TensorBase) else value
        _index_reduce_into(t, d, idx, v, "set")
    return _index_inplace(self, (value,), lambda t: _index_fill_apply(t, d, idx, value), write)


# ---------------------------------------------------------------------------
# masked_fill / masked_select / masked_scatter
# ---------------------------------------------------------------------------
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
    out = _raw.empty(shape, x.dtype, x.device)
    out._backend.copy(_raw.broadcast_operand(x, shape), out._operand())
    out._backend.masked_fill(_flat(out), _raw.broadcast_operand(mask, shape), value)
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
    if not isinstance(value, TensorBase) and not _raw.is_number(value):
        raise TypeError(f"masked_fill(): argument 'value' must be Number or Tensor, not "
                        f"{type(value).__name__}")


def _masked_fill_apply(input: TensorBase, mask: TensorBase, value: Any) -> TensorBase:
    if isinstance(value, TensorBase):
        return MaskedFillTensor.apply(input, mask, value)
    return MaskedFill.apply(input, mask, value)


def masked_fill(input: TensorBase, mask: TensorBase, value: Any) -> TensorBase:
    """A copy of ``input`` (broadcast with ``mask``) with ``value`` where ``mask`` is True."""
    _masked_fill_args(mask, value)
    _raw.check_same_device(input, mask)
    return _masked_fill_apply(input, mask, value)


def masked_fill_(self: TensorBase, mask: TensorBase, value: Any) -> TensorBase:
    """In-place :func:`masked_fill`; ``mask`` must broadcast to ``self``'s shape."""
    _masked_fill_args(mask, value)
    _raw.check_same_device(self, mask)
    shape = broadcast_shapes(self._shape, mask._shape)
    if shape != self._shape:
        raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")

    def write(t: TensorBase) -> None:
        v = _scalar_value(value, t.dtype)
        if t.is_contiguous():
            t._backend.masked_fill(_flat(t), _raw.broadcast_operand(mask, t._shape), v)
        else:
            _raw.copy_into(t, _masked_fill_raw(t, mask, v))
    return _index_inplace(self, (value,), lambda t: _masked_fill_apply(t, mask, value), write)


def _masked_select_raw(x: TensorBase, mask: TensorBase) -> TensorBase:
    shape = broadcast_shapes(x._shape, mask._shape)
    data = x._backend.masked_select(_raw.broadcast_operand(x, shape),
                                    _raw.broadcast_operand(mask, shape))
    from ..storage import UntypedStorage
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
        return sum_to_shape(masked_scatter(_zeros_like_grad(g, shape), mask, g),
                            ctx.shape), None


def masked_select(input: TensorBase, mask: TensorBase, *, out: TensorBase | None = None) -> TensorBase:
    """The elements of ``input`` where ``mask`` is True, as a 1-D tensor (row-major order)."""
    _check_mask(mask, lambda m: "masked_select: expected BoolTensor for mask")
    _raw.check_same_device(input, mask)
    return write_out(MaskedSelect.apply(input, mask), out)


def _masked_scatter_raw(x: TensorBase, mask: TensorBase, source: TensorBase) -> TensorBase:
    shape = broadcast_shapes(x._shape, mask._shape)
    out = _raw.empty(shape, x.dtype, x.device)
    out._backend.copy(_raw.broadcast_operand(x, shape), out._operand())
    mask_op = _raw.broadcast_operand(mask, shape)
    if out._backend.count_true(mask_op) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    src = _raw.contiguous(source)
    out._backend.masked_scatter(_flat(out), mask_op, _flat(src))
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
                from .views import cat
                picked = cat([picked, _zeros_like_grad(g, (n - picked.numel(),))])
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
                           f"got{_type_name(input.dtype)} and {_type_name(source.dtype)}")
    _raw.check_same_device(input, mask, source)


def masked_scatter(input: TensorBase, mask: TensorBase, source: TensorBase) -> TensorBase:
    """A copy of ``input`` whose masked elements are, in order, the first elements of ``source``."""
    _masked_scatter_args(input, mask, source)
    return MaskedScatter.apply(input, mask, source)


def masked_scatter_(self: TensorBase, mask: TensorBase, source: TensorBase) -> TensorBase:
    """In-place :func:`masked_scatter`; ``mask`` must broadcast to ``self``'s shape."""
    _masked_scatter_args(self, mask, source)
    try:
        _raw.broadcast_operand(mask, self._shape)
    except RuntimeError:
        raise RuntimeError(f"expand(CPUBoolType{{{list(mask._shape)}}}, size="
                           f"{list(self._shape)}): the number of sizes provided "
                           f"({self.dim()}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({mask.dim()})") from None

    def write(t: TensorBase) -> None:
        _raw.copy_into(t, _masked_scatter_raw(t, mask, source))
    return _index_inplace(self, (source,), lambda t: MaskedScatter.apply(t, mask, source),
                          write)


# ---------------------------------------------------------------------------
# take / take_along_dim
# ---------------------------------------------------------------------------
class Take(Function):
    _backward_name = "TakeBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, index: TensorBase) -> TensorBase:
        ctx.shape = x._shape
        ctx.save_for_backward(index)
        flat = _raw.contiguous(x)
        flat = _header(flat, (flat.numel(),))
        out = _index_select_raw(flat, 0, _header(index, (index.numel(),)))
        return _header(out, index._shape)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (index,) = ctx.saved_tensors
        n = numel(ctx.shape)
        flat = index_add(_zeros_like_grad(g, (n,)), 0, index.reshape(-1), g.reshape(-1))
        return flat.reshape(ctx.shape), None


def take(input: TensorBase, index: TensorBase) -> TensorBase:
    """``input`` read as if flattened to 1-D, at the positions in ``index`` (``index``'s shape)."""
    _check_dtype(index, (int64,), lambda: RuntimeError(
        f"take(): Expected a long tensor for index, but got {_type_name(index.dtype)}"))
    _raw.check_same_device(input, index)
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
    _check_dtype(indices, (int64,), lambda: RuntimeError(
        f"torch.take_along_dim(): dtype of indices should be Long but got "
        f"{_type_name(indices.dtype)}"))
    _raw.check_same_device(input, indices)
    if dim is None:
        return write_out(gather(input.reshape(-1), 0, indices.reshape(-1)), out)
    if input.dim() != indices.dim():
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.dim()} dimensions for input, "
                           f"and {indices.dim()} dimensions for indices")
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = normalize_dim(dim, input.dim())
    size = _dim_size(input, d)
    idx = as_index(indices)
    if check_index(idx, size, lambda v: RuntimeError(
            f"index {v} is out of bounds for dimension {d} with size {size}"), negative=True):
        idx = wrap_index(idx, size)
    if input.dim():
        shape = list(broadcast_shapes(_with(input._shape, d, 1), _with(idx._shape, d, 1)))
        x_shape = tuple(_with(shape, d, input._shape[d]))
        i_shape = tuple(_with(shape, d, idx._shape[d]))
        if x_shape != input._shape:
            input = input.expand(x_shape)
        if i_shape != idx._shape:
            idx = _raw.contiguous(TensorBase._make(idx._storage, i_shape,
                                               _raw.broadcast_operand(idx, i_shape).strides,
                                               idx._offset, int64))
    return write_out(Gather.apply(input, d, idx), out)


def _with(shape: Any, d: int, value: int) -> tuple:
    shape = list(shape)
    shape[d] = value
    return tuple(shape)


# ---------------------------------------------------------------------------
# nonzero / argwhere
# ---------------------------------------------------------------------------
def _as_bool(x: TensorBase) -> TensorBase:
    if x.dtype is bool_:
        return x
    from ..backends import scalar_ops as S
    return _raw.compare(x, 0, S.NE)


def nonzero(input: TensorBase, *, out: TensorBase | None = None, as_tuple: bool = False) -> Any:
    """The coordinates of the non-zero elements: a ``(count, ndim)`` int64 tensor.

    With ``as_tuple=True``, one 1-D tensor per dim instead (usable as an
    index: ``x[x.nonzero(as_tuple=True)]`` is ``x[x != 0]``).
    """
    mask = _as_bool(input)
    if as_tuple and mask.dim() == 0:
        mask = _header(_raw.contiguous(mask), (1,))
    coords = input._backend.nonzero(mask._operand())     # a (count, ndim) buffer
    from ..storage import UntypedStorage
    result = TensorBase._make(UntypedStorage(coords.reshape(-1), input.device), coords.shape,
                          contiguous_strides(coords.shape), 0, int64)
    if as_tuple:
        return tuple(_raw.contiguous(TensorBase._make(result._storage, (coords.shape[0],),
                                                  (max(mask.dim(), 1),), d, int64))
                     for d in range(mask.dim()))
    return write_out(result, out)


def argwhere(input: TensorBase) -> TensorBase:
    """Same as ``nonzero(input)``: one row of coordinates per non-zero element."""
    return nonzero(input)


# ---------------------------------------------------------------------------
# embedding
# ---------------------------------------------------------------------------
class Embedding(Function):
    _backward_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx: Any, weight: TensorBase, indices: TensorBase, padding_idx: int,
                scale_grad_by_freq: bool) -> TensorBase:
        ctx.shape, ctx.padding_idx, ctx.scale = weight._shape, padding_idx, scale_grad_by_freq
        ctx.save_for_backward(indices)
        rows = _index_select_raw(weight, 0, _header(indices, (indices.numel(),)))
        return _header(rows, indices._shape + (weight._shape[1],))

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        (indices,) = ctx.saved_tensors
        idx = indices.reshape(-1)
        g2 = g.reshape(-1, ctx.shape[1])
        if ctx.padding_idx >= 0:
            # the padding row is a constant: it never receives gradient
            g2 = masked_fill(g2, (idx == ctx.padding_idx).unsqueeze(1), 0.0)
        if ctx.scale:
            counts = index_add(_fresh((ctx.shape[0],), g.dtype, g.device, 0), 0, idx,
                               _fresh((idx.numel(),), g.dtype, g.device, 1))
            g2 = g2 / index_select(counts, 0, idx).unsqueeze(1)
        return index_add(_zeros_like_grad(g, ctx.shape), 0, idx, g2), None, None, None


def embedding(weight: TensorBase, indices: TensorBase, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> TensorBase:
    """Rows of the 2-D ``weight`` picked by integer ``indices``: shape ``indices.shape + (dim,)``.

    ``torch.embedding``'s argument order (``nn.functional.embedding`` takes
    ``(input, weight)``).  Row ``padding_idx`` (if >= 0) gets no gradient.
    """
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    _raw.check_same_device(weight, indices)
    _check_dtype(indices, (int64, int32), lambda: RuntimeError(
        f"Expected tensor for argument #1 'indices' to have one of the following scalar "
        f"types: Long, Int; but got {indices.type()} instead (while checking arguments for "
        f"embedding)"))
    idx = as_index(indices)
    check_index(idx, weight._shape[0], lambda v: IndexError("index out of range in self"))
    return Embedding.apply(weight, idx, int(padding_idx), bool(scale_grad_by_freq))




# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(fill_, function=False)
declare(zero_, function=False)
declare(copy_, function=False)
declare(argwhere)
declare(embedding, method=False)
declare(gather)
declare(index_add)
declare(index_copy)
declare(index_fill)
declare(index_select)
declare(masked_fill)
declare(masked_scatter)
declare(masked_select)
declare(nonzero)
declare(scatter)
declare(scatter_add)
declare(take)
declare(take_along_dim)
declare(scatter_, function=False)
declare(scatter_add_, function=False)
declare(index_add_, function=False)
declare(index_copy_, function=False)
declare(index_fill_, function=False)
declare(masked_fill_, function=False)
declare(masked_scatter_, function=False)

"""Sorting ops: ``sort``, ``argsort``, ``msort``, ``topk``, ``kthvalue``, ``median``, ``unique``.

All of them start the same way: move the chosen dim last, make the data
contiguous, and let the backend sort every row (a stable merge sort, see
``backends/cpu/sort.py``), keeping for each sorted value the position it
came from.  Then

* ``sort`` returns both, ``argsort`` only the positions;
* ``topk`` keeps the first ``k`` of a descending (or ascending) sort;
* ``kthvalue`` picks position ``k - 1`` of an ascending sort;
* ``median`` picks position ``(n - 1) // 2``: the *lower* median, an element
  of the input (PyTorch does not average the two middle values);
* ``unique`` groups equal neighbours of the sorted, flattened input.

Order is PyTorch's: NaN is larger than everything, so it sorts last
(ascending) or first (descending).  ``median`` returns NaN if a row holds a
NaN.  Ties keep their original order (the sort is stable), so ``stable=True``
costs nothing extra.

The values of ``sort``, ``topk``, ``kthvalue`` and ``median`` are *selected*
input elements: each output element is ``input`` read at ``indices``, so the
gradient is ``g`` written back at ``indices`` (a scatter into zeros), the
same rule as ``gather``'s backward.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..dtype import float16, float32, int64
from ..layout import contiguous_strides, normalize_dim, numel
from ..storage import UntypedStorage
from ..tensor_base import TensorBase
from . import kernels
from .elementwise import write_out
from .gather_scatter import gather, scatter
from .index_ops import index_select
from .views import raw_copy
from .reduction import return_types
from .registry import declare
from .creation import arange
from .elementwise import isnan, where
from .views import cat

__all__ = ["sort", "argsort", "msort", "topk", "kthvalue", "median", "unique"]


# ---------------------------------------------------------------------------
# The shared step: sort every row along one dim
# ---------------------------------------------------------------------------
def _wrap(data: Any, shape: tuple, dt: Any, device: Any) -> TensorBase:
    """A contiguous tensor over a backend buffer."""
    return TensorBase._make(UntypedStorage(data.reshape(-1), device), tuple(shape),
                        contiguous_strides(shape), 0, dt)


def _permuted(t: TensorBase, perm: list) -> TensorBase:
    """A header with dims reordered (no copy, no history)."""
    return TensorBase._make(t._storage, tuple(t._shape[p] for p in perm),
                        tuple(t._stride[p] for p in perm), t._offset, t.dtype)


def _sort_raw(x: TensorBase, dim: int, descending: bool, keep_compute_dtype: bool = False,
              k: int | None = None) -> tuple:
    """``(values, indices)``: ``x`` stably sorted along ``dim``; both contiguous.

    With ``k``, only the first ``k`` along ``dim`` (the result has size ``k``
    there); the backend may then select instead of sorting.
    """
    if x.dim() == 0:      # one element; PyTorch returns it even for k == 0
        v, i = _sort_raw(TensorBase._make(x._storage, (1,), (1,), x._offset, x.dtype), 0,
                         descending, keep_compute_dtype)
        return (TensorBase._make(v._storage, (), (), 0, v.dtype),
                TensorBase._make(i._storage, (), (), 0, int64))
    n = x._shape[dim]
    perm = [d for d in range(x.dim()) if d != dim] + [dim]
    moved = _permuted(x, perm)
    compute = float32 if x.dtype is float16 else x.dtype
    keys = kernels.contiguous(kernels.cast(moved, compute))
    rows = numel(moved._shape) // n if n else 0
    vals, idx = kernels.sort_rows(kernels.array_of(keys, (rows, n)), descending, k, x.device)
    out_shape = moved._shape[:-1] + (n if k is None else k,)
    values = _wrap(vals, out_shape, compute, x.device)
    indices = _wrap(idx, out_shape, int64, x.device)
    if compute is not x.dtype and not keep_compute_dtype:
        values = kernels.cast(values, x.dtype)
    if dim != x.dim() - 1:
        inverse = [perm.index(d) for d in range(x.dim())]
        values = kernels.contiguous(_permuted(values, inverse))
        indices = kernels.contiguous(_permuted(indices, inverse))
    return values, indices


def _narrow(t: TensorBase, dim: int, start: int, length: int) -> TensorBase:
    """Contiguous copy of ``t[..., start:start+length, ...]`` along ``dim`` (raw)."""
    if t.dim() == 0:
        return t
    shape = list(t._shape)
    shape[dim] = length
    view = TensorBase._make(t._storage, tuple(shape), t._stride,
                        t._offset + start * t._stride[dim], t.dtype)
    return kernels.contiguous(view) if length != t._shape[dim] else t


def _drop_dim(t: TensorBase, dim: int, keepdim: bool) -> TensorBase:
    """Remove the size-1 ``dim`` of a contiguous tensor unless ``keepdim``."""
    if keepdim or t.dim() == 0:
        return t
    shape = t._shape[:dim] + t._shape[dim + 1:]
    return TensorBase._make(t._storage, shape, contiguous_strides(shape), t._offset, t.dtype)


def _select_backward(g: TensorBase, dim: int, indices: TensorBase, shape: tuple, keepdim: bool
                     ) -> TensorBase:
    """Gradient of values picked at ``indices`` along ``dim``: ``g`` scattered into zeros."""
    if not shape:
        return g.reshape(())
    if not keepdim:
        g = g.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    zeros = kernels.empty(shape, g.dtype, g.device)
    kernels.fill(zeros, 0)
    return scatter(zeros, dim, indices, g)


def _dim_size(x: TensorBase, dim: int) -> int:
    return x._shape[dim] if x.dim() else 1


def write_pair_out(result: tuple, out: Any) -> tuple:
    """Copy a ``(values, indices)`` result into the user's ``out=(values, indices)``."""
    if out is None:
        return result
    return type(result)(write_out(result[0], out[0]), write_out(result[1], out[1]))


# ---------------------------------------------------------------------------
# sort / argsort / msort
# ---------------------------------------------------------------------------
class Sort(Function):
    _backward_name = "SortBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, descending: bool) -> tuple:
        values, indices = _sort_raw(x, dim, descending)
        ctx.dim, ctx.shape = dim, x._shape
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx: Any, g: TensorBase, _g_indices: Any):
        (indices,) = ctx.saved_tensors
        return _select_backward(g, ctx.dim, indices, ctx.shape, True), None, None


class SortStable(Sort):
    _backward_name = "SortBackward1"


def sort(input: TensorBase, dim: int = -1, descending: bool = False, *, stable: Any = None,
         out: Any = None) -> Any:
    """``(values, indices)``: ``input`` sorted along ``dim``, and where each value came from.

    ``values == input.gather(dim, indices)``.
    Always stable: equal elements keep their order.  NaN sorts as the largest value.
    """
    if not isinstance(descending, bool):
        raise TypeError(f"sort(): argument 'descending' must be bool, not "
                        f"{type(descending).__name__}")
    d = normalize_dim(dim, input.dim())
    cls = Sort if stable is None else SortStable
    values, indices = cls.apply(input, d, bool(descending))
    return write_pair_out(return_types.sort(values, indices), out)


def argsort(input: TensorBase, dim: int = -1, descending: bool = False, *,
            stable: bool = False) -> TensorBase:
    """The positions that sort ``input`` along ``dim`` (``sort(...).indices``)."""
    d = normalize_dim(dim, input.dim())
    return _sort_raw(input, d, bool(descending))[1]


def msort(input: TensorBase) -> TensorBase:
    """``input`` sorted along its first dim."""
    return sort(input, 0).values


# ---------------------------------------------------------------------------
# topk / kthvalue
# ---------------------------------------------------------------------------
class Topk(Function):
    _backward_name = "TopkBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, k: int, dim: int, largest: bool) -> tuple:
        values, indices = _sort_raw(x, dim, largest, k=k)
        ctx.dim, ctx.shape = dim, x._shape
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx: Any, g: TensorBase, _g_indices: Any):
        (indices,) = ctx.saved_tensors
        return _select_backward(g, ctx.dim, indices, ctx.shape, True), None, None, None


def topk(input: TensorBase, k: int, dim: int = -1, largest: bool = True, sorted: bool = True,
         *, out: Any = None) -> Any:
    """The ``k`` largest (or smallest) elements along ``dim`` and their positions.

    The result is always sorted (largest first, or smallest first), which is
    also a valid answer when ``sorted=False``.
    """
    d = normalize_dim(dim, input.dim())
    k = int(k)
    if k < 0 or k > _dim_size(input, d):
        raise RuntimeError("selected index k out of range")
    values, indices = Topk.apply(input, k, d, bool(largest))
    return write_pair_out(return_types.topk(values, indices), out)


class Kthvalue(Function):
    _backward_name = "KthvalueBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, k: int, dim: int, keepdim: bool) -> tuple:
        values, indices = _sort_raw(x, dim, False, k=k)
        values = _drop_dim(_narrow(values, dim, k - 1, 1), dim, keepdim)
        indices = _drop_dim(_narrow(indices, dim, k - 1, 1), dim, keepdim)
        ctx.dim, ctx.shape, ctx.keepdim = dim, x._shape, keepdim
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx: Any, g: TensorBase, _g_indices: Any):
        (indices,) = ctx.saved_tensors
        return (_select_backward(g, ctx.dim, indices, ctx.shape, ctx.keepdim), None, None,
                None)


def _check_reduction_dim(name: str, input: TensorBase, d: int) -> None:
    if input.dim() and input._shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def kthvalue(input: TensorBase, k: int, dim: int = -1, keepdim: bool = False, *,
             out: Any = None) -> Any:
    """The ``k``-th smallest element (``k`` counts from 1) along ``dim``, and its position."""
    d = normalize_dim(dim, input.dim())
    _check_reduction_dim("kthvalue", input, d)
    k = int(k)
    if k < 1 or k > _dim_size(input, d):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    values, indices = Kthvalue.apply(input, k, d, bool(keepdim))
    return write_pair_out(return_types.kthvalue(values, indices), out)


# ---------------------------------------------------------------------------
# median
# ---------------------------------------------------------------------------
class MedianAll(Function):
    _backward_name = "MedianBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase) -> TensorBase:
        flat = kernels.contiguous(x)
        flat = TensorBase._make(flat._storage, (flat.numel(),), (1,), flat._offset, flat.dtype)
        values, _ = _sort_raw(flat, 0, False)
        n = values.numel()
        if n == 0:
            out = kernels.empty((), x.dtype, x.device)
            kernels.fill(out, float("nan"))
        else:
            last = TensorBase._make(values._storage, (), (), n - 1, values.dtype)
            pos = n - 1 if last.item() != last.item() else (n - 1) // 2   # NaN wins
            out = raw_copy(TensorBase._make(values._storage, (), (), pos, values.dtype))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        x, value = ctx.saved_tensors
        # PyTorch spreads the gradient evenly over every element equal to the median.
        hit = (x == value) | (isnan(x) & isnan(value))
        hit = hit.to(g.dtype)
        return g * hit / hit.sum()


class MedianDim(Function):
    _backward_name = "MedianBackward1"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, keepdim: bool) -> tuple:
        values, indices = _sort_raw(x, dim, False)
        n = _dim_size(x, dim)
        # the lower median, unless the row holds NaN: then the first NaN
        # (NaNs sort last, in their original order).
        nan_count = isnan(values).sum(dim, keepdim=True) if x.dim() else isnan(values).long()
        pos = where(nan_count > 0, n - nan_count, (n - 1) // 2)
        if x.dim() == 0:
            values_k, indices_k = values, indices
        else:
            values_k = gather(values, dim, pos)
            indices_k = gather(indices, dim, pos)
        values_k = _drop_dim(values_k, dim, keepdim)
        indices_k = _drop_dim(indices_k, dim, keepdim)
        ctx.dim, ctx.shape, ctx.keepdim = dim, x._shape, keepdim
        ctx.mark_non_differentiable(indices_k)
        ctx.save_for_backward(indices_k)
        return values_k, indices_k

    @staticmethod
    def backward(ctx: Any, g: TensorBase, _g_indices: Any):
        (indices,) = ctx.saved_tensors
        return _select_backward(g, ctx.dim, indices, ctx.shape, ctx.keepdim), None, None


def median(input: TensorBase, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Any:
    """The lower median: with ``dim``, ``(values, indices)`` along it; without, one value.

    For an even count this is the smaller of the two middle elements (not
    their mean), so the result is always an element of the input.
    """
    if dim is None:
        return MedianAll.apply(input)
    d = normalize_dim(dim, input.dim())
    _check_reduction_dim("median", input, d)
    values, indices = MedianDim.apply(input, d, bool(keepdim))
    return write_pair_out(return_types.median(values, indices), out)


# ---------------------------------------------------------------------------
# unique
# ---------------------------------------------------------------------------
class Unique(Function):
    """``unique`` outputs have a node (as in PyTorch), but no derivative."""

    _backward_name = "Unique2Backward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase) -> tuple:
        flat = kernels.contiguous(x)
        flat = TensorBase._make(flat._storage, (flat.numel(),), (1,), flat._offset, flat.dtype)
        values, order = _sort_raw(flat, 0, False, keep_compute_dtype=True)
        uniq, inverse, counts = kernels.unique_sorted(kernels.flat(values), kernels.flat(order),
                                                      x.device)
        u = kernels.cast(_wrap(uniq, (uniq.shape[0],), values.dtype, x.device), x.dtype)
        inv = _wrap(inverse, x._shape, int64, x.device)
        cnt = _wrap(counts, (counts.shape[0],), int64, x.device)
        ctx.mark_non_differentiable(inv, cnt)
        return u, inv, cnt

    @staticmethod
    def backward(ctx: Any, *grads: Any):
        raise RuntimeError("derivative for aten::_unique2 is not implemented")


def _unique_dim(x: TensorBase, dim: int) -> tuple:
    """Unique slices along ``dim``, sorted lexicographically (built from stable sorts)."""
    n = x._shape[dim]
    rows = x.detach().movedim(dim, 0).reshape(n, -1)
    order = _raw_arange(n, x.device)
    # Least significant column first: a stable sort by each column in turn
    # leaves the rows in lexicographic order (the idea of radix sort).
    for c in range(rows._shape[1] - 1, -1, -1):
        col = index_select(rows[:, c].contiguous(), 0, order)
        order = index_select(order, 0, _sort_raw(col, 0, False)[1])
    srt = index_select(rows, 0, order)
    if n == 0:
        new = srt.new_zeros((0,), dtype=int64)
    else:
        differs = (srt[1:] != srt[:-1]).any(1) if srt._shape[1] else \
            srt.new_zeros((n - 1,), dtype=int64).bool()
        new = cat([srt.new_ones((1,), dtype=int64), differs.long()])
    group = new.cumsum(0) - 1 if n else new
    m = int(group[-1].item()) + 1 if n else 0
    firsts = new.nonzero().reshape(-1)
    uniq_rows = index_select(srt, 0, firsts)
    inverse = srt.new_zeros((n,), dtype=int64)
    inverse = inverse.scatter(0, order, group) if n else inverse
    counts = srt.new_zeros((m,), dtype=int64)
    if n:
        counts = counts.index_add(0, group, srt.new_ones((n,), dtype=int64))
    shape = (m,) + tuple(s for d, s in enumerate(x._shape) if d != dim)
    uniq = uniq_rows.reshape(shape).movedim(0, dim).contiguous()
    return uniq, inverse, counts


def _raw_arange(n: int, device: Any) -> TensorBase:
    return arange(n, device=device)


def unique(input: TensorBase, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct values of ``input``, ascending (``sorted=False`` sorts too).

    ``return_inverse`` adds, for every input element, the position of its
    value in the result (``input == result[inverse]``); ``return_counts``
    adds how often each value occurs.  Every NaN counts as distinct.  With
    ``dim``, whole slices along ``dim`` are compared.
    """
    if dim is None:
        values, inverse, counts = Unique.apply(input)
    else:
        values, inverse, counts = _unique_dim(input, normalize_dim(dim, input.dim()))
    if return_inverse and return_counts:
        return values, inverse, counts
    if return_inverse:
        return values, inverse
    if return_counts:
        return values, counts
    return values


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(argsort)
declare(kthvalue)
declare(median)
declare(msort)
declare(sort)
declare(topk)
declare(unique)

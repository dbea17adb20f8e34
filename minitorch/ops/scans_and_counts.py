"""Running maxima and log-sum-exps, histograms, binary searches, runs of equal values.

``cummax``, ``cummin`` and ``logcumsumexp`` are *scans*: element ``i`` of
the result combines elements ``0..i`` of the input.  They are computed by
the doubling scan of Hillis and Steele: after step ``s``, element ``i``
combines the ``2**s`` elements ending at ``i``; each step combines the
tensor with a copy of itself shifted by ``2**s`` along the dim.  That is
``log2(n)`` whole-tensor ops (``where``, ``maximum``, ``logaddexp``), all
differentiable, so the gradients come from autograd.

``histc``, ``bincount``, ``searchsorted``, ``bucketize`` and
``unique_consecutive`` count or locate values; their results are integers
(or counts) and have no gradient, as in PyTorch.
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.grad_mode import no_grad
from ..dtype import bool_, float64, int32, int64
from ..layout import normalize_dim
from ..tensor_base import TensorBase
from .creation import arange, full, zeros
from .composite_math import logaddexp
from .elementwise import isnan, where
from .index_ops import index_add
from .reduction import return_types
from .registry import declare
from .views import cat

__all__ = ["cummax", "cummin", "logcumsumexp", "histc", "bincount", "searchsorted",
           "bucketize", "unique_consecutive"]


def _shifted(x: TensorBase, d: int, k: int, fill: TensorBase) -> TensorBase:
    """``x`` moved ``k`` places forward along ``d``, the first ``k`` places ``fill``."""
    n = x._shape[d]
    head_shape = list(x._shape)
    head_shape[d] = min(k, n)
    head = fill.expand(tuple(head_shape))
    return cat([head, x.narrow(d, 0, n - min(k, n))], d)


def _scan(x: TensorBase, d: int, combine: Any, identity: TensorBase, *extra: TensorBase) -> tuple:
    """The doubling scan of ``combine(earlier, later)`` over ``(x, *extra)`` along ``d``."""
    state = (x,) + extra
    n, k = x._shape[d], 1
    while k < n:
        earlier = tuple(_shifted(s, d, k, identity if i == 0 else s.new_zeros(()))
                        for i, s in enumerate(state))
        state = combine(earlier, state, k)
        k *= 2
    return state


def _cum_extreme(name: str, input: TensorBase, dim: int, greater: bool) -> Any:
    d = normalize_dim(dim, max(input.dim(), 1))
    x = input.reshape(1) if input.dim() == 0 else input
    if x.numel() == 0:
        out = return_types.cummax if greater else return_types.cummin
        return out(input.clone(), zeros(input._shape, dtype=int64, device=input.device))
    shape = [1] * x.dim()
    shape[d] = x._shape[d]
    pos = arange(x._shape[d], device=x.device).reshape(shape).expand(x._shape)
    floating = x.dtype.is_floating_point
    worst = (-math.inf if greater else math.inf) if floating else 0
    identity = full((), worst, dtype=x.dtype, device=x.device)

    def combine(earlier: tuple, later: tuple, k: int) -> tuple:
        (a, ia), (b, ib) = earlier, later
        # The later element wins ties (PyTorch returns the last index of the extreme) and a
        # NaN wins everything; the first k positions have no earlier partner.
        wins = (b >= a) if greater else (b <= a)
        if floating:
            wins = isnan(b) | (wins & ~isnan(a))
        first = (pos < k)
        take_b = wins | first
        return where(take_b, b, a), where(take_b, ib, ia)

    values, indices = _scan(x, d, combine, identity, pos)
    if input.dim() == 0:
        values, indices = values.reshape(()), indices.reshape(())
    out = return_types.cummax if greater else return_types.cummin
    return out(values, indices.detach())


def cummax(input: TensorBase, dim: int) -> Any:
    """``(values, indices)``: the largest element so far along ``dim``, and where it is."""
    return _cum_extreme("cummax", input, dim, True)


def cummin(input: TensorBase, dim: int) -> Any:
    """``(values, indices)``: the smallest element so far along ``dim``, and where it is."""
    return _cum_extreme("cummin", input, dim, False)


def logcumsumexp(input: TensorBase, dim: int) -> TensorBase:
    """``log(cumsum(exp(x)))`` along ``dim``, computed without overflow (by ``logaddexp``)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"logcumsumexp_out_cpu\" not implemented for "
                           f"'{input.dtype._legacy}'")
    d = normalize_dim(dim, max(input.dim(), 1))
    x = input.reshape(1) if input.dim() == 0 else input
    if x.numel() == 0:
        return input.clone()
    identity = full((), -math.inf, dtype=x.dtype, device=x.device)
    (out,) = _scan(x, d, lambda e, l, k: (logaddexp(e[0], l[0]),), identity)
    return out.reshape(input._shape)


def histc(input: TensorBase, bins: int = 100, min: Any = 0, max: Any = 0, *,  # noqa: A002
          out: Any = None) -> TensorBase:
    """Counts of the elements in ``bins`` equal-width bins over ``[min, max]`` (data range if equal)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"histogram_cpu\" not implemented for '{input.dtype._legacy}'")
    if bins <= 0:
        raise RuntimeError("torch.histc(): bins must be > 0, but got " f"{bins} for bins")
    with no_grad():
        x = input.reshape(-1)
        lo, hi = float(min), float(max)
        if lo == hi and x.numel():
            lo, hi = float(x.min().item()), float(x.max().item())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if lo > hi:
            raise RuntimeError(f"torch.histc(): max must be larger than min, but got min {lo} "
                               f"max {hi}")
        inside = (x >= lo) & (x <= hi)
        x = x[inside]
        idx = ((x - lo) * (bins / (hi - lo))).to(int64).clamp(max=bins - 1)
        counts = zeros((bins,), dtype=input.dtype, device=input.device)
        return index_add(counts, 0, idx, x.new_ones(x._shape))


def bincount(input: TensorBase, weights: TensorBase | None = None, minlength: int = 0) -> TensorBase:
    """How often each value 0, 1, 2, ... occurs in a 1-D non-negative integer tensor (or its summed weights)."""
    if input.dim() != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if input.dtype.is_floating_point or input.dtype.name == "bool":
        raise RuntimeError(f"\"bincount_cpu\" not implemented for '{input.dtype._legacy}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and weights._shape != input._shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    with no_grad():
        n = input.numel()
        if n and int(input.min().item()) < 0:
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        size = max(int(input.max().item()) + 1 if n else 0, minlength)
        idx = input.to(int64)
        if weights is None:
            counts = zeros((size,), dtype=int64, device=input.device)
            return index_add(counts, 0, idx, counts.new_ones((n,)))
        dt = weights.dtype if weights.dtype.is_floating_point else float64
        counts = zeros((size,), dtype=dt, device=input.device)
        return index_add(counts, 0, idx, weights.to(dt))


def searchsorted(sorted_sequence: TensorBase, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, out: Any = None,
                 sorter: TensorBase | None = None) -> TensorBase:
    """Where each value of ``input`` would be inserted into the sorted last dim of ``sorted_sequence``.

    ``right=False`` (``side='left'``): the first position ``i`` with
    ``seq[i] >= v``; ``right=True``: the first with ``seq[i] > v``.
    Computed by comparing every value with every boundary and counting.
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence
    if sorter is not None:
        seq = seq.gather(-1, sorter)
    scalar = not isinstance(input, TensorBase)
    values = (full((), input, dtype=seq.dtype, device=seq.device) if scalar else input)
    with no_grad():
        if seq.dim() <= 1:
            flat = values.reshape(-1, 1)
            below = (seq.reshape(1, -1) <= flat) if right else (seq.reshape(1, -1) < flat)
            result = below.sum(-1).reshape(values._shape)
        else:
            if seq._shape[:-1] != values._shape[:-1]:
                raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 "
                                   f"dimension or the first N-1 dimensions of boundaries "
                                   f"tensor and input value tensor must match, but we got "
                                   f"boundaries tensor {list(seq._shape)} and input value "
                                   f"tensor {list(values._shape)}")
            s, v = seq.unsqueeze(-2), values.unsqueeze(-1)
            result = ((s <= v) if right else (s < v)).sum(-1)
    return result.to(int32 if out_int32 else int64)


def bucketize(input: Any, boundaries: TensorBase, *, out_int32: bool = False,
              right: bool = False, out: Any = None) -> TensorBase:
    """The bucket of each value: ``i`` with ``boundaries[i-1] < v <= boundaries[i]`` (``<=``/``<`` if ``right``)."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def unique_consecutive(input: TensorBase, return_inverse: bool = False,
                       return_counts: bool = False, dim: int | None = None) -> Any:
    """One element (or slice along ``dim``) from each run of equal consecutive ones: [1, 1, 2, 1] -> [1, 2, 1]."""
    with no_grad():
        if dim is None:
            x = input.reshape(-1)
            n = x._shape[0]
            differs = (x[1:] != x[:-1]) if n else x.new_zeros((0,), dtype=bool_)
        else:
            d = normalize_dim(dim, input.dim())
            x = input.movedim(d, 0)
            n = x._shape[0]
            rows = x.reshape(n, -1)
            differs = ((rows[1:] != rows[:-1]).any(1) if rows._shape[1]
                       else rows.new_zeros((max(n - 1, 0),), dtype=bool_))
        starts = cat([differs.new_ones((1,)), differs]) if n else differs
        first = starts.nonzero().reshape(-1)
        values = x.index_select(0, first)
        if dim is not None:
            values = values.movedim(0, normalize_dim(dim, input.dim()))
        inverse = starts.to(int64).cumsum(0) - 1 if n else starts.to(int64)
        if dim is None:
            inverse = inverse.reshape(input._shape)
        bounds = cat([first, full((1,), n, dtype=int64, device=input.device)])
        counts = bounds[1:] - bounds[:-1]
    result = (values,)
    if return_inverse:
        result += (inverse,)
    if return_counts:
        result += (counts,)
    return result[0] if len(result) == 1 else result


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(bincount)
declare(bucketize, method=False)
declare(cummax)
declare(cummin)
declare(histc)
declare(logcumsumexp)
declare(searchsorted, method=False)
declare(unique_consecutive)

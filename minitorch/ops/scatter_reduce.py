"""``scatter_reduce``, ``index_reduce`` and ``put``: writes that combine with what is there.

``scatter_reduce(input, dim, index, src, reduce)`` is ``scatter`` where each
target element combines every ``src`` value aimed at it (and its own value,
if ``include_self``) with ``reduce``: ``"sum"``, ``"prod"``, ``"mean"``,
``"amax"`` or ``"amin"``.  The forward runs the scatter kernel once with the
matching combine code (``backends/index_maps.py``); the backward, as in
PyTorch's ``scatter_reduce_backward``, routes each target's gradient back to
the elements that made it:

* sum: every contributor gets ``g``; mean: ``g / count``;
* amax/amin: the elements equal to the result share ``g`` equally;
* prod: ``g * result / x``, with exact "product of the others" where an
  element is zero (so a single zero does not zero its own gradient).

``index_reduce`` is the same along whole slices; ``put`` writes into the
tensor seen as one flat vector.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autograd.function import Function
from ..dtype import int64
from ..layout import normalize_dim
from ..tensor_base import TensorBase
from .elementwise import where
from .gather_scatter import (_check_scatter_shapes, _pad_to, _prepare_gather_index,
                             _scatter_into, gather, scatter, scatter_add)
from .index_ops import index_add, index_copy
from .registry import declare
from .views import raw_copy

__all__ = ["scatter_reduce", "index_reduce", "put"]

_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_KERNEL_OP = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "amax", "amin": "amin"}


def _identity(reduce: str, x: TensorBase) -> Any:
    """The value that leaves a target unchanged under ``reduce`` (include_self=False)."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if x.dtype.is_floating_point:
        return -math.inf if reduce == "amax" else math.inf
    info = np.iinfo(x.dtype.np)
    return int(info.min if reduce == "amax" else info.max)


def _scatter_reduce_raw(x: TensorBase, dim: int, index: TensorBase, src: TensorBase,
                        reduce: str, include_self: bool) -> TensorBase:
    out = raw_copy(x)
    if not include_self:
        _scatter_into(out, dim, index, _identity(reduce, x), "set")
    _scatter_into(out, dim, index, src, _KERNEL_OP[reduce])
    if reduce == "mean":
        count = _counts(x, dim, index, include_self)
        if x.dtype.is_floating_point:
            out = out / count
        else:
            out = (out / count).floor().to(x.dtype)
    return out


def _counts(x: TensorBase, dim: int, index: TensorBase, include_self: bool) -> TensorBase:
    """How many values each target element combines (at least 1: untouched ones keep theirs)."""
    ones = raw_copy(x).zero_() + 1 if include_self else raw_copy(x).zero_()
    count = scatter_add(ones, dim, index, ones.new_ones(index._shape))
    return count.clamp(min=1)


class ScatterReduceTwo(Function):
    _backward_name = "ScatterReduceBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int, index: TensorBase, src: TensorBase,
                reduce: str, include_self: bool) -> TensorBase:
        out = _scatter_reduce_raw(x, dim, index, src, reduce, include_self)
        ctx.save_for_backward(x, index, src, out)
        ctx.dim, ctx.reduce, ctx.include_self = dim, reduce, include_self
        return out

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        x, index, src, result = ctx.saved_tensors
        dim, reduce, include_self = ctx.dim, ctx.reduce, ctx.include_self
        if reduce == "sum":
            gx, gs = g, gather(g, dim, index)
        elif reduce == "mean":
            n = _counts(x, dim, index, include_self)
            gx, gs = g / n, gather(g / n, dim, index)
        elif reduce in ("amax", "amin"):
            # (As in PyTorch, a target equal to the result counts as a tie even with
            # include_self=False; its own share is then dropped below.)
            hit_x = (x == result).to(g.dtype)
            src_i = src[tuple(slice(0, n) for n in index._shape)]
            hit_s = (src_i == gather(result, dim, index)).to(g.dtype)
            ties = scatter_add(hit_x, dim, index, hit_s).clamp(min=1)
            gx = g * hit_x / ties
            gs = gather(g / ties, dim, index) * hit_s
        else:                                               # prod
            masked_x = where(x == 0, x.new_ones(()), x)
            src_i = src[tuple(slice(0, n) for n in index._shape)]
            gx = g * scatter_reduce(masked_x, dim, index, src_i, "prod",
                                    include_self=include_self) / masked_x
            zero = src_i == 0
            n_zero = gather(scatter_add(x.new_zeros(x._shape), dim, index, zero.to(x.dtype)),
                            dim, index)
            single = zero & (n_zero == 1)
            others = gather(g * scatter_reduce(x, dim, index, where(single, src_i.new_ones(()),
                                                                     src_i),
                                               "prod", include_self=include_self), dim, index)
            gs = where(single, others,
                       gather(g * result, dim, index) / where(zero, src_i.new_ones(()), src_i))
        if not include_self:
            gx = scatter(gx, dim, index, 0.0)
        return gx, None, None, _pad_to(gs, src._shape), None, None


def scatter_reduce(input: TensorBase, dim: int, index: TensorBase, src: TensorBase,
                   reduce: str, *, include_self: bool = True) -> TensorBase:
    """A copy of ``input`` where ``src[p]`` is combined into the element ``index[p]`` names along ``dim``.

    ``reduce``: ``"sum"``, ``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``;
    with ``include_self=False`` the targets' own values are left out of the
    combination (targets no index names keep their value).
    """
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if not isinstance(src, TensorBase):
        raise TypeError(f"scatter_reduce(): argument 'src' (position 4) must be Tensor, not "
                        f"{type(src).__name__}")
    d = normalize_dim(dim, input.dim())
    idx = _prepare_gather_index("scatter_reduce", input, d, index)
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter_reduce(): Expected self.dtype to be equal to src.dtype")
    _check_scatter_shapes(input, d, idx, src)
    return ScatterReduceTwo.apply(input, d, idx, src, reduce, bool(include_self))


def index_reduce(input: TensorBase, dim: int, index: TensorBase, source: TensorBase,
                 reduce: str, *, include_self: bool = True) -> TensorBase:
    """Combine slice ``k`` of ``source`` into slice ``index[k]`` of ``input`` along ``dim``.

    ``reduce``: ``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``.  Built as a
    :func:`scatter_reduce` whose index repeats ``index`` across the other dims.
    """
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = normalize_dim(dim, input.dim())
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    shape = [1] * max(source.dim(), 1)
    shape[d] = index.numel()
    full = index.reshape(shape).expand(source._shape if source.dim() else (1,))
    return scatter_reduce(input, d, full, source, reduce, include_self=include_self)


def put(input: TensorBase, index: TensorBase, source: TensorBase,
        accumulate: bool = False) -> TensorBase:
    """A copy of ``input`` with ``source`` written (or added) at flat positions ``index``."""
    if index.dtype is not int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{index.dtype._legacy}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {input.dtype.name} and source.dtype = "
                           f"{source.dtype.name}")
    if index.numel() != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source.numel()}, "
                           f"index.numel() = {index.numel()}")
    n = input.numel()
    flat_index = index.reshape(-1)
    if flat_index.numel():
        lo, hi = int(flat_index.min().item()), int(flat_index.max().item())
        if lo < -n or hi >= n:
            bad = hi if hi >= n else lo
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             f"elements.")
        flat_index = where(flat_index < 0, flat_index + n, flat_index)
    flat = input.reshape(-1)
    values = source.reshape(-1)
    out = index_add(flat, 0, flat_index, values) if accumulate else \
        index_copy(flat, 0, flat_index, values)
    return out.reshape(input._shape)


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(index_reduce, inplace=True)
declare(put, inplace=True)
declare(scatter_reduce, inplace=True)

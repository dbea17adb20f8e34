"""How an in-place op updates the autograd graph (PyTorch's "rebase history").

``y.add_(1)`` on a non-leaf ``y`` is recorded like ``y = y + 1``: ``y`` takes
the new node as its ``grad_fn``, and that node's input is ``y``'s old
history.

When ``y`` is a *view* of ``base`` (``y = base[0]``), the data of ``base``
changed too, so ``base`` needs new history as well: a ``CopySlices`` node
whose backward sends the gradient of the viewed region to the in-place
result and the rest to ``base``'s old history.  ``y`` then becomes a fresh
view of ``base``'s new history.
"""

from __future__ import annotations

from typing import Any

from ..autograd import grad_mode
from ..autograd.function import Function
from ..layout import contiguous_strides, is_contiguous
from ..tensor_base import TensorBase
from .views import ViewScatter, strided_view

__all__ = ["rebase_history"]


def region_fn(view: TensorBase, base: TensorBase):
    """Layout function of ``view`` inside ``base`` (base is contiguous)."""
    rel = view._offset - base._offset
    shape, stride = view._shape, view._stride

    def fn(_shape, _stride, offset, shape=shape, stride=stride, rel=rel):
        return shape, stride, offset + rel
    return fn


class CopySlices(Function):
    _backward_name = "CopySlices"

    @staticmethod
    def forward(ctx: Any, base: TensorBase, value: TensorBase, fn: Any) -> TensorBase:
        # The data is already in place; this node only records the history.
        ctx.fn = fn
        ctx.base_shape = base._shape
        ctx.mark_dirty(base)
        return base

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        g = g.contiguous()
        g_region = strided_view(g, ctx.fn)
        # The overwritten region gets no gradient: zeroed by a mask, not by subtracting
        # g_region (inf - inf would be NaN).
        region = ViewScatter.apply(g_region.new_ones(g_region.shape), ctx.base_shape, ctx.fn)
        g_base = g.masked_fill(region.bool(), 0.0)
        return g_base, g_region, None


def rebase_history(x: TensorBase, result: TensorBase) -> None:
    """Give ``x`` (just overwritten with ``result``'s values) ``result``'s history."""
    base = x._base
    if base is None or not (base.requires_grad or result.requires_grad):
        x.grad_fn = result.grad_fn
        x._output_nr = result._output_nr
        return
    if base._stride != contiguous_strides(base._shape):
        raise RuntimeError(
            "in-place modification of a view whose base is not contiguous is not supported "
            "with autograd in minitorch; call .contiguous() on the base first")
    fn = region_fn(x, base)
    # The version was bumped by the write; CopySlices bumps it again (mark_dirty),
    # which is harmless: versions only need to change.
    CopySlices.apply(base, result, fn)
    new_view = strided_view(base, fn)
    x.grad_fn = new_view.grad_fn
    x._output_nr = 0


def refresh_view_grad_fn(view: TensorBase) -> Any:
    """A view's node after its base was modified in place (see ``Tensor.grad_fn``)."""
    base = view._base
    node = view._grad_fn
    view._grad_fn_version = view._version_counter.value
    if base.grad_fn is None or not is_contiguous(base._shape, base._stride):
        return node
    prev = grad_mode.STATE.grad_enabled
    grad_mode.STATE.grad_enabled = True
    try:
        fresh = strided_view(base, region_fn(view, base))
    finally:
        grad_mode.STATE.grad_enabled = prev
    view._grad_fn, view._output_nr = fresh._grad_fn, 0
    return fresh._grad_fn

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

from ..autograd.function import Function
from ..layout import contiguous_strides
from ..tensor_base import TensorBase
from .views import _ViewScatter, strided_view

__all__ = ["rebase_history"]


def _region_fn(view: TensorBase, base: TensorBase):
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
        g_base = g - _ViewScatter.apply(g_region, ctx.base_shape, ctx.fn)
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
    fn = _region_fn(x, base)
    # The version was bumped by the write; CopySlices bumps it again (mark_dirty),
    # which is harmless: versions only need to change.
    CopySlices.apply(base, result, fn)
    new_view = strided_view(base, fn)
    x.grad_fn = new_view.grad_fn
    x._output_nr = 0

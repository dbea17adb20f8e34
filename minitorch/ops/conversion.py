"""``Tensor.to``: a copy to another dtype or device, recorded as ``ToCopyBackward0``.

``t.to(float64)``, ``t.to("cuda")``, ``t.to(device, dtype)`` and
``t.to(other)`` all come here; so do ``t.double()``, ``t.cuda()`` and the other
shorthands of ``minitorch.Tensor``.  Nothing is copied when nothing changes:
``t.to(t.dtype) is t``.  The backward of a copy is the copy back, so
gradients flow across dtypes and devices.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..device import as_device
from ..dtype import as_dtype
from ..memory_format import preserve_format
from ..tensor_base import TensorBase
from . import kernels
from .registry import declare

__all__ = ["to", "ToCopy"]


class ToCopy(Function):
    """A copy to a new dtype (``dt``) or device (``dev``); its backward copies back."""

    _backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dt: Any, dev: Any) -> TensorBase:
        ctx.dtype, ctx.device = x.dtype, x.device
        if dev is not None:
            return kernels.to_device(x, dev)
        return kernels.cast(x, dt)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return g.to(ctx.device).to(ctx.dtype), None, None


def _parse_to_args(args: tuple, kwargs: dict) -> tuple:
    """``to``'s many call forms as ``(dtype, device, copy, memory_format)``."""
    dt = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, TensorBase):
            dt, dev = a.dtype, a.device
        elif isinstance(a, str) or hasattr(a, "index") and hasattr(a, "type") and not \
                hasattr(a, "itemsize"):
            try:
                dev = as_device(a)
            except (RuntimeError, TypeError):
                dt = as_dtype(a)
        elif isinstance(a, bool):
            pass                      # the legacy positional non_blocking flag
        elif a is not None:
            dt = as_dtype(a)
    return dt, dev, copy, memory_format


def to(self: TensorBase, *args: Any, **kwargs: Any) -> TensorBase:
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other_tensor)``; returns self if nothing changes."""
    dt, dev, copy, memory_format = _parse_to_args(args, kwargs)
    out = self
    if dt is not None:
        dt = as_dtype(dt)
        if dt is not out.dtype:
            out = ToCopy.apply(out, dt, None)
    if dev is not None:
        dev = as_device(dev)
        if dev != out.device:
            out = ToCopy.apply(out, None, dev)
    if memory_format is not None and memory_format is not preserve_format:
        out = out.contiguous(memory_format=memory_format)
    if copy and out is self:
        out = self.clone()
    return out


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py)
# ---------------------------------------------------------------------------
declare(to, function=False)

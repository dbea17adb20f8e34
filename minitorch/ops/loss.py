"""The negative log likelihood loss as one op, with PyTorch's ``NllLossBackward0``.

``nll_loss(logp, target)`` picks ``-logp[r, target[r]]`` for every row ``r``
(times the class weight ``weight[target[r]]``), skips rows whose target is
``ignore_index``, and reduces: ``'none'`` keeps one loss per row, ``'sum'``
adds them, ``'mean'`` divides the sum by the total *weight* of the rows it
kept (not by the number of rows).  Built from general ops this would be a
comparison, a selection, a bounds check, a gather and several elementwise
ops, each with its own kernel launch and Python overhead; here one row
kernel checks every target and computes the per-row losses and weights
(``nll_loss`` of the backend), and the gradient is one more row kernel.

The gradient with respect to ``logp`` is ``-w`` at each row's target column
and 0 elsewhere, times the incoming gradient (divided by the total weight
for ``'mean'``).  That constant matrix is multiplied by the incoming
gradient with an ordinary op, so a backward with ``create_graph=True`` can
itself be differentiated.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..backends import scalar_ops
from ..dtype import int64
from ..tensor_base import TensorBase
from . import kernels

__all__ = ["nll_loss_rows"]


class NllLoss(Function):
    _backward_name = "NllLossBackward0"
    _nondiff_args = (1, 2)      # target and class weight

    @staticmethod
    def forward(ctx: Any, logp: TensorBase, target: TensorBase, weight: TensorBase | None,
                ignore_index: int, reduction: str) -> TensorBase:
        dt = kernels.compute_dtype(logp.dtype)
        lp = kernels.contiguous(kernels.cast(logp, dt))
        tg = kernels.contiguous(kernels.cast(target, int64))
        w = None if weight is None else kernels.contiguous(kernels.cast(weight, dt))
        rows, n = lp._shape
        losses = kernels.empty((rows,), dt, logp.device)
        weights = kernels.empty((rows,), dt, logp.device)
        bad = kernels.nll_loss_rows(
            kernels.array_of(lp, (rows, n)), kernels.array_of(tg, (rows,)),
            None if w is None else kernels.array_of(w, (n,)), int(ignore_index),
            kernels.array_of(losses, (rows,)), kernels.array_of(weights, (rows,)), logp.device)
        if bad >= 0:
            value = int(tg._host_array().reshape(-1)[bad])
            raise IndexError(f"Target {value} is out of bounds.")
        ctx.tg, ctx.w, ctx.ignore_index, ctx.reduction = tg, w, int(ignore_index), reduction
        ctx.shape, ctx.dtype = (rows, n), logp.dtype
        if reduction == "none":
            out = losses
        elif reduction == "sum":
            out = kernels.reduce(losses, "sum", (0,), False, dt)
        else:
            ctx.total = kernels.reduce(weights, "sum", (0,), False, dt)
            out = kernels.arith(kernels.reduce(losses, "sum", (0,), False, dt), ctx.total, scalar_ops.DIV)
        return kernels.cast(out, logp.dtype)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        rows, n = ctx.shape
        dt = kernels.compute_dtype(ctx.dtype)
        k = kernels.empty((rows, n), dt, g.device)
        kernels.nll_loss_rows_backward(
            kernels.array_of(ctx.tg, (rows,)),
            None if ctx.w is None else kernels.array_of(ctx.w, (n,)),
            ctx.ignore_index, kernels.array_of(k, (rows, n)), g.device)
        if ctx.reduction == "none":
            scale = g.reshape(rows, 1)
        elif ctx.reduction == "sum":
            scale = g
        else:
            scale = g / ctx.total
        grad = k * scale
        return (grad if grad.dtype is ctx.dtype else grad.to(ctx.dtype)), None, None, None, None


class NllLoss2D(NllLoss):
    """The same op for image-shaped input (N, C, H, W), named as PyTorch names it."""

    _backward_name = "NllLoss2DBackward0"


def nll_loss_rows(logp: TensorBase, target: TensorBase, weight: TensorBase | None, ignore_index: int,
                  reduction: str, images: bool = False) -> TensorBase:
    """The loss of (rows, C) log-probabilities against (rows,) class indices (see the module).

    ``images``: the rows came from (N, C, H, W) input (only the node's name differs).
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    n = logp._shape[1]
    if weight is not None and (weight.dim() != 1 or weight._shape[0] != n):
        raise RuntimeError(f"weight tensor should be defined either for all {n} classes or no "
                           f"classes but got weight tensor of shape: {list(weight._shape)}")
    kernels.check_same_device(logp, target)
    return (NllLoss2D if images else NllLoss).apply(logp, target, weight, ignore_index,
                                                     reduction)

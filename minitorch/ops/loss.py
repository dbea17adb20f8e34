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

The forward and the backward of :class:`NllLoss` are the course's tasks
4.10 and 4.11: the row kernels do the per-row work, the tasks the reductions
and the chain rule.  The backward multiplies with ordinary ops, so that a
backward with ``create_graph=True`` can itself be differentiated.
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
        return kernels.cast(NllLoss.reduce(ctx, losses, weights), logp.dtype)

    @staticmethod
    def reduce(ctx: Any, losses: TensorBase, weights: TensorBase) -> TensorBase:
        """The loss from the rows' losses, as ``ctx.reduction`` asks (no graph: bare tensors).

        Args:
            ctx: the node's context; ``ctx.reduction`` is ``'none'``, ``'sum'`` or
                ``'mean'``.  Whatever backward will need must be saved on it here
                (backward sees only ``ctx``).
            losses: shape ``(rows,)``: row ``r``'s loss ``-weight[t] * logp[r, t]`` for
                its target class ``t``, 0 for a row whose target is ``ignore_index``.
            weights: shape ``(rows,)``: row ``r``'s class weight ``weight[t]`` (1 without
                class weights), 0 for an ignored row.

        Returns:
            ``'none'``: the losses themselves; ``'sum'``: their sum (0-d); ``'mean'``:
            their sum divided by the total weight of the rows (0-d), as PyTorch does.
            Use the kernels (``kernels.reduce``, ``kernels.arith``): forward records
            nothing.

        Example: losses ``[2., 0., 3.]`` and weights ``[1., 0., 2.]`` give ``5/3`` for
        ``'mean'``.
        """
        # Task 4.10: the nll loss's reduction: 'none', 'sum', or 'mean' as PyTorch defines it
        # (weighted), saving on ctx what backward needs.
        ### BEGIN SOLUTION
        dt = losses.dtype
        if ctx.reduction == "none":
            return losses
        if ctx.reduction == "sum":
            return kernels.reduce(losses, "sum", (0,), False, dt)
        ctx.total = kernels.reduce(weights, "sum", (0,), False, dt)
        return kernels.arith(kernels.reduce(losses, "sum", (0,), False, dt), ctx.total,
                             scalar_ops.DIV)
        ### END SOLUTION

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        """The gradient of the loss with respect to ``logp`` (the other inputs get ``None``).

        Args:
            ctx: what forward and :meth:`reduce` saved: ``ctx.shape`` is
            ``(rows, classes)``, ``ctx.reduction``, ``ctx.dtype`` the input's dtype.

            g: the gradient of the result: shape ``(rows,)`` for ``'none'``, 0-d otherwise.

        ``k`` below is the gradient of each row's loss with respect to its row of
        ``logp`` (``-weight[t]`` at the target column, 0 elsewhere and in ignored rows).

        Returns:
            ``(grad_logp, None, None, None, None)``, ``grad_logp`` of shape
            ``(rows, classes)`` and dtype ``ctx.dtype``, made with differentiable ops
            from ``g`` (so that ``create_graph=True`` can differentiate it again).

        Example: one row, classes 2, target 1, no weights, ``'mean'``, ``g = 1.``:
        ``grad_logp = [[0., -1.]]``.
        """
        rows, n = ctx.shape
        dt = kernels.compute_dtype(ctx.dtype)
        k = kernels.empty((rows, n), dt, g.device)
        kernels.nll_loss_rows_backward(
            kernels.array_of(ctx.tg, (rows,)),
            None if ctx.w is None else kernels.array_of(ctx.w, (n,)),
            ctx.ignore_index, kernels.array_of(k, (rows, n)), g.device)
        # Task 4.11: the chain rule for the nll loss: the gradient of each reduction ('none',
        # 'sum', 'mean') with respect to logp, from g and k, differentiable in g.
        ### BEGIN SOLUTION
        if ctx.reduction == "none":
            scale = g.reshape(rows, 1)
        elif ctx.reduction == "sum":
            scale = g
        else:
            scale = g / ctx.total
        grad = k * scale
        return (grad if grad.dtype is ctx.dtype else grad.to(ctx.dtype)), None, None, None, None
        ### END SOLUTION


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

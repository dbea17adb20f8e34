"""RMSprop: step sizes scaled by a running root-mean-square of recent gradients."""

from __future__ import annotations

from typing import Any, Iterable

from ..backends.optimizer_rules import RMSpropStep
from ..dtype import float32
from ..ops.creation import tensor, zeros_like
from .optimizer import Optimizer, advance_step, check_non_negative

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """Divide the gradient by a running RMS of recent gradients (``alpha`` = smoothing)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False, foreach: Any = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        check_non_negative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay,
                           alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _record(self, group: dict, p: Any, state: dict) -> RMSpropStep:
        """RMSprop's settings for ``p``, with its step counted (its state made on its first)."""
        if not state:
            state["step"] = tensor(0.0, dtype=float32)
            state["square_avg"] = zeros_like(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = zeros_like(p)
        advance_step(state["step"])
        return RMSpropStep(lr=float(group["lr"]), alpha=float(group["alpha"]),
                           eps=float(group["eps"]), weight_decay=float(group["weight_decay"]),
                           momentum=float(group["momentum"]), centered=bool(group["centered"]),
                           maximize=bool(group["maximize"]))

    def _buffers(self, p: Any, state: dict) -> list:
        return [state["square_avg"], state.get("grad_avg"), state.get("momentum_buffer")]

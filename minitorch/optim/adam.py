"""Adam and AdamW.

Adam keeps running averages of the gradient (first moment) and of its
square (second moment), corrects their start-up bias, and divides the one by
the root of the other: a per-parameter step size.  AdamW applies weight
decay to the parameter itself instead of adding it to the gradient, which
works better with adaptive step sizes.  The rule for one weight is
``adam_step`` in ``backends/optimizer_rules.py`` (course task 5.3).
"""

from __future__ import annotations

from typing import Any, Iterable

from ..backends.optimizer_rules import AdamStep
from ..dtype import float32
from ..ops.creation import tensor, zeros_like
from .optimizer import Optimizer, advance_step, check_non_negative

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    _decoupled_default = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: Any = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: Any = None,
                 decoupled_weight_decay: bool | None = None) -> None:
        check_non_negative(lr=lr, eps=eps)
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        check_non_negative(weight_decay=weight_decay)
        if decoupled_weight_decay is None:
            decoupled_weight_decay = self._decoupled_default
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _record(self, group: dict, p: Any, state: dict) -> AdamStep:
        """Adam's settings for ``p``, with its step counted (its state made on its first)."""
        if not state:
            state["step"] = tensor(0.0, dtype=float32)
            state["exp_avg"] = zeros_like(p)
            state["exp_avg_sq"] = zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = zeros_like(p)
        beta1, beta2 = group["betas"]
        return AdamStep(step=advance_step(state["step"]), lr=float(group["lr"]),
                        beta1=float(beta1), beta2=float(beta2), eps=float(group["eps"]),
                        weight_decay=float(group["weight_decay"]),
                        amsgrad=bool(group["amsgrad"]), maximize=bool(group["maximize"]),
                        decoupled=bool(group["decoupled_weight_decay"]))

    def _buffers(self, p: Any, state: dict) -> list:
        return [state["exp_avg"], state["exp_avg_sq"], state.get("max_exp_avg_sq")]


class AdamW(Adam):
    """Adam with decoupled weight decay (default ``weight_decay=1e-2``)."""

    _decoupled_default = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: Any = None, capturable: bool = False,
                 differentiable: bool = False, fused: Any = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

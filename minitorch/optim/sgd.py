"""Stochastic gradient descent, with momentum, dampening, Nesterov and weight decay.

One step updates every parameter that has a gradient with the rule of
``backends/optimizer_rules.py`` (``sgd_step``, course task 5.2), which
follows PyTorch's documented algorithm; the kernel ``fused_update`` runs it
over all the parameter's elements at once.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..backends.optimizer_rules import SGDStep
from ..ops.creation import zeros_like
from .optimizer import Optimizer, check_non_negative

__all__ = ["SGD"]


class SGD(Optimizer):
    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: Any = None, differentiable: bool = False,
                 fused: Any = None) -> None:
        check_non_negative(lr=lr, momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _record(self, group: dict, p: Any, state: dict) -> SGDStep:
        """SGD's settings for ``p``; on its first step with momentum, its momentum buffer."""
        first = group["momentum"] != 0 and state.get("momentum_buffer") is None
        if first:
            state["momentum_buffer"] = zeros_like(p)
        return SGDStep(lr=float(group["lr"]), momentum=float(group["momentum"]),
                       dampening=float(group["dampening"]),
                       weight_decay=float(group["weight_decay"]),
                       nesterov=bool(group["nesterov"]), maximize=bool(group["maximize"]),
                       first_step=first)

    def _buffers(self, p: Any, state: dict) -> list:
        return [state.get("momentum_buffer")]

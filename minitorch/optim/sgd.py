"""Stochastic gradient descent, with momentum, dampening, Nesterov and weight decay.

One step, for each parameter p with gradient g (PyTorch's formulation)::

    g = g + weight_decay * p
    b = g                                  (first step)
    b = momentum * b + (1 - dampening) * g (later steps)
    g = g + momentum * b  if nesterov else b
    p = p - lr * g
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..autograd.grad_mode import no_grad
from ..ops.creation import zeros_like
from ..ops.fused import fused_update
from .optimizer import Optimizer, required

__all__ = ["SGD"]


class SGD(Optimizer):
    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: Any = None, differentiable: bool = False,
                 fused: Any = None) -> None:
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    @no_grad()
    def step(self, closure: Callable | None = None) -> Any:
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                buf = None
                first = False
                if group["momentum"] != 0:
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = zeros_like(p)
                        first = True
                fused_update("sgd", p, p.grad, [buf], float(group["lr"]),
                             float(group["momentum"]), float(group["dampening"]),
                             float(group["weight_decay"]), bool(group["nesterov"]),
                             bool(group["maximize"]), first)
        return loss

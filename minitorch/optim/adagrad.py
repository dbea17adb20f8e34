"""Adagrad: divide each step by the root of the sum of all past squared gradients.

Weights with large or frequent gradients get ever smaller steps, rare ones
keep large steps.  The rule for one weight is ``adagrad_step`` in
``backends/optimizer_rules.py`` (course task 5.10); the optimizers' step,
:meth:`Optimizer.step` (task 5.9), applies it to every parameter, as
PyTorch's documented algorithm says.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..backends.optimizer_rules import AdagradStep
from ..dtype import float32
from ..ops.creation import full_like, tensor
from .optimizer import Optimizer, advance_step, check_non_negative

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Divide by the root of the *sum* of all past squared gradients."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: Any = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: Any = None) -> None:
        check_non_negative(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                           initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = tensor(0.0, dtype=float32)
                state["sum"] = full_like(p, group["initial_accumulator_value"])

    def _record(self, group: dict, p: Any, state: dict) -> AdagradStep:
        """Adagrad's settings for ``p``, with its step counted (its state is made in
        ``__init__``)."""
        settings = {name: float(group[name]) for name in ("lr", "lr_decay", "weight_decay",
                                                          "eps")}
        return AdagradStep(step=advance_step(state["step"]), maximize=bool(group["maximize"]),
                           **settings)

    def _buffers(self, p: Any, state: dict) -> list:
        return [state["sum"]]

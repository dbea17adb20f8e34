"""Adagrad: divide each step by the root of the sum of all past squared gradients.

Weights with large or frequent gradients get ever smaller steps, rare ones
keep large steps.  The rule for one weight is ``adagrad_step`` in
``backends/optimizer_rules.py`` (course task 5.10); :meth:`Adagrad.step`
(task 5.9) applies it to every parameter, as PyTorch's documented algorithm
says.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..autograd.grad_mode import no_grad
from ..backends.optimizer_rules import AdagradStep
from ..dtype import float32
from ..ops.creation import full_like, tensor
from ..ops.fused import fused_update
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

    @no_grad()
    def step(self, closure: Callable | None = None) -> Any:
        """One optimisation step for every parameter that has a gradient.

        Args:
            closure: ``None``, or a function that recomputes the loss and returns
                it (``self._closure_loss`` calls it with gradients enabled).

        Returns:
            The closure's loss, or ``None``.

        Each parameter's state (made in ``__init__``) holds ``"step"``, a 0-d
        float32 tensor counting its steps (:func:`advance_step` adds one and
        returns the new count), and ``"sum"``, its sum of squared gradients.
        ``self._with_grad()`` yields ``(group, p, state)`` for each parameter with
        a gradient.  ``fused_update(hyper, p, p.grad, [state["sum"]])`` applies the
        rule of an :class:`AdagradStep` record to all of ``p``'s elements, in place.

        Example: ``Adagrad([p], lr=0.1)`` after one step with gradient ``[2.]`` has
        moved ``p`` by ``-0.1`` and ``state["sum"]`` is ``[4.]``.
        """
        # Task 5.9: Adagrad's step: for every parameter with a gradient, count its step and
        # apply Adagrad's rule with its group's settings, state and gradient.
        ### BEGIN SOLUTION
        loss = self._closure_loss(closure)
        for group, p, state in self._with_grad():
            settings = {name: float(group[name]) for name in ("lr", "lr_decay", "weight_decay",
                                                              "eps")}
            hyper = AdagradStep(step=advance_step(state["step"]), maximize=bool(group["maximize"]),
                                **settings)
            fused_update(hyper, p, p.grad, [state["sum"]])
        return loss
        ### END SOLUTION

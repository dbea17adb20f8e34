"""Learning-rate schedulers: change each group's ``lr`` as training goes on.

Call ``scheduler.step()`` once per epoch (after ``optimizer.step()``).  Each
scheduler computes the new rates from ``last_epoch`` and the initial rates
(``base_lrs``), so its ``state_dict`` is just those numbers.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

from .optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "LambdaLR", "OneCycleLR", "ReduceLROnPlateau", "LinearLR", "ConstantLR"]


class LRScheduler:
    """Base class: subclasses define ``get_lr()`` for the current ``last_epoch``."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   "when resuming an optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self.step()

    def get_lr(self) -> list:
        raise NotImplementedError  # abstract: each scheduler defines its rule

    def get_last_lr(self) -> list:
        """The learning rates set by the last ``step()``."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            values = self._closed_form() if hasattr(self, "_closed_form") else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _replayed(self) -> list:
        """The rates of epoch ``last_epoch`` when every epoch from 0 ran ``get_lr`` in turn.

        ``step(epoch)`` jumps to an epoch; a scheduler whose rule builds on the
        previous epoch's rate (StepLR's, course task 5.1) gets there by replaying
        that rule from ``base_lrs``.  The groups' rates are put back afterwards:
        ``step`` sets them from what this returns.
        """
        groups = self.optimizer.param_groups
        target = self.last_epoch
        saved = [group["lr"] for group in groups]
        for group, base in zip(groups, self.base_lrs):
            group["lr"] = base
        try:
            for epoch in range(target + 1):
                self.last_epoch = epoch
                for group, lr in zip(groups, self.get_lr()):
                    group["lr"] = lr
            return [group["lr"] for group in groups]
        finally:
            self.last_epoch = target
            for group, lr in zip(groups, saved):
                group["lr"] = lr

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"
                and not callable(v)}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)


_LRScheduler = LRScheduler


class StepLR(LRScheduler):
    """Multiply the rate by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        """The learning rate of each parameter group for epoch ``self.last_epoch``.

        Called by ``step()`` after it has advanced ``self.last_epoch`` (0 when
        the scheduler is made); the optimizer's ``param_groups`` still hold the
        previous epoch's rates (``group["lr"]``), which this must build on
        (other schedulers or the user may have changed them in between).

        Returns:
            A list with one rate per parameter group: the current rate, times
            ``gamma`` when a new period of ``step_size`` epochs begins.

        Example: ``lr = 1``, ``step_size = 2``, ``gamma = 0.5``: epochs 0, 1, 2, 3, 4 get
        ``1, 1, 0.5, 0.5, 0.25``.
        """
        # Task 5.1: each group's rate for this epoch, from its current rate: StepLR's
        # schedule (decayed by gamma every step_size epochs).
        ### BEGIN SOLUTION
        decays = self.last_epoch > 0 and self.last_epoch % self.step_size == 0
        factor = self.gamma if decays else 1.0
        return [group["lr"] * factor for group in self.optimizer.param_groups]
        ### END SOLUTION

    def _closed_form(self) -> list:
        # ``step(epoch)``: the rule above (task 5.1) replayed from epoch 0.
        return self._replayed()


class MultiStepLR(LRScheduler):
    """Multiply the rate by ``gamma`` at each epoch listed in ``milestones``."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = sorted(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        hits = self.milestones.count(self.last_epoch)
        return [g["lr"] * self.gamma ** hits for g in self.optimizer.param_groups]

    def _closed_form(self) -> list:
        passed = sum(1 for m in self.milestones if m <= self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the rate by ``gamma`` every epoch: :class:`StepLR`'s rule with a step of 1."""

    step_size = 1           # (a class attribute: not part of the state_dict, as in PyTorch)

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    get_lr = StepLR.get_lr      # course task 5.1's rule
    _closed_form = StepLR._closed_form


class CosineAnnealingLR(LRScheduler):
    """Follow half a cosine from the base rate down to ``eta_min`` over ``T_max`` epochs."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        # PyTorch's recursive form (it matches the closed form when steps are sequential).
        if self.last_epoch == 0:
            return [g["lr"] for g in self.optimizer.param_groups]
        if self._step_count == 1 and self.last_epoch > 0:
            return self._closed_form()
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [g["lr"] + (base - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base, g in zip(self.base_lrs, self.optimizer.param_groups)]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (g["lr"] - self.eta_min) + self.eta_min
                for g in self.optimizer.param_groups]

    def _closed_form(self) -> list:
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class LambdaLR(LRScheduler):
    """``lr = base_lr * lr_lambda(epoch)`` (one function, or one per group)."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Any, last_epoch: int = -1) -> None:
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                                 f"{len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}


class LinearLR(LRScheduler):
    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        self.start_factor, self.end_factor, self.total_iters = (start_factor, end_factor,
                                                                total_iters)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        t = min(self.last_epoch, self.total_iters)
        factor = self.start_factor + (self.end_factor - self.start_factor) * t / self.total_iters
        return [base * factor for base in self.base_lrs]


class ConstantLR(LRScheduler):
    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        f = self.factor if self.last_epoch < self.total_iters else 1.0
        return [base * f for base in self.base_lrs]


class OneCycleLR(LRScheduler):
    """Warm up from ``max_lr/div_factor`` to ``max_lr``, then anneal to a tiny rate.

    Stepped once per *batch*; ``total_steps`` (or ``epochs * steps_per_epoch``)
    is the length of the cycle.  Cosine annealing by default.
    """

    def __init__(self, optimizer: Optimizer, max_lr: Any, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum: float = 0.85,
                 max_momentum: float = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR (epochs AND "
                                 "steps_per_epoch)")
            total_steps = epochs * steps_per_epoch
        if total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.total_steps, self.anneal_strategy = total_steps, anneal_strategy
        max_lrs = max_lr if isinstance(max_lr, (list, tuple)) else \
            [max_lr] * len(optimizer.param_groups)
        if last_epoch == -1:
            for group, m in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        up = float(pct_start * total_steps) - 1
        if three_phase:
            self._phases = [(up, "initial_lr", "max_lr"), (2 * up, "max_lr", "initial_lr"),
                            (total_steps - 1, "initial_lr", "min_lr")]
        else:
            self._phases = [(up, "initial_lr", "max_lr"), (total_steps - 1, "max_lr", "min_lr")]
        self.cycle_momentum = cycle_momentum
        self._momentum = (base_momentum, max_momentum)
        if cycle_momentum:
            for group in optimizer.param_groups:
                if "betas" in group:
                    group["betas"] = (max_momentum, group["betas"][1])
                elif "momentum" in group:
                    group["momentum"] = max_momentum
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps "
                             f"is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, (end_step, start_key, end_key) in enumerate(self._phases):
                if step <= end_step or i == len(self._phases) - 1:
                    pct = (step - start_step) / (end_step - start_step) if end_step > \
                        start_step else 0.0
                    lr = self._anneal(group[start_key], group[end_key], pct)
                    if self.cycle_momentum:
                        lo, hi = self._momentum
                        m = self._anneal(hi, lo, pct) if start_key == "initial_lr" else \
                            self._anneal(lo, hi, pct)
                        if "betas" in group:
                            group["betas"] = (m, group["betas"][1])
                        elif "momentum" in group:
                            group["momentum"] = m
                    break
                start_step = end_step
            lrs.append(lr)
        return lrs


class ReduceLROnPlateau:
    """Cut the rate by ``factor`` when a metric stops improving for ``patience`` epochs."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: Any = 0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        self.optimizer = optimizer
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.eps = cooldown, eps
        self.min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else \
            [min_lr] * len(optimizer.param_groups)
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]

    def _better(self, a: float, best: float) -> bool:
        if self.mode == "min":
            limit = best * (1 - self.threshold) if self.threshold_mode == "rel" else \
                best - self.threshold
            return a < limit
        limit = best * (1 + self.threshold) if self.threshold_mode == "rel" else \
            best + self.threshold
        return a > limit

    def step(self, metrics: Any) -> None:
        current = float(metrics)
        self.last_epoch += 1
        if self._better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
                new = max(group["lr"] * self.factor, min_lr)
                if group["lr"] - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def get_last_lr(self) -> list:
        return self._last_lr

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)

"""``Optimizer``: the base class that keeps parameter groups and per-parameter state.

``param_groups`` is a list of dicts, each with ``'params'`` and its own
hyper-parameters (so different layers can have different learning rates);
``state[p]`` holds what an optimizer remembers about parameter ``p`` between
steps (momentum buffers, Adam's moment estimates).  ``state_dict()`` replaces
each parameter by its index so that a checkpoint can be loaded into a fresh
optimizer over a fresh model.
"""

from __future__ import annotations

from collections import defaultdict
from copy import deepcopy
from typing import Any, Callable, Iterable, Iterator

from ..autograd.grad_mode import enable_grad, no_grad
from ..ops import kernels
from ..ops.fused import fused_update
from ..tensor import Tensor

__all__ = ["Optimizer", "required", "check_non_negative", "advance_step"]

# How PyTorch names a hyper-parameter in "Invalid ...: value" (others: "<name> value").
_LABELS = {"lr": "learning rate", "eps": "epsilon value"}


def check_non_negative(**values: Any) -> None:
    """Raise PyTorch's ``ValueError`` for the first negative hyper-parameter given.

    >>> check_non_negative(lr=0.1, momentum=-1)
    Traceback (most recent call last):
    ...
    ValueError: Invalid momentum value: -1
    """
    for name, value in values.items():
        if value is not required and value < 0.0:
            raise ValueError(f"Invalid {_LABELS.get(name, name + ' value')}: {value}")


def advance_step(step: Tensor) -> float:
    """``step += 1`` for a step counter (``state["step"]``, a 0-d CPU tensor); the new count.

    The same as ``step.add_(1); step.item()``, written straight into the
    one-element buffer: an optimizer does it for every parameter at every
    step, and the general in-place path (an op, a copy, a read back) cost
    more than the update of a small parameter itself.
    """
    buffer = kernels.flat(step)
    buffer[0] += 1
    step._bump_version()
    return float(buffer[0])


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class; subclasses implement ``step`` over ``self.param_groups``."""

    def __init__(self, params: Iterable[Any], defaults: dict) -> None:
        self.defaults = defaults
        self.state: dict = defaultdict(dict)
        self.param_groups: list = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + params.type())
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own hyper-parameters."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(p).__name__)
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group)
        group["params"] = params
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            group.setdefault(name, default)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient (``None`` by default)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if p._grad.grad_fn is not None:
                        p._grad = p._grad.detach()
                    with no_grad():
                        p._grad.zero_()

    @no_grad()
    def step(self, closure: Callable | None = None) -> Any:
        """One optimisation step for every parameter that has a gradient.

        Args:
            closure: ``None``, or a function that recomputes the loss and returns
                it (``self._closure_loss`` calls it with gradients enabled).

        Returns:
            The closure's loss, or ``None``.

        Every optimizer (SGD, Adam, AdamW, RMSprop, Adagrad) runs this one step;
        what differs is its rule, which it gives through two methods:
        ``self._record(group, p, state)`` is the rule's record for parameter
        ``p`` (its group's settings; it counts the parameter's step and makes
        its state on its first step, so call it once per parameter and step,
        before ``_buffers``), and ``self._buffers(p, state)`` lists ``p``'s state
        buffers as the rule takes them.  ``fused_update(record, p, p.grad,
        buffers)`` applies the rule to all of ``p``'s elements, in place.
        ``self._with_grad()`` yields ``(group, p, state)`` for each parameter
        with a gradient.

        Example: ``Adagrad([p], lr=0.1)`` after one step with gradient ``[2.]`` has
        moved ``p`` by ``-0.1`` and ``state["sum"]`` is ``[4.]``.
        """
        # Task 5.9: the optimizers' step: for every parameter with a gradient, its rule's
        # record applied to it, its gradient and its state; the closure's loss returned.
        ### BEGIN SOLUTION
        loss = self._closure_loss(closure)
        for group, p, state in self._with_grad():
            hyper = self._record(group, p, state)
            fused_update(hyper, p, p.grad, self._buffers(p, state))
        return loss
        ### END SOLUTION

    def _record(self, group: dict, p: Tensor, state: dict) -> Any:
        """The record of this optimizer's rule for ``p`` (see :meth:`step`)."""
        raise NotImplementedError  # abstract: each optimizer defines its rule

    def _buffers(self, p: Tensor, state: dict) -> list:
        """``p``'s state buffers, in the order this optimizer's rule takes them."""
        raise NotImplementedError  # abstract: each optimizer defines its rule

    def _with_grad(self) -> Iterator[tuple]:
        """``(group, parameter, state)`` for each parameter that has a gradient, in order."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    yield group, p, self.state[p]

    def _closure_loss(self, closure: Callable | None) -> Any:
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # -- saving and loading ------------------------------------------------------
    def state_dict(self) -> dict:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``."""
        index: dict = {}
        groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(group["params"])
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore hyper-parameters and state saved by ``state_dict``."""
        state_dict = deepcopy(state_dict) if not _has_tensors(state_dict) else \
            _shallow_copy(state_dict)
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(self.param_groups,
                                                                   saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = {}
        for group, saved in zip(self.param_groups, saved_groups):
            for p, i in zip(group["params"], saved["params"]):
                id_map[i] = p
        self.state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            k = int(k)
            if k in id_map:
                p = id_map[k]
                self.state[p] = {name: _cast_state(name, value, p) for name, value in v.items()}
        for group, saved in zip(self.param_groups, saved_groups):
            for key, value in saved.items():
                if key != "params":
                    group[key] = value

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


def _has_tensors(d: Any) -> bool:
    if isinstance(d, Tensor):
        return True
    if isinstance(d, dict):
        return any(_has_tensors(v) for v in d.values())
    if isinstance(d, (list, tuple)):
        return any(_has_tensors(v) for v in d)
    return False


def _shallow_copy(d: Any) -> Any:
    if isinstance(d, dict):
        return {k: _shallow_copy(v) for k, v in d.items()}
    if isinstance(d, list):
        return [_shallow_copy(v) for v in d]
    return d


def _cast_state(name: str, value: Any, param: Tensor) -> Any:
    """State tensors follow the parameter's dtype and device (except the step count)."""
    if not isinstance(value, Tensor):
        return value
    if name == "step":
        return value.clone()
    return value.to(param.device).to(param.dtype).clone() if value.dtype.is_floating_point \
        else value.to(param.device).clone()

"""Full backward hooks: ``hook(module, grad_input, grad_output)``.

To see the gradients at a module's boundary, the module's tensor inputs and
outputs are passed through an identity ``Function`` (``BackwardHookFunction``)
so that each has a graph node of its own, and tensor hooks on those
identities collect the gradients.  The user's hook runs once all input
gradients have arrived (or, for a module whose inputs need no gradient,
as soon as the output gradients are known).
"""

from __future__ import annotations

from typing import Any

from ...autograd.function import Function
from ...tensor import Tensor

__all__ = ["call_with_backward_hooks"]


class BackwardHookFunction(Function):
    _backward_name = "BackwardHookFunctionBackward"

    @staticmethod
    def forward(ctx: Any, *tensors: Tensor) -> Any:
        out = tuple(t._alias() for t in tensors)
        return out if len(out) != 1 else out[0]

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> Any:
        return grads


def _wrap(values: tuple) -> tuple:
    idx = [i for i, v in enumerate(values) if isinstance(v, Tensor) and v.requires_grad]
    if not idx:
        return values, []
    wrapped = BackwardHookFunction.apply(*[values[i] for i in idx])
    if not isinstance(wrapped, tuple):
        wrapped = (wrapped,)
    out = list(values)
    for i, w in zip(idx, wrapped):
        out[i] = w
    return tuple(out), idx


def call_with_backward_hooks(module: Any, args: tuple, kwargs: dict) -> Any:
    args, in_idx = _wrap(args)
    output = module.forward(*args, **kwargs)
    single = not isinstance(output, tuple)
    outs, out_idx = _wrap((output,) if single else output)
    state = {"grad_output": [None] * len(outs), "grad_input": [None] * len(args),
             "pending_in": len(in_idx)}

    def fire() -> Any:
        grad_input = tuple(state["grad_input"])
        grad_output = tuple(state["grad_output"])
        result = None
        for hook in list(module._backward_hooks.values()):
            r = hook(module, grad_input, grad_output)
            if r is not None:
                result = grad_input = tuple(r)
        return result

    def out_hook(i: int):
        def hook(g: Tensor) -> None:
            state["grad_output"][i] = g
            if not in_idx and all(state["grad_output"][j] is not None for j in out_idx):
                fire()
        return hook

    def in_hook(i: int):
        def hook(g: Tensor) -> Any:
            state["grad_input"][i] = g
            state["pending_in"] -= 1
            if state["pending_in"] == 0:
                new = fire()
                state["pending_in"] = len(in_idx)
                if new is not None:
                    return new[i]
            return None
        return hook

    for i in out_idx:
        outs[i].register_hook(out_hook(i))
    for i in in_idx:
        args[i].register_hook(in_hook(i))
    return outs[0] if single else outs

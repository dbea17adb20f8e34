"""``functional_call``: run a module with other tensors in place of its parameters.

A module holds its parameters; a *function* of the parameters is what
``grad``, ``vmap`` and the other transforms need::

    params = dict(model.named_parameters())
    def loss(p, x, y):
        return F.mse_loss(functional_call(model, p, (x,)), y)
    grads = minitorch.func.grad(loss)(params, x, y)      # a dict, like params

For the duration of the call each named parameter or buffer (dotted names
such as ``"0.weight"``) is swapped for the given tensor in its module's
``_parameters``/``_buffers`` table, then the originals are put back, even
if the forward raises.  :func:`stack_module_state` stacks the states of
several same-shaped models, to run an ensemble with ``vmap``.
"""

from __future__ import annotations

from typing import Any

from ..autograd.grad_mode import no_grad
from ..ops.views import stack
from ..nn.modules.module import Module

__all__ = ["functional_call", "stack_module_state"]


def _merge(dicts: Any) -> dict:
    if isinstance(dicts, dict):
        return dict(dicts)
    merged: dict = {}
    repeated = set()
    for d in dicts:
        repeated |= set(d) & set(merged)
        merged.update(d)
    if repeated:
        raise ValueError(f"{sorted(repeated)} appeared in multiple dictionaries; behavior of "
                         "functional call is ambiguous")
    return merged


def _owner(module: Module, name: str) -> tuple:
    """The submodule that holds dotted ``name``, and the last part of the name."""
    *path, leaf = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, leaf


def functional_call(module: Module, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the given tensors as its parameters and buffers."""
    tensors = _merge(parameter_and_buffer_dicts)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = kwargs or {}
    known = dict(module.named_parameters(remove_duplicate=False))
    known.update(module.named_buffers(remove_duplicate=False))
    if tie_weights:
        # A tensor shared under several names (tied weights) is replaced under all of them.
        by_id: dict = {}
        for n, t in known.items():
            by_id.setdefault(id(t), []).append(n)
        for n in list(tensors):
            if n in known:
                for alias in by_id[id(known[n])]:
                    if alias not in tensors:
                        tensors[alias] = tensors[n]
    if strict:
        missing = [n for n in known if n not in tensors]
        unexpected = [n for n in tensors if n not in known]
        if missing or unexpected:
            lines = []
            if unexpected:
                lines.append("Unexpected key(s): " + ", ".join(f"'{n}'" for n in unexpected)
                             + ".")
            if missing:
                lines.append("Missing key(s): " + ", ".join(f"'{n}'" for n in missing) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               + "\n\t".join(lines))
    saved = []
    try:
        for name, value in tensors.items():
            owner, leaf = _owner(module, name)
            for table in (owner._parameters, owner._buffers):
                if leaf in table:
                    saved.append((table, leaf, table[leaf]))
                    table[leaf] = value
                    break
            else:                      # not a parameter or buffer: a plain attribute
                saved.append((owner.__dict__, leaf, owner.__dict__.get(leaf, _MISSING)))
                owner.__dict__[leaf] = value
        return module(*args, **kwargs)
    finally:
        for table, leaf, old in reversed(saved):
            if old is _MISSING:
                del table[leaf]
            else:
                table[leaf] = old


_MISSING = object()


def stack_module_state(models: Any) -> tuple:
    """``(params, buffers)``: each model's parameters and buffers stacked along a new dim 0.

    The stacked parameters are new leaves (they require grad if the
    originals do); use them with ``vmap`` and :func:`functional_call` over a
    copy of one model to run the whole ensemble.
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/"
                           "eval mode.")
    names = [n for n, _ in models[0].named_parameters()]
    params = {}
    for n in names:
        group = [dict(m.named_parameters())[n] for m in models]
        with no_grad():
            stacked = stack([p.detach() for p in group])
        params[n] = stacked.requires_grad_(group[0].requires_grad)
    buffers = {}
    for n, _ in models[0].named_buffers():
        with no_grad():
            buffers[n] = stack([dict(m.named_buffers())[n] for m in models])
    return params, buffers

"""``vmap``: run a function written for one example over a batch.

``vmap(f)(xs)`` is ``stack([f(x) for x in xs])``, and that is exactly how
minitorch computes it: **a Python loop over the batch dimension** followed
by a ``stack``.  PyTorch instead rewrites each op to work on the whole batch
at once (batching rules), which is much faster; the results are the same
(see docs/differences.md).  The loop keeps what vmap means visible:

* ``in_dims`` says, per argument, which dimension is the batch (``None``:
  the argument is shared by every example); it may be nested like the
  arguments (tuples, lists, dicts);
* ``out_dims`` says where the batch dimension goes in each output
  (``None``: the output is the same for every example and is returned once);
* vmaps nest (``vmap(vmap(f))`` loops twice), and gradients flow through
  the slicing and the stacking;
* ``randomness``: ``"different"`` (each example draws its own random
  numbers: the loop's natural behaviour), ``"same"`` (each example replays
  the same random numbers), or ``"error"`` (the default: a random op inside
  raises, detected by the generator's state changing during a call).
"""

from __future__ import annotations

from functools import wraps
from typing import Any, Callable

from .. import random as _random
from ..device import get_default_device
from ..ops.views import stack
from ..tensor import Tensor
from .tree import num_leaves, tree_flatten, tree_unflatten

__all__ = ["vmap"]


def _name(func: Callable) -> str:
    return getattr(func, "__name__", repr(func))


def _broadcast_dims(dims: Any, spec: Any, what: str, func: Callable, all_dims: Any) -> list:
    """One dim per leaf: an int or None covers a whole subtree; else it must match its structure."""
    if dims is None or isinstance(dims, int):
        return [dims] * num_leaves(spec)
    if spec is None:
        raise ValueError(f"vmap({_name(func)}, {what}={all_dims}, ...)(<inputs>): {what} is "
                         f"not compatible with the structure of `inputs`.")
    kind, keys, children = spec
    if keys is not None:
        if not isinstance(dims, dict) or set(dims) != set(keys):
            raise ValueError(f"vmap({_name(func)}, {what}={all_dims}, ...)(<inputs>): {what} is "
                             f"not compatible with the structure of `inputs`.")
        parts = [dims[k] for k in keys]
    else:
        if not isinstance(dims, (tuple, list)) or len(dims) != len(children):
            raise ValueError(f"vmap({_name(func)}, {what}={all_dims}, ...)(<inputs>): {what} is "
                             f"not compatible with the structure of `inputs`.")
        parts = list(dims)
    out = []
    for d, child in zip(parts, children):
        out.extend(_broadcast_dims(d, child, what, func, all_dims))
    return out


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``vmap(f, in_dims, out_dims)``: ``f`` mapped over a batch dimension (a loop; see above)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if not (in_dims is None or isinstance(in_dims, (int, tuple))):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected "
                         f"`in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")

    @wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if in_dims is None or (isinstance(in_dims, tuple) and len(in_dims) != len(args)):
            if in_dims is None:
                raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): "
                                 f"expected `in_dims` to be int or a (potentially nested) tuple "
                                 f"matching the structure of inputs, got: {type(in_dims)}.")
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims "
                             f"is not compatible with the structure of `inputs`. in_dims has "
                             f"structure {in_dims} but inputs has {len(args)} elements.")
        leaves, spec = tree_flatten(args)
        dims = _broadcast_dims(in_dims if isinstance(in_dims, tuple) else in_dims, spec,
                               "in_dims", func, in_dims)
        sizes = []
        for x, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(x, Tensor):
                raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got "
                                 f"in_dim={d} for an input but the input is of type {type(x)}. "
                                 "We cannot vmap over non-Tensor arguments, please use None as "
                                 "the respective in_dim")
            if not -x.dim() <= d < x.dim():
                raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got "
                                 f"in_dim={d} for some input, but that input is a Tensor of "
                                 f"dimensionality {x.dim()} so expected in_dim to satisfy "
                                 f"-{x.dim()} <= in_dim < {x.dim()}.")
            sizes.append(x.shape[d])
        if not sizes:
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): at least "
                             "one input must be mapped over (got all in_dims = None)")
        if len(set(sizes)) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sizes} for the mapped dimension")
        batch = sizes[0]
        generators = _generators(leaves)
        start_states = [g.get_state() for g in generators] if randomness != "different" else None
        results = []
        for b in range(batch):
            if randomness == "same":
                for g, state in zip(generators, start_states):
                    g.set_state(state)
            example = [x.select(d, b) if d is not None else x for x, d in zip(leaves, dims)]
            results.append(func(*tree_unflatten(example, spec), **kwargs))
            if randomness == "error" and _drew(generators, start_states):
                raise RuntimeError("vmap: called random operation while in randomness error "
                                   "mode. Please either use the 'same' or 'different' "
                                   "randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
        return _stack_outputs(results, out_dims, func)

    return wrapped


def _generators(leaves: list) -> list:
    """Every generator an example can draw from: the CPU's, and those of the CUDA devices
    of the inputs and of the default device (made now, before any example draws)."""
    for dev in {x.device for x in leaves if isinstance(x, Tensor)} | {get_default_device()}:
        if dev.type == "cuda":
            _random.cuda_generator(dev)
    return _random.default_generators()


def _drew(generators: list, states: list) -> bool:
    """Did an example draw random numbers (change a generator, or make a new one)?"""
    now = _random.default_generators()
    return len(now) != len(generators) or any(
        not bool((g.get_state() == state).all()) for g, state in zip(generators, states))


def _stack_outputs(results: list, out_dims: Any, func: Callable) -> Any:
    """Stack the examples' outputs leaf by leaf along each leaf's out_dim."""
    if not results:
        raise ValueError(f"vmap({_name(func)}, ...): the mapped dimension has size 0, which "
                         "minitorch's loop cannot map")
    per_example = [tree_flatten(r) for r in results]
    leaves0, spec = per_example[0]
    dims = _broadcast_dims(out_dims, spec, "out_dims", func, out_dims)
    out = []
    for i, d in enumerate(dims):
        first = leaves0[i]
        if d is None:
            out.append(first)
            continue
        if not isinstance(first, Tensor):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return "
                             f"Tensors, got type {type(first)}. Did you mean to set out_dims= "
                             "to None for output?")
        if not -(first.dim() + 1) <= d < first.dim() + 1:
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): Got "
                             f"out_dim={d} for an output, but the output is a Tensor of "
                             f"dimensionality {first.dim()} so expected out_dim to satisfy "
                             f"-{first.dim() + 1} <= out_dim < {first.dim() + 1}.")
        out.append(stack([leaves[i] for leaves, _ in per_example], d))
    return tree_unflatten(out, spec)

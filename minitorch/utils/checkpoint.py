"""Activation checkpointing: trade compute for memory (``minitorch.utils.checkpoint``).

A backward pass needs the intermediate results of the forward pass, so a
deep network keeps every layer's activations alive until backward.
``checkpoint(f, x)`` runs ``f`` *without* recording its graph, keeping only
its inputs; in backward it runs ``f`` again, this time recording, and
backpropagates through that fresh graph.  Memory for ``f``'s insides is
spent only while its gradient is being computed, at the price of a second
forward::

    from minitorch.utils.checkpoint import checkpoint
    h = checkpoint(block, x, use_reentrant=False)    # block's activations are not kept
    loss = head(h).sum()
    loss.backward()                                   # block runs again here

Random ops (dropout) must draw the same numbers both times, so with
``preserve_rng_state=True`` (the default) the generators' states are saved
before the first run and restored for the second.

How it works here: one :class:`CheckpointFunction` node whose ``forward``
runs ``f`` (autograd records nothing inside a Function's forward) and whose
``backward`` re-runs it with recording on and calls ``backward`` on the
result; the gradients reach ``f``'s parameters from that inner backward,
and its inputs' gradients are returned to the outer graph.  This is
PyTorch's reentrant variant.  ``use_reentrant=False`` (PyTorch's
recommendation) uses the same mechanism and adds what PyTorch's
non-reentrant variant offers: keyword arguments, and parameter gradients
even when no input requires grad.  As with PyTorch's reentrant variant,
``autograd.grad`` sees no gradient for parameters used inside the
checkpoint (they go to ``.grad``); see docs/differences.md.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

from .. import random as _random
from ..autograd import engine, grad_mode
from ..autograd.function import Function
from ..ops import creation
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointFunction"]

_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")


def _rng_states(args: tuple) -> tuple:
    """The CPU generator's state and those of the CUDA devices the tensor arguments live on."""
    cuda = {a.device for a in args if isinstance(a, Tensor) and a.device.type == "cuda"}
    return (_random.get_rng_state(),
            {d: _random.cuda_generator(d).get_state() for d in cuda})


def _set_rng_states(states: tuple) -> None:
    cpu, cuda = states
    _random.set_rng_state(cpu)
    for d, s in cuda.items():
        _random.cuda_generator(d).set_state(s)


class CheckpointFunction(Function):
    """One node for a whole checkpointed function: forward runs it, backward re-runs it."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable, preserve_rng_state: bool, _anchor: Any,
                *args: Any) -> Any:
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.rng_states = _rng_states(args)
        # Tensors are saved (version-checked); anything else is kept as it is.
        ctx.tensor_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.others = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_positions))
        return run_function(*args)            # recording is off inside forward

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> tuple:
        args = list(ctx.others)
        inputs = []
        for i, t in zip(ctx.tensor_positions, ctx.saved_tensors):
            x = t.detach().requires_grad_(t.requires_grad)
            args[i] = x
            inputs.append(x)
        if ctx.preserve_rng_state:
            current = _rng_states(tuple(args))
            _set_rng_states(ctx.rng_states)
        try:
            with grad_mode.enable_grad():
                outputs = ctx.run_function(*args)
        finally:
            if ctx.preserve_rng_state:
                _set_rng_states(current)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        engine.backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = [None] * len(args)
        for i, x in zip(ctx.tensor_positions, inputs):
            grads[i] = x.grad
        return (None, None, None) + tuple(grads)


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable | None = None, determinism_check: str = "default",
               debug: bool = False, preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, recomputed in backward instead of kept (see above)."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if context_fn is not None or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    elif kwargs:
        function = functools.partial(function, **kwargs)
    if not grad_mode.is_grad_enabled():
        return function(*args)                 # nothing will be differentiated: just run it
    anchor = None
    if use_reentrant:
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=2)
    elif not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        # The node must be recorded for the parameters inside to get gradients:
        # an empty tensor that requires grad anchors it in the graph.
        anchor = creation.empty(0, requires_grad=True)
    return CheckpointFunction.apply(function, preserve_rng_state, anchor, *args)


def checkpoint_sequential(functions: Any, segments: int, input: Any,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Run a sequence of modules in ``segments`` pieces, checkpointing all but the last."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    functions = list(functions)

    def run_function(start: int, end: int, fns: list) -> Callable:
        def forward(x: Any) -> Any:
            for j in range(start, end + 1):
                x = fns[j](x)
            return x
        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)

"""``minitorch.compile``: trace a function once, then run it as a list of ops with fused kernels.

``torch.compile(model)`` returns a model that computes the same thing,
faster.  minitorch's compiler does it in three steps, each a module of this
package, each small enough to read in one sitting:

1. **Trace** (:mod:`.trace`).  The first call runs the function eagerly
   while a recorder writes down every op it calls, with tensors replaced by
   numbered *values*: a straight-line program, a :class:`~.trace.Graph`.
2. **Rewrite and fuse** (:mod:`.rewrites`, :mod:`.fusion`).  Equivalent
   cheaper orders replace some patterns (``relu`` then ``max_pool2d``
   becomes ``max_pool2d`` then ``relu``), and runs of elementwise ops in the graph
   (``x * w + b``, then ``tanh``) become one *program*, and the CPU backend
   writes and compiles one Numba kernel for it, and one for its derivative
   (``backends/cpu/fused.py``; :func:`generated_source` shows the code).
3. **Replay** (:func:`.trace.replay`).  Later calls with inputs of the same
   kind (the *guards*: shapes, strides, dtypes, devices, ``requires_grad``,
   grad mode, the module's train/eval mode) skip the Python of the function
   and call the recorded ops directly, fused ones included.  Autograd
   records them as usual, so ``loss.backward()`` works as in eager mode.

When a trace cannot be trusted (the function reads tensor values into
Python, modifies tensors in place outside the ops, draws random numbers
outside an op, runs ``backward()``, or a module has hooks), the function
simply runs eagerly for those inputs, as ``torch.compile`` falls back on a
graph break; ``fullgraph=True`` makes that an error instead.
:func:`explain` says what happened.

``backend="inductor"`` (the default) fuses; ``backend="eager"`` (or
``"aot_eager"``) traces and replays without fusing.  A different shape or
dtype traces again: up to :data:`cache_size_limit` versions per function,
as PyTorch's ``torch._dynamo.config.cache_size_limit``.
"""

from __future__ import annotations

import functools
import warnings
import weakref
from dataclasses import replace
from typing import Any, Callable

from ..autograd import grad_mode
from ..autograd.forward_ad import STATE as FORWARD_AD
from ..autocast_mode import STATE as AUTOCAST
from ..device import as_device
from ..nn import Module
from ..ops import kernels
from ..tensor_base import TensorBase
from ..trace_mode import STATE as TRACE
from . import fusion, rewrites, trace as tracing
from .trace import Untraceable

__all__ = ["compile", "is_compiling", "reset", "disable", "OptimizedModule", "Unsupported",
           "explain", "generated_source", "cache_size_limit"]

_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_BACKENDS = ("inductor", "eager", "aot_eager")

#: Versions (traces) kept per compiled function; beyond it, new kinds of input run eagerly.
cache_size_limit = 8


class Unsupported(RuntimeError):
    """``fullgraph=True`` and the function cannot be traced (PyTorch's ``torch._dynamo.exc.Unsupported``)."""


# ---------------------------------------------------------------------------
# Guards: what a trace assumed about its inputs
# ---------------------------------------------------------------------------
class _Unhashable(Exception):
    pass


def _signature(obj: Any, tensors: list, seen: dict) -> Any:
    """A hashable description of ``obj`` for the guards; collects its tensors in order.

    A tensor is described by everything a trace depends on (the same tensor
    passed twice is one input, so aliasing is part of the description).
    Other arguments must be equal for a trace to be reused.
    """
    if isinstance(obj, TensorBase):
        k = seen.get(id(obj))
        if k is None:
            k = seen[id(obj)] = len(tensors)
            tensors.append(obj)
        return ("T", k, obj._shape, obj._stride, obj.dtype, obj.device, obj.requires_grad)
    if type(obj) in (tuple, list):
        return (type(obj).__name__, *(_signature(x, tensors, seen) for x in obj))
    if type(obj) is dict:
        return ("dict", *((k, _signature(v, tensors, seen)) for k, v in obj.items()))
    try:
        hash(obj)
    except TypeError:
        raise _Unhashable() from None
    return ("C", type(obj), obj)


def _module_state(module: Module | None) -> tuple:
    """What a trace of a module assumed about it: train/eval modes, parameter identities, hooks."""
    if module is None:
        return ()
    state = []
    for m in module.modules():
        if m._forward_hooks or m._forward_pre_hooks or m._backward_hooks:
            raise Untraceable(f"{type(m).__name__} has hooks (they would run only while "
                              "tracing)")
        state.append(m.training)
        state.extend(id(p) for p in m._parameters.values())
        state.extend(id(b) for b in m._buffers.values())
    return tuple(state)


def _constants_unchanged(graph: tracing.Graph) -> bool:
    """The constants (parameters...) still have the dtype, shape and flags they were traced with."""
    for k, t in graph.constants.items():
        shape, dt, dev, requires_grad, contiguous = graph.meta[k]
        if (t._shape != shape or t.dtype is not dt or t.device != dev
                or t.requires_grad != requires_grad):
            return False
    return True


# ---------------------------------------------------------------------------
# A compiled function
# ---------------------------------------------------------------------------
class _Compiled:
    """The traces of one function, by guard; see the module docstring."""

    def __init__(self, fn: Callable, module: Module | None, fullgraph: bool, fuse: bool) -> None:
        self.fn = fn
        self.module = module
        self.fullgraph = fullgraph
        self.fuse = fuse
        self.graphs: dict = {}          # guard key -> Graph, or the reason it could not trace
        self.warned = False
        self.eager_reason: str | None = None    # why the last call ran eagerly, if it did

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if TRACE.recorder is not None or AUTOCAST.enabled or FORWARD_AD.enabled:
            # Inside another trace its ops are recorded there; autocast and forward AD
            # change every op: run as written.
            return self.fn(*args, **kwargs)
        tensors: list = []
        try:
            key = (grad_mode.STATE.grad_enabled, _module_state(self.module),
                   _signature((args, kwargs), tensors, {}))
        except (_Unhashable, Untraceable) as e:
            return self._eager(args, kwargs, str(e) or "an argument is not hashable")
        graph = self.graphs.get(key)
        if isinstance(graph, tracing.Graph) and _constants_unchanged(graph):
            return tracing.replay(graph, tensors)
        if isinstance(graph, str):
            return self._eager(args, kwargs, graph)
        if len(self.graphs) >= cache_size_limit:
            if not self.warned:
                warnings.warn(f"minitorch.compile: {getattr(self.fn, '__name__', 'function')} "
                              f"was traced {cache_size_limit} times (cache_size_limit); new "
                              "kinds of input run eagerly")
                self.warned = True
            return self.fn(*args, **kwargs)
        try:
            result, graph = tracing.trace(self.fn, args, kwargs, tensors)
        except Untraceable as e:          # nested in another trace: nothing ran yet
            return self._eager(args, kwargs, str(e))
        if isinstance(graph, str):        # it ran (eagerly, once) but cannot be replayed
            self.graphs[key] = graph
            self.eager_reason = graph
            if self.fullgraph:
                raise Unsupported(f"minitorch.compile(fullgraph=True): cannot trace "
                                  f"{getattr(self.fn, '__name__', 'the function')}: {graph}")
            return result
        if self.fuse:
            graph = fusion.fuse(rewrites.pool_before_relu(graph))
        self.graphs[key] = graph
        return result

    def _eager(self, args: tuple, kwargs: dict, reason: str) -> Any:
        self.eager_reason = reason
        if self.fullgraph:
            raise Unsupported(f"minitorch.compile(fullgraph=True): cannot trace "
                              f"{getattr(self.fn, '__name__', 'the function')}: {reason}")
        return self.fn(*args, **kwargs)


_compiled: weakref.WeakSet = weakref.WeakSet()    # every live _Compiled, for reset()


class OptimizedModule(Module):
    """What ``compile(module)`` returns: calls ``_orig_mod`` through its traces.

    As in PyTorch, the original module is the submodule ``_orig_mod``: the
    parameters are the same tensors, and ``state_dict()`` keys start with
    ``_orig_mod.``.
    """

    def __init__(self, mod: Module, compiled: _Compiled) -> None:
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", compiled)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)


def compile(model: Callable | None = None, *, fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, backend: Any = "inductor", mode: str | None = None,
            options: dict | None = None, disable: bool = False) -> Any:
    """Compile a function or module: trace it on first call, then replay the trace with fused
    elementwise kernels (see the module docstring).  Without ``model``, a decorator.

    ``dynamic`` is accepted and ignored: every new input shape is traced
    anew.  ``mode`` and ``options`` are checked as PyTorch checks them; they
    change nothing here.
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if callable(backend) and not isinstance(backend, str):
        raise NotImplementedError("minitorch.compile: custom backends (callables) are not "
                                  "supported; use backend='inductor' or 'eager'")
    if backend not in _BACKENDS:
        raise RuntimeError(f"invalid backend {backend!r}: minitorch.compile supports "
                           f"{', '.join(map(repr, _BACKENDS))}")
    if model is None:
        def decorator(fn: Callable) -> Callable:
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, disable=disable)
        return decorator
    if not callable(model):
        raise RuntimeError("model must be callable")
    if disable:
        return model
    fuse = backend == "inductor"
    if isinstance(model, Module):
        compiled = _Compiled(model.__call__, model, fullgraph, fuse)
        _compiled.add(compiled)
        return OptimizedModule(model, compiled)
    compiled = _Compiled(model, None, fullgraph, fuse)
    _compiled.add(compiled)

    @functools.wraps(model)
    def compiled_function(*args: Any, **kwargs: Any) -> Any:
        return compiled(*args, **kwargs)
    compiled_function._minitorch_compiled = compiled
    return compiled_function


def is_compiling() -> bool:
    """Is a function being traced right now (PyTorch: ``torch.compiler.is_compiling``)?"""
    return TRACE.recorder is not None


def reset() -> None:
    """Forget every trace: the next call of each compiled function traces again."""
    for c in _compiled:
        c.graphs.clear()
        c.warned = False
        c.eager_reason = None


def disable(fn: Callable | None = None, recursive: bool = True) -> Any:
    """Run ``fn`` as written.  (Its ops still join the trace of a compiled caller.)"""
    if fn is None:
        return lambda f: f
    return fn


def _compiled_of(obj: Any) -> _Compiled:
    compiled = getattr(obj, "_compiled", None) or getattr(obj, "_minitorch_compiled", None)
    if not isinstance(compiled, _Compiled):
        raise TypeError("expected what minitorch.compile returned")
    return compiled


def explain(compiled: Any) -> str:
    """What ``compiled`` (a result of :func:`compile`) has traced, per kind of input.

    For each trace: how many ops it replays, which of them are fused
    programs; or why it could not trace and runs eagerly.
    """
    lines = []
    state = _compiled_of(compiled)
    for i, graph in enumerate(state.graphs.values()):
        if isinstance(graph, str):
            lines.append(f"trace {i}: runs eagerly: {graph}")
            continue
        names = [c.fn.__name__ for c in graph.calls]
        programs = fusion.programs(graph)
        lines.append(f"trace {i}: {len(graph.calls)} ops ({', '.join(names)}); "
                     f"{len(programs)} fused program(s) of "
                     f"{', '.join(str(len(p.body)) for p in programs) or 0} op(s)")
    if state.eager_reason and not any(g == state.eager_reason for g in state.graphs.values()):
        lines.append(f"the last call that ran eagerly: {state.eager_reason}")
    return "\n".join(lines) or "nothing traced yet"


def generated_source(compiled: Any, index: int = 0, device: Any = "cpu") -> str:
    """The Python source Numba compiles for fused program ``index`` of ``compiled``'s traces,
    on ``device``'s backend (its forward file, then its backward file)."""
    programs = [p for g in _compiled_of(compiled).graphs.values()
                if isinstance(g, tracing.Graph) for p in fusion.programs(g)]
    if not programs:
        raise ValueError("no fused program: call the compiled function first (with inputs "
                         "whose elementwise ops can fuse)")
    program = programs[index]
    # The forward file, then the backward file for the gradients of every input.
    backward = replace(program, grads_for=tuple(range(program.n_inputs)))
    dev = as_device(device)
    return (kernels.fused_elementwise_source(program, dev) + "\n\n"
            + kernels.fused_elementwise_source(backward, dev))

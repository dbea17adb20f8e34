"""``autograd.Function``: an operation with a hand-written backward.

Subclass it with two static methods::

    class MultiplyAdd(Function):
        @staticmethod
        def forward(ctx, w, x, b):
            ctx.save_for_backward(w, x)
            return w * x + b

        @staticmethod
        def backward(ctx, grad_output):
            w, x = ctx.saved_tensors
            return grad_output * x, grad_output * w, grad_output

    y = MultiplyAdd.apply(w, x, b)

``apply`` runs ``forward`` with recording switched off, then (if any input
requires grad) records one graph node for the whole operation.  The node and
``ctx`` are the same object: whatever ``forward`` stores on ``ctx`` is there
when ``backward`` runs.  Every built-in op of minitorch is such a Function,
so the graph a student draws by hand is exactly the graph minitorch builds.
"""

from __future__ import annotations

import traceback
from typing import Any

from . import forward_ad, grad_mode
from .anomaly_mode import STATE as ANOMALY
from .forward_ad import STATE as FORWARD_AD
from .. import autocast_mode
from ..autocast_mode import STATE as AUTOCAST
from ..trace_mode import STATE as TRACE
from ..tensor_base import TensorBase
from .graph import Node, edge_of, freed_error

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]


class FunctionCtx:
    """What ``forward`` can use on ``ctx`` (the node itself carries these methods)."""

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep tensors for ``backward``; autograd checks they are not modified in place."""
        self._to_save = tensors

    def mark_dirty(self, *tensors: Any) -> None:
        """Declare inputs that ``forward`` modified in place."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Declare outputs that have no gradient (such as indices)."""
        self._non_differentiable = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        """Keep tensors for a custom ``jvp`` (forward-mode AD); read them as ``ctx.saved_tensors``."""
        self._saved_for_forward = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """If False, ``backward`` receives ``None`` (not zeros) for unused outputs."""
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The graph node (and ``ctx``) of one call of a Function."""

    _forward_cls: Any = None
    # Per-node state, with its defaults on the class (see Node).
    _to_save: tuple = ()
    _saved: list | None = None
    _freed = False
    _dirty: tuple = ()
    _non_differentiable: tuple = ()
    materialize_grads = True
    needs_input_grad: tuple = ()
    _output_meta: tuple = ()
    _edge_pos: tuple = ()

    # -- saved tensors -----------------------------------------------------
    @property
    def saved_tensors(self) -> tuple:
        if self._freed:
            raise freed_error()
        if self._saved is None:
            return tuple(self._to_save)
        out = []
        for t, version in self._saved:
            if t is not None and t._version_counter.value != version:
                # Like PyTorch, name the node that (now) produces the tensor.
                made_by = (f", which is output {t._output_nr} of {t.grad_fn.name()},"
                           if t.grad_fn is not None else "")
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [{t.type()} {list(t._shape)}]{made_by} is at version "
                    f"{t._version_counter.value}; "
                    f"expected version {version} instead. Hint: the backtrace further above "
                    "can point at the operation that failed to compute its gradient. The "
                    "variable in question was changed in there or anywhere later. Good luck!")
            out.append(t)
        return tuple(out)

    saved_variables = saved_tensors

    def _release(self) -> None:
        self._saved = None
        self._to_save = ()
        self._freed = True

    # -- backward ----------------------------------------------------------
    def apply(self, *grads: Any) -> tuple:
        # (One output with its gradient, the commonest node, has nothing to fill in.)
        if self.materialize_grads and (len(grads) != 1 or grads[0] is None):
            grads = tuple(g if g is not None else _zeros_like_meta(meta)
                          for g, meta in zip(grads, self._output_meta))
        result = self._forward_cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        # ``backward`` returns one gradient per argument of ``forward``; the
        # graph has edges only for some of them (see ``_apply``).
        n_inputs = len(self.needs_input_grad)
        n = len(result)
        # PyTorch's rule: one gradient per input of forward (extra ones must be None).  A
        # user's Function is held to it, so a backward that forgets a gradient fails here,
        # not later with a wrong answer; minitorch's own ops may leave out trailing Nones.
        if (n > n_inputs and any(r is not None for r in result[n_inputs:])) or (
                n < n_inputs and not self._forward_cls.__module__.startswith("minitorch.")):
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {n_inputs}, got {n})")
        return tuple([result[i] if i < n else None for i in self._edge_pos])


def _zeros_like_meta(meta: Any) -> Any:
    shape, dt, dev = meta
    t = TensorBase._empty(shape, dt, dev)
    t._backend.fill(t._operand(), 0)
    return t


class _FunctionMeta(type):
    """Gives each Function subclass its node class, named like PyTorch's."""

    def __init__(cls, name: str, bases: tuple, attrs: dict) -> None:
        super().__init__(name, bases, attrs)
        node_name = attrs.get("_backward_name") or f"{name}Backward"
        cls._backward_cls = type(node_name, (BackwardCFunction,),
                                 {"_forward_cls": cls, "_node_name": node_name,
                                  "__module__": cls.__module__})


class Function(metaclass=_FunctionMeta):
    """Base class for operations with a custom backward; see the module docstring."""

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function (abstract).")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement the backward function for custom "
                                  "autograd.Function (abstract).")

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """Forward mode (``autograd.forward_ad``): the output tangents from the input tangents."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    # Argument positions that get no graph edge even when given a tensor, and
    # positions that get an edge even when given a Python number (see _apply).
    _nondiff_args: tuple = ()
    _number_edges: tuple = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        if TRACE.recorder is not None:     # a compiler tracing a function writes the call down
            return TRACE.recorder.apply(cls, args, kwargs, _apply)
        return _apply(cls, args, kwargs)


# (Function class, which arguments are tensors) -> argument positions that get
# a graph edge: the same few patterns recur for every call of an op.
_EDGE_POSITIONS: dict = {}


def _apply(cls: Any, args: tuple, kwargs: dict) -> Any:
    """Run ``cls.forward`` and, if needed, record the node; see the module docstring.

    Two modes change how every op is applied, each for one attribute check
    while it is off: autocast (``autocast_mode.py``) casts the inputs by the
    op's precision policy, and forward-mode AD (``forward_ad.py``) gives the
    outputs tangents.  (A third, a compiler's trace (``trace_mode.py``), is
    checked in ``Function.apply``, so that an op pays no extra call for it.)
    """
    if AUTOCAST.enabled:
        args = autocast_mode.cast_inputs(cls, args)
    if FORWARD_AD.enabled:
        return forward_ad.apply_with_tangents(cls, cls._backward_cls(), args, kwargs, _record)
    return _record(cls, cls._backward_cls(), args, kwargs)


def _record(cls: Any, ctx: Any, args: tuple, kwargs: dict) -> Any:
    """Run ``cls.forward`` with ``ctx`` and, if any input requires grad, record ``ctx`` as the node."""
    state = grad_mode.STATE
    recording = state.grad_enabled
    if recording:
        # requires_grad, read without the property: a leaf that asks for it,
        # or any tensor with history.
        # (``_grad_fn`` is None exactly when the ``grad_fn`` property is.)
        # (A list comprehension, then a tuple: quicker than a generator.)
        needs = tuple([isinstance(a, TensorBase) and (a._requires_grad or a._grad_fn is not None)
                       for a in args])
        state.grad_enabled = False
    else:
        needs = (False,) * len(args)
    ctx.needs_input_grad = needs
    try:
        outputs = cls.forward(ctx, *args, **kwargs)
    finally:
        state.grad_enabled = recording
    dirty = ctx._dirty
    for t in dirty:
        t._bump_version()
    if not recording or True not in needs:
        return outputs
    is_tuple = isinstance(outputs, tuple)
    outs = outputs if is_tuple else (outputs,)
    # One edge per tensor argument, as in PyTorch (non-tensor arguments such as
    # dims or flags get none); an op may list argument positions that are
    # never differentiable (``_nondiff_args``), or positions where a Python
    # number still counts as an operand (``_number_edges``: ``x * 2`` has two).
    kinds = tuple([isinstance(a, TensorBase) for a in args])
    edge_pos = _EDGE_POSITIONS.get((cls, kinds))
    if edge_pos is None:
        edge_pos = _EDGE_POSITIONS[(cls, kinds)] = tuple(
            i for i, is_tensor in enumerate(kinds)
            if (is_tensor and i not in cls._nondiff_args)
            or (i in cls._number_edges and not is_tensor))
    ctx._edge_pos = edge_pos
    ctx.next_functions = tuple([edge_of(args[i]) if kinds[i] else (None, 0) for i in edge_pos])
    non_diff = ctx._non_differentiable
    meta = []
    new_outs = []
    for i, out in enumerate(outs):
        if not isinstance(out, TensorBase):
            meta.append(None)
            new_outs.append(out)
            continue
        meta.append((out._shape, out.dtype, out.device))
        if non_diff and any(out is nd for nd in non_diff) or not out.dtype.is_floating_point:
            # Only floating-point tensors can require grad: an integer or bool
            # output (``x.long()``, ``x > 0``) is a plain tensor, as in PyTorch.
            new_outs.append(out)
            continue
        if dirty and any(out is d for d in dirty):
            if out.grad_fn is None and out._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad is being used in an "
                                   "in-place operation.")
        else:
            for a in args:
                if out is a:
                    # forward returned an input unchanged: the output is a new
                    # tensor object (an alias) so the input keeps its history.
                    out = out._alias()
                    break
        out._grad_fn = ctx                         # (the grad_fn setter, inlined)
        out._grad_fn_version = out._version_counter.value
        out._output_nr = i
        new_outs.append(out)
    ctx._output_meta = meta
    ctx._saved = [(t, t._version_counter.value) if t is not None else (None, 0)
                  for t in ctx._to_save]
    if ANOMALY.enabled:
        ctx._anomaly_trace = "".join(traceback.format_stack()[:-2])
    return tuple(new_outs) if is_tuple else new_outs[0]


def once_differentiable(fn: Any) -> Any:
    """Decorator for a backward that cannot itself be differentiated (runs without recording)."""
    import functools

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with grad_mode.no_grad():
            return fn(ctx, *args)
    wrapper._once_differentiable = True     # forward_ad: no jvp can be derived from it
    return wrapper

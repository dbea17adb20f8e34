"""Tracing: run a function once, write down every op it calls, replay the list.

Every op of minitorch is an ``autograd.Function``, and every call goes
through ``Function.apply``.  While a :class:`Recorder` is installed
(``trace_mode.STATE.recorder``), ``apply`` hands each call to
:meth:`Recorder.apply`, which runs it and appends a :class:`Call` to the
trace: *which* Function, with *which* arguments.  Tensors in the arguments
are not stored; they are replaced by :class:`Ref`\\ s, numbers of *values*:

* the function's tensor inputs are values ``0 .. n-1``;
* a tensor that existed before the trace began (a parameter, a tensor in
  a global) is a *constant*: the graph keeps a reference to it, so it sees
  the new values after ``optimizer.step()``;
* each op's result tensors are new values.

The result is a :class:`Graph`: a straight-line program over values.
:func:`replay` runs it for new inputs by calling each Function's ``apply``
again, so autograd records exactly the graph eager code would: a compiled
forward has an ordinary backward.

A trace is only valid if the function would call the same ops for the new
inputs.  The guards in :mod:`minitorch.compiler` check what the trace
assumed (shapes, dtypes, devices, ``requires_grad``, grad mode, the
module's train/eval mode).  The recorder gives up, and the function runs
eagerly, when it sees what it cannot replay:

* Python reading tensor values (``.item()``, ``if (x > 0).any():``): the
  ops after that depend on the data;
* a tensor computed outside the recorded ops (an in-place op, or ``.data``
  arithmetic), found by its storage's serial number or version counter;
* random numbers drawn outside an op's ``forward``;
* ``backward()`` inside the function.

Python side effects (appending to a list, printing) are not ops: they
happen while tracing and not on replay.  This is ``torch.jit.trace``'s
contract; PyTorch's ``torch.compile`` replays them too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .. import random as mt_random
from ..storage import storage_serial_now
from ..tensor_base import TensorBase
from ..trace_mode import STATE as TRACE

__all__ = ["Ref", "Call", "Graph", "Recorder", "Untraceable", "trace", "replay"]


class Untraceable(Exception):
    """The function did something a trace cannot replay (the message says what)."""


@dataclass(frozen=True)
class Ref:
    """Value number ``index`` of a graph, standing for a tensor in a template."""

    index: int


@dataclass
class Call:
    """One recorded op: ``fn.apply(*args, **kwargs)``, tensors as :class:`Ref`\\ s.

    ``fn`` is a ``Function`` class, or a factory function (``zeros``, ``randn``:
    see ``trace_mode.recorded``), called as ``fn(*args, **kwargs)``.

    ``outputs`` is the result with its tensors as refs (a ref, or a tuple).
    """

    fn: Any
    args: tuple
    kwargs: dict
    outputs: Any
    mutates: bool = False       # did it modify a tensor in place (``x.add_(1)``)?


@dataclass
class Graph:
    """A traced function: ``calls`` over values; see the module docstring.

    ``meta[k]`` is ``(shape, dtype, device, requires_grad, is_contiguous)``
    of value ``k`` when it was traced; ``constants`` maps value numbers to the tensors
    captured by reference.
    """

    n_inputs: int
    constants: dict
    calls: list
    output: Any
    meta: list
    plan: list | None = None     # the calls prepared for replay (made on the first one)

    def n_values(self) -> int:
        return len(self.meta)


def _meta(t: TensorBase) -> tuple:
    return (t._shape, t.dtype, t.device, t.requires_grad, t.is_contiguous())


def _rng_state() -> tuple:
    """Where the default generators' streams stand (they move when numbers are drawn)."""
    return tuple(g._offset for g in mt_random.default_generators())


def _has_tensor(obj: Any) -> bool:
    if isinstance(obj, TensorBase):
        return True
    if isinstance(obj, (tuple, list)):
        return any(_has_tensor(x) for x in obj)
    if isinstance(obj, dict):
        return any(_has_tensor(x) for x in obj.values())
    return False


class Recorder:
    """Writes down the ops of one run; installed in ``trace_mode.STATE`` by :func:`trace`."""

    def __init__(self) -> None:
        self._values: dict = {}       # id(tensor) -> value number
        self._tensors: list = []      # value number -> tensor (keeps ids unique)
        self._versions: list = []     # value number -> version when last seen
        self.meta: list = []
        self.constants: dict = {}
        self.calls: list = []
        self.depth = 0
        self.failure: str | None = None
        self._first_serial = storage_serial_now()
        self._rng = _rng_state()

    # -- values ---------------------------------------------------------
    def _new_value(self, t: TensorBase) -> Ref:
        k = len(self._tensors)
        self._values[id(t)] = k
        self._tensors.append(t)
        self._versions.append(t._version_counter.value)
        self.meta.append(_meta(t))
        return Ref(k)

    def add_input(self, t: TensorBase) -> Ref:
        return self._new_value(t)

    def _ref(self, t: TensorBase) -> Ref:
        k = self._values.get(id(t))
        if k is not None:
            return Ref(k)
        if t._storage._serial >= self._first_serial:
            raise Untraceable(
                f"a tensor of shape {list(t._shape)} was computed outside the recorded ops "
                "(an in-place op, .data or .detach() arithmetic, or a factory such as "
                "minitorch.zeros inside the function)")
        ref = self._new_value(t)
        self.constants[ref.index] = t
        return ref

    def template(self, obj: Any) -> Any:
        """``obj`` with its tensors replaced by refs (new constants for unknown old tensors)."""
        if isinstance(obj, TensorBase):
            return self._ref(obj)
        if callable(obj) and any(isinstance(c.cell_contents, TensorBase)
                                 for c in getattr(obj, "__closure__", None) or ()):
            # A function argument (``lambda x: x * mask``) that holds a tensor would
            # hold this run's tensor on every replay.
            raise Untraceable("an op was given a function that captures a tensor")
        if type(obj) in (tuple, list) and _has_tensor(obj):
            return type(obj)(self.template(x) for x in obj)
        if type(obj) is dict and _has_tensor(obj):
            return {k: self.template(v) for k, v in obj.items()}
        return obj

    def _define(self, obj: Any) -> Any:
        """Results of a call: every tensor becomes a new value (even an input returned as is)."""
        if isinstance(obj, TensorBase):
            return self._new_value(obj)
        if type(obj) in (tuple, list):
            return type(obj)(self._define(x) for x in obj)
        return obj

    def check_unchanged(self) -> None:
        """No tensor known to the trace was modified, and no random numbers drawn, between ops."""
        for k, t in enumerate(self._tensors):
            if t._version_counter.value != self._versions[k]:
                raise Untraceable(f"a tensor of shape {list(t._shape)} was modified in place "
                                  "outside the recorded ops")
        if _rng_state() != self._rng:
            raise Untraceable("random numbers were drawn outside the recorded ops")

    # -- hooks called by the ops ---------------------------------------------
    def apply(self, cls: Any, args: tuple, kwargs: dict, run: Callable) -> Any:
        """Run one op (``run(cls, args, kwargs)``) and, at the top level, record it."""
        return self._record(cls, lambda *a, **k: run(cls, a, k), args, kwargs)

    def call(self, fn: Callable, args: tuple, kwargs: dict) -> Any:
        """Run one factory (``trace_mode.recorded``) and, at the top level, record it."""
        return self._record(fn, fn, args, kwargs)

    def _record(self, fn: Any, run: Callable, args: tuple, kwargs: dict) -> Any:
        if self.depth or self.failure:
            return run(*args, **kwargs)           # inside another op: part of that op
        try:
            self.check_unchanged()
            call = Call(fn, self.template(args), self.template(kwargs), None)
        except Untraceable as e:
            self.give_up(str(e))
            return run(*args, **kwargs)
        self.depth += 1
        try:
            out = run(*args, **kwargs)
        finally:
            self.depth -= 1
        for k, t in enumerate(self._tensors):     # an in-place op modifies its input
            version = t._version_counter.value
            if version != self._versions[k]:
                self._versions[k] = version
                call.mutates = True
        self._rng = _rng_state()                  # dropout's forward draws: it replays too
        call.outputs = self._define(out)
        self.calls.append(call)
        return out

    def data_read(self, t: TensorBase) -> None:
        """Python is reading a tensor's values: what the function does next may depend on them.

        Any tensor, a parameter too: ``if self.scale.item() > 0:`` would bake
        today's branch into the trace, and the optimizer changes the scale.
        """
        if not self.depth and not self.failure:
            self.give_up("Python read the values of a tensor (.item(), .tolist(), bool(), "
                         "printing...): what follows depends on the data")

    def give_up(self, reason: str) -> None:
        if self.failure is None:
            self.failure = reason


def trace(fn: Callable, args: tuple, kwargs: dict, inputs: list) -> tuple[Any, Graph | str]:
    """Run ``fn(*args, **kwargs)`` once, recording its ops.

    ``inputs`` are the tensors found in the arguments, in the order the
    guards flatten them: they become values ``0 .. len(inputs)-1``.
    Returns ``(result, graph)``: the result of this run (an ordinary eager
    run: recording changes nothing), and the trace, or a string saying why
    the run cannot be replayed.  The result is good either way, so a
    function that cannot be traced still runs only once (its in-place
    updates, BatchNorm's running statistics say, happen once).
    """
    if TRACE.recorder is not None:
        raise Untraceable("a compiled function called inside another one's trace")
    recorder = Recorder()
    for t in inputs:
        recorder.add_input(t)
    TRACE.recorder = recorder
    try:
        result = fn(*args, **kwargs)
    finally:
        TRACE.recorder = None
    output = None
    if recorder.failure is None:
        try:
            recorder.check_unchanged()
            output = recorder.template(result)
        except Untraceable as e:
            recorder.give_up(str(e))
    if recorder.failure is not None:
        return result, recorder.failure
    return result, Graph(n_inputs=len(inputs), constants=recorder.constants,
                         calls=recorder.calls, output=output, meta=recorder.meta)


def refs(template: Any) -> list:
    """The refs in a template, in order."""
    if isinstance(template, Ref):
        return [template]
    if isinstance(template, (tuple, list)):
        return [r for x in template for r in refs(x)]
    if isinstance(template, dict):
        return [r for x in template.values() for r in refs(x)]
    return []


def fill(template: Any, env: list) -> Any:
    """A template with each ref replaced by its value from ``env``."""
    if isinstance(template, Ref):
        return env[template.index]
    if type(template) in (tuple, list):
        return type(template)(fill(x, env) for x in template)
    if type(template) is dict:
        return {k: fill(v, env) for k, v in template.items()}
    return template


def bind(template: Any, value: Any, env: list) -> None:
    """Store the tensors of an op's result ``value`` at the refs of ``template``."""
    if isinstance(template, Ref):
        env[template.index] = value
    elif type(template) in (tuple, list):
        for t, v in zip(template, value):
            bind(t, v, env)


def _plan(graph: Graph) -> list:
    """Each call as ``(run, argument slots, kwargs, output)``, made once per graph.

    An argument slot is ``(True, value number)`` for a tensor and ``(False,
    object)`` for anything else; a call whose arguments nest tensors in
    lists (``cat([a, b])``) keeps its template (``None`` slots).  Replaying
    the plan is a loop of list lookups: the Python a replay saves (module
    calls, argument checks) is not spent again on rebuilding arguments.
    """
    plan = []
    for call in graph.calls:
        run = call.fn.apply if isinstance(call.fn, type) else call.fn   # Function, or factory
        flat = type(call.args) is tuple and not any(
            type(a) in (tuple, list, dict) and refs(a) for a in call.args)
        slots = tuple((True, a.index) if isinstance(a, Ref) else (False, a)
                      for a in call.args) if flat else None
        out = call.outputs.index if isinstance(call.outputs, Ref) else call.outputs
        plan.append((run, slots, call.args, call.kwargs if refs(call.kwargs) else None,
                     call.kwargs, out))
    return plan


def replay(graph: Graph, inputs: list) -> Any:
    """Run ``graph`` on new input tensors (in the order they were numbered)."""
    env: list = [None] * graph.n_values()
    env[:len(inputs)] = inputs
    for k, t in graph.constants.items():
        env[k] = t
    plan = graph.plan
    if plan is None:
        plan = graph.plan = _plan(graph)
    for run, slots, args, kw_template, kwargs, out in plan:
        if slots is not None:
            args = [env[v] if is_ref else v for is_ref, v in slots]
        else:
            args = fill(args, env)
        result = run(*args, **(fill(kw_template, env) if kw_template is not None else kwargs))
        if type(out) is int:
            env[out] = result
        else:
            bind(out, result, env)
    return fill(graph.output, env)

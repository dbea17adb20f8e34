"""Is a compiler watching?  The one switch :mod:`minitorch.compiler` turns on while it traces.

``minitorch.compile(fn)`` learns what ``fn`` computes by running it once and
writing down every op it calls (a *trace*).  The ops themselves report to it:
``autograd.Function.apply`` hands each call to ``STATE.recorder`` while one
is set.  Two other places tell the recorder about things it cannot replay:

* reading a tensor's values into Python (``item()``, ``tolist()``,
  ``numpy()``, ``if t:``) makes the rest of ``fn`` depend on the data, so
  the trace is only good for these exact values
  (:func:`note_data_read`, called by ``TensorBase._host_array``);
* running autograd's backward inside ``fn`` (:func:`note_untraceable`).

Functions that make new tensors without being a ``Function`` (the factories
``zeros``, ``full``, ``randn``, ``bernoulli``...) are wrapped in
:func:`recorded`, so the recorder writes their calls down too.

While nobody traces, each check costs one attribute read.  This module sits
low in the layers (beside ``tensor_base``) so that every layer above can
report; it holds state only, no logic.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

__all__ = ["STATE", "note_data_read", "note_untraceable", "recorded"]


class _TraceState:
    """``recorder``: the object tracing now (``None`` almost always)."""

    __slots__ = ("recorder",)

    def __init__(self) -> None:
        self.recorder: Any = None


STATE = _TraceState()


def note_data_read(tensor: Any) -> None:
    """Tell the recorder (if any) that Python is reading ``tensor``'s values."""
    recorder = STATE.recorder
    if recorder is not None:
        recorder.data_read(tensor)


def note_untraceable(reason: str) -> None:
    """Tell the recorder (if any) that something it cannot replay happened."""
    recorder = STATE.recorder
    if recorder is not None:
        recorder.give_up(reason)


def recorded(fn: Callable) -> Callable:
    """Decorator: calls of ``fn`` (a tensor factory) are written down by a tracing recorder.

    ``minitorch.zeros(...)`` inside a compiled function must run again on
    every replay (``randn`` must draw new numbers); without this, the trace
    would see a tensor appear from nowhere.  Costs one function call when
    nobody traces.
    """
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        recorder = STATE.recorder
        if recorder is None:
            return fn(*args, **kwargs)
        return recorder.call(fn, args, kwargs)
    return wrapper

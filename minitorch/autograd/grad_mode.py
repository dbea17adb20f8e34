"""Switches that turn the recording of the autograd graph off and on.

While grad mode is off, operations still compute their results but build no
graph: their outputs have ``requires_grad=False`` and no ``grad_fn``.  Use
this for inference and for updating parameters by hand::

    with minitorch.no_grad():
        w -= lr * w.grad

Each switch works as a context manager and as a function decorator.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled"]


class _State:
    grad_enabled = True
    inference = False


STATE = _State()


def is_grad_enabled() -> bool:
    """Whether operations are being recorded for autograd right now."""
    return STATE.grad_enabled


def backward_builds_graph() -> bool:
    """Must the backward running now build its gradients from recorded ops?

    Inside a backward pass grad mode is on only under ``backward(create_graph=True)``
    (or ``autograd.grad(..., create_graph=True)``): the gradients will themselves be
    differentiated, so they must be built from ops that record a graph, the op's
    derivative *formula*.  Otherwise nothing will differentiate them, and a backward
    may take a faster route that records nothing: one kernel instead of the
    formula's several ops and the tensors between them.

    The backwards with two routes ask this, so that each says why in one place:
    ``relu`` (``threshold_backward``: no mask tensor), ``conv2d`` (the direct
    convolution's own backward kernel), the softmax-family reductions of
    ``ops/reduction.py``, and the linear layer (course task 4.1, which asks
    ``is_grad_enabled()``: the same question).  The formula route is also what the
    compiler reads as a fused kernel's derivative (``compiler/derivative_source.py``).
    """
    return STATE.grad_enabled


def is_inference_mode_enabled() -> bool:
    return STATE.inference


class _GradModeSwitch:
    """Base: set the mode on entry, restore the previous mode on exit."""

    enabled = True

    def __enter__(self) -> None:
        # Task 3.3: inside the with block, recording is on exactly when self.enabled is True;
        # __exit__ puts back the mode from before the block (it reads self._prev).
        ### BEGIN SOLUTION
        self._prev = STATE.grad_enabled
        STATE.grad_enabled = self.enabled
        ### END SOLUTION

    def __exit__(self, *exc: Any) -> None:
        STATE.grad_enabled = self._prev

    def __call__(self, fn: Callable) -> Callable:
        switch = type(self)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with switch():     # a fresh switch per call, so recursion nests correctly
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradModeSwitch):
    """Context manager and decorator that disables gradient recording.

    Usable as ``with no_grad():``, ``@no_grad()`` and bare ``@no_grad``.
    """

    enabled = False

    def __new__(cls, orig_func: Callable | None = None):
        self = super().__new__(cls)
        return self(orig_func) if callable(orig_func) else self

    def __init__(self, orig_func: Callable | None = None) -> None:
        pass


class enable_grad(no_grad):
    """Context manager and decorator that enables gradient recording inside ``no_grad``."""

    enabled = True


class set_grad_enabled(_GradModeSwitch):
    """Set grad mode to ``mode``; takes effect at once, and as a context manager it restores."""

    def __init__(self, mode: bool) -> None:
        self.enabled = bool(mode)
        _GradModeSwitch.__enter__(self)       # takes effect at once

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        STATE.grad_enabled = self._prev

    def __call__(self, fn: Callable) -> Callable:
        STATE.grad_enabled = self._prev   # as a decorator it must not change the mode now
        mode = self.enabled

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper


class inference_mode(_GradModeSwitch):
    """Like ``no_grad``, for code that will never need gradients (``mode=False`` turns it off)."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)
        self.enabled = not self.mode

    def __new__(cls, mode: Any = True):
        self = super().__new__(cls)
        if callable(mode):
            self.__init__(True)
            return self(mode)
        return self

    def __enter__(self) -> None:
        self._prev_inf = STATE.inference
        if not self.mode:
            self.enabled = STATE.grad_enabled     # inference_mode(False) keeps the grad mode
        super().__enter__()
        STATE.inference = self.mode

    def __exit__(self, *exc: Any) -> None:
        STATE.grad_enabled = self._prev
        STATE.inference = self._prev_inf

    def __call__(self, fn: Callable) -> Callable:
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper

"""``minitorch.compile``: PyTorch's ``torch.compile``, for now the identity.

``torch.compile(model)`` traces a model and generates fused kernels for it.
minitorch does not (yet) compile: ``minitorch.compile(model)`` checks its
arguments as PyTorch does and returns ``model`` itself, so code written for
PyTorch runs unchanged, at eager speed (see docs/differences.md).
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["compile", "is_compiling", "reset", "disable"]

_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile(model: Callable | None = None, *, fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, backend: Any = "inductor", mode: str | None = None,
            options: dict | None = None, disable: bool = False) -> Any:
    """Return ``model`` unchanged (a decorator when called without it); arguments are checked."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if model is None:
        def decorator(fn: Callable) -> Callable:
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, disable=disable)
        return decorator
    if not callable(model):
        raise RuntimeError("model must be callable")
    return model


def is_compiling() -> bool:
    """Whether code is being traced by the compiler: never, in minitorch."""
    return False


def reset() -> None:
    """Forget compiled code (there is none)."""


def disable(fn: Callable | None = None, recursive: bool = True) -> Any:
    """Run ``fn`` without compiling it (which is how everything runs)."""
    if fn is None:
        return lambda f: f
    return fn

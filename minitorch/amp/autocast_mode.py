"""``minitorch.autocast``: the context manager that turns mixed precision on.

::

    with minitorch.autocast("cpu", dtype=minitorch.bfloat16):
        out = model(x)              # matmuls/convs in bfloat16, losses in float32
    loss.backward()                 # outside the region, as PyTorch recommends

The region only sets state; the per-op decision (which ops go down to the
16-bit type, which up to float32) lives in one place,
:mod:`minitorch.autocast_mode`, consulted by every op as it is applied.
Regions nest (an inner ``autocast(enabled=False)`` switches it off for a
block) and work as decorators.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

from .. import autocast_mode as policy
from ..cuda import is_available as cuda_is_available
from ..dtype import as_dtype, bfloat16, float16

__all__ = ["autocast", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype",
           "set_autocast_enabled", "set_autocast_dtype", "is_autocast_cache_enabled",
           "set_autocast_cache_enabled", "clear_autocast_cache"]

_SUPPORTED = {"cpu": (bfloat16, float16), "cuda": (float16, bfloat16)}


def is_autocast_available(device_type: str) -> bool:
    return device_type in _SUPPORTED


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` (PyTorch's default: ``"cuda"``)."""
    return policy.STATE.devices.get(device_type or "cuda", (False, None))[0]


def get_autocast_dtype(device_type: str) -> Any:
    return policy.STATE.devices[device_type][1]


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    policy.STATE.devices[device_type][0] = bool(enabled)
    policy.STATE.refresh()


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    policy.STATE.devices[device_type][1] = as_dtype(dtype)


def is_autocast_cache_enabled() -> bool:
    return policy.STATE.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    policy.STATE.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    policy.clear_cache()


class autocast:
    """``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``.

    ``dtype`` defaults to bfloat16 on ``"cpu"`` and float16 on ``"cuda"``.
    An unsupported dtype, or ``"cuda"`` without a GPU, warns and disables the
    region, as in PyTorch.
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _SUPPORTED:
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        self.device = device_type
        self.fast_dtype = (as_dtype(dtype) if dtype is not None
                           else policy.STATE.devices[device_type][1])
        self._cache_enabled = (policy.STATE.cache_enabled if cache_enabled is None
                               else bool(cache_enabled))
        self._enabled = bool(enabled)
        if self._enabled and self.fast_dtype not in _SUPPORTED[device_type]:
            names = ", ".join(f"torch.{d.name}" for d in _SUPPORTED[device_type])
            warnings.warn(f"In {device_type.upper()} autocast, but the target dtype is not "
                          f"supported. Disabling autocast.\n{device_type.upper()} Autocast only "
                          f"supports dtypes of {names} currently.", stacklevel=2)
            self._enabled = False
        if self._enabled and device_type == "cuda" and not cuda_is_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                          stacklevel=2)
            self._enabled = False

    def __enter__(self) -> None:
        state = policy.STATE
        self._prev = list(state.devices[self.device])
        self._prev_cache = state.cache_enabled
        state.devices[self.device] = [self._enabled, self.fast_dtype]
        state.cache_enabled = self._cache_enabled
        state.nesting += 1
        state.refresh()

    def __exit__(self, *exc: Any) -> None:
        state = policy.STATE
        state.nesting -= 1
        if state.nesting == 0:
            policy.clear_cache()        # cached weight casts live for the outermost region
        state.devices[self.device] = self._prev
        state.cache_enabled = self._prev_cache
        state.refresh()

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)
        return wrapper

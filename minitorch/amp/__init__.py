"""``minitorch.amp``: automatic mixed precision (PyTorch's ``torch.amp``).

* :class:`autocast` runs matrix products in float16/bfloat16 and
  precision-sensitive ops in float32 (the policy: :mod:`minitorch.autocast_mode`);
* :class:`GradScaler` scales the loss so float16 gradients do not underflow.

``minitorch.cuda.amp`` and ``minitorch.cpu.amp`` hold the older,
device-specific spellings (``minitorch.cuda.amp.autocast()``), as in PyTorch.
See docs/mixed-precision.md.
"""

from types import ModuleType
from typing import Any

from ..dtype import bfloat16, float16
from .autocast_mode import (autocast, clear_autocast_cache, get_autocast_dtype,
                            is_autocast_available, is_autocast_cache_enabled,
                            is_autocast_enabled, set_autocast_cache_enabled,
                            set_autocast_dtype, set_autocast_enabled)
from .grad_scaler import GradScaler, OptState

__all__ = ["autocast", "GradScaler", "OptState", "is_autocast_available", "is_autocast_enabled",
           "get_autocast_dtype", "set_autocast_enabled", "set_autocast_dtype",
           "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
           "custom_fwd", "custom_bwd"]


def custom_fwd(fwd: Any = None, *, device_type: str = "cuda", cast_inputs: Any = None) -> Any:
    """Decorator for a custom Function's forward; accepted for compatibility (runs it as is)."""
    if fwd is None:
        return lambda f: f
    return fwd


def custom_bwd(bwd: Any = None, *, device_type: str = "cuda") -> Any:
    """Decorator for a custom Function's backward; accepted for compatibility (runs it as is)."""
    if bwd is None:
        return lambda f: f
    return bwd


def _device_namespace(device_type: str, default_dtype: Any) -> ModuleType:
    """``minitorch.<device>.amp``: autocast without the device argument, and GradScaler."""
    ns = ModuleType(f"minitorch.{device_type}.amp")

    class _autocast(autocast):
        def __init__(self, enabled: bool = True, dtype: Any = default_dtype,
                     cache_enabled: bool = True) -> None:
            super().__init__(device_type, dtype=dtype, enabled=enabled,
                             cache_enabled=cache_enabled)

    _autocast.__name__ = _autocast.__qualname__ = "autocast"

    class _GradScaler(GradScaler):
        def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                     backoff_factor: float = 0.5, growth_interval: int = 2000,
                     enabled: bool = True) -> None:
            super().__init__(device_type, init_scale, growth_factor, backoff_factor,
                             growth_interval, enabled)

    _GradScaler.__name__ = _GradScaler.__qualname__ = "GradScaler"
    ns.autocast = _autocast
    ns.GradScaler = _GradScaler
    ns.custom_fwd = custom_fwd
    ns.custom_bwd = custom_bwd
    return ns


cuda_amp = _device_namespace("cuda", float16)
cpu_amp = _device_namespace("cpu", bfloat16)

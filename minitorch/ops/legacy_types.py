"""The legacy tensor types: ``torch.FloatTensor``, ``torch.LongTensor``, ...

Before dtypes were arguments, PyTorch had one tensor class per element type
and device, and old code (and many tutorials) still uses them::

    x = torch.FloatTensor(2, 3)          # uninitialised, shape (2, 3)
    y = torch.LongTensor([1, 2, 3])      # from data, int64
    isinstance(x, torch.FloatTensor)     # True: a float32 CPU tensor
    x.type(torch.DoubleTensor)           # converted to float64

Here they are not real subclasses: every tensor is a :class:`Tensor`.  Each
legacy type is a small class whose *metaclass* makes ``isinstance`` check the
dtype and device, and whose constructor builds an ordinary tensor.
``set_default_tensor_type`` (deprecated in PyTorch 2.1) sets the default
dtype, and the default device for ``torch.cuda.*`` types.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..device import device as _device, set_default_device
from ..dtype import ALL_DTYPES, dtype, set_default_dtype
from ..tensor_base import TensorBase
from .creation import legacy_new
from .registry import declare

__all__ = ["legacy_tensor_types", "set_default_tensor_type", "legacy_type_dtype"]


class _LegacyTensorType(type):
    """Metaclass of the legacy types: ``isinstance`` compares dtype and device type."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return (isinstance(obj, TensorBase) and obj.dtype is cls.dtype
                and obj.device.type == cls._device_type)

    def __repr__(cls) -> str:
        return f"<class '{cls._qualified}'>"


def _make_type(dt: dtype, device_type: str) -> type:
    name = f"{dt._legacy}Tensor"
    prefix = "torch.cuda." if device_type == "cuda" else "torch."

    def __new__(cls: Any, *args: Any, device: Any = None) -> TensorBase:  # noqa: N807
        if device is None:
            device = _device(cls._device_type)
        elif _device(device).type != cls._device_type:
            raise RuntimeError(f"legacy constructor expects device type: {cls._device_type} "
                               f"but device type: {_device(device).type} was passed")
        return legacy_new(*args, dtype=cls.dtype, device=device)

    return _LegacyTensorType(name, (), {
        "__new__": __new__, "dtype": dt, "is_cuda": device_type == "cuda",
        "_device_type": device_type, "_qualified": prefix + name,
        "__doc__": f"The legacy {prefix}{name}: {dt} tensors on {device_type}."})


def legacy_tensor_types(device_type: str) -> dict:
    """``{'FloatTensor': <type>, ...}`` for one device type ('cpu' or 'cuda')."""
    return {f"{d._legacy}Tensor": _make_type(d, device_type) for d in ALL_DTYPES
            if d._legacy}


CPU_TYPES = legacy_tensor_types("cpu")
CUDA_TYPES = legacy_tensor_types("cuda")


def legacy_type_dtype(t: Any) -> tuple[dtype, str] | None:
    """The ``(dtype, device type)`` of a legacy type or its name; None if it is neither."""
    if isinstance(t, _LegacyTensorType):
        return t.dtype, t._device_type
    if isinstance(t, str):
        parts = t.split(".")
        table = CUDA_TYPES if len(parts) == 3 and parts[1] == "cuda" else CPU_TYPES
        if parts[0] in ("torch", "minitorch") and parts[-1] in table:
            found = table[parts[-1]]
            return found.dtype, found._device_type
    return None


def set_default_tensor_type(t: Any) -> None:
    """Deprecated: set the default dtype (and device, for a ``torch.cuda`` type)."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    found = legacy_type_dtype(t)
    if found is None:
        raise TypeError(f"invalid type: '{t}'")
    dt, device_type = found
    if not dt.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(dt)
    set_default_device(device_type)


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(set_default_tensor_type, method=False)

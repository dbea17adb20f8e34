"""DLPack: hand tensors to other array libraries (and take theirs) without copying.

DLPack is a small C struct that describes a block of memory as an array:
data pointer, device, dtype, shape, strides.  A library *exports* an array
by ``x.__dlpack__()`` (a capsule holding that struct) and says where the
memory lives by ``x.__dlpack_device__()``; another *imports* it with
``from_dlpack(x)`` and builds its own array header over the same memory.

minitorch's CPU storage is a NumPy array, and NumPy speaks DLPack, so both
directions go through NumPy: a CPU tensor exports the NumPy view of its
elements (``t.numpy()``, which shares memory), and ``from_dlpack`` imports
with ``numpy.from_dlpack`` and wraps the result with ``from_numpy``.  So
``torch.from_dlpack(t)``, ``numpy.from_dlpack(t)`` and
``minitorch.from_dlpack(torch_tensor)`` all share memory with their source.

CUDA tensors are not exported (minitorch's GPU buffers are Numba device
arrays, which do not produce DLPack capsules): ``__dlpack__`` raises
``BufferError``; call ``.cpu()`` first.  See docs/differences.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor_base import TensorBase
from .creation import from_numpy
from .registry import declare

__all__ = ["from_dlpack", "to_dlpack"]

_KDL_CPU = 1
_KDL_CUDA = 2


def _exportable(t: TensorBase) -> np.ndarray:
    if t.requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    if t.device.type != "cpu":
        raise BufferError(f"minitorch exports only CPU tensors through DLPack, not a tensor on "
                          f"{t.device}; call .cpu() first")
    return t.numpy()


def dlpack_export(self: TensorBase, *, stream: Any = None, max_version: Any = None,
                  dl_device: Any = None, copy: Any = None) -> Any:
    """``Tensor.__dlpack__``: a DLPack capsule over this tensor's memory (shared, not copied)."""
    arr = _exportable(self)
    kwargs = {}
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    return arr.__dlpack__(stream=stream, **kwargs)


def dlpack_device(self: TensorBase) -> tuple:
    """``Tensor.__dlpack_device__``: ``(device type, index)``, 1 for the CPU and 2 for CUDA."""
    if self.device.type == "cpu":
        return (_KDL_CPU, 0)
    return (_KDL_CUDA, self.device.index or 0)


class _Capsule:
    """Gives a bare (legacy) DLPack capsule the ``__dlpack__`` protocol NumPy expects."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple:
        return (_KDL_CPU, 0)


def from_dlpack(ext_tensor: Any) -> TensorBase:
    """A tensor over the memory of any DLPack producer on the CPU (a PyTorch tensor, a NumPy array, a capsule)."""
    if isinstance(ext_tensor, TensorBase):
        ext_tensor = _exportable(ext_tensor.detach())
    if hasattr(ext_tensor, "__dlpack_device__"):
        kind = ext_tensor.__dlpack_device__()[0]
        if int(kind) != _KDL_CPU:
            raise BufferError(f"minitorch.from_dlpack imports only CPU memory (DLPack device "
                              f"type 1), not device type {int(kind)}")
    if not hasattr(ext_tensor, "__dlpack__"):
        ext_tensor = _Capsule(ext_tensor)
    return from_numpy(np.from_dlpack(ext_tensor))


def to_dlpack(tensor: TensorBase) -> Any:
    """``torch.to_dlpack``: the capsule ``tensor.__dlpack__()`` returns."""
    return dlpack_export(tensor)


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py)
# ---------------------------------------------------------------------------
declare(dlpack_export, "__dlpack__", function=False)
declare(dlpack_device, "__dlpack_device__", function=False)
declare(from_dlpack, method=False)
declare(to_dlpack, method=False)

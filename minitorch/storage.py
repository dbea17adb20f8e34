"""Layer 2: storage, the flat buffer behind every tensor.

A tensor is a *header* (shape, stride, storage offset, dtype) that looks into
a *storage*: a one-dimensional buffer of elements on one device.  Several
tensors may share one storage; they differ only in their headers.  That is
how ``view``, ``transpose``, slicing and ``detach`` cost nothing: they make a
new header over the same storage.

On the CPU the buffer is a one-dimensional NumPy array.  On a GPU it is a
``numba.cuda`` device array.  This module only *holds* buffers; the kernels
that compute on them live in :mod:`minitorch.backends`.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .device import CPU, device
from .dtype import dtype, from_numpy_dtype

_SERIALS = itertools.count()


def storage_serial_now() -> int:
    """The serial number the next storage will get (see ``UntypedStorage._serial``)."""
    return next(_SERIALS)

__all__ = ["UntypedStorage", "TypedStorage", "buffer_data_ptr", "storage_serial_now"]


def buffer_data_ptr(buf: Any) -> int:
    """The address of element 0 of a NumPy array or a CUDA device array."""
    if isinstance(buf, np.ndarray):
        return buf.__array_interface__["data"][0]
    try:
        return buf.__cuda_array_interface__["data"][0]
    except AttributeError:      # Numba's CUDA simulator: device arrays wrap NumPy arrays
        return buf.__array_interface__["data"][0]


class UntypedStorage:
    """A flat buffer of bytes on one device, shared by every tensor that views it.

    We keep the buffer typed (a NumPy ``float32`` array, say) because kernels
    need typed arrays, but sizes are reported in bytes, as PyTorch does.
    """

    __slots__ = ("_data", "device", "_serial", "__weakref__")

    def __init__(self, data: Any, device: device = CPU) -> None:
        self._data = data
        self.device = device
        # Storages are numbered in order of creation: minitorch.compile tells
        # a tensor made before its trace began (a constant) from one computed
        # during the trace by a route it did not see.
        self._serial = next(_SERIALS)

    # -- sizes -------------------------------------------------------------
    @property
    def dtype(self) -> dtype:
        """The element type the buffer currently holds (a minitorch extra)."""
        return from_numpy_dtype(self._data.dtype)

    def element_size(self) -> int:
        """1: an untyped storage counts bytes (the typed buffer is our detail)."""
        return 1

    def nbytes(self) -> int:
        return self._data.shape[0] * self._data.dtype.itemsize

    def size(self) -> int:
        return self.nbytes()

    def __len__(self) -> int:
        return self.nbytes()

    def data_ptr(self) -> int:
        return buffer_data_ptr(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def resize_(self, nbytes: int) -> "UntypedStorage":
        """Grow or shrink the buffer in place; old elements are kept, new ones are zero."""
        n = nbytes // self._data.dtype.itemsize
        if n == self._data.shape[0]:
            return self
        if self.device.type != "cpu":
            raise RuntimeError("UntypedStorage.resize_ of a CUDA storage is not supported "
                               "(Tensor.resize_ grows one)")
        new = np.zeros(n, dtype=self._data.dtype)
        keep = min(n, self._data.shape[0])
        new[:keep] = self._data[:keep]
        self._data = new
        return self

    def __repr__(self) -> str:
        return f"UntypedStorage(nbytes={self.nbytes()}, device={self.device})"


class TypedStorage:
    """The legacy ``tensor.storage()`` view: a storage seen as elements of one dtype.

    ``print(t.storage())`` lists the elements, as in older PyTorch tutorials.
    """

    __slots__ = ("_untyped",)

    def __init__(self, untyped: UntypedStorage) -> None:
        self._untyped = untyped

    @property
    def dtype(self) -> dtype:
        return self._untyped.dtype

    @property
    def device(self) -> device:
        return self._untyped.device

    def untyped(self) -> UntypedStorage:
        return self._untyped

    def size(self) -> int:
        return self._untyped._data.shape[0]

    def __len__(self) -> int:
        return self.size()

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    def element_size(self) -> int:
        return self._untyped._data.dtype.itemsize

    def nbytes(self) -> int:
        return self._untyped.nbytes()

    def _host(self) -> np.ndarray:
        data = self._untyped._data
        return data if isinstance(data, np.ndarray) else data.copy_to_host()

    def tolist(self) -> list:
        return self._host().tolist()

    def __getitem__(self, i: int):
        return self._host()[i].item()

    def __eq__(self, other: object) -> bool:
        # Two wrappers of one storage are the same storage.
        return isinstance(other, TypedStorage) and other._untyped is self._untyped

    def __hash__(self) -> int:
        return id(self._untyped)

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        head = (f"[minitorch.storage.TypedStorage(dtype={self.dtype}, "
                f"device={self.device}) of size {self.size()}]")
        return f"{body}\n{head}" if body else head

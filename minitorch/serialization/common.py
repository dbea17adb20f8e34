"""What the three file formats share: errors, devices, and building tensors from untrusted numbers.

Every reader in this package treats the file as hostile.  A number read from
a file (a shape, a stride, a byte count) is only a *claim*: before it is used
to allocate memory or to index a buffer it is checked against what the file
really holds.  Anything wrong becomes one :class:`SerializationError` (a
``RuntimeError``, as PyTorch raises for a bad checkpoint) whose one-line
message names the file and says what is wrong.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .. import cuda
from ..backends import get_backend
from ..device import as_device, device as device_cls
from ..dtype import ALL_DTYPES, bfloat16, dtype as dtype_cls
from ..layout import storage_span
from ..nn.parameter import Parameter
from ..storage import UntypedStorage
from ..tensor import Tensor

__all__ = ["SerializationError", "source_name", "fail", "target_device", "make_storage",
           "make_tensor", "to_bytes", "from_bytes", "DTYPES", "MAX_DEPTH", "check_count"]

DTYPES: dict = {d.name: d for d in ALL_DTYPES}
MAX_DEPTH = 200        # nesting of dicts/lists a file may hold (deeper: refused, not a crash)


class SerializationError(RuntimeError):
    """A file that cannot be loaded (or an object that cannot be saved): one line, naming the file.

    ``source`` is the file's name and ``reason`` the message without it, for
    callers (the command line) that word the file's name themselves.
    """

    def __init__(self, source: str, reason: str, verb: str = "load") -> None:
        self.source, self.reason = source, reason
        super().__init__(f"minitorch.{verb}: {source}: {reason}")


def source_name(f: Any) -> str:
    """How messages name ``f``: its path, or the name of a file object (``<bytes>`` for buffers)."""
    if isinstance(f, (str, os.PathLike)):
        return os.fspath(f)
    name = getattr(f, "name", None)
    return name if isinstance(name, str) else f"<{type(f).__name__}>"


def fail(source: str, reason: str) -> SerializationError:
    """The error to raise for ``source``; ``raise fail(src, "why")`` reads as a sentence."""
    return SerializationError(source, reason)


def check_count(source: str, value: Any, what: str) -> int:
    """``value`` if it is a non-negative Python int (not a bool), else a one-line error."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise fail(source, f"{what} is {value!r}, not a count")
    return value


# ---------------------------------------------------------------------------
# Devices: map_location, as torch.load takes it
# ---------------------------------------------------------------------------
def target_device(saved: str, map_location: Any, source: str) -> device_cls:
    """Where a storage saved on device ``saved`` goes: ``map_location`` as torch.load reads it.

    ``None`` keeps the saved device; a string or device moves everything
    there; a dict maps saved device names to new ones; a function gets
    ``(storage, location)`` and returns a device, or ``None`` to keep it.
    """
    loc = map_location
    try:
        if loc is None:
            dev = as_device(saved)
        elif isinstance(loc, dict):
            dev = as_device(loc.get(saved, saved))
        elif callable(loc):
            result = loc(None, saved)
            dev = as_device(saved if result is None else
                            (result if not isinstance(result, UntypedStorage) else "cpu"))
        else:
            dev = as_device(loc)
    except (TypeError, ValueError, RuntimeError) as e:
        if loc is None or isinstance(loc, dict):     # the *file's* device string is bad
            raise fail(source, f"unknown device {saved!r} ({e})") from None
        raise
    if dev.type == "cuda" and not cuda.is_available():
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but "
            "minitorch.cuda.is_available() is False. If you are running on a CPU-only "
            "machine, please use minitorch.load with map_location='cpu' to map your "
            "storages to the CPU.")
    return dev


# ---------------------------------------------------------------------------
# Bytes <-> storages
# ---------------------------------------------------------------------------
def to_bytes(data: np.ndarray, dt: dtype_cls) -> bytes:
    """A CPU buffer of ``dt`` elements as little-endian bytes, as all three formats store them.

    bfloat16 is kept in float32 slots in memory (see docs/dtypes-and-devices.md),
    already rounded: its 2-byte form is the top half of each float32.
    """
    if dt is bfloat16:
        bits = np.ascontiguousarray(data, np.float32).view(np.uint32)
        return (bits >> 16).astype("<u2").tobytes()
    return np.ascontiguousarray(data).astype(data.dtype.newbyteorder("<"), copy=False).tobytes()


def from_bytes(raw: Any, dt: dtype_cls, order: str = "<") -> np.ndarray:
    """The inverse of :func:`to_bytes`: a new, writable, native-order array of ``dt`` elements.

    ``order`` is the file's byte order: ``"<"`` little-endian (all three
    formats), ``">"`` for a PyTorch file saved on a big-endian machine.
    """
    if dt is bfloat16:
        halves = np.frombuffer(raw, dtype=order + "u2").astype(np.uint32)
        return (halves << 16).view(np.float32)
    if dt.name == "bool":       # read as bytes: a byte other than 0/1 must not make a bad bool
        return np.frombuffer(raw, dtype=np.uint8) != 0
    return np.frombuffer(raw, dtype=dt.np.newbyteorder(order)).astype(dt.np)   # astype copies


def make_storage(data: np.ndarray, dev: device_cls) -> UntypedStorage:
    """A storage holding ``data`` on ``dev`` (copied to the GPU there)."""
    if dev.type != "cpu":
        data = get_backend(dev).from_host(data)
    return UntypedStorage(data, dev)


def make_tensor(source: str, storage: UntypedStorage, dt: dtype_cls, shape: Any, stride: Any,
                offset: Any, requires_grad: Any = False, parameter: bool = False) -> Tensor:
    """A tensor over ``storage``, after checking that every element it can reach is inside it.

    This is the check that keeps a hostile file from making a tensor that
    reads or writes memory outside its buffer: the kernels trust a tensor's
    shape, stride and offset.
    """
    if not isinstance(shape, (tuple, list)) or not isinstance(stride, (tuple, list)):
        raise fail(source, f"tensor shape {shape!r} / stride {stride!r} are not sequences")
    shape = tuple(check_count(source, s, "a tensor's size") for s in shape)
    stride = tuple(check_count(source, s, "a tensor's stride") for s in stride)
    offset = check_count(source, offset, "a tensor's storage offset")
    if len(shape) != len(stride):
        raise fail(source, f"tensor shape {list(shape)} and stride {list(stride)} differ in "
                           "length")
    if len(shape) > 64:
        raise fail(source, f"a tensor with {len(shape)} dimensions")
    if storage.dtype.np != dt.np:          # (a bfloat16 tensor's storage holds float32 slots)
        raise fail(source, f"a tensor of dtype {dt.name} refers to a storage of dtype "
                           f"{storage.dtype.name}")
    _, hi = storage_span(shape, stride, offset)
    size = storage._data.shape[0]
    if hi > size:
        raise fail(source, f"a tensor with shape {list(shape)}, stride {list(stride)} and "
                           f"offset {offset} does not fit in its storage of {size} elements")
    t = Tensor._make(storage, shape, stride, offset, dt)
    if not isinstance(requires_grad, bool):
        raise fail(source, f"requires_grad is {requires_grad!r}, not a bool")
    if requires_grad and not dt.is_floating_point:
        raise fail(source, f"a {dt.name} tensor cannot require gradients")
    if parameter:
        return Parameter(t, requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t

"""Layer 1: devices.

A :class:`device` says where a tensor's storage lives: ``cpu`` (a NumPy array
in main memory) or ``cuda:N`` (an array in the memory of GPU number N).
"""

from __future__ import annotations

from typing import Any

__all__ = ["device", "as_device", "get_default_device", "set_default_device"]


class device:
    """``device('cpu')``, ``device('cuda')``, ``device('cuda:1')`` or ``device('cuda', 1)``."""

    __slots__ = ("type", "index")

    def __init__(self, type: Any, index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and index is None:
            self.type, self.index = "cuda", type
            return
        if not isinstance(type, str):
            raise TypeError(f"device() expected a string or an int, got {type!r}")
        text = type.strip()
        if ":" in text:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {text}")
            text, _, idx = text.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if text not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {type}")
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type = text
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, TypeError):
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


CPU = device("cpu")
_default_device = CPU


def as_device(d: Any) -> device:
    """Normalise ``None`` (the default device), strings, ints and devices.

    A bare ``'cuda'`` means the current CUDA device, which we fix to index 0
    here so that two tensors on 'cuda' and 'cuda:0' compare as the same place.
    """
    if d is None:
        return _default_device
    if isinstance(d, device):
        dev = d
    else:
        dev = device(d)
    if dev.type == "cuda" and dev.index is None:
        return device("cuda", 0)
    return dev


def get_default_device() -> device:
    return _default_device


def set_default_device(d: Any) -> None:
    """Make factories such as ``zeros`` and ``tensor`` allocate on ``d`` by default."""
    global _default_device
    _default_device = CPU if d is None else as_device(d)

"""Layer 1: memory formats, the names PyTorch gives to orders of dims in memory.

A *memory format* says how a new tensor should lay its elements out:

* ``contiguous_format``: row-major, the last dim moves fastest (the default
  for ``contiguous()`` and for most factories);
* ``preserve_format``: keep the order of the tensor it is made from, so the
  ``clone`` of a transpose is again a transpose (the default for
  ``clone``, ``empty_like`` and ``.to``);
* ``channels_last``: for images (N, C, H, W), the C values of each pixel sit
  together in memory (strides ``(H*W*C, 1, W*C, C)``).

The shape never changes, only the strides (see :mod:`minitorch.layout`).
"""

from __future__ import annotations

__all__ = ["memory_format", "contiguous_format", "preserve_format", "channels_last"]


class memory_format:  # noqa: N801  (PyTorch's public name)
    """One of the named layouts above; compare with ``is``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"minitorch.{self.name}"

    def __reduce__(self) -> str:
        return self.name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")

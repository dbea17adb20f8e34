"""Padding layers: zeros, a constant, a mirror image, the edge value, or wrap-around.

``ZeroPad2d((left, right, top, bottom))`` pads the last two dims; an int pads
every side by the same amount.  All are ``F.pad`` with a fixed mode.
"""

from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = [f"{kind}Pad{n}d" for kind in ("Zero", "Constant", "Reflection", "Replication",
                                          "Circular") for n in (1, 2, 3)]


class _PadNd(Module):
    _dims = 1
    _mode = "constant"

    def __init__(self, padding: Any, value: float = 0.0) -> None:
        super().__init__()
        n = self._dims
        self.padding = tuple(padding) if isinstance(padding, (tuple, list)) else \
            (int(padding),) * (2 * n)
        if len(self.padding) != 2 * n:
            raise ValueError(f"expected {2 * n} padding values, got {len(self.padding)}")
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        if self._mode == "circular" and input.dim() not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got "
                             f"{input.dim()}D input)")
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        if self._mode == "constant" and not isinstance(self, _ZeroPad):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


class _ZeroPad(_PadNd):
    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)


class _ConstantPad(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)


class _ReflectionPad(_PadNd):
    _mode = "reflect"

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class _ReplicationPad(_ReflectionPad):
    _mode = "replicate"


class _CircularPad(_ReflectionPad):
    _mode = "circular"


class ZeroPad1d(_ZeroPad):
    """Pad the last dim with zeros: ``(left, right)``."""
    _dims = 1


class ZeroPad2d(_ZeroPad):
    """Pad the last two dims with zeros: ``(left, right, top, bottom)``."""
    _dims = 2


class ZeroPad3d(_ZeroPad):
    _dims = 3


class ConstantPad1d(_ConstantPad):
    _dims = 1


class ConstantPad2d(_ConstantPad):
    _dims = 2


class ConstantPad3d(_ConstantPad):
    _dims = 3


class ReflectionPad1d(_ReflectionPad):
    """Pad with the mirror image of the input, not repeating the edge element."""
    _dims = 1


class ReflectionPad2d(_ReflectionPad):
    _dims = 2


class ReflectionPad3d(_ReflectionPad):
    _dims = 3


class ReplicationPad1d(_ReplicationPad):
    """Pad by repeating the edge element."""
    _dims = 1


class ReplicationPad2d(_ReplicationPad):
    _dims = 2


class ReplicationPad3d(_ReplicationPad):
    _dims = 3


class CircularPad1d(_CircularPad):
    """Pad by wrapping around (periodic boundary)."""
    _dims = 1


class CircularPad2d(_CircularPad):
    _dims = 2


class CircularPad3d(_CircularPad):
    _dims = 3

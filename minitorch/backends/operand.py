"""``Operand``: a buffer and the header that says how to read it.

The one type that crosses the line between the ops and the kernels: element
``(i, j, ...)`` of an operand is ``data[offset + i*strides[0] + j*strides[1]
+ ...]``.  It lives in a module of its own so that the backends can use it
without importing the ``minitorch.backends`` package that chooses them.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Operand(NamedTuple):
    """A buffer and the header that says how to read it."""

    data: Any
    shape: tuple
    strides: tuple
    offset: int

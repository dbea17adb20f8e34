"""``ReduceOp``: how ``all_reduce`` and ``reduce`` combine the ranks' tensors.

Each maps to an MPI operation applied element by element across ranks:
``SUM`` -> ``MPI_SUM``, ``MAX`` -> ``MPI_MAX`` and so on.  ``AVG`` is ``SUM``
followed by a division by the world size on this side (MPI has no average);
it needs a floating-point tensor, since an integer average would have to
round.  Boolean tensors travel as bytes, on which ``SUM``/``MAX``/``BOR``
are a logical OR and ``MIN``/``PRODUCT``/``BAND`` a logical AND.
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = ["ReduceOp", "RedOpType"]


class RedOpType(enum.IntEnum):
    """The reduction kinds, numbered as in PyTorch's ``ReduceOp.RedOpType``."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7


class ReduceOp:
    """``ReduceOp.SUM``, ``.AVG``, ``.PRODUCT``, ``.MIN``, ``.MAX``, ``.BAND``, ``.BOR``,
    ``.BXOR``, as in ``torch.distributed.ReduceOp``."""

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR


def mpi_op(op: Any, dtype_name: str, is_bool: bool, is_float: bool, what: str) -> Any:
    """The MPI operation for ``op`` on elements of this kind, or a clear error."""
    from mpi4py import MPI
    if not isinstance(op, RedOpType):
        if isinstance(op, int) and not isinstance(op, bool) and op in RedOpType._value2member_map_:
            op = RedOpType(op)
        else:
            raise TypeError(f"{what}: op must be a ReduceOp (e.g. ReduceOp.SUM), but got {op!r}")
    if is_bool:
        if op in (RedOpType.SUM, RedOpType.MAX, RedOpType.BOR):
            return MPI.MAX          # logical OR of 0/1 bytes
        if op in (RedOpType.MIN, RedOpType.PRODUCT, RedOpType.BAND):
            return MPI.MIN          # logical AND
        if op is RedOpType.BXOR:
            return MPI.BXOR
        raise RuntimeError(f"{what}: ReduceOp.{op.name} is not defined for a bool tensor")
    if op is RedOpType.AVG and not is_float:
        raise RuntimeError(f"{what}: ReduceOp.AVG needs a floating-point tensor, but got "
                           f"{dtype_name} (an integer average would have to round; use "
                           f"ReduceOp.SUM and divide)")
    if is_float and op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR):
        raise RuntimeError(f"{what}: ReduceOp.{op.name} is not defined for {dtype_name}")
    return {RedOpType.SUM: MPI.SUM, RedOpType.AVG: MPI.SUM, RedOpType.PRODUCT: MPI.PROD,
            RedOpType.MIN: MPI.MIN, RedOpType.MAX: MPI.MAX, RedOpType.BAND: MPI.BAND,
            RedOpType.BOR: MPI.BOR, RedOpType.BXOR: MPI.BXOR}[op]

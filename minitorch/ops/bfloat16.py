"""bfloat16 values: rounding a float32 to the nearest bfloat16.

A bfloat16 is the top half of a float32: sign, the same 8 exponent bits, and
7 of the 23 mantissa bits.  NumPy has no such type, so a minitorch bfloat16
tensor keeps each element in a float32 slot (``dtype.py``) and this module
keeps the promise that the slot always holds a bfloat16 value: after every
write into a bfloat16 tensor its elements are rounded to the nearest
bfloat16, ties to even, as PyTorch does::

    bits      = the float32's 32 bits, as an unsigned integer
    rounded   = bits + 0x7FFF + (bit 16 of bits)      # round to nearest, ties to even
    bfloat16  = rounded with its low 16 bits cleared

Adding ``0x7FFF`` carries into bit 16 exactly when the discarded half is
more than half a unit (or exactly half and bit 16 is odd: ties to even); a
carry out of the mantissa bumps the exponent, which is the right answer too,
up to infinity.  NaNs stay NaNs (quiet).  Computation happens in float32:
``compute_dtype(bfloat16)`` is float32 in ``kernels.py``, so an op on
bfloat16 computes in float32 and its result is rounded once on the way
into its bfloat16 tensor, the way CPU PyTorch computes most bfloat16 ops.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends import Operand

__all__ = ["round_array", "round_buffer"]


def round_array(values: np.ndarray) -> np.ndarray:
    """A float32 copy of ``values`` with every element rounded to the nearest bfloat16."""
    out = np.array(values, dtype=np.float32, copy=True)
    _round_in_place(out.reshape(-1))
    return out


def _round_in_place(arr: np.ndarray) -> None:
    bits = arr.view(np.uint32)
    nan = np.isnan(arr)
    rounded = bits + (np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1)))
    rounded &= np.uint32(0xFFFF0000)
    if nan.any():
        rounded[nan] = (bits[nan] | np.uint32(0x00400000)) & np.uint32(0xFFFF0000)
    bits[...] = rounded


def round_buffer(buf: Any, backend: Any) -> None:
    """Round every element of a flat float32 buffer (any device) to bfloat16, in place."""
    if isinstance(buf, np.ndarray):
        _round_in_place(buf)
        return
    # A GPU buffer: round a host copy, then copy it back with the backend's kernel.
    host = round_array(backend.to_host(buf))
    n = host.shape[0]
    backend.copy(Operand(backend.from_host(host), (n,), (1,), 0), Operand(buf, (n,), (1,), 0))

"""Fused in-place optimizer updates (one kernel pass per parameter).

The optimizers in ``minitorch.optim`` call :func:`fused_update`.  It takes
the parameter, its gradient and its state tensors, and updates parameter and
state in place with one kernel.  Tensors that are not contiguous, or not
float32/float64 (a float16 parameter, say), are copied into float32
temporaries first and copied back after, so every update rule exists once.
"""

from __future__ import annotations

from typing import Any

from ..dtype import float32
from ..tensor_base import TensorBase
from . import kernels

__all__ = ["fused_update"]


def _direct(t: TensorBase, dt: Any) -> bool:
    return t.is_contiguous() and t.dtype is dt and dt.name in ("float32", "float64")


def _flat(t: TensorBase):
    return t._storage._data[t._offset:t._offset + t.numel()]


def fused_update(kind: str, param: TensorBase, grad: TensorBase, state: list, *hyper: Any) -> None:
    """Run optimizer kernel ``kind`` over ``param`` and its ``state`` in place.

    ``state`` entries may be ``None`` for buffers the chosen settings do not
    use (the kernel then gets the parameter's array in their place and never
    touches it).
    """
    dt = param.dtype if param.dtype.name in ("float32", "float64") else float32
    tensors = [param, grad] + [s for s in state if s is not None]
    work = {id(t): (t if _direct(t, dt) else kernels.contiguous(kernels.cast(t, dt)))
            for t in tensors}
    arrays = [_flat(work[id(param)]), _flat(work[id(grad)])]
    arrays += [_flat(work[id(s)]) if s is not None else arrays[0] for s in state]
    param._backend.fused_update(kind, arrays, hyper)
    for t in [param] + [s for s in state if s is not None]:
        w = work[id(t)]
        if w is not t:
            kernels.copy_into(t, w)
    param._bump_version()

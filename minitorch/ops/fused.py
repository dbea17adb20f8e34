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


def fused_update(hyper: Any, param: TensorBase, grad: TensorBase, state: list) -> None:
    """Run the update rule of the step record ``hyper`` over ``param`` and its ``state`` in place.

    ``hyper`` is one of ``backends.optimizer_rules``' records (``SGDStep``,
    ``AdamStep``, ...): its type names the rule, its fields are the step's
    hyper-parameters.

    ``state`` entries may be ``None`` for buffers the chosen settings do not
    use (the kernel then gets the parameter's array in their place and never
    touches it).
    """
    dt = param.dtype if param.dtype.name in ("float32", "float64") else float32
    tensors = [param, grad] + [s for s in state if s is not None]
    work = {id(t): (t if _direct(t, dt) else kernels.contiguous(kernels.cast(t, dt)))
            for t in tensors}
    arrays = [kernels.flat(work[id(param)]), kernels.flat(work[id(grad)])]
    arrays += [kernels.flat(work[id(s)]) if s is not None else arrays[0] for s in state]
    kernels.fused_update(hyper, arrays, param.device)
    for t in [param] + [s for s in state if s is not None]:
        w = work[id(t)]
        if w is not t:
            kernels.copy_into(t, w)
    param._bump_version()

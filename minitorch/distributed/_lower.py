"""The few names this package takes from the layers below it, in one place.

``minitorch.distributed`` sits under ``nn`` (``DistributedDataParallel``
imports it), so it must not ``import minitorch``: the package root imports
``nn``, ``optim`` and everything else above.  It reaches down instead, to the
tensor, the ops and autograd; if those move, this file is the one to change.
"""

from __future__ import annotations

from ..autograd import no_grad
from ..ops.creation import from_numpy
from ..tensor import Tensor

__all__ = ["Tensor", "from_numpy", "no_grad"]

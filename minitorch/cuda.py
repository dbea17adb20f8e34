"""``minitorch.cuda``: queries about CUDA devices.

The CUDA backend (kernels on ``numba.cuda``) is not part of this build yet,
so no CUDA device is usable and ``is_available()`` is False even on a
machine with a GPU.  This module never imports ``numba.cuda``.
"""

from __future__ import annotations

__all__ = ["is_available", "device_count", "current_device", "synchronize", "manual_seed",
           "manual_seed_all"]

_NO_DEVICE = ("No CUDA device is available to minitorch: this build has no CUDA backend. "
              "Use device='cpu'.")


def is_available() -> bool:
    """Whether minitorch can put tensors on a CUDA device."""
    return False


def device_count() -> int:
    return 0


def current_device() -> int:
    raise RuntimeError(_NO_DEVICE)


def synchronize(device: object = None) -> None:
    raise RuntimeError(_NO_DEVICE)


def manual_seed(seed: int) -> None:
    """Seeds nothing: minitorch's CPU generator is the only one (see minitorch.manual_seed)."""


manual_seed_all = manual_seed

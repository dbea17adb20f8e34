"""``minitorch.cuda``: CUDA devices, as ``torch.cuda``.

Tensors go to a GPU with ``.cuda()``, ``.to('cuda')`` or ``device='cuda'``;
their kernels are the CUDA backend's (``minitorch/backends/cuda/``, written
with ``numba.cuda``).  This module answers questions about the devices (a
thin wrapper over :mod:`minitorch.backends.cuda.runtime`, where the kernel
layer asks them too) and seeds their random generators.

Nothing here imports ``numba.cuda`` until it is called, so ``import
minitorch`` stays free of it.  Without an NVIDIA GPU, Numba's **CUDA
simulator** stands in for one: set ``NUMBA_ENABLE_CUDASIM=1`` in the
environment before Python starts, and every CUDA kernel runs, slowly, in
Python (one simulated device, ``cuda:0``).  See docs/cuda.md.

>>> import minitorch
>>> isinstance(minitorch.cuda.is_available(), bool)
True
"""

from __future__ import annotations

import os
from typing import Any

from .backends.cuda import runtime
from .device import as_device
from .random import cuda_generator, seed_cuda

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize",
           "manual_seed", "manual_seed_all", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "memory_allocated", "empty_cache", "get_device_name",
           "is_simulator", "unavailable_reason", "NO_CUDA_MESSAGE"]

NO_CUDA_MESSAGE = runtime.NO_CUDA_MESSAGE
is_simulator = runtime.is_simulator
#: Why there is no CUDA device, in one line (missing library, no driver, no GPU), or None.
unavailable_reason = runtime.unavailable_reason
is_available = runtime.is_available
device_count = runtime.device_count


def _index(device: Any) -> int:
    """The device number of ``None`` (the current device), an int, a string or a device."""
    if device is None:
        return runtime.current_index()
    if isinstance(device, int):
        return device
    dev = as_device(device)
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return dev.index


def current_device() -> int:
    """The index of the current CUDA device."""
    return runtime.current_device()


def set_device(device: Any) -> None:
    """Make ``device`` the current CUDA device.

    Unlike PyTorch, ``'cuda'`` without an index still means ``cuda:0`` in
    minitorch (see docs/cuda.md): name the device (``'cuda:1'``) to use another.
    """
    runtime.set_device(_index(device))


def synchronize(device: Any = None) -> None:
    """Wait until every kernel launched on the device has finished."""
    runtime.synchronize(runtime.check_device(_index(device)))


def get_device_name(device: Any = None) -> str:
    """The device's name (``"Numba CUDA simulator"`` on the simulator)."""
    return runtime.device_name(_index(device))


def memory_allocated(device: Any = None) -> int:
    """Bytes held by minitorch's live buffers on the device (0 before it is first used)."""
    return runtime.memory_allocated(_index(device))


def empty_cache() -> None:
    """Release GPU memory that Numba keeps for deferred deallocation."""
    runtime.empty_cache()


# -- random numbers -----------------------------------------------------------
def manual_seed(seed: int) -> None:
    """Seed the current CUDA device's generator (``minitorch.manual_seed`` seeds all devices)."""
    seed_cuda(seed, f"cuda:{runtime.current_index()}")


def manual_seed_all(seed: int) -> None:
    """Seed the generators of every CUDA device."""
    seed_cuda(seed)


def seed() -> None:
    """Seed the current device's generator with a non-deterministic number."""
    import time
    manual_seed(time.time_ns() ^ os.getpid())


def initial_seed() -> int:
    return cuda_generator(f"cuda:{runtime.current_index()}").initial_seed()


def get_rng_state(device: Any = "cuda") -> Any:
    return cuda_generator(device).get_state()


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    cuda_generator(device).set_state(new_state)


def __getattr__(name: str):
    """``minitorch.cuda.FloatTensor`` and the other legacy CUDA tensor types."""
    if name.endswith("Tensor"):
        from .ops.legacy_types import CUDA_TYPES  # on first use: the legacy types are rare
        if name in CUDA_TYPES:
            return CUDA_TYPES[name]
    raise AttributeError(f"module 'minitorch.cuda' has no attribute '{name}'")

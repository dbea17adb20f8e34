"""``minitorch.cuda``: CUDA devices, as ``torch.cuda``.

Tensors go to a GPU with ``.cuda()``, ``.to('cuda')`` or ``device='cuda'``;
their kernels are the CUDA backend's (``minitorch/backends/cuda/``, written
with ``numba.cuda``).  This module answers questions about the devices and
seeds their random generators.

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

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize",
           "manual_seed", "manual_seed_all", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "memory_allocated", "empty_cache", "get_device_name",
           "is_simulator", "NO_CUDA_MESSAGE"]

NO_CUDA_MESSAGE = (
    "No CUDA device is available to minitorch: numba.cuda found no NVIDIA GPU with a working "
    "driver (or numba-cuda is not installed: pip install 'minitorch[cuda]'). Use "
    "device='cpu', or run the CUDA backend on Numba's CUDA simulator (slow; for testing) by "
    "setting the environment variable NUMBA_ENABLE_CUDASIM=1 before starting Python.")

_current = 0


def _numba_cuda() -> Any:
    """``numba.cuda``, imported on first use; ``None`` if it cannot be imported."""
    try:
        from numba import cuda
    except Exception:   # no numba-cuda, a broken CUDA toolkit, ...
        return None
    return cuda


def is_simulator() -> bool:
    """Whether CUDA devices are Numba's simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    from numba import config
    return bool(config.ENABLE_CUDASIM)


def is_available() -> bool:
    """Whether minitorch can put tensors on a CUDA device (a GPU, or the simulator)."""
    return device_count() > 0


def device_count() -> int:
    """The number of CUDA devices (1 on the simulator, 0 without a GPU)."""
    cuda = _numba_cuda()
    if cuda is None:
        return 0
    try:
        if not cuda.is_available():
            return 0
        return len(cuda.gpus)
    except Exception:   # a driver that fails to initialise counts as no device
        return 0


def _index(device: Any) -> int:
    """The device number of ``None`` (the current device), an int, a string or a device."""
    if device is None:
        return _current
    if isinstance(device, int):
        idx = device
    else:
        from .device import as_device
        dev = as_device(device)
        if dev.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {dev}")
        idx = dev.index
    return idx


def _check(index: int) -> int:
    count = device_count()
    if count == 0:
        raise RuntimeError(NO_CUDA_MESSAGE)
    if not 0 <= index < count:
        raise RuntimeError(f"CUDA error: invalid device ordinal: cuda:{index} was requested but "
                           f"{count} CUDA device{'s are' if count > 1 else ' is'} available")
    return index


def current_device() -> int:
    """The index of the current CUDA device."""
    return _check(_current)


def set_device(device: Any) -> None:
    """Make ``device`` the current CUDA device.

    Unlike PyTorch, ``'cuda'`` without an index still means ``cuda:0`` in
    minitorch (see docs/cuda.md): name the device (``'cuda:1'``) to use another.
    """
    global _current
    _current = _check(_index(device))


def synchronize(device: Any = None) -> None:
    """Wait until every kernel launched on the device has finished."""
    from .backends import get_backend
    from .device import device as device_cls
    get_backend(device_cls("cuda", _check(_index(device)))).synchronize()


def get_device_name(device: Any = None) -> str:
    idx = _check(_index(device))
    if is_simulator():
        return "Numba CUDA simulator"
    cuda = _numba_cuda()
    name = cuda.gpus[idx].name
    return name.decode() if isinstance(name, bytes) else str(name)


def memory_allocated(device: Any = None) -> int:
    """Bytes held by minitorch's live buffers on the device (0 before it is first used)."""
    import sys
    backend = sys.modules.get("minitorch.backends.cuda.backend")
    return 0 if backend is None else backend.memory_allocated(_index(device))


def empty_cache() -> None:
    """Release GPU memory that Numba keeps for deferred deallocation."""
    import sys
    backend = sys.modules.get("minitorch.backends.cuda.backend")
    if backend is not None:
        backend.empty_cache()


# -- random numbers -----------------------------------------------------------
def manual_seed(seed: int) -> None:
    """Seed the current CUDA device's generator (``minitorch.manual_seed`` seeds all devices)."""
    from .random import seed_cuda
    seed_cuda(seed, f"cuda:{_current}")


def manual_seed_all(seed: int) -> None:
    """Seed the generators of every CUDA device."""
    from .random import seed_cuda
    seed_cuda(seed)


def seed() -> None:
    """Seed the current device's generator with a non-deterministic number."""
    import time
    manual_seed(time.time_ns() ^ os.getpid())


def initial_seed() -> int:
    from .random import cuda_generator
    return cuda_generator(f"cuda:{_current}").initial_seed()


def get_rng_state(device: Any = "cuda") -> Any:
    from .random import cuda_generator
    return cuda_generator(device).get_state()


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    from .random import cuda_generator
    cuda_generator(device).set_state(new_state)


def __getattr__(name: str):
    """``minitorch.cuda.FloatTensor`` and the other legacy CUDA tensor types."""
    if name.endswith("Tensor"):
        from .ops.legacy_types import CUDA_TYPES
        if name in CUDA_TYPES:
            return CUDA_TYPES[name]
    raise AttributeError(f"module 'minitorch.cuda' has no attribute '{name}'")

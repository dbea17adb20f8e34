"""The CUDA devices: are there any, how many, what are they called, which is current.

These questions sit at the bottom of the CUDA backend: the kernels need the
answers (a tensor's device must exist before its kernels launch), and so
does the public :mod:`minitorch.cuda` module, a thin wrapper over this one.
Nothing here imports ``numba.cuda`` until a function is called, so importing
this module (and ``minitorch``) stays cheap, and a machine without CUDA
gets ``False`` and ``0`` rather than an import error.

Without an NVIDIA GPU, Numba's **CUDA simulator** stands in for one: set
``NUMBA_ENABLE_CUDASIM=1`` before Python starts and there is one simulated
device, ``cuda:0`` (see docs/cuda.md).
"""

from __future__ import annotations

import weakref
from typing import Any

NO_CUDA_MESSAGE = (
    "No CUDA device is available to minitorch: numba.cuda found no NVIDIA GPU with a working "
    "driver (or numba-cuda is not installed: pip install 'minitorch[cuda]'). Use "
    "device='cpu', or run the CUDA backend on Numba's CUDA simulator (slow; for testing) by "
    "setting the environment variable NUMBA_ENABLE_CUDASIM=1 before starting Python.")

_current = 0                 # the device that 'cuda' without an index means (set_device)
_active: int | None = None   # the device whose context Numba has made current
_allocated: dict = {}        # device index -> bytes held by live buffers


def numba_cuda() -> Any:
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


def device_count() -> int:
    """The number of CUDA devices (1 on the simulator, 0 without a GPU)."""
    cuda = numba_cuda()
    if cuda is None:
        return 0
    try:
        if not cuda.is_available():
            return 0
        return len(cuda.gpus)
    except Exception:   # a driver that fails to initialise counts as no device
        return 0


def is_available() -> bool:
    """Whether tensors can go to a CUDA device (a GPU, or the simulator)."""
    return device_count() > 0


def check_device(index: int) -> int:
    """``index`` if CUDA device ``index`` exists; else PyTorch's RuntimeError."""
    count = device_count()
    if count == 0:
        raise RuntimeError(NO_CUDA_MESSAGE)
    if not 0 <= index < count:
        raise RuntimeError(f"CUDA error: invalid device ordinal: cuda:{index} was requested but "
                           f"{count} CUDA device{'s are' if count > 1 else ' is'} available")
    return index


def current_index() -> int:
    """The index of the current CUDA device, unchecked (0 until ``set_device``)."""
    return _current


def current_device() -> int:
    """The index of the current CUDA device (checked: it must exist)."""
    return check_device(_current)


def set_device(index: int) -> None:
    """Make device ``index`` the current one (what ``'cuda'`` without an index means)."""
    global _current
    _current = check_device(index)


def activate(index: int) -> None:
    """Make device ``index``'s context current in Numba, so kernels launch on it."""
    global _active
    if index == _active:
        return
    check_device(index)
    numba_cuda().select_device(index)
    _active = index


def active_device() -> int:
    """The device whose context is current (0 before any)."""
    return 0 if _active is None else _active


def synchronize(index: int) -> None:
    """Wait until every kernel launched on device ``index`` has finished."""
    activate(index)
    numba_cuda().synchronize()


def device_name(index: int) -> str:
    """The name of device ``index`` (``"Numba CUDA simulator"`` on the simulator)."""
    check_device(index)
    if is_simulator():
        return "Numba CUDA simulator"
    name = numba_cuda().gpus[index].name
    return name.decode() if isinstance(name, bytes) else str(name)


# ---------------------------------------------------------------------------
# Memory held by minitorch's buffers
# ---------------------------------------------------------------------------
def _release(device: int, nbytes: int) -> None:
    _allocated[device] = _allocated.get(device, 0) - nbytes


def track(buf: Any) -> Any:
    """Count ``buf``'s bytes against the active device until the allocation is freed."""
    nbytes = buf.size * buf.dtype.itemsize
    if nbytes:
        device = active_device()
        # The object whose lifetime is the allocation's (reshaped views keep it alive).
        owner = buf._ary if is_simulator() else buf.gpu_data
        try:
            weakref.finalize(owner, _release, device, nbytes)
        except TypeError:       # no weak references: not counted
            return buf
        _allocated[device] = _allocated.get(device, 0) + nbytes
    return buf


def memory_allocated(index: int) -> int:
    """Bytes held by minitorch's live buffers on device ``index`` (0 before any)."""
    return _allocated.get(index, 0)


def empty_cache() -> None:
    """Free the memory whose release Numba has deferred (nothing to do on the simulator)."""
    if _active is not None and not is_simulator():
        numba_cuda().current_context().deallocations.clear()

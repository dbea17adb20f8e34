"""The CUDA devices: are there any, how many, what are they called, which is current.

These questions sit at the bottom of the CUDA backend: the kernels need the
answers (a tensor's device must exist before its kernels launch), and so
does the public :mod:`minitorch.cuda` module, a thin wrapper over this one.
Nothing here imports ``numba.cuda`` until a function is called, so importing
this module (and ``minitorch``) stays cheap, and a machine without CUDA
gets ``False`` and ``0`` rather than an import error; a CUDA tensor there is
a ``RuntimeError`` that says which of three things is missing: a CUDA
library, the NVIDIA driver, or a GPU (:func:`unavailable_reason`).

Without an NVIDIA GPU, Numba's **CUDA simulator** stands in for one: set
``NUMBA_ENABLE_CUDASIM=1`` before Python starts and there is one simulated
device, ``cuda:0`` (see docs/cuda.md).
"""

from __future__ import annotations

import importlib.util
import weakref
from typing import Any

#: What to do instead, the end of every message below.
_INSTEAD = ("Use device='cpu', or run the CUDA backend on Numba's CUDA simulator (slow; for "
            "testing) by setting the environment variable NUMBA_ENABLE_CUDASIM=1 before "
            "starting Python.")

#: The general message (``minitorch.cuda.NO_CUDA_MESSAGE``); :func:`unavailable_reason`
#: says which of the three below applies.
NO_CUDA_MESSAGE = (
    "No CUDA device is available to minitorch: numba.cuda found no NVIDIA GPU with a working "
    "driver (or numba-cuda is not installed: pip install 'minitorch[cuda]'). " + _INSTEAD)

# Why there is no CUDA device, in PyTorch's words where it has some ({cause}: numba-cuda's).
#: No driver: ``libcuda.so`` cannot be found or loaded, or fails to initialise.
NO_DRIVER_MESSAGE = ("Found no working NVIDIA driver on your system ({cause}): install "
                     "(or repair) the NVIDIA driver to use a GPU. " + _INSTEAD)
#: A library on the Python side: numba-cuda itself, cuda-python, or NVVM (the CUDA compiler).
MISSING_LIBRARY_MESSAGE = ("A CUDA library minitorch needs is missing ({cause}): pip install "
                           "'minitorch[cuda]' installs numba-cuda with the CUDA compiler (NVVM) "
                           "and libdevice. " + _INSTEAD)
#: The driver works and sees no GPU (none installed, or ``CUDA_VISIBLE_DEVICES`` hides them).
NO_DEVICE_MESSAGE = ("No CUDA GPUs are available: the NVIDIA driver works but reports no GPU "
                     "({cause}; see nvidia-smi and CUDA_VISIBLE_DEVICES). " + _INSTEAD)

#: Why Numba's built-in ``numba.cuda`` was imported, keyed by "is numba-cuda installed?".
#: numba-cuda replaces it through a ``.pth`` file in its site-packages, which Python runs
#: only for a folder it adds as a *site* directory (not a plain ``sys.path`` entry).
BUILT_IN_TARGET_CAUSE = {
    False: "numba-cuda is not installed",
    True: "numba-cuda is installed, but numba.cuda is Numba's built-in target: numba-cuda's "
          "redirect (a .pth file in its site-packages) did not run"}

_current = 0                 # the device that 'cuda' without an index means (set_device)
_active: int | None = None   # the device whose context Numba has made current
_allocated: dict = {}        # device index -> bytes held by live buffers


def _one_line(text: Any) -> str:
    """The first non-blank line of ``text`` (numba-cuda's messages span several)."""
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "")


def numba_cuda_installed() -> bool:
    """Is numba-cuda (the ``cuda`` extra) installed?  Without it ``from numba import cuda``
    may still import Numba's own built-in CUDA target (deprecated), which minitorch does
    not rely on."""
    return importlib.util.find_spec("numba_cuda") is not None


def _import_numba_cuda() -> tuple:
    """``(numba.cuda, None)``, or ``(None, why it cannot be imported)``."""
    try:
        from numba import cuda
    except Exception as e:   # no numba-cuda, a broken CUDA library, ...
        if not numba_cuda_installed():
            return None, "numba-cuda is not installed"
        return None, f"importing numba.cuda failed: {type(e).__name__}: {_one_line(e)}"
    return cuda, None


def numba_cuda() -> Any:
    """``numba.cuda``, imported on first use; ``None`` if it cannot be imported."""
    return _import_numba_cuda()[0]


def is_simulator() -> bool:
    """Whether CUDA devices are Numba's simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    from numba import config
    return bool(config.ENABLE_CUDASIM)


def unavailable_reason() -> str | None:
    """Why tensors cannot go to a CUDA device, in one line; ``None`` when they can.

    Three different causes, three different messages (one fix each):
    :data:`MISSING_LIBRARY_MESSAGE` (``numba.cuda`` does not import, NVVM
    does not load, or ``numba.cuda`` is Numba's built-in target rather than
    numba-cuda's), :data:`NO_DRIVER_MESSAGE`
    (the NVIDIA driver cannot be found, loaded or initialised) and
    :data:`NO_DEVICE_MESSAGE` (the driver works and sees no GPU).
    """
    cuda, import_error = _import_numba_cuda()
    if cuda is None:
        return MISSING_LIBRARY_MESSAGE.format(cause=import_error)
    if is_simulator():
        return None
    if getattr(cuda, "implementation", None) == "Built-in":
        # Numba's own CUDA target (deprecated) answered.  It cannot compile minitorch's
        # kernels (seen on an H200: "Signature mismatch" typing a device function), so a
        # GPU it drives is no use: install numba-cuda, or let its redirect run.
        return MISSING_LIBRARY_MESSAGE.format(cause=BUILT_IN_TARGET_CAUSE[numba_cuda_installed()])
    return _driver_reason(cuda) or _compiler_reason()


def _compiler_reason() -> str | None:
    """Why numba-cuda cannot compile a kernel here; ``None`` if its NumPy support loads.

    numba-cuda loads its NumPy support at the first kernel compile, long after ``numba.cuda``
    imported.  numba-cuda 0.30 registers ``np.row_stack``, which NumPy 2.5 removed: on an
    H200 with NumPy 2.5.2 every kernel failed with ``AttributeError`` from inside numba-cuda.
    Loading that support here turns it into the one-line message, before any tensor moves.
    """
    try:
        importlib.import_module("numba.cuda.np.arrayobj")
    except Exception as e:
        import numpy as np
        return MISSING_LIBRARY_MESSAGE.format(
            cause=f"numba-cuda cannot load its NumPy support with NumPy {np.__version__} "
                  f"({type(e).__name__}: {_one_line(e)}); the cuda extra pins a NumPy it loads "
                  f"with")
    return None


def _driver_reason(cuda: Any) -> str | None:
    """Why the imported ``numba.cuda`` has no device for minitorch; ``None`` if it has one."""
    # numba.cuda.is_available() is "the driver initialised and NVVM loaded"; it starts the
    # driver (never raising), after which cuda_error() holds the driver's error, if any.
    if cuda.is_available():
        try:
            count = len(cuda.gpus)
        except Exception as e:   # the driver started, then failed to list the devices
            return NO_DRIVER_MESSAGE.format(cause=f"{type(e).__name__}: {_one_line(e)}")
        return NO_DEVICE_MESSAGE.format(cause="0 devices") if count == 0 else None
    driver_error = cuda.cuda_error()
    if driver_error is None:
        return MISSING_LIBRARY_MESSAGE.format(cause="libNVVM, the CUDA compiler, did not load")
    if "CUDA_ERROR_NO_DEVICE" in str(driver_error):
        return NO_DEVICE_MESSAGE.format(cause="CUDA_ERROR_NO_DEVICE")
    return NO_DRIVER_MESSAGE.format(cause=_one_line(driver_error))


def device_count() -> int:
    """The number of CUDA devices (1 on the simulator, 0 without a GPU)."""
    try:
        if unavailable_reason() is not None:
            return 0
        return len(numba_cuda().gpus)
    except Exception:   # a driver that fails in a way not foreseen counts as no device
        return 0


def is_available() -> bool:
    """Whether tensors can go to a CUDA device (a GPU, or the simulator)."""
    return device_count() > 0


def check_device(index: int) -> int:
    """``index`` if CUDA device ``index`` exists; else PyTorch's RuntimeError."""
    count = device_count()
    if count == 0:
        raise RuntimeError(unavailable_reason() or NO_CUDA_MESSAGE)
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


#: Called after every :func:`synchronize`: the backend puts its kernels' error check here
#: (``backend.check_errors``: a bad loss target is reported when the host waits, as
#: PyTorch reports a device-side assert), without this module importing the kernels.
after_synchronize: list = []


def synchronize(index: int) -> None:
    """Wait until every kernel launched on device ``index`` has finished, then raise what
    the kernels flagged (:data:`after_synchronize`)."""
    activate(index)
    numba_cuda().synchronize()
    for check in after_synchronize:
        check()


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

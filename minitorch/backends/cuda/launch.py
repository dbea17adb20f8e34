"""How the CUDA kernels are launched: threads, blocks and the grid-stride loop.

A CUDA kernel runs as a *grid* of *blocks* of *threads*.  ``kernel[blocks,
threads](args)`` starts ``blocks * threads`` copies of the kernel function;
each copy finds out who it is from ``cuda.blockIdx.x``, ``cuda.blockDim.x``
and ``cuda.threadIdx.x``.  Its global number is::

    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x    # = cuda.grid(1)

Most kernels here give each thread one element (one output element, one
row, one chunk...) and use a **grid-stride loop**, so that a grid of any
size covers any amount of work::

    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = f(a[i])

Thread ``i`` handles elements ``i``, ``i + G``, ``i + 2G``, ... where ``G`` is
the number of threads in the grid.  Neighbouring threads touch neighbouring
elements at every step, so the GPU merges their memory accesses into few
transactions ("coalescing").  :func:`grid` picks the launch size: at most
:data:`MAX_BLOCKS` blocks of :data:`THREADS` threads.

**The simulator.**  With ``NUMBA_ENABLE_CUDASIM=1`` Numba runs kernels in
Python, one Python thread per GPU thread: about 0.1 ms per thread and
launch.  The launch sizes are then tiny (2 blocks of 4 threads), which
still exercises every index computation, the grid-stride loop included.
The tile sizes of the shared-memory kernels shrink the same way (see
``matmul.py``).

**The launch signatures.**  A kernel is compiled once per *signature*: the
Numba types of the arguments it is launched with.  The simulator never
compiles, so ``tests/cuda_signatures.json`` lists every signature the CUDA
tests launch, and ``tests/test_cuda_ptx.py`` compiles each of them for real
(NVVM and ``ptxas``, no GPU needed).  :func:`kernel` keeps that list honest:
when :data:`SIGNATURES_ENV` names it (``tests/conftest.py`` does), a launch
with a signature not in it fails; when :data:`RECORD_ENV` names a folder,
every launch's signature is written there (``tools/cuda_signatures.py``).
Neither set, :func:`kernel` returns Numba's kernel itself: no cost.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
import threading
import traceback
from pathlib import Path
from typing import Any, Callable

import numpy as np
from numba import config, cuda
from numba.core import types
from numba.core.typing.typeof import Purpose, typeof
from numba.np.numpy_support import from_dtype

from .. import kernel_cache

# numba-cuda keeps a cache machinery of its own: it gets the kernel stamps here, before any
# CUDA kernel is decorated (every kernel module imports this one first), not at
# ``import minitorch``, which must not import numba.cuda (see kernel_cache.install_cuda).
try:
    kernel_cache.install_cuda()
except ModuleNotFoundError as e:
    if not (e.name or "").startswith("numba.cuda"):
        raise
    # Numba's built-in CUDA target (numba-cuda not installed: no ``numba.cuda.core``)
    # caches through Numba's own CacheImpl, which the CPU backend's
    # kernel_cache.install() stamps already.
    kernel_cache.install()

#: True when Numba's CUDA simulator runs the kernels (``NUMBA_ENABLE_CUDASIM=1``).
SIMULATOR = bool(config.ENABLE_CUDASIM)

#: Threads per block for the one-thread-per-item kernels.
THREADS = 4 if SIMULATOR else 256
#: The most blocks one launch uses; a grid-stride loop does the rest.
MAX_BLOCKS = 2 if SIMULATOR else 8192


def grid(n: int, threads: int = THREADS) -> tuple:
    """``(blocks, threads)`` for ``n`` independent work items (``n >= 1``)."""
    threads = max(1, min(threads, n))
    return min(MAX_BLOCKS, -(-n // threads)), threads


def course_checks() -> bool:
    """True in a course test run (``MINITORCH_COURSE_CHECKS=1``, read by
    :func:`minitorch.backends.kernel_cache.course_checks`).

    A compiled CUDA kernel raises an exception only when it was compiled with
    ``debug=True``; otherwise a ``raise`` inside a kernel is silently dropped
    on real hardware (the simulator, which runs the kernel as Python, always
    raises).  A student's stub (``raise NotImplementedError("Task 6.1: ...")``)
    would then "pass" on a GPU by writing nothing.  So under the course checks
    every kernel and device function is compiled with ``debug=True,
    opt=False`` (Numba needs ``opt=False`` with ``debug``), and not cached:
    Numba's cache key does not include the debug flag, so a cached optimised
    kernel could otherwise be loaded in its place.
    """
    return kernel_cache.course_checks()


def kernel(fn: Callable) -> Any:
    """Compile ``fn`` as a CUDA kernel: ``cuda.jit(cache=True)``.

    Every kernel of ``backends/cuda`` is compiled by this one decorator, so
    the debug build (every kernel of a course run, :func:`course_checks`, and
    an edition's stub in any run, :func:`is_stub`) is decided in one place,
    and so are the checks of the launch signatures (a :class:`WatchedKernel`
    when :data:`SIGNATURES_ENV` or :data:`RECORD_ENV` is set).
    """
    if course_checks() or is_stub(fn):
        compiled = cuda.jit(debug=True, opt=False)(fn)
    else:
        compiled = cuda.jit(cache=True)(fn)
    if os.environ.get(SIGNATURES_ENV) or os.environ.get(RECORD_ENV):
        return WatchedKernel(compiled, f"{fn.__module__}.{fn.__qualname__}")
    return compiled


#: A course stub's message: ``raise NotImplementedError("Task 6.1: ...")`` (course/markers.py).
_STUB_MESSAGE = re.compile(r"Task \d+\.\d+: ")


def is_stub(fn: Callable) -> bool:
    """Is ``fn`` a course task left as an edition's stub (it raises
    ``NotImplementedError("Task M.N: ...")``)?

    :func:`kernel` compiles such a kernel with ``debug=True`` in every run,
    not only in the course's: compiled without it, the ``raise`` would end
    each GPU thread silently, and a student running the engine on a real GPU
    would see a result of zeros instead of the stub's message.  Read from the
    byte code's names and constants (cheap: this runs for every kernel at
    import).
    """
    code = getattr(fn, "__code__", None)
    if code is None or "NotImplementedError" not in code.co_names:
        return False
    return any(isinstance(c, str) and _STUB_MESSAGE.match(c) for c in code.co_consts)


def device_function(fn: Callable) -> Any:
    """Compile a plain Python function for the GPU: ``cuda.jit(device=True)``.

    A *device function* is called by kernels, not launched; the CUDA
    compiler inlines it.  ``cuda/bodies.py`` compiles the shared kernel
    bodies with it (see :mod:`minitorch.backends.shared_bodies`).  Under the
    course checks it is compiled with ``debug=True`` as the kernels are, so
    that a ``raise`` inside it reaches the caller (:func:`course_checks`).
    """
    seed_warning_registry(fn.__globals__)
    if course_checks():
        return cuda.jit(device=True, debug=True, opt=False)(fn)
    return cuda.jit(device=True)(fn)


# ---------------------------------------------------------------------------
# Launch signatures: recorded by tools/cuda_signatures.py, checked by the tests
# ---------------------------------------------------------------------------
#: Names the JSON list of launch signatures (``tests/cuda_signatures.json``): a launch
#: whose signature is not in it raises :class:`UnlistedLaunch`.
SIGNATURES_ENV = "MINITORCH_CUDA_SIGNATURES"
#: Names a folder: every process writes the signatures it launches to ``<pid>.jsonl`` there.
RECORD_ENV = "MINITORCH_CUDA_SIGNATURES_RECORD"
#: The command that records the list again.
REFRESH = "python tools/cuda_signatures.py"


class UnlistedLaunch(Exception):
    """A kernel launched with a signature that ``tests/cuda_signatures.json`` does not list
    (the test that compiles every listed signature for a real GPU would miss it)."""


def argument_type(value: Any) -> types.Type:
    """The Numba type a launch on a real GPU gives ``value`` (a kernel's argument).

    What Numba's CUDA dispatcher gives (``typeof``), except for the
    simulator's device arrays: those are typed by numba-cuda's rule for a
    real device array (``DeviceNDArray._numba_type_``: layout ``C`` or ``F``
    when contiguous and not broadcast, else ``A``; never read-only), which
    the simulator's copy of the rule gets wrong for an empty array.
    """
    ary = getattr(value, "_ary", None)        # the simulator's FakeCUDAArray wraps NumPy's
    if isinstance(ary, np.ndarray):
        broadcast = 0 in ary.strides and ary.size != 0
        layout = ("C" if ary.flags.c_contiguous and not broadcast else
                  "F" if ary.flags.f_contiguous and not broadcast else "A")
        return types.Array(from_dtype(ary.dtype), ary.ndim, layout)
    return typeof(value, Purpose.argument)


def type_text(t: types.Type) -> str:
    """A Numba type as Numba's own spelling of it, which :func:`parse_type` reads back.

    ``float64[::1]`` (a C-contiguous 1-d array), ``float32[:, ::1]``,
    ``int64[:]`` (any layout), ``boolean``, ``UniTuple(int64, 2)``,
    ``Tuple((int64, float64))``, and a named tuple as
    ``named('minitorch.backends.optimizer_rules.SGDStep', (float64, ..., boolean))``.
    """
    if isinstance(t, types.Array) and t.mutable and t.aligned and t.ndim >= 1:
        dims = [":"] * t.ndim
        if t.layout == "C":
            dims[-1] = "::1"
        elif t.layout == "F":
            dims[0] = "::1"
        return f"{type_text(t.dtype)}[{', '.join(dims)}]"
    if isinstance(t, types.BaseNamedTuple):
        cls = t.instance_class
        return f"named({cls.__module__ + '.' + cls.__qualname__!r}, {_members(t.types)})"
    if isinstance(t, types.UniTuple):
        return f"UniTuple({type_text(t.dtype)}, {t.count})"
    if isinstance(t, types.Tuple):
        return f"Tuple({_members(t.types)})"
    if t == types.boolean:
        return "boolean"           # str() says "bool", which is Python's own name
    return str(t) if isinstance(t, (types.Integer, types.Float)) else repr(t)


def _members(members: tuple) -> str:
    """A tuple of types as Python source: ``(int64, float64)``, ``(int64,)``, ``()``."""
    texts = [type_text(x) for x in members]
    return f"({texts[0]},)" if len(texts) == 1 else f"({', '.join(texts)})"


def _named(path: str, members: tuple) -> types.Type:
    """The type of a named tuple of class ``path`` (``"module.Class"``) with ``members``."""
    module, _, name = path.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    return types.BaseTuple.from_types(members, cls)


def parse_type(text: str) -> types.Type:
    """The Numba type :func:`type_text` wrote as ``text``; ``ValueError`` if it names none."""
    names = {k: v for k, v in vars(types).items() if not k.startswith("_")}
    names["named"] = _named
    try:
        found = eval(text, {"__builtins__": {}}, names)   # noqa: S307 (names of types only)
    except Exception as e:                                # noqa: BLE001 (any bad text: one error)
        raise ValueError(f"not a Numba type: {text!r} ({type(e).__name__}: {e})") from None
    if not isinstance(found, types.Type):
        raise ValueError(f"not a Numba type: {text!r} (it reads as {found!r})")
    return found


def launch_signature(args: tuple) -> tuple:
    """The signature of a launch with ``args``: each argument's Numba type, as
    :func:`type_text` spells it (``("int64", "float64[::1]", "UniTuple(int64, 2)")``)."""
    return tuple(type_text(argument_type(a)) for a in args)


class WatchedKernel:
    """A CUDA kernel whose launches are recorded (:data:`RECORD_ENV`) or checked against
    the list of signatures (:data:`SIGNATURES_ENV`); everything else is the kernel's own
    (``py_func``, ``targetoptions``, ...).  :func:`kernel` makes one only when asked."""

    def __init__(self, dispatcher: Any, name: str) -> None:
        self.dispatcher = dispatcher
        #: ``"minitorch.backends.cuda.elementwise.unary_contiguous"``: module and qualname.
        self.name = name

    def __getitem__(self, launch_config: Any) -> Callable:
        launcher = self.dispatcher[launch_config]

        def launch(*args: Any) -> Any:
            _launched(self.name, args)
            return launcher(*args)

        return launch

    def __getattr__(self, attr: str) -> Any:
        if attr == "dispatcher":        # not set yet (a copy being made): no recursion
            raise AttributeError(attr)
        return getattr(self.dispatcher, attr)

    def __repr__(self) -> str:
        return f"<WatchedKernel {self.name}>"


#: The signatures seen (and found listed) in this process: each is written or checked once.
_seen: set = set()
_listed: dict = {}


def listed_signatures(path: str) -> dict:
    """``{kernel name: {signature, ...}}`` of the list at ``path`` (read once a process)."""
    if path not in _listed:
        try:
            kernels = json.loads(Path(path).read_text(encoding="utf-8"))["kernels"]
        except (OSError, ValueError, KeyError) as e:
            raise UnlistedLaunch(f"cannot read the CUDA launch signatures {path} "
                                 f"({SIGNATURES_ENV}): {e}; write it with `{REFRESH}`") from e
        _listed[path] = {name: {tuple(sig) for sig in sigs} for name, sigs in kernels.items()}
    return _listed[path]


def _launched(name: str, args: tuple) -> None:
    """Record and/or check the signature of a launch of kernel ``name`` with ``args``."""
    signature = launch_signature(args)
    folder, path = os.environ.get(RECORD_ENV), os.environ.get(SIGNATURES_ENV)
    # Seen under these settings: a test that changes them (monkeypatch) must not make a
    # signature count as recorded or checked where it was not.
    key = (folder, path, name, signature)
    if key in _seen:
        return
    if folder:
        # One line per new signature, appended at once: a crashed test keeps what it saw,
        # and no two processes share a file.
        with open(Path(folder) / f"{os.getpid()}.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps([name, list(signature)]) + "\n")
    if path and signature not in listed_signatures(path).get(name, ()):
        raise UnlistedLaunch(
            f"CUDA kernel {name} launched with a signature not in {path}: "
            f"({', '.join(signature)}). Every listed signature is compiled for a real GPU "
            f"(tests/test_cuda_ptx.py): record the list again with `{REFRESH}` and commit it.")
    _seen.add(key)


def seed_warning_registry(namespace: dict) -> None:
    """Give a kernel's globals a ``__warningregistry__`` before any thread runs.

    Only the simulator needs this.  A warning raised by code (even one that
    is filtered out) adds ``__warningregistry__`` to the globals of that
    code the first time; the simulator's threads meanwhile iterate over the
    same globals to swap in their fake ``cuda`` module, so a first overflow
    warning in one thread made another fail with "dictionary changed size
    during iteration".  With the entry made up front, the globals never
    change size while a kernel runs.
    """
    namespace.setdefault("__warningregistry__", {})


def _fix_simulator_shared_arrays() -> None:
    """Make the simulator hand every thread of a block the same shared array.

    Numba 0.68's simulator finds a block's shared array by the source line
    that declares it: the first thread to get there creates it, the others
    look it up.  The look-up and the creation are not atomic, so two
    threads arriving together can each create their own array and then
    silently stop sharing (the tiled matmul returned wrong numbers about
    once in a few hundred launches).  This replaces the look-up by the same
    one under a lock.  Only the simulator is touched.
    """
    import numpy as np
    from numba.core import types as numba_types
    from numba.np import numpy_support
    try:
        from numba.cuda.simulator import kernelapi
    except ImportError:     # another simulator layout: leave it alone
        return

    shared = getattr(kernelapi, "FakeCUDAShared", None)
    if shared is None or getattr(shared, "_minitorch_locked", False):
        return
    original = shared.array
    lock = threading.Lock()

    def array(self, shape, dtype):
        if shape == 0:                  # dynamic shared memory: no look-up
            return original(self, shape, dtype)
        if isinstance(dtype, numba_types.Type):
            dtype = numpy_support.as_dtype(dtype)
        caller = traceback.extract_stack(sys._getframe(1), limit=1)[-1][0:2]
        with lock:
            res = self._allocations.get(caller)
            if res is None:
                res = self._allocations[caller] = np.empty(shape, dtype)
        return res

    shared.array = array
    shared._minitorch_locked = True


if SIMULATOR:
    _fix_simulator_shared_arrays()

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
Python, one Python thread per GPU thread: about a millisecond per thread and
launch.  The launch sizes are then tiny (2 blocks of 4 threads), which
still exercises every index computation, the grid-stride loop included.
The tile sizes of the shared-memory kernels shrink the same way (see
``matmul.py``), and a kernel that never calls ``cuda.syncthreads()`` has its
threads run one after another instead (:func:`_run_blocks_in_turn`).

**The launch signatures.**  A kernel is compiled once per *signature* (the
Numba types of the arguments it is launched with); the tests check every
launch against a list that is compiled for real GPUs (see
:mod:`minitorch.backends.cuda.signatures`).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import threading
import traceback
import warnings
from contextlib import nullcontext
from typing import Any, Callable

from numba import config, cuda
from numba.core.errors import NumbaPerformanceWarning

from .. import kernel_cache, numba_inline
from . import signatures

# numba-cuda keeps a cache machinery of its own: it gets the kernel stamps here, before any
# CUDA kernel is decorated (every kernel module imports this one first), not at
# ``import minitorch``, which must not import numba.cuda (see kernel_cache.install_cuda).
try:
    kernel_cache.install_cuda()
    numba_inline.install_cuda()       # (numba_inline.py: the same code, compiled faster)
except ModuleNotFoundError as e:
    if not (e.name or "").startswith("numba.cuda"):
        raise
    # Numba's built-in CUDA target (numba-cuda not installed: no ``numba.cuda.core``)
    # caches through Numba's own CacheImpl, which the CPU backend's
    # kernel_cache.install() stamps already, and compiles with Numba's own inliner.
    kernel_cache.install()
    numba_inline.install()

#: True when Numba's CUDA simulator runs the kernels (``NUMBA_ENABLE_CUDASIM=1``).
SIMULATOR = bool(config.ENABLE_CUDASIM)

#: numba-cuda's switch for its warning that a grid of fewer than 128 blocks leaves the GPU
#: idle ("Grid size 1 will likely result in GPU under-utilization due to low occupancy").
LOW_OCCUPANCY_SWITCH = "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"
# minitorch sizes each grid to its data (:func:`grid`), so a small tensor's op has a small
# grid by design, not by the user's mistake: on a real GPU (an H200) the warning printed at
# nearly every op of a training run.  Filtered out, unless the user set the switch
# themselves.  A filter, not the switch: setting a NUMBA_ variable in os.environ makes Numba
# re-read its whole configuration from the environment at its next compile, undoing any
# setting made in code (numba.config.CACHE_DIR, say).
if LOW_OCCUPANCY_SWITCH not in os.environ:
    warnings.filterwarnings("ignore", message=r"Grid size \d+ will likely result in GPU "
                            r"under-utilization", category=NumbaPerformanceWarning)

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
    and so are the checks of the launch signatures (:func:`signatures.watched`).
    """
    if course_checks() or is_stub(fn) or STUB_BODIES:
        compiled = cuda.jit(debug=True, opt=False)(fn)
    else:
        compiled = cuda.jit(cache=True)(fn)
    return signatures.watched(compiled, f"{fn.__module__}.{fn.__qualname__}")


#: The course stubs compiled as device functions so far ("module.function").  A kernel
#: reports a raise inside a device function only when it is a debug build itself, and any
#: kernel may inline a shared body (an edition's layout task, say): so once one is a stub,
#: every kernel is compiled as a debug build (the bodies are compiled first, at import).
STUB_BODIES: list = []


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
    that a ``raise`` inside it reaches the caller (:func:`course_checks`); so
    is an edition's stub in any run, and then every kernel (``STUB_BODIES``).
    """
    seed_warning_registry(fn.__globals__)
    if is_stub(fn):
        STUB_BODIES.append(f"{fn.__module__}.{fn.__qualname__}")
    if course_checks() or is_stub(fn):
        return cuda.jit(device=True, debug=True, opt=False)(fn)
    return cuda.jit(device=True)(fn)


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


def _unpatched_simulator_class(module: str, name: str, flag: str) -> Any:
    """The class ``name`` of ``numba.cuda.simulator.<module>``, for a patch made once.

    ``None`` when this simulator has no such class (another layout: leave it alone) or
    when the class already carries ``flag`` (patched by an earlier import).
    """
    try:
        cls = getattr(importlib.import_module(f"numba.cuda.simulator.{module}"), name, None)
    except ImportError:
        return None
    return None if cls is None or getattr(cls, flag, False) else cls


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
    shared = _unpatched_simulator_class("kernelapi", "FakeCUDAShared", "_minitorch_locked")
    if shared is None:
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


#: Kernel function -> does its source mention ``syncthreads`` (see _run_blocks_in_turn).
_SYNCING: dict = {}


def _may_sync(fn: Callable) -> bool:
    """Might kernel ``fn`` wait for the other threads of its block (``cuda.syncthreads``)?

    Read from its source: the kernels that synchronise call ``cuda.syncthreads()``
    themselves (``reduce.py``'s block sum, ``matmul.py``'s tiles); the shared
    bodies they call cannot, since the CPU runs them too.  Unknown source:
    assume it might.
    """
    if fn not in _SYNCING:
        import inspect
        try:
            _SYNCING[fn] = "syncthreads" in inspect.getsource(fn)
        except (OSError, TypeError):
            _SYNCING[fn] = True
    return _SYNCING[fn]


def _run_blocks_in_turn() -> None:
    """Run the simulator's GPU threads one after another when they never wait for each other.

    The simulator starts a Python thread for every GPU thread of a block (about
    a millisecond each, mostly handing the interpreter from thread to thread),
    because a thread may stop at ``cuda.syncthreads()`` until the whole block
    gets there.  A kernel that never synchronises gives the same result with
    its threads run in turn, in the launching thread: the blocks already run
    one after another.  So such kernels run that way (several times faster);
    kernels that synchronise keep the simulator's threads.  A thread run in
    turn that calls ``cuda.syncthreads()`` anyway raises, so a wrong guess
    cannot go unnoticed.  Only the simulator is touched.
    """
    import numpy as np
    manager = _unpatched_simulator_class("kernel", "BlockManager", "_minitorch_in_turn")
    if manager is None:
        return
    from numba.cuda.simulator.kernelapi import Dim3
    threaded = manager.run
    # What the simulator's kernel API reads from ``threading.current_thread()``.
    names = ("blockIdx", "threadIdx", "thread_id", "syncthreads", "syncthreads_count",
             "syncthreads_and", "syncthreads_or")

    def refuse(*args):
        raise RuntimeError("a kernel run with its threads in turn called cuda.syncthreads(): "
                           "minitorch.backends.cuda.launch._may_sync must say it does")

    def run(self, grid_point, *args):
        if _may_sync(self._f):
            return threaded(self, grid_point, *args)
        me = threading.current_thread()
        saved = {n: me.__dict__[n] for n in names if n in me.__dict__}
        me.blockIdx = Dim3(*grid_point)
        me.syncthreads = me.syncthreads_count = me.syncthreads_and = me.syncthreads_or = refuse
        bx, by, _ = self._block_dim
        try:
            for point in np.ndindex(*self._block_dim):
                me.threadIdx = Dim3(*point)
                me.thread_id = point[0] + bx * (point[1] + by * point[2])
                try:
                    # A debug build raises on division by zero, as the simulator's threads do.
                    with np.errstate(divide="raise") if self._debug else nullcontext():
                        self._f(*args)
                except Exception as e:     # worded as the simulator's threads word it
                    raise type(e)(f"tid={list(point)} ctaid={list(grid_point)}: {e}") \
                        .with_traceback(e.__traceback__) from None
        finally:
            for n in names:
                me.__dict__.pop(n, None)
            me.__dict__.update(saved)

    manager.run = run
    manager._minitorch_in_turn = True


if SIMULATOR:
    _fix_simulator_shared_arrays()
    _run_blocks_in_turn()

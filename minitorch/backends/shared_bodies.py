"""Kernel bodies written once, compiled for each device.

A kernel is a *loop* around a *body*.  The loop belongs to the device: on the
CPU a ``for i in range(n)`` (or a ``prange`` over chunks), on the GPU a
grid-stride loop with one thread per element.  The body is the arithmetic
done for one element or one row: ``out = a + b``, the bits of random number
``k``, Adam's update of one weight, the stable sort of one row.  The body is
the same on every device, so it is written once, as plain Python, in the
device-neutral modules beside this one:

=======================  =================================================
``scalar_ops.py``        the scalar maths of every elementwise op (op codes)
``rng.py``               the counter-based random number generator
``rows.py``              per-row bodies: sort, top-k, unique, softmax, nll, scan
``reduce_ops.py``        reduction op codes; how partial results combine
``index_maps.py``        index arithmetic: positions, im2col maps, pooling
                         windows, scatter ownership, mask chunks
``optimizer_rules.py``   the optimizers' hyper-parameter records and rules
=======================  =================================================

Each device compiles them with its own decorator, in one module:
``cpu/bodies.py`` with ``numba.njit(inline="always")`` and ``cuda/bodies.py``
with ``numba.cuda.jit(device=True)``.  A kernel then calls, say,
``rng.random_bits(seed, counter)`` and gets the version for its device.

**Bodies that call bodies.**  ``rng.random_bits`` calls ``rng.mix64``.
Numba compiles a function by looking up the names it uses in the function's
module globals, where ``mix64`` is the plain Python function: a compiled
kernel could not call it.  :func:`compile_module` therefore copies the
module's namespace, swaps every function defined there for its compiled
version, and *re-creates* each function over that copy (same code object,
new globals): ``random_bits`` compiled for the GPU finds the GPU ``mix64``.
The same swap lets a device replace a helper by its own (the CPU's softmax
uses its vectorised ``exp``) and hand one shared module to another
(``rng``'s multinomial sorts with ``rows``).

Numba's disk cache checks only a kernel's own file for changes;
:mod:`minitorch.backends.kernel_cache` stamps each kernel with the code it
is built from instead (the bodies it reaches included), so editing a body
here recompiles exactly the kernels of both devices that use it.

**Kernels derived from kernels.**  The same swap, one level up: a family's
kernel is another family's *loop* compiled with a different scalar
function (:func:`derive`): the zip loop with ``compare`` for each element is
the ``compare`` kernel.  So a loop is written once (by the student, in the
course) and every family runs it, on both devices.
"""

from __future__ import annotations

import types
from typing import Any, Callable


def compile_module(module: types.ModuleType, compile: Callable[[Callable], Any],
                   **replace: Any) -> types.ModuleType:
    """A copy of the body module ``module`` whose functions are compiled by ``compile``.

    ``compile`` is a decorator (``njit(inline="always")``,
    ``cuda.jit(device=True)``); every function *defined in* ``module`` is
    compiled with it, lazily, on its first use from a kernel.  ``replace``
    maps names of the module's globals to what the compiled functions
    should see instead (another compiled module, a device's own helper).
    Constants and imported modules (``math``, ``numpy``) are kept, so a
    kernel may also read ``module.CONSTANT`` through the copy.
    """
    namespace = dict(vars(module))
    namespace.update(replace)
    bodies = [name for name, value in namespace.items()
              if isinstance(value, types.FunctionType) and value.__module__ == module.__name__
              and name not in replace]
    for name in bodies:
        fn = namespace[name]
        rebound = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__,
                                     fn.__closure__)
        rebound.__qualname__ = fn.__qualname__
        rebound.__doc__ = fn.__doc__
        namespace[name] = compile(rebound)
    compiled = types.ModuleType(module.__name__, module.__doc__)
    compiled.__dict__.update(namespace)
    return compiled


def derive(task_kernel: Any, name: str, compile: Callable[[Callable], Any],
           **means: Any) -> Any:
    """The kernel ``name``: ``task_kernel``'s own code, compiled by ``compile``, in which
    ``scalar_ops.<key>`` means ``means[key]`` (another family's scalar function).

    With ``compile = njit(cache=True)``, ``derive(arith_contiguous, "compare_contiguous",
    compile, arith=scalar_ops.compare)`` is the zip kernel of the ``compare`` family:
    the task's loop, with ``compare`` for each element.

    ``task_kernel`` is a compiled kernel (its ``py_func`` is read) whose module
    imports ``scalar_ops``: that module (the device's compiled one) is copied with
    the names of ``means`` replaced, and the code is re-created over a copy of the
    kernel's globals in which ``scalar_ops`` is the copy, as :func:`compile_module`
    does for bodies.  ``compile`` is the device's kernel decorator
    (``njit(cache=True, ...)``, the CUDA backend's ``kernel``).

    The code object is the task kernel's, so the twin is whatever the student
    wrote (a stub included): there is no second copy of the loop to read the
    answer from, and a wrong loop is wrong in every family.  Numba caches the
    twin on disk like any kernel: its cache file is named after ``name`` (its
    ``__qualname__``), and its key holds a hash of the code, so a changed task
    kernel is compiled again.
    """
    fn = task_kernel.py_func
    base = fn.__globals__.get("scalar_ops")
    if not isinstance(base, types.ModuleType):
        raise TypeError(f"cannot derive {name!r} from {fn.__qualname__} "
                        f"({fn.__code__.co_filename}): its module has no scalar_ops to swap")
    ops = types.ModuleType(base.__name__, base.__doc__)
    ops.__dict__.update(vars(base))
    ops.__dict__.update(means)
    return compile(_twin(fn, name, {"scalar_ops": ops},
                         f"``{fn.__name__}`` with {', '.join(means)} replaced (see "
                         ":func:`minitorch.backends.shared_bodies.derive`)."))


def rebind(kernel: Any, name: str, compile: Callable[[Callable], Any], **names: Any) -> Any:
    """The kernel ``name``: ``kernel``'s own code, compiled by ``compile``, in which each
    global name of ``names`` means its value.

    :func:`derive` rebinds ``scalar_ops``; a parallel driver that runs a serial
    kernel on chunks can be rebound to run another one:
    ``rebind(arith_contiguous_parallel, "_add_zip_parallel", njit(parallel=True),
    arith_contiguous=_add_zip)``.  Numba caches the result as it caches
    :func:`derive`'s twins (its cache file is named after ``name``).
    """
    fn = kernel.py_func
    return compile(_twin(fn, name, names, f"``{fn.__name__}`` with {', '.join(names)} "
                         "replaced (see :func:`minitorch.backends.shared_bodies.rebind`)."))


def _twin(fn: types.FunctionType, name: str, names: dict, doc: str) -> types.FunctionType:
    """``fn``'s code as a function called ``name``, over its globals with ``names`` in."""
    twin = types.FunctionType(fn.__code__, dict(fn.__globals__, **names), name,
                              fn.__defaults__, fn.__closure__)
    twin.__qualname__ = name
    twin.__doc__ = doc
    return twin

"""The signatures CUDA kernels are launched with: recorded, listed, checked.

A kernel is compiled once per *signature*: the Numba types of the arguments
it is launched with (``float32[::1]`` is a C-contiguous 1-d float32 array,
``UniTuple(int64, 2)`` a pair of ints).  Numba's CUDA simulator, which the
tests run on, never compiles, so ``tests/cuda_signatures.json`` lists every
signature the CUDA tests launch and ``tests/test_cuda_ptx.py`` compiles each
of them for real GPUs (NVVM and ``ptxas``, no GPU needed).

This module keeps the list honest.  :func:`watched` (called by
``launch.kernel`` for every kernel) wraps a kernel in a
:class:`WatchedKernel` only when one of two variables is set:

- :data:`SIGNATURES_ENV` names the list (``tests/conftest.py`` sets it): a
  launch whose signature is not listed raises :class:`UnlistedLaunch`;
- :data:`RECORD_ENV` names a folder: every launch's signature is written
  there (``tools/cuda_signatures.py`` records the list so).

Neither set, :func:`watched` returns Numba's kernel itself: no cost.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np
from numba.core import types
from numba.core.typing.typeof import Purpose, typeof
from numba.np.numpy_support import from_dtype

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


def watched(kernel: Any, name: str) -> Any:
    """``kernel`` (a compiled CUDA kernel named ``name``, ``"module.qualname"``), wrapped
    in a :class:`WatchedKernel` when :data:`SIGNATURES_ENV` or :data:`RECORD_ENV` is set
    (read when the kernel is decorated); otherwise ``kernel`` itself."""
    if os.environ.get(SIGNATURES_ENV) or os.environ.get(RECORD_ENV):
        return WatchedKernel(kernel, name)
    return kernel

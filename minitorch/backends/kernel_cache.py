"""Numba's disk cache, told which code a kernel is built from.

Every kernel is compiled with ``cache=True``: the first process writes the
machine code to disk, and the next one loads it instead of compiling again.
Before it loads a kernel, Numba checks that the code is not stale by
comparing a *stamp* of the kernel's source file (its modification time and
size) with the stamp saved beside the machine code.  It looks at that one
file only, and at all of it.

Both are wrong for minitorch:

* **Too little.**  A kernel is built from more than its own file.  The
  arithmetic of ``a + b``, the random-number hash, the row sort and the
  optimizer rules are written once, in the device-neutral modules of
  ``minitorch/backends`` (``scalar_ops.py``, ``rng.py``, ``rows.py`` ...),
  and compiled *into* the CPU and the CUDA kernels (see
  :mod:`minitorch.backends.shared_bodies`).  Edit ``scalar_ops.py`` and, by
  Numba's rule, ``cpu/elementwise.py`` did not change: the next run would
  load kernels with the old arithmetic.
* **Too much.**  Edit one function of ``cpu/elementwise.py`` (a student
  doing task 2.2) and, by Numba's rule, every kernel of the file is stale,
  and so is every kernel whose line number moved: dozens of kernels compile
  again, for a change that only two or three of them contain.

So this module gives each kernel a stamp of exactly the code it is built
from.  Numba compiles a function by looking up the *global names* its byte
code loads (``LOAD_GLOBAL``) in the function's module, then the attributes
it reads from them (``scalar_ops.arith``), and by inlining or calling the
compiled functions it finds there, recursively.  :func:`kernel_sources`
follows the same path from a kernel's Python function and collects:

* every *top-level function* it reaches (decorators included, so
  ``@njit(fastmath=True)`` counts), in any file of the package;
* for every file it reaches, the file's *outline*: everything that is not a
  top-level function (imports, constants, ``_JIT = dict(...)``, the lines
  that build a compiled body module).  Changing any of it restamps every
  kernel that uses the file: the safe side;
* the value of every constant it reads (Numba freezes globals into the
  machine code), and the options of every compiled function it calls;
* a whole file where following names is not enough: a plain Python
  function called from compiled code (Numba compiles the ``@overload``
  registered for it, which no name leads to), or a name not yet defined
  when the kernel is decorated.

Its stamp (:func:`kernel_digest`) is a SHA-256 of that code, read as syntax
(``ast.dump``): a comment or a blank line is no change.  Edit a body in
``scalar_ops.py`` and exactly the kernels that use it compile again (on the
CPU and the GPU); edit task 2.2 and only the kernels built from task 2.2
do.  Numba's own stamp (the file's modification time) is dropped, and so
is the line number Numba puts in a cache file's name: moving a function
down a file changes neither its text nor what it uses.

How: Numba asks a list of *cache locators* (``numba.core.caching``), in
order, where a function's cache lives and what its stamp is.
:func:`install` puts :class:`KernelSourceLocator` first.  It answers only
for kernels defined under one of :data:`ROOTS` (``minitorch/backends``);
for them it asks Numba's own locators where the cache lives (so
``NUMBA_CACHE_DIR`` works as usual) and replaces the stamp.  Every other
library's kernels are left to Numba.  Numba asks when the kernel is
*decorated*, while its module is still being imported: the walk sees the
globals defined so far, which is why a name not yet defined costs the
kernel its whole file.

**The GPU.**  The CUDA kernels are cached by numba-cuda, which keeps a
cache machinery of its own (``numba.cuda.core.caching``: its own list of
locators, its own ``CacheImpl``).  :func:`install_cuda` puts
:class:`CUDAKernelSourceLocator` (the same stamp, falling back through
numba-cuda's locators) first in that list.  It imports ``numba.cuda``, so it
is not called by ``import minitorch``: ``backends/cuda/launch.py`` calls it
right after its own ``from numba import cuda``, before any CUDA kernel is
decorated.
"""

from __future__ import annotations

import ast
import builtins
import dis
import enum
import hashlib
import importlib
import json
import os
import re
import sys
import types
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from . import prebuilt_kernels

#: The ``minitorch`` package directory: the code a stamp follows is the code under it.
PACKAGE = Path(__file__).resolve().parent.parent

#: Kernels defined in a file under one of these folders get the per-kernel stamp.
ROOTS: list[Path] = [PACKAGE / "backends"]


# ---------------------------------------------------------------------------
# A file: its top-level functions and its outline
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Outline:
    """A source file cut into its top-level functions and everything else.

    Each part is kept as a hash of its syntax tree (``ast.dump``), not of its
    text: a comment, a blank line or a line moved is no change to the code.
    """

    #: ``(first line, last line, name, syntax)`` of each top-level ``def``, decorators
    #: included (lines 1-based, inclusive); ``syntax`` is the SHA-256 of its tree's dump.
    defs: tuple
    #: ``{(first, last): task ids}`` of the top-level functions that hold a course task
    #: (a ``# Task M.N:`` line, or an edition's stub ``raise NotImplementedError("Task M.N: ...")``).
    tasks: dict
    #: The syntax of every top-level statement that is not a function (a SHA-256).
    outline: str
    #: The whole file's syntax, every top-level statement in order (a SHA-256).
    whole: str

    def span_at(self, lineno: int) -> tuple | None:
        """``(first, last)`` of the top-level function holding line ``lineno``, if any."""
        for first, last, _, _ in self.defs:
            if first <= lineno <= last:
                return first, last
        return None

    def syntax(self, span: tuple) -> str:
        """The syntax of the top-level function at ``span``."""
        return next(tree for first, last, _, tree in self.defs if (first, last) == span)

    def name(self, span: tuple) -> str:
        return next(name for first, last, name, _ in self.defs if (first, last) == span)


def outline(path: Path) -> Outline:
    """The :class:`Outline` of ``path`` (parsed once per state of the file)."""
    stat = path.stat()
    return _outline(str(path), stat.st_mtime_ns, stat.st_size)


#: Bumped when :class:`Outline` or the way it is computed changes (the files on disk).
_OUTLINE_VERSION = 1


@lru_cache(maxsize=None)
def _outline(path_name: str, mtime_ns: int, size: int) -> Outline:
    """The outline of a file, from its copy on disk when the file's text is the same.

    Parsing and dumping a file's syntax tree takes about 60 ms; a program that
    computes imports some twenty kernel files, which made every process start
    1.3 s later.  So the outline is kept in a small JSON file beside Numba's
    cache (:func:`_outline_file`), under the SHA-256 of the source's bytes: a
    changed file is parsed again, whatever its modification time says.
    """
    data = Path(path_name).read_bytes()
    key = hashlib.sha256(data).hexdigest()
    stored = _outline_file(Path(path_name))
    try:
        kept = json.loads(stored.read_text(encoding="utf-8"))
        if kept["version"] == _OUTLINE_VERSION and kept["sha256"] == key:
            return Outline(tuple((int(a), int(b), str(n), str(h)) for a, b, n, h in kept["defs"]),
                           {(int(a), int(b)): frozenset(ids) for a, b, ids in kept["tasks"]},
                           str(kept["outline"]), str(kept["whole"]))
    except (OSError, ValueError, KeyError, TypeError):
        pass                        # none yet, another file's, or damaged: parse the file
    shape = _parse(data.decode("utf-8"), path_name)
    record = {"version": _OUTLINE_VERSION, "sha256": key, "defs": shape.defs,
              "tasks": [[a, b, sorted(ids)] for (a, b), ids in shape.tasks.items()],
              "outline": shape.outline, "whole": shape.whole}
    try:
        stored.parent.mkdir(parents=True, exist_ok=True)
        partial = stored.with_name(f"{stored.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(record), encoding="utf-8")
        os.replace(partial, stored)         # never a half-written file under the real name
    except OSError:
        pass                                # a read-only checkout: parse again next time
    return shape


def _parse(text: str, path_name: str) -> Outline:
    lines = text.splitlines()
    tree = ast.parse(text, path_name)
    defs, rest, tasks, order = [], [], {}, []
    for node in tree.body:
        syntax = hashlib.sha256(ast.dump(node).encode()).hexdigest()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            defs.append((first, node.end_lineno, node.name, syntax))
            ids = {m.group(2) for line in lines[first - 1:node.end_lineno]
                   for m in _TASK.finditer(line)}
            if ids:
                tasks[(first, node.end_lineno)] = frozenset(ids)
            order.append("def " + syntax)
        else:
            rest.append(syntax)
            order.append(syntax)
    digest = lambda parts: hashlib.sha256("\n".join(parts).encode()).hexdigest()  # noqa: E731
    return Outline(tuple(defs), tasks, digest(rest), digest(order))


def _outline_file(path: Path) -> Path:
    """Where the outline of ``path`` is kept: beside the kernels' caches.

    Under ``MINITORCH_KERNEL_CACHE_BY_CONTENT`` (shared by many copies of the
    repository) or ``NUMBA_CACHE_DIR`` when set, else in the ``__pycache__``
    folder beside the file, as Python's byte code is.
    """
    from numba.core import config
    rel = (path.relative_to(PACKAGE.parent) if path.is_relative_to(PACKAGE.parent)
           else Path(path.name))
    shared = _by_content() or config.CACHE_DIR
    if shared:
        return Path(shared) / "outlines" / rel.with_suffix(".outline.json")
    return path.parent / "__pycache__" / f"{path.stem}.outline.json"


#: A course task's marker: ``# Task 2.2: ...`` in the reference, the stub's message
#: ``"Task 2.2: ..."`` in an edition.
_TASK = re.compile(r"(#|[\"'])\s*Task (\d+\.\d+): ")


# ---------------------------------------------------------------------------
# A kernel: the code it is built from
# ---------------------------------------------------------------------------
_GLOBAL_OPS = {dis.opmap[name] for name in ("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL",
                                             "LOAD_NAME") if name in dis.opmap}
_ATTR_OPS = {dis.opmap[name] for name in ("LOAD_ATTR", "LOAD_METHOD") if name in dis.opmap}
# Since Python 3.11 LOAD_GLOBAL's argument is the name's index times two (plus a flag), and
# since 3.12 LOAD_ATTR's is too.
_SHIFTED = {dis.opmap["LOAD_GLOBAL"]} if sys.version_info >= (3, 11) else set()
if sys.version_info >= (3, 12):
    _SHIFTED.add(dis.opmap["LOAD_ATTR"])


@lru_cache(maxsize=None)
def _names(code: types.CodeType) -> tuple:
    """``(global names, attribute names)`` that ``code`` and the code nested in it load.

    Read straight from the byte code (two bytes an instruction; ``dis`` would
    do the same, ten times slower, and this runs while the kernels are
    decorated, at import)."""
    globals_, attrs = set(), set()
    todo = [code]
    while todo:
        current = todo.pop()
        raw, names, extended = current.co_code, current.co_names, 0
        for i in range(0, len(raw), 2):
            op, arg = raw[i], raw[i + 1] | extended
            if op == dis.EXTENDED_ARG:
                extended = arg << 8
                continue
            extended = 0
            if op in _GLOBAL_OPS:
                globals_.add(names[arg >> 1 if op in _SHIFTED else arg])
            elif op in _ATTR_OPS:
                attrs.add(names[arg >> 1 if op in _SHIFTED else arg])
        todo.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return tuple(sorted(globals_)), tuple(sorted(attrs))


def _names_by_dis(code: types.CodeType) -> tuple:
    """:func:`_names` by the standard library's ``dis`` (the tests compare the two)."""
    globals_, attrs = set(), set()
    todo = [code]
    while todo:
        current = todo.pop()
        for ins in dis.get_instructions(current):
            if ins.opcode in _GLOBAL_OPS:
                globals_.add(ins.argval)
            elif ins.opcode in _ATTR_OPS:
                attrs.add(ins.argval)
        todo.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return tuple(sorted(globals_)), tuple(sorted(attrs))


_PLAIN = (bool, int, float, complex, str, bytes, type(None))


def _constant(value: Any) -> str | None:
    """A text for a value Numba would freeze into machine code, or None if not one."""
    if isinstance(value, (enum.Enum, *_PLAIN, np.generic)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        parts = [_constant(v) for v in value]
        return None if None in parts else f"{type(value).__name__}({', '.join(parts)})"
    if isinstance(value, np.ndarray):
        data = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return f"ndarray({value.dtype.str}, {value.shape}, {data})"
    if isinstance(value, np.dtype):
        return f"dtype({value.str})"
    from numba.core import types as numba_types  # noqa: E402  (Numba's types, once Numba is loaded)
    if isinstance(value, numba_types.Type):
        return f"numba type {value}"
    return None


@lru_cache(maxsize=None)
def _package_file(file_name: str) -> Path | None:
    if file_name.startswith("<"):
        return None
    path = Path(file_name).resolve()
    return path if path.is_relative_to(PACKAGE) and path.is_file() else None


class _Walk:
    """What one kernel is built from (see :func:`kernel_sources`)."""

    def __init__(self) -> None:
        self.spans: dict = {}        # file -> {(first, last)} of the top-level functions used
        self.whole: set = set()      # files used as a whole
        self.values: set = set()     # texts of the constants and options read
        self.tasks: set = set()      # the course tasks whose functions it reaches
        self._seen: set = set()
        self._keep: list = []        # the objects seen (their ids stay theirs)

    def _once(self, *key: Any) -> bool:
        if key in self._seen:
            return False
        self._seen.add(key)
        return True

    @staticmethod
    def _home(file_name: str | None) -> Path | None:
        """The file ``file_name`` if it belongs to the package (its code is followed)."""
        return _package_file(file_name) if file_name else None

    def function(self, fn: types.FunctionType, compiled: bool) -> None:
        """A Python function: its text, and what its names lead to.  ``compiled``: Numba
        compiles it (its calls of plain functions go to overloads)."""
        if not self._once("function", id(fn), compiled):
            return
        self._keep.append(fn)
        code = fn.__code__
        home = self._home(code.co_filename)
        if home is not None:
            shape = outline(home)
            span = shape.span_at(code.co_firstlineno)
            if span is None:               # a lambda or class-level code: the whole file
                self.whole.add(home)
            else:
                self.spans.setdefault(home, set()).add(span)
                self.tasks |= shape.tasks.get(span, frozenset())
        names, attrs = _names(code)
        for name in names:
            if name in fn.__globals__:
                self.value(fn.__globals__[name], attrs, compiled, name)
            elif not hasattr(builtins, name) and home is not None:
                # Defined later in the file (Numba looks it up at the first call):
                # only the whole file says what it will be.
                self.whole.add(home)
        for cell in fn.__closure__ or ():
            try:
                contents = cell.cell_contents
            except ValueError:          # an empty cell
                continue
            self.value(contents, attrs, compiled, "<closure>")
        for default in (fn.__defaults__ or ()) + tuple((fn.__kwdefaults__ or {}).values()):
            self.value(default, attrs, compiled, "<default>")

    def value(self, obj: Any, attrs: tuple, compiled: bool, label: str) -> None:
        """An object a function's names lead to."""
        py_func = getattr(obj, "py_func", None)
        if isinstance(py_func, types.FunctionType):          # a compiled function
            options = getattr(obj, "targetoptions", None)
            if options is not None:
                self.values.add(f"{label} options {_canonical(options)}")
            self.function(py_func, True)
            return
        if isinstance(obj, types.FunctionType):              # a plain function
            self.function(obj, compiled)
            home = self._home(obj.__code__.co_filename)
            if compiled and home is not None:
                self.whole.add(home)        # called from compiled code: through an overload
            return
        defn = getattr(obj, "_defn", None)                   # an @intrinsic
        if isinstance(defn, types.FunctionType):
            self.function(defn, False)
            return
        if isinstance(obj, types.ModuleType) or isinstance(obj, type):
            if isinstance(obj, types.ModuleType):
                file = vars(obj).get("__file__")
                # A namespace made in code (``types.ModuleType("cpu_device")``) has no
                # file: its attributes are followed, where it was made is the outline.
                synthetic = file is None and not hasattr(obj, "__path__") \
                    and obj.__name__ not in sys.modules
                home = self._home(file)
            else:
                module = sys.modules.get(obj.__module__)
                home = self._home(getattr(module, "__file__", None))
                synthetic = False
            if home is None and not synthetic:   # numpy, math, numba.cuda: not ours to follow
                self.values.add(f"{label} = {getattr(obj, '__name__', '?')}")
                return
            if home is not None:
                self.spans.setdefault(home, set())            # its outline
            namespace = vars(obj)
            for attr in attrs:
                if attr in namespace and self._once("attr", id(obj), attr):
                    self._keep.append(obj)
                    self.value(namespace[attr], attrs, compiled, f"{label}.{attr}")
            return
        text = _constant(obj)
        if text is not None:
            self.values.add(f"{label} = {text}")
            return
        module_name = getattr(obj, "__module__", None) or type(obj).__module__
        module = sys.modules.get(module_name or "")
        home = self._home(getattr(module, "__file__", None))
        if home is not None:                # an object of ours that is none of the above
            self.whole.add(home)
        else:
            name = getattr(obj, "__qualname__", type(obj).__qualname__)
            self.values.add(f"{label} = {module_name}.{name}")


def _canonical(value: Any) -> str:
    """``repr`` of a compiled function's options, the same in every process: a set's
    order follows string hashing, which changes from process to process
    (``fastmath={'contract', 'reassoc'}`` gave two stamps for one kernel)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_canonical(v)}" for k, v in
                               sorted(value.items(), key=lambda kv: repr(kv[0]))) + "}"
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(_canonical(v) for v in value)) + "}"
    if isinstance(value, (list, tuple)):
        return type(value).__name__ + "(" + ", ".join(_canonical(v) for v in value) + ")"
    return repr(value)


def _relative(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent)) if path.is_relative_to(PACKAGE.parent) \
        else str(path)


def _walk(py_func: types.FunctionType) -> _Walk:
    walk = _Walk()
    walk.function(py_func, True)
    # A whole file holding tasks may lead to any of them.
    for file in walk.whole:
        walk.tasks.update(*outline(file).tasks.values())
    return walk


def tasks_built_in(py_func: types.FunctionType) -> set:
    """The course tasks (``{"2.2", ...}``) whose functions the kernel ``py_func`` is built from."""
    return _walk(py_func).tasks


def kernel_sources(py_func: types.FunctionType) -> list:
    """What the kernel ``py_func`` is built from, as a student would list it.

    One line per piece, sorted: ``"minitorch/backends/scalar_ops.py: arith"``
    (a top-level function), ``"minitorch/backends/cpu/vmath.py (whole file)"``,
    ``"minitorch/backends/cpu/bodies.py (outline)"``.  The outline of every file
    named is part of the stamp too.
    """
    walk = _walk(py_func)
    lines = []
    for file in sorted(set(walk.spans) | walk.whole):
        if file in walk.whole:
            lines.append(f"{_relative(file)} (whole file)")
            continue
        lines.append(f"{_relative(file)} (outline)")
        shape = outline(file)
        lines.extend(f"{_relative(file)}: {shape.name(span)}" for span in sorted(walk.spans[file]))
    return lines


def kernel_digest(py_func: types.FunctionType) -> str:
    """The stamp of the kernel ``py_func``: a SHA-256 of the code it is built from.

    The text of every file named by :func:`kernel_sources` (its outline and
    the functions used, or all of it), the constants it reads and the
    options of the compiled functions it calls.  Line numbers play no part.
    """
    return _digest(_walk(py_func))


def _digest(walk: _Walk) -> str:
    hasher = hashlib.sha256()
    for file in sorted(set(walk.spans) | walk.whole):
        shape = outline(file)
        hasher.update(f"\0file {_relative(file)}\0".encode())
        if file in walk.whole:
            hasher.update(shape.whole.encode())
            continue
        hasher.update(shape.outline.encode())
        for span in sorted(walk.spans[file], key=shape.syntax):
            hasher.update(b"\0def\0" + shape.syntax(span).encode())
    for text in sorted(walk.values):
        hasher.update(b"\0value\0" + text.encode())
    return hasher.hexdigest()


# ---------------------------------------------------------------------------
# The locator
# ---------------------------------------------------------------------------
def _watched(py_file: str) -> bool:
    path = Path(py_file).resolve()
    return any(path.is_relative_to(root.resolve()) for root in ROOTS)


#: A folder: kernels are cached by content there (see :func:`_by_content`).
BY_CONTENT_ENV = "MINITORCH_KERNEL_CACHE_BY_CONTENT"


def _by_content() -> str | None:
    """The folder of a cache shared by several copies of the repository, or None.

    With ``MINITORCH_KERNEL_CACHE_BY_CONTENT=DIR`` a kernel's cache lives in
    ``DIR/<package folder>/<kernel_digest[:20]>/``: two checkouts in which a
    kernel is built from the same text share its machine code, wherever they
    are on disk, and two in which it differs never meet (each version has its
    own folder, so two processes never overwrite each other's files).  The
    course's CI checks many copies of the repository (editions) with it; a
    working copy that keeps changing would leave a folder per version.
    """
    return os.environ.get(BY_CONTENT_ENV) or None


#: Set to 1 by the course's test runs (``minitorch course test/grade``).
COURSE_CHECKS_ENV = "MINITORCH_COURSE_CHECKS"


#: The tasks whose code is the student's (``"2.1,2.2"``): set by the course's runs in an
#: edition; unset, every task's.
COURSE_TASKS_ENV = "MINITORCH_COURSE_TASKS"


def course_checks() -> bool:
    """Is this a course test run (``MINITORCH_COURSE_CHECKS=1``, set by the course's runs)?"""
    return os.environ.get(COURSE_CHECKS_ENV, "") == "1"


def _students_code(tasks: set) -> bool:
    """Do ``tasks`` include one whose code is the student's, in this course run?"""
    if not tasks or not course_checks():
        return False
    listed = os.environ.get(COURSE_TASKS_ENV)
    return listed is None or bool(tasks & set(listed.split(",")))


def _one_of_a_kind(py_func: types.FunctionType) -> bool:
    """Is ``py_func`` the only function its file could file under its name?

    A top-level function (or a twin named on purpose, see ``_derive``) is;
    a nested function or a lambda is not (a factory makes many with one
    name), nor a name two top-level functions of the file share.  Those keep
    Numba's line number in their cache file's name.
    """
    qualname = py_func.__qualname__
    if "<" in qualname:
        return False
    home = _Walk._home(py_func.__code__.co_filename)
    if home is None:
        return False
    names = [name for _, _, name, _ in outline(home).defs]
    return names.count(qualname) <= 1


class KernelSourceLocator:
    """Numba's own cache locator for a kernel, with the kernel's own stamp.

    Wraps the locator Numba would have picked (the folder from
    ``NUMBA_CACHE_DIR``, else ``__pycache__`` beside the file, else a
    per-user folder): the same place on disk; the stamp
    :func:`kernel_digest`; a file name without the line number (for a
    function that is the only one of its name in its file).

    **The course's checks.**  In a course test run (``MINITORCH_COURSE_CHECKS=1``)
    a kernel built from a task's function, the student's code (in an edition,
    its tasks, listed in ``MINITORCH_COURSE_TASKS``), is compiled with bounds
    checks (:attr:`checked`: a write past the end of an array
    raises ``IndexError`` instead of corrupting memory unseen).  Such a
    kernel is other machine code than the same kernel without checks, so its
    cache file gets a name of its own (``-boundscheck``): a checked run never
    loads an unchecked kernel.  Every other kernel is compiled as in any run,
    and shares its cache with them.  (The CUDA kernels of a course run are
    compiled in debug mode and never cached: ``backends/cuda/launch.py``.)
    """

    #: The module whose ``CacheImpl`` lists the locators this one falls back to (and
    #: heads, once installed): Numba's for the CPU kernels.
    caching_module = "numba.core.caching"

    def __init__(self, inner: Any, py_func: types.FunctionType, py_file: str) -> None:
        self._inner = inner
        # A str, as in Numba's own locators: Numba passes it to warnings.warn_explicit
        # when a kernel cannot be cached, which refuses a Path.
        self._py_file = str(py_file)
        self._named = _one_of_a_kind(py_func)
        # Numba asks for the stamp and the cache path once, when the kernel is decorated.
        walk = _walk(py_func)
        self._digest = _digest(walk)
        #: Compile this kernel with bounds checks (a course run, a task's code in it).
        self.checked = self._bounds_checked(walk)

    @staticmethod
    def _bounds_checked(walk: _Walk) -> bool:
        from numba.core import config  # noqa: E402  (Numba's settings, once Numba is loaded)
        return bool(config.BOUNDSCHECK or (config.BOUNDSCHECK is None
                                           and _students_code(walk.tasks)))

    @classmethod
    def cache_impl(cls) -> Any:
        """The ``CacheImpl`` class whose ``_locator_classes`` this locator belongs in."""
        return importlib.import_module(cls.caching_module).CacheImpl

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> KernelSourceLocator | None:
        """A locator for a kernel under :data:`ROOTS`; ``None`` (Numba decides) otherwise.

        The place on disk is asked of the locators that follow this one in its
        own list (:meth:`cache_impl`): Numba's for a CPU kernel, numba-cuda's
        for a GPU kernel (they read their own ``NUMBA_CACHE_DIR`` setting).
        """
        if not _watched(py_file):
            return None
        for fallback in cls.cache_impl()._locator_classes:
            if issubclass(fallback, KernelSourceLocator):
                continue
            inner = fallback.from_function(py_func, py_file)
            if inner is not None:
                return cls(inner, py_func, py_file)
        return None

    def ensure_cache_path(self) -> None:
        shared = _by_content()
        if shared is None:
            self._inner.ensure_cache_path()
        else:
            Path(self.get_cache_path()).mkdir(parents=True, exist_ok=True)

    def get_cache_path(self) -> str:
        shared = _by_content()
        if shared is None:
            return self._inner.get_cache_path()
        return str(Path(shared) / self.content_path())

    def content_path(self) -> Path:
        """Where a cache shared by content files this kernel, relative to its folder:
        ``minitorch/backends/cpu/<kernel_digest[:20]>`` (also the prebuilt kernels' layout,
        :mod:`~minitorch.backends.prebuilt_kernels`)."""
        file = Path(self._py_file).resolve()
        rel = (file.parent.relative_to(PACKAGE.parent) if file.is_relative_to(PACKAGE.parent)
               else Path(file.parent.name))
        return rel / self._digest[:20]

    def get_disambiguator(self) -> str:
        # Numba names a cache file after the function and its first line.  The line plays
        # no part in what a kernel is (its stamp is the text): dropping it keeps a kernel's
        # cache valid when an edit above it moves it down the file.
        # A kernel compiled with bounds checks (NUMBA_BOUNDSCHECK=1, or a task's kernel in a
        # course run) is another machine code than the same kernel without them, but
        # Numba's cache index does not tell the two apart: without a name of its own, a
        # run with checks would load the unchecked kernel from the cache (and a write past
        # the end would pass unseen).
        line = "any" if self._named else self._inner.get_disambiguator()
        return line + ("-boundscheck" if self.checked else "")

    def get_source_stamp(self) -> tuple:
        return ("kernel", self._digest)


def _enable_caching(dispatcher: Any) -> None:
    """Numba's ``Dispatcher.enable_caching``, then the course's bounds checks.

    Numba creates a kernel's cache (and asks its locator) when ``@njit(cache=True)``
    decorates it, before anything is compiled: the moment to switch bounds
    checking on for a kernel built from a student's code.  The dispatcher
    compiles with this very ``targetoptions`` dict."""
    _numba_enable_caching(dispatcher)
    locator = getattr(getattr(dispatcher._cache, "_impl", None), "locator", None)
    if isinstance(locator, KernelSourceLocator) and locator.checked:
        dispatcher.targetoptions["boundscheck"] = True


_numba_enable_caching = None


def install() -> None:
    """Put :class:`KernelSourceLocator` first in Numba's list of cache locators.

    Called by ``backends/cpu/__init__.py`` before any kernel module is
    imported (Numba picks a kernel's locator when ``@njit(cache=True)``
    decorates it).  Also wraps the CPU dispatcher's ``enable_caching`` (see
    :func:`_enable_caching`).  Calling it again does nothing.
    """
    global _numba_enable_caching, _numba_load_overload
    _put_first(KernelSourceLocator)
    from numba.core.caching import Cache
    from numba.core.dispatcher import Dispatcher
    if _numba_enable_caching is None:
        _numba_enable_caching = Dispatcher.enable_caching
        Dispatcher.enable_caching = _enable_caching
    if _numba_load_overload is None:
        _numba_load_overload = Cache._load_overload
        Cache._load_overload = _load_overload


def _load_overload(cache: Any, sig: Any, target_context: Any) -> Any:
    """Numba's look-up of a compiled kernel in its disk cache, then in the kernels shipped
    with the package (:mod:`~minitorch.backends.prebuilt_kernels`) for a kernel of ours."""
    found = _numba_load_overload(cache, sig, target_context)
    if found is None and cache._enabled \
            and isinstance(getattr(cache._impl, "locator", None), KernelSourceLocator):
        found = prebuilt_kernels.load(cache, sig, target_context)
    return found


_numba_load_overload = None


class CUDAKernelSourceLocator(KernelSourceLocator):
    """:class:`KernelSourceLocator` for the CUDA kernels, in numba-cuda's own list.

    numba-cuda (``numba.cuda``) does not use Numba's cache classes but copies of
    them (``numba.cuda.core.caching``); its ``CUDACache`` asks its own list of
    locators.  Without this one there, a GPU kernel would be stamped by its own
    file's modification time only: after an edit to ``scalar_ops.py`` it would
    load the machine code of the old arithmetic.

    Bounds checks: numba-cuda never compiles them into a kernel (its target
    context switches them off, ``NUMBA_BOUNDSCHECK=1`` or not), so a CUDA
    kernel has one machine code and one cache name.  A course run's CUDA
    kernels are compiled in debug mode and never cached (``cuda/launch.py``).
    """

    caching_module = "numba.cuda.core.caching"

    @staticmethod
    def _bounds_checked(walk: _Walk) -> bool:
        return False


def install_cuda() -> None:
    """Put :class:`CUDAKernelSourceLocator` first in numba-cuda's list of cache locators.

    Imports ``numba.cuda``: called by ``backends/cuda/launch.py`` (the module
    every CUDA kernel module imports before it decorates a kernel), never at
    ``import minitorch``.  Calling it again does nothing.
    """
    _put_first(CUDAKernelSourceLocator)


def _put_first(locator: type) -> None:
    """Put ``locator`` first in the list of its ``CacheImpl``, once."""
    impl_class = locator.cache_impl()
    locators = impl_class._locator_classes
    if locator not in locators:
        # A new list, not an insert: a subclass with its own list keeps it.
        impl_class._locator_classes = [locator, *locators]

"""Numba's disk cache, told which files a kernel's code comes from.

Every kernel is compiled with ``cache=True``: the first process writes the
machine code to disk, and the next one loads it instead of compiling again.
Before it loads a kernel, Numba checks that the code is not stale by
comparing a *stamp* of the kernel's source file (a hash of its text) with
the stamp saved beside the machine code.  It looks at that one file only.

But a minitorch kernel is built from more than its own file.  The arithmetic
of ``a + b``, the random-number hash, the row sort and the optimizer rules
are written once, in the device-neutral modules of ``minitorch/backends``
(``scalar_ops.py``, ``rng.py``, ``rows.py`` ...), and compiled *into* the
CPU and the CUDA kernels (see :mod:`minitorch.backends.shared_bodies`).  Edit
``scalar_ops.py`` and, by Numba's rule, ``cpu/elementwise.py`` did not
change: the next run would load kernels with the old arithmetic.

This module fixes that once, for every kernel: a kernel's stamp becomes a
hash of its file **and of every file of the package it imports, followed
transitively** (``from .. import scalar_ops``, ``from .bodies import rng``,
...).  Change any of them and the stamp differs, so Numba compiles the
kernel again and overwrites the stale copy.  Nothing has to be kept in step
by hand.

How: Numba asks a list of *cache locators* (``numba.core.caching``), in
order, where a function's cache lives and what its stamp is.
:func:`install` puts :class:`KernelSourceLocator` first.  It answers only
for kernels defined under one of :data:`ROOTS` (``minitorch/backends``);
for them it asks Numba's own locators where the cache lives (so
``NUMBA_CACHE_DIR`` works as usual) and adds the hash of the imported files
to their stamp.  Every other library's kernels are left to Numba.
"""

from __future__ import annotations

import ast
import os
import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

#: The ``minitorch`` package directory: absolute imports ``minitorch.x.y`` resolve in it.
PACKAGE = Path(__file__).resolve().parent.parent

#: Kernels defined in a file under one of these folders get the extended stamp.
ROOTS: list[Path] = [PACKAGE / "backends"]


# ---------------------------------------------------------------------------
# Which files a kernel file's code comes from
# ---------------------------------------------------------------------------
def _module_file(folder: Path, dotted: str) -> Path | None:
    """The file of module ``dotted`` (``"cpu.bodies"``) under ``folder``, if it exists."""
    base = folder.joinpath(*dotted.split(".")) if dotted else folder
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported_files(path: Path) -> list[Path]:
    """The files of the package that ``path`` imports directly (relative or ``minitorch.``).

    ``from .. import scalar_ops`` names a module when ``scalar_ops.py``
    exists, else an attribute of the package (``from .. import Operand``):
    then the package's ``__init__.py`` is the file.  Imports of other
    packages (``numba``, ``numpy``) are not followed: they are not ours to
    hash, and Numba itself notices a new Numba.  A file is parsed once per
    state (modification time and size).
    """
    stat = path.stat()
    return list(_imported_files(str(path), stat.st_mtime_ns, stat.st_size))


@lru_cache(maxsize=None)
def _imported_files(path_name: str, mtime_ns: int, size: int) -> tuple:
    path = Path(path_name)
    tree = ast.parse(path.read_text(encoding="utf-8"), path_name)
    found: list[Path] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                folder = path.parent
                for _ in range(node.level - 1):
                    folder = folder.parent
                module = node.module or ""
            elif node.module and node.module.split(".")[0] == PACKAGE.name:
                folder, module = PACKAGE, node.module.partition(".")[2]
            else:
                continue
            package = _module_file(folder, module)
            for alias in node.names:
                named = _module_file(folder, f"{module}.{alias.name}" if module else alias.name)
                found.extend(p for p in (named or package,) if p is not None)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                top, _, rest = alias.name.partition(".")
                if top == PACKAGE.name:
                    named = _module_file(PACKAGE, rest)
                    if named is not None:
                        found.append(named)
    return tuple(found)


def _source_states(path: Path) -> list[tuple]:
    """``(file name, modification time, size)`` of ``path`` and of every package file it
    imports, directly or through others, sorted.  (One ``stat`` per file: this runs for
    every kernel a module defines.)"""
    seen: dict = {}
    todo = [path]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        stat = current.stat()
        seen[current] = (str(current), stat.st_mtime_ns, stat.st_size)
        todo.extend(_imported_files(*seen[current]))
    return sorted(seen.values())


def source_files(path: Path) -> list[Path]:
    """``path`` and every package file it imports, directly or through others (sorted)."""
    return [Path(name) for name, _, _ in _source_states(Path(path).resolve())]


_digests: dict[tuple, str] = {}


def sources_digest(path: Path) -> str:
    """A SHA-256 of the text of :func:`source_files` (``path`` and what it imports).

    Computed once per process for each kernel file and state of its sources
    (the key holds every file's modification time and size, as Numba's own
    stamp does), so the hundreds of kernels of one file share one hash.
    """
    key = tuple(_source_states(Path(path).resolve()))
    digest = _digests.get(key)
    if digest is None:
        hasher = hashlib.sha256()
        for name, _, _ in key:
            file = Path(name)
            hasher.update(str(file.relative_to(PACKAGE.parent)
                              if file.is_relative_to(PACKAGE.parent) else file).encode())
            hasher.update(file.read_bytes())
        digest = _digests[key] = hasher.hexdigest()
    return digest


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
    ``DIR/<package folder>/<sources_digest>/`` and its stamp is that digest
    alone: two checkouts whose kernel file and every file it imports are the
    same text share the compiled kernel (a file's modification time, which
    differs between copies, no longer matters), and two that differ never
    meet.  The course's CI checks many copies of the repository (editions)
    with it; every version of a file keeps its own folder, so it is not meant
    for a working copy that keeps changing.
    """
    return os.environ.get(BY_CONTENT_ENV) or None


def _checks_suffix() -> str:
    """``"-boundscheck"``, ``"-coursechecks"`` (or both, or ``""``): the checks compiled in."""
    from numba.core import config
    suffix = "-boundscheck" if config.BOUNDSCHECK else ""
    if os.environ.get("MINITORCH_COURSE_CHECKS", "") == "1":
        suffix += "-coursechecks"
    return suffix


class KernelSourceLocator:
    """Numba's own cache locator for a kernel, with the imported files in its stamp.

    Wraps the locator Numba would have picked (the folder from
    ``NUMBA_CACHE_DIR``, else ``__pycache__`` beside the file, else a
    per-user folder): the same place on disk, the same file names, and the
    stamp ``(Numba's stamp, sources_digest(file))``.
    """

    def __init__(self, inner: Any, py_file: str) -> None:
        self._inner = inner
        # A str, as in Numba's own locators: Numba passes it to warnings.warn_explicit
        # when a kernel cannot be cached, which refuses a Path.
        self._py_file = str(py_file)

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> KernelSourceLocator | None:
        """A locator for a kernel under :data:`ROOTS`; ``None`` (Numba decides) otherwise."""
        if not _watched(py_file):
            return None
        from numba.core.caching import CacheImpl
        for fallback in CacheImpl._locator_classes:
            if fallback is cls:
                continue
            inner = fallback.from_function(py_func, py_file)
            if inner is not None:
                return cls(inner, py_file)
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
        file = Path(self._py_file).resolve()
        rel = (file.parent.relative_to(PACKAGE.parent) if file.is_relative_to(PACKAGE.parent)
               else Path(file.parent.name))
        return str(Path(shared) / rel / sources_digest(file)[:20])

    def get_disambiguator(self) -> str:
        # A kernel compiled with bounds checks (NUMBA_BOUNDSCHECK=1, as the course's test
        # runs set it) or the course's CUDA checks (MINITORCH_COURSE_CHECKS=1) is another
        # machine code than the same kernel without them, but Numba's cache index does not
        # tell the two apart: without a name of its own, a run with checks would load the
        # unchecked kernel from the cache (and a write past the end would pass unseen).
        return self._inner.get_disambiguator() + _checks_suffix()

    def get_source_stamp(self) -> tuple:
        if _by_content() is not None:
            return ("content", sources_digest(Path(self._py_file)))
        return (self._inner.get_source_stamp(), sources_digest(Path(self._py_file)))


def install(impl_class: Any = None) -> None:
    """Put :class:`KernelSourceLocator` first in Numba's list of cache locators.

    Called by ``backends/cpu/__init__.py`` and ``backends/cuda/__init__.py``,
    before any kernel module is imported (Numba picks a kernel's locator
    when ``@njit(cache=True)`` decorates it).  ``impl_class`` is the class
    holding the list; by default Numba's ``CacheImpl``, whose list the CUDA
    cache shares.  Calling it again does nothing.
    """
    if impl_class is None:
        from numba.core.caching import CacheImpl as impl_class
    locators = impl_class._locator_classes
    if KernelSourceLocator not in locators:
        # A new list, not an insert: a subclass with its own list keeps it.
        impl_class._locator_classes = [KernelSourceLocator, *locators]


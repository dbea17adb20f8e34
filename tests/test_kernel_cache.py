"""Numba's disk cache and the shared kernel bodies (minitorch/backends/kernel_cache.py).

Numba checks only a kernel's own file before it loads the kernel from its
disk cache; the kernels of minitorch also compile code from the files they
import (the bodies in ``backends/*.py``).  These tests check that a change
to such a file makes Numba compile the kernel again.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest

from minitorch.backends import kernel_cache
from minitorch.backends.cpu import elementwise

pytestmark = pytest.mark.kernels

BACKENDS = Path(kernel_cache.__file__).resolve().parent


def _names(path: Path) -> set:
    return {str(p.relative_to(BACKENDS)) for p in kernel_cache.source_files(path)}


def test_a_kernel_file_stamp_covers_the_files_it_compiles_code_from():
    assert {"cpu/elementwise.py", "cpu/bodies.py", "cpu/odometer.py", "scalar_ops.py",
            "index_maps.py"} <= _names(BACKENDS / "cpu" / "elementwise.py")
    # cuda/ compiles the same bodies, through its own bodies.py, and never imports cpu/.
    cuda_random = _names(BACKENDS / "cuda" / "random.py")
    assert {"cuda/bodies.py", "rng.py", "rows.py"} <= cuda_random
    assert not any(name.startswith("cpu/") for name in cuda_random)
    # The CPU softmax bodies use the vectorised exp of cpu/vmath.py.
    assert "cpu/vmath.py" in _names(BACKENDS / "cpu" / "softmax.py")


def test_backend_kernels_use_the_extended_stamp():
    locator = elementwise.arith_contiguous._cache._impl.locator
    assert isinstance(locator, kernel_cache.KernelSourceLocator)
    stamp = locator.get_source_stamp()
    assert stamp[1] == kernel_cache.sources_digest(BACKENDS / "cpu" / "elementwise.py")


def _write_package(root: Path, factor: str) -> None:
    """A package like backends/: a body module, and a kernel file that compiles it in."""
    package = root / "cachepkg"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "body.py").write_text(f"def scale(x):\n    return x * {factor}\n")
    (package / "kernels.py").write_text(textwrap.dedent("""\
        from numba import njit

        from minitorch.backends.shared_bodies import compile_module

        from . import body as body_source

        body = compile_module(body_source, njit(inline="always"))


        @njit(cache=True)
        def apply(x):
            return body.scale(x)
        """))


def _load_kernels():
    for name in ("cachepkg.kernels", "cachepkg.body", "cachepkg"):
        sys.modules.pop(name, None)
    importlib.invalidate_caches()
    return importlib.import_module("cachepkg.kernels")


def test_editing_a_body_recompiles_the_kernels_that_use_it(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel_cache, "ROOTS", kernel_cache.ROOTS + [tmp_path])
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "numba-cache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        _write_package(tmp_path, "2")
        first = _load_kernels()
        assert first.apply(np.int64(5)) == 10
        assert sum(first.apply.stats.cache_misses.values()) == 1      # compiled, and saved

        again = _load_kernels()
        assert again.apply(np.int64(5)) == 10
        assert sum(again.apply.stats.cache_hits.values()) == 1        # loaded from disk

        _write_package(tmp_path, "2 + 1")      # kernels.py itself is unchanged
        edited = _load_kernels()
        assert edited.apply(np.int64(5)) == 11                         # not the stale 10
        assert sum(edited.apply.stats.cache_misses.values()) == 1
    finally:
        for name in ("cachepkg.kernels", "cachepkg.body", "cachepkg"):
            sys.modules.pop(name, None)


def test_the_locator_keeps_the_file_name_as_numba_does():
    # Numba hands ``locator._py_file`` to warnings.warn_explicit (a kernel it cannot
    # cache): it must be a str, not a Path (it raised TypeError instead of warning).
    from minitorch.backends.kernel_cache import KernelSourceLocator
    from minitorch.backends.cpu import elementwise
    py_func = elementwise.copy_contiguous.py_func
    locator = KernelSourceLocator.from_function(py_func, py_func.__code__.co_filename)
    assert isinstance(locator._py_file, str)
    assert locator.get_source_stamp()[1]

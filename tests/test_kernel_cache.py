"""Numba's disk cache and the kernels' own stamps (minitorch/backends/kernel_cache.py).

Numba checks only a kernel's own file before it loads the kernel from its
disk cache, and all of that file; a minitorch kernel is built from a few
functions of several files (the shared bodies in ``backends/*.py``).  These
tests check that a change to any code a kernel is built from makes Numba
compile it again, and that a change to code it is *not* built from (another
function of the same file, lines moved) does not.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

from minitorch.backends import kernel_cache
from minitorch.backends.cpu import conv, elementwise, softmax

pytestmark = pytest.mark.kernels


def _sources(kernel) -> set:
    return {line.replace("minitorch/backends/", "") for line in
            kernel_cache.kernel_sources(kernel.py_func)}


def test_a_kernel_stamp_covers_exactly_the_code_it_is_built_from():
    zip_kernel = _sources(elementwise.arith_contiguous)
    assert {"cpu/elementwise.py: arith_contiguous", "cpu/elementwise.py (outline)",
            "scalar_ops.py: arith", "scalar_ops.py (outline)"} <= zip_kernel
    # Not the file's other kernels (task 2.1's map), not bodies it does not call.
    assert "cpu/elementwise.py: unary_contiguous" not in zip_kernel
    assert "scalar_ops.py: unary" not in zip_kernel
    # A twin derived from the task's kernel (see _derive) is built from the task's code
    # and its own scalar function.
    twin = _sources(elementwise.binary_contiguous)
    assert {"cpu/elementwise.py: arith_contiguous", "scalar_ops.py: binary"} <= twin
    assert "scalar_ops.py: arith" not in twin
    # The CPU softmax calls vmath's exp, which reaches @overload'ed helpers: no name
    # leads to their implementations, so all of vmath.py counts.
    assert "cpu/vmath.py (whole file)" in _sources(softmax.softmax_rows)
    assert "index_maps.py: source" in _sources(conv.im2col_batch)


def test_cuda_kernels_are_stamped_by_the_bodies_they_compile_in():
    from minitorch.backends.cuda import random as cuda_random
    kernels = [v for v in vars(cuda_random).values() if hasattr(v, "py_func")
               and v.py_func.__module__ == cuda_random.__name__]
    assert kernels
    sources = set().union(*(_sources(k) for k in kernels))
    assert any(s.startswith("rng.py: ") for s in sources)
    assert not any(s.startswith("cpu/") for s in sources)


def test_backend_kernels_use_the_kernel_stamp():
    locator = elementwise.arith_contiguous._cache._impl.locator
    assert isinstance(locator, kernel_cache.KernelSourceLocator)
    assert locator.get_source_stamp() == (
        "kernel", kernel_cache.kernel_digest(elementwise.arith_contiguous.py_func))
    # The cache file's name holds no line number (a line moved changes nothing).
    assert locator.get_disambiguator().startswith("any")


def test_the_byte_code_reader_agrees_with_dis():
    for module in (elementwise, conv, softmax):
        for value in vars(module).values():
            fn = getattr(value, "py_func", value)
            if hasattr(fn, "__code__"):
                assert kernel_cache._names(fn.__code__) == kernel_cache._names_by_dis(fn.__code__)


# ---------------------------------------------------------------------------
# A package of its own, compiled, edited and loaded again
# ---------------------------------------------------------------------------
BODY = """\
SCALE = {scale}


def scale(x):
    return x * SCALE{extra}


def unused(x):
    return x - {unused}
"""

KERNELS = """\
from numba import njit

from minitorch.backends.shared_bodies import compile_module

from . import body as body_source

body = compile_module(body_source, njit(inline="always"))
{above}

@njit(cache=True{options})
def apply(x):
    return body.scale(x)


@njit(cache=True)
def late(x):
    return helper(x)


def helper(x):
    return x + 1


helper = njit(helper)
"""


def _write(root: Path, scale="2", extra="", unused="1", above="", options="") -> None:
    package = root / "cachepkg"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "body.py").write_text(BODY.format(scale=scale, extra=extra, unused=unused))
    (package / "kernels.py").write_text(KERNELS.format(above=above, options=options))


def _load():
    for name in ("cachepkg.kernels", "cachepkg.body", "cachepkg"):
        sys.modules.pop(name, None)
    importlib.invalidate_caches()
    return importlib.import_module("cachepkg.kernels")


def _run(kernel, x=5):
    """``kernel(x)`` and whether it was compiled (True) or loaded from the disk (False)."""
    value = kernel(np.int64(x))
    return value, sum(kernel.stats.cache_misses.values()) == 1


@pytest.fixture
def package(tmp_path, monkeypatch):
    # The kernels go to this test's own folder, under Numba's usual names: not to a shared
    # by-content cache (CI's), where an earlier run would already hold them.
    monkeypatch.delenv(kernel_cache.BY_CONTENT_ENV, raising=False)
    monkeypatch.setattr(kernel_cache, "ROOTS", kernel_cache.ROOTS + [tmp_path])
    monkeypatch.setattr(kernel_cache, "PACKAGE", tmp_path / "cachepkg")
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "numba-cache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("cachepkg.kernels", "cachepkg.body", "cachepkg"):
        sys.modules.pop(name, None)


def test_editing_the_code_a_kernel_uses_recompiles_it_and_nothing_else(package):
    _write(package)
    assert _run(_load().apply) == (10, True)                 # compiled, and saved
    assert _run(_load().apply) == (10, False)                # loaded from disk

    # Another function of the body file, and lines added above the kernel: still loaded.
    _write(package, unused="2", above="\n\n# a comment\n")
    assert _run(_load().apply) == (10, False)

    # What it is built from: the body it inlines (in another file than the kernel) ...
    _write(package, extra=" + 1")
    assert _run(_load().apply) == (11, True)                 # not the stale 10
    # ... a constant that body reads (Numba freezes it into the machine code) ...
    _write(package, scale="3", extra=" + 1")
    assert _run(_load().apply) == (16, True)
    # ... and the kernel's decorator.
    _write(package, scale="3", extra=" + 1", options=", fastmath=True")
    assert _run(_load().apply) == (16, True)
    assert _run(_load().apply) == (16, False)


def test_a_name_defined_after_the_kernel_costs_it_its_whole_file(package):
    _write(package)
    # `late` is decorated (and stamped) before `helper` exists: the stamp takes the file.
    assert _run(_load().late) == (6, True)
    assert _run(_load().late) == (6, False)
    (package / "cachepkg" / "kernels.py").write_text(
        (package / "cachepkg" / "kernels.py").read_text().replace("x + 1", "x + 2"))
    assert _run(_load().late) == (7, True)


def test_the_locator_keeps_the_file_name_as_numba_does():
    # Numba hands ``locator._py_file`` to warnings.warn_explicit (a kernel it cannot
    # cache): it must be a str, not a Path (it raised TypeError instead of warning).
    py_func = elementwise.copy_contiguous.py_func
    locator = kernel_cache.KernelSourceLocator.from_function(py_func,
                                                             py_func.__code__.co_filename)
    assert isinstance(locator._py_file, str)
    assert locator.get_source_stamp()[1]


TASKS = """\
from numba import njit


@njit(cache=True)
def student(a):
    # Task 9.1: the sum of a.
    total = 0.0
    for i in range(a.shape[0] + 1):       # one element too far
        total += a[i]
    return total


@njit(cache=True)
def caller(a):
    return student(a)


@njit(cache=True)
def engine(a):
    return a.sum()
"""


def test_course_runs_check_bounds_in_the_kernels_built_from_a_task(package, monkeypatch):
    monkeypatch.setenv(kernel_cache.COURSE_CHECKS_ENV, "1")
    monkeypatch.setattr(numba.config, "BOUNDSCHECK", None)
    (package / "cachepkg").mkdir()
    (package / "cachepkg" / "__init__.py").write_text("")
    (package / "cachepkg" / "kernels.py").write_text(TASKS)
    kernels = _load()
    for name in ("student", "caller"):
        kernel = getattr(kernels, name)
        assert kernel.targetoptions.get("boundscheck") is True
        assert kernel._cache._impl.locator.get_disambiguator().endswith("-boundscheck")
        with pytest.raises(IndexError):
            kernel(np.ones(3))
    # The engine's own kernels are compiled (and cached) as in any other run.
    assert not kernels.engine.targetoptions.get("boundscheck")
    assert not kernels.engine._cache._impl.locator.get_disambiguator().endswith("-boundscheck")
    assert kernels.engine(np.ones(3)) == 3.0
    # In an edition whose tasks are others (task 9.1's code is the course's, not the
    # student's), and outside a course run, the same kernel is compiled without checks.
    monkeypatch.setenv(kernel_cache.COURSE_TASKS_ENV, "9.2,9.3")
    assert not _load().student.targetoptions.get("boundscheck")
    monkeypatch.setenv(kernel_cache.COURSE_TASKS_ENV, "9.1")
    assert _load().caller.targetoptions.get("boundscheck") is True
    monkeypatch.delenv(kernel_cache.COURSE_TASKS_ENV)
    monkeypatch.delenv(kernel_cache.COURSE_CHECKS_ENV)
    assert not _load().student.targetoptions.get("boundscheck")


def test_the_walk_follows_namespaces_made_in_code():
    # index_maps' bodies take their scratch index from ``device.local.array``: on the CPU a
    # namespace made in cpu/bodies.py (no file of its own) holding an @intrinsic.
    from minitorch.backends.cpu import odometer  # noqa: F401  (the bodies, compiled)
    from minitorch.backends.cpu import reduce as cpu_reduce
    kernels = [v for v in vars(cpu_reduce).values() if hasattr(v, "py_func")]
    assert any("minitorch/backends/cpu/bodies.py: _stack_array" in
               kernel_cache.kernel_sources(k.py_func) for k in kernels)


# ---------------------------------------------------------------------------
# The GPU: numba-cuda's own cache
# ---------------------------------------------------------------------------
CUDA_KERNELS = """\
from numba import cuda

from minitorch.backends.shared_bodies import compile_module

from . import body as body_source

body = compile_module(body_source, cuda.jit(device=True))


@cuda.jit(cache=True)
def apply(out, x):
    out[0] = body.scale(x[0])
"""

# Runs without the simulator (it never caches), so ``cuda.jit(cache=True)`` makes
# numba-cuda's real dispatcher and its ``CUDACache``.  No kernel can be compiled without a
# GPU: ``Compiled`` stands in for one (what the cache pickles of it), saved and looked up
# with the cache's own index, exactly as numba-cuda saves and loads a compiled kernel.
CUDA_SCRIPT = """\
import importlib, json, pickle, sys, types
from pathlib import Path

root = Path(sys.argv[1])
body = sys.argv[2]
from minitorch.backends import kernel_cache
from minitorch.backends.cuda import backend

kernels = {id(k): k for name, module in list(sys.modules.items())
           if name.startswith("minitorch.backends.cuda.")
           for k in vars(module).values() if hasattr(k, "_cache") and hasattr(k, "py_func")}
caches = [k._cache for k in kernels.values()]
report = {"backend": sorted({type(c._impl.locator).__name__ for c in caches}),
          "stamped": all(c._impl.locator.get_source_stamp()[1] ==
                         kernel_cache.kernel_digest(k.py_func)
                         for c, k in zip(caches, kernels.values())),
          "kernels": len(caches),
          "files": len({(c.cache_path, c._impl.filename_base) for c in caches})}
kernel_cache.install_cuda()          # what launch.py does; again, it changes nothing
kernel_cache.ROOTS.append(root / "cachepkg")
kernel_cache.PACKAGE = root / "cachepkg"
sys.path.insert(0, str(root))


class Compiled:
    codegen = types.SimpleNamespace(magic_tuple=lambda: ("nvptx64", "sm_90", ""))

    def __init__(self, code):
        self.code = code

    def _reduce_states(self):
        return {"machine code": self.code}


SIG = "(int64[:], int64[:])"


def load(module="cachepkg.cuda_kernels"):
    for name in [m for m in sys.modules if m.startswith(("cachepkg", "elsewhere"))]:
        del sys.modules[name]
    importlib.invalidate_caches()
    return importlib.import_module(module)


def state(cache):
    locator = cache._impl.locator
    index = Path(cache._cache_file._index_path)
    stored = None
    if index.exists():
        with open(index, "rb") as f:
            pickle.load(f)
            stored = pickle.loads(f.read())[0][1]
    found = cache._cache_file.load(cache._index_key(SIG, Compiled.codegen))
    return {"locator": type(locator).__name__, "inner": type(locator._inner).__module__,
            "stamp": locator.get_source_stamp()[1], "index": index.name, "stored": stored,
            "found": found and found["machine code"]}


def write(**parts):
    (root / "cachepkg" / "body.py").write_text(body.format(**parts))


steps = []
write(scale="2", extra="", unused="1")
cache = load().apply._cache
cache.save_overload(SIG, Compiled("v1"))
steps.append(state(cache))
write(scale="2", extra="", unused="2")           # another function of the body file
steps.append(state(load().apply._cache))
write(scale="2", extra=" + 1", unused="2")       # the body the kernel inlines
cache = load().apply._cache
steps.append(state(cache))
cache.save_overload(SIG, Compiled("v2"))         # what numba-cuda does after compiling
steps.append(state(cache))
report["steps"] = steps
outside = load("elsewhere").apply._cache._impl.locator
report["outside"] = [type(outside).__name__, type(outside).__module__]
print(json.dumps(report))
"""


def test_cuda_kernels_get_the_kernel_stamp_in_numba_cudas_own_cache(tmp_path):
    """numba-cuda keeps its own cache classes (``numba.cuda.core.caching``): its kernels
    get the kernel stamp there, and a stale index is refused after an edit to a body the
    kernel inlines, and only then.  One subprocess without the simulator (~4 s)."""
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed (pip install 'minitorch[cuda]')")
    package = tmp_path / "cachepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "cuda_kernels.py").write_text(CUDA_KERNELS)
    # The same kernel outside the folders minitorch stamps: numba-cuda's own locator.
    (tmp_path / "elsewhere.py").write_text(
        "from numba import cuda\n\n\n@cuda.jit(cache=True)\ndef apply(out):\n    out[0] = 1\n")
    env = {k: v for k, v in os.environ.items() if k != kernel_cache.BY_CONTENT_ENV}
    env.update(NUMBA_ENABLE_CUDASIM="0", NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"),
               PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", CUDA_SCRIPT, str(tmp_path), BODY],
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])

    # The backend's own kernels: stamped by the code they are built from (launch.py installs
    # the locator before the first kernel is decorated), each in a cache file of its own.
    assert report["backend"] == ["CUDAKernelSourceLocator"]
    assert report["stamped"] and report["kernels"] > 40
    assert report["files"] == report["kernels"]
    saved, unrelated, edited, rebuilt = report["steps"]
    # numba-cuda's own locators find the place (NUMBA_CACHE_DIR, as numba-cuda reads it).
    assert saved["locator"] == "CUDAKernelSourceLocator"
    assert saved["inner"] == "numba.cuda.core.caching"
    assert saved["stored"] == saved["stamp"] and saved["found"] == "v1"
    # Another function of the body file changed: same stamp, the saved kernel is loaded.
    assert unrelated["stamp"] == saved["stamp"] and unrelated["found"] == "v1"
    # The body it inlines changed: a new stamp, the index on disk is stale, nothing loads
    # (numba-cuda compiles again) ...
    assert edited["stamp"] != saved["stamp"]
    assert edited["stored"] == saved["stamp"] and edited["found"] is None
    # ... and the rebuilt kernel's index holds the new stamp (same file: no line number).
    assert rebuilt["index"] == saved["index"] and "-any" in saved["index"]
    assert rebuilt["stored"] == edited["stamp"] and rebuilt["found"] == "v2"
    # Not ours: left to numba-cuda.
    assert report["outside"][1] == "numba.cuda.core.caching"
    assert report["outside"][0] != "CUDAKernelSourceLocator"


def test_the_cuda_locator_falls_back_through_numba_cudas_list_only():
    # Each locator asks the list it belongs in: Numba's for the CPU, numba-cuda's for the
    # GPU (numba.cuda.core.caching: importing it under the simulator loads no driver).
    assert kernel_cache.KernelSourceLocator.cache_impl().__module__ == "numba.core.caching"
    assert kernel_cache.CUDAKernelSourceLocator.cache_impl().__module__ == \
        "numba.cuda.core.caching"
    # The CPU list is not touched by install_cuda, nor the CUDA list by install.
    from numba.core.caching import CacheImpl
    assert kernel_cache.CUDAKernelSourceLocator not in CacheImpl._locator_classes


def test_outlines_are_kept_on_disk_by_content_and_a_bad_copy_is_never_trusted(tmp_path,
                                                                             monkeypatch):
    monkeypatch.delenv(kernel_cache.BY_CONTENT_ENV, raising=False)
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "kernels.py"
    source.write_text("X = 1\n\n\ndef f(x):\n    # Task 9.1: f\n    return x + X\n")
    first = kernel_cache.outline(source)
    stored = kernel_cache._outline_file(source)
    assert stored.is_file() and stored.is_relative_to(tmp_path / "cache")
    assert first.tasks == {(4, 6): frozenset({"9.1"})}
    # A second process reads the copy: the same outline, without parsing the file.
    kernel_cache._outline.cache_clear()
    monkeypatch.setattr(kernel_cache, "_parse", None)           # parsing would raise
    assert kernel_cache.outline(source) == first
    monkeypatch.undo()
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    # The file changes (same size, same modification time): the copy is not used.
    stat = source.stat()
    source.write_text(source.read_text().replace("x + X", "x - X"))
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    kernel_cache._outline.cache_clear()
    changed = kernel_cache.outline(source)
    assert changed.syntax((4, 6)) != first.syntax((4, 6)) and changed.outline == first.outline
    # A damaged or hostile copy is parsed again and replaced, never trusted.
    for junk in ("{", '{"version": 1, "sha256": 5}', "[]", "\0" * 10):
        stored.write_text(junk)
        kernel_cache._outline.cache_clear()
        assert kernel_cache.outline(source) == changed


def test_a_stamp_is_the_same_in_every_process():
    # Python randomises string hashing per process: a set in a kernel's options (fastmath's
    # flags) once made its stamp differ from run to run, so other processes, and the
    # prebuilt kernels, missed it.
    script = ("from minitorch.backends.cpu import conv_direct as c; "
              "print(c.conv_weight_grad_parallel._cache._impl.locator.get_source_stamp()[1])")
    assert "fastmath" in repr(sorted(kernel_cache._walk(conv_direct_kernel().py_func).values))
    stamps = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             env={**os.environ, "PYTHONHASHSEED": seed}, check=True,
                             timeout=300).stdout.strip() for seed in ("1", "2", "3")}
    assert len(stamps) == 1, stamps


def conv_direct_kernel():
    from minitorch.backends.cpu import conv_direct
    return conv_direct.conv_weight_grad_parallel    # calls a function with fastmath={...}

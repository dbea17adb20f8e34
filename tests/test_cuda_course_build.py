"""The CUDA kernels' build under the course checks (``MINITORCH_COURSE_CHECKS=1``).

On real hardware a CUDA kernel raises only when it was compiled with
``debug=True``: without it a student's stub (``raise NotImplementedError``)
would silently do nothing, and a kernel left unwritten could look right.  So
the course's test runs set ``MINITORCH_COURSE_CHECKS=1`` and every kernel of
``backends/cuda`` is then compiled with ``debug=True, opt=False`` and not
cached (Numba's cache key ignores the debug flag).  These checks run in a
process without the simulator (no GPU needed: only the kernels' options are
read, nothing is compiled).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_OPTIONS = r"""
import importlib, json, os, pkgutil
os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
import minitorch.backends.cuda as package
from minitorch.backends.cuda import launch
found = {}
for info in pkgutil.iter_modules(package.__path__):
    module = importlib.import_module(f"minitorch.backends.cuda.{info.name}")
    for name, value in vars(module).items():
        options = getattr(value, "targetoptions", None)
        if options is not None and not options.get("device") and \
                getattr(value, "py_func", None) is not None and \
                value.py_func.__module__ == module.__name__:
            found[f"{info.name}.{name}"] = [bool(options.get("debug")), options.get("opt"),
                                            value._cache.__class__.__name__]
print(json.dumps(found))
"""


def _kernel_options(checks: str | None) -> dict:
    env = dict(os.environ)
    env.pop("MINITORCH_COURSE_CHECKS", None)
    if checks is not None:
        env["MINITORCH_COURSE_CHECKS"] = checks
    done = subprocess.run([sys.executable, "-c", _OPTIONS], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def options() -> dict:
    return {"course": _kernel_options("1"), "plain": _kernel_options(None),
            "zero": _kernel_options("0")}


def test_course_checks_compile_every_kernel_with_debug_and_no_cache(options):
    course = options["course"]
    assert len(course) > 40, sorted(course)          # every module's kernels were found
    for name in ("elementwise.unary_contiguous", "elementwise.binary_strided",
                 "reduce.block_sum", "matmul.matmul_shared", "conv.im2col", "optim.adam"):
        assert any(k.startswith(name) for k in course), name
    wrong = {k: v for k, v in course.items() if v[:2] != [True, False] or v[2] != "NullCache"}
    assert not wrong, wrong


@pytest.mark.parametrize("setting", ["plain", "zero"])
def test_without_the_course_checks_kernels_are_optimised_and_cached(options, setting):
    kernels = options[setting]
    assert kernels.keys() == options["course"].keys()
    wrong = {k: v for k, v in kernels.items() if v[:2] != [False, True] or v[2] == "NullCache"}
    assert not wrong, wrong


_KERNELS = '''
def plain(out):
    out[0] = 1.0


def index_to_position(index, strides):
    raise NotImplementedError("Task 1.2: index_to_position")
'''

_STUB_BODY = r"""
import json, os, sys
os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
sys.path.insert(0, sys.argv[1])
from minitorch.backends.cuda import launch
import edition_kernels as k

before = launch.kernel(k.plain)
body = launch.device_function(k.index_to_position)
after = launch.kernel(k.plain)
print(json.dumps([launch.STUB_BODIES, bool(before.targetoptions.get("debug")),
                  bool(body.targetoptions.get("debug")), bool(after.targetoptions.get("debug"))]))
"""


def test_a_stub_device_function_makes_every_kernel_a_debug_build(tmp_path):
    """An edition's stub compiled as a device function (a module-1 layout task that a
    GPU kernel inlines) must raise on a GPU too: it and every kernel are debug builds."""
    (tmp_path / "edition_kernels.py").write_text(_KERNELS)
    env = {k: v for k, v in os.environ.items() if k != "MINITORCH_COURSE_CHECKS"}
    done = subprocess.run([sys.executable, "-c", _STUB_BODY, str(tmp_path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    stubs, before, body, after = json.loads(done.stdout.strip().splitlines()[-1])
    assert stubs == ["edition_kernels.index_to_position"]
    assert (before, body, after) == (False, True, True)

"""A bare install (``pip install -e .``, no extra) runs every command, or says what it needs.

The README's first command is ``pip install -e . && minitorch train mnist``:
no pytest, hypothesis, matplotlib, sphinx, asv, mpi4py or torch.  The test
environment has all of them, so these tests *simulate* the bare one: a
subprocess installs :data:`BARE_FINDER`, an import hook that hides every
module a bare install would not have (anything outside the standard library
and the distributions ``minitorch`` requires, as its installed metadata lists
them), then imports and runs the package.  ``.ci/run`` also runs the README's
commands in a real fresh virtual environment before it installs any extra.

Each command that needs an extra must end in ONE line that names the extra
and a non-zero exit, never a traceback; every module of the package must
import, except the ones that are extras by design (:data:`EXTRA_MODULES`).
Cost: two subprocesses (an interpreter that imports every module; one that runs
the commands), 28 s together on the shared 2-core machine under a load of 8, far
less idle; no kernel is compiled.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.data

ROOT = Path(__file__).resolve().parents[1]

#: Run first in a subprocess: from then on a module outside the standard library and
#: minitorch's own requirements (read from the installed metadata, recursively, extras
#: left out) cannot be found, as in a virtual environment made by ``pip install -e .``.
BARE_FINDER = r'''
import importlib.abc, importlib.metadata, re, sys

def _key(name):
    return re.sub(r"[-_.]+", "-", name).lower()

def _required(dist):
    """The distributions `dist` needs, recursively (extras and other platforms left out)."""
    try:
        from packaging.requirements import Requirement
    except ImportError:                     # no packaging: keep every marker's requirement
        Requirement = None
    seen, todo = set(), [dist]
    while todo:
        name = todo.pop()
        if _key(name) in seen:
            continue
        seen.add(_key(name))
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for text in requires:
            if Requirement is not None:
                req = Requirement(text)
                if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                    continue
                todo.append(req.name)
            elif "extra ==" not in text:
                todo.append(re.match(r"[A-Za-z0-9_.-]+", text).group(0))
    return seen

_DISTS = _required("minitorch")
ALLOWED = set(sys.stdlib_module_names) | {"minitorch"} | {
    module for module, dists in importlib.metadata.packages_distributions().items()
    if any(_key(d) in _DISTS for d in dists)}
REFUSED = []

class BareInstall(importlib.abc.MetaPathFinder):
    """The import system's finders, blind to what `pip install -e .` would not install.

    A refused module is not found (find_spec answers None), exactly as in a bare
    venv: `import pytest` raises ModuleNotFoundError and
    `importlib.util.find_spec("pytest")` is None.
    """
    def __init__(self, finders):
        self.finders = finders

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if not (top in ALLOWED or top.startswith("__editable__")):
            REFUSED.append(name)
            return None
        for finder in self.finders:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                return spec
        return None

    def find_distributions(self, *args, **kwargs):     # importlib.metadata asks this
        for finder in self.finders:
            if hasattr(finder, "find_distributions"):
                yield from finder.find_distributions(*args, **kwargs)

    def invalidate_caches(self):
        for finder in self.finders:
            if hasattr(finder, "invalidate_caches"):
                finder.invalidate_caches()

sys.meta_path[:] = [BareInstall(list(sys.meta_path))]
'''

#: Modules that need an extra by design, the extra, and where that is documented.
EXTRA_MODULES = {
    # tests/conftest.py loads it; its docstring says it imports pytest, a development tool.
    "minitorch.course.pytest_plugin": "test",
}

#: The commands run in the bare subprocess: (name, arguments).  ``{tmp}`` is a folder.
COMMANDS = [
    ("help", ["--help"]),
    ("train-help", ["train", "--help"]),
    ("info", ["info"]),
    ("version", ["--version"]),
    ("plot", ["train", "xor", "--epochs", "1", "--plot", "{tmp}/curves.png"]),
    ("misclassified", ["evaluate", "{tmp}/none.mt", "--misclassified", "{tmp}/wrong.png"]),
    ("features", ["evaluate", "{tmp}/none.mt", "--features", "{tmp}/maps.png"]),
    ("distributed", ["train", "xor", "--epochs", "1", "--distributed"]),
    ("cuda", ["train", "xor", "--epochs", "1", "--device", "cuda"]),
    ("bench", ["bench", "--filter", "no-such-workload", "--tiny"]),
    ("course-help", ["course", "--help"]),
    ("course-tasks", ["course", "tasks"]),
    ("course-test", ["course", "test", "2.1"]),
]

RUN_COMMANDS = BARE_FINDER + r'''
import json, os, subprocess
from click.testing import CliRunner
from minitorch.cli import main

# `course test` runs `python -m pytest` in a subprocess: the child gets the hook too.
_hook = os.path.join(os.environ["BARE_TMP"], "sitecustomize.py")
with open(_hook, "w") as f:
    f.write(os.environ["BARE_SOURCE"])
os.environ["PYTHONPATH"] = os.pathsep.join([os.environ["BARE_TMP"], os.environ.get("PYTHONPATH", "")])

results = {}
for name, args in json.loads(os.environ["BARE_COMMANDS"]):
    args = [a.replace("{tmp}", os.environ["BARE_TMP"]) for a in args]
    res = CliRunner().invoke(main, args)
    results[name] = {"exit_code": res.exit_code, "output": res.output,
                     "crashed": res.exception is not None
                     and not isinstance(res.exception, SystemExit),
                     "exception": repr(res.exception)}
print("RESULTS " + json.dumps({"results": results}))
'''

IMPORT_ALL = BARE_FINDER + r'''
import importlib, json, pkgutil

# First the hook itself: what it must hide, what it must let through.
probe = {}
for name in ["pytest", "hypothesis", "matplotlib", "sphinx", "asv", "mpi4py", "torch",
             "numpy", "numba", "llvmlite", "click", "json", "minitorch"]:
    try:
        importlib.import_module(name)
        probe[name] = "imported"
    except ModuleNotFoundError as e:
        probe[name] = "refused" if name in REFUSED else f"missing: {e}"

# Then every module of the package.
import minitorch
failed = {}
for info in pkgutil.walk_packages(minitorch.__path__, "minitorch.",
                                  onerror=lambda name: failed.setdefault(name, "walk")):
    try:
        importlib.import_module(info.name)
    except BaseException as e:            # noqa: BLE001 -- report every kind of failure
        failed[info.name] = f"{type(e).__name__}: {e}"
print("RESULTS " + json.dumps({"probe": probe, "failed": failed}))
'''


def run_bare(source: str, env_extra: dict | None = None) -> dict:
    """Run ``source`` in a fresh interpreter from the checkout; its ``RESULTS`` line as data."""
    env = dict(os.environ, **(env_extra or {}), BARE_SOURCE=BARE_FINDER)
    # The suite runs the CUDA backend on Numba's simulator (conftest.py sets this); a
    # newcomer's shell does not.
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, "-c", source], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULTS ")]
    assert proc.returncode == 0 and lines, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(lines[-1][len("RESULTS "):])


@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> dict:
    """The commands' results, computed once per test run (also when pytest-xdist splits
    this module's tests between workers: they share the answer through a file)."""
    def run_commands() -> dict:
        tmp = tmp_path_factory.mktemp("bare")
        return run_bare(RUN_COMMANDS, {"BARE_TMP": str(tmp),
                                       "BARE_COMMANDS": json.dumps(COMMANDS)})
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return run_commands()
    import fcntl
    shared = tmp_path_factory.getbasetemp().parent       # this run's folder, every worker's
    with open(shared / "bare-commands.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)                   # the first worker runs them
        answer = shared / "bare-commands.json"
        if not answer.is_file():
            answer.write_text(json.dumps(run_commands()))
        return json.loads(answer.read_text())


def one_error_line(result: dict) -> str:
    """The single line a failing command printed (asserting there is exactly one)."""
    assert not result["crashed"], result
    assert result["exit_code"] != 0, result
    assert "Traceback" not in result["output"], result["output"]
    lines = [line for line in result["output"].splitlines() if line.strip()]
    assert len(lines) == 1, result["output"]
    return lines[0]


# ---------------------------------------------------------------------------
# the simulation itself
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def imported() -> dict:
    return run_bare(IMPORT_ALL)


def test_the_simulated_bare_install_refuses_the_extras_and_allows_the_requirements(imported):
    """The hook must hide what a bare venv lacks (or every test below proves nothing)."""
    probe = imported["probe"]
    # The extras are refused whether or not this environment has them installed.
    for name in ["pytest", "hypothesis", "matplotlib", "sphinx", "asv", "mpi4py", "torch"]:
        assert probe[name] == "refused", (name, probe)
    for name in ["numpy", "numba", "llvmlite", "click", "json", "minitorch"]:
        assert probe[name] == "imported", (name, probe)


# ---------------------------------------------------------------------------
# every module imports without an extra
# ---------------------------------------------------------------------------
def test_every_module_of_the_package_imports_in_a_bare_install(imported):
    out = imported
    failed = {name: why for name, why in out["failed"].items() if name not in EXTRA_MODULES}
    assert not failed, failed
    # The modules that are extras by design still fail (else the list is stale) and
    # say in their docstring which tool they need.
    for name, extra in EXTRA_MODULES.items():
        assert name in out["failed"], f"{name} imports bare: drop it from EXTRA_MODULES"
        path = ROOT / (name.replace(".", "/") + ".py")
        doc = " ".join(path.read_text().split('"""')[1].split())
        assert "pytest" in doc and "development tool" in doc, (name, extra)


# ---------------------------------------------------------------------------
# the commands: they work, or name the extra in one line
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["help", "train-help", "info", "version", "course-help"])
def test_a_bare_install_runs_the_command(bare, name):
    result = bare["results"][name]
    assert result["exit_code"] == 0 and not result["crashed"], result
    assert "Traceback" not in result["output"]


def test_info_says_what_it_sees(bare):
    out = bare["results"]["info"]["output"]
    assert out.startswith("minitorch ") and "numba threads:" in out and "cuda available:" in out


@pytest.mark.parametrize("name, extra", [("plot", "minitorch[plot]"),
                                         ("misclassified", "minitorch[plot]"),
                                         ("features", "minitorch[plot]"),
                                         ("distributed", "minitorch[distributed]")])
def test_a_command_that_needs_an_extra_names_it_in_one_line(bare, name, extra):
    line = one_error_line(bare["results"][name])
    assert line.startswith("Error: ") and extra in line, line


def test_device_cuda_without_a_gpu_names_the_cuda_extra(bare):
    """Without a usable GPU (numba-cuda is the cuda extra) --device cuda says so in one line."""
    if "cuda available: True" in bare["results"]["info"]["output"]:
        # a machine whose GPU Numba's bundled CUDA support can drive: it just trains
        assert bare["results"]["cuda"]["exit_code"] == 0, bare["results"]["cuda"]
        return
    line = one_error_line(bare["results"]["cuda"])
    assert line.startswith("Error: --device cuda: ") and "minitorch[cuda]" in line, line


def test_bench_runs_without_pytorch_and_asv(bare):
    """``minitorch bench`` compares with NumPy alone; only asv's suites need the bench extra."""
    line = one_error_line(bare["results"]["bench"])
    assert line == "Error: no workload matches --filter 'no-such-workload'", line


def test_course_commands_that_need_pytest_name_the_test_extra(bare):
    """``course tasks`` works bare; ``course test`` runs pytest, so it needs the test extra."""
    tasks = bare["results"]["course-tasks"]
    assert tasks["exit_code"] == 0 and not tasks["crashed"], tasks
    line = one_error_line(bare["results"]["course-test"])
    assert "minitorch[test]" in line or ".[test]" in line, line

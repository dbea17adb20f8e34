"""The course edition is right: built from the reference, every task is tested by its own tests.

* every task marked in the source has tests (``@pytest.mark.task``), and every
  task mark names a real task;
* in the edition of each module (that module's tasks stubbed, the rest
  solved), every test of every task of the module fails with *that task's*
  ``NotImplementedError``: no task is untested and no test leans on a
  neighbour's stub;
* in the full edition (every task stubbed) the package still imports, the
  task tests fail only with task messages, and the tests that need no task
  (the package's structure) pass.

(The reference passing every task's tests is the rest of this suite.)  The
editions are built with the compiled-kernel caches, which stay valid for every
file a build leaves unchanged, so each edition compiles only what it changed.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner

from minitorch.course import MODULES, find_tasks
from minitorch.course.build import EDITION_FILE, BuildError, build_edition
from minitorch.course.grading import TASK_TESTS, run_task_tests

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.data,
              pytest.mark.skipif((ROOT / EDITION_FILE).exists(),
                                 reason="a student edition: the edition checks run in the "
                                        "reference repository")]


def _marked_task_ids() -> dict:
    """``{task id: [test function names]}`` from the ``task`` marks in tests/course."""
    found: dict = {}
    for path in sorted((ROOT / TASK_TESTS).glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            for dec in node.decorator_list:
                if (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute)
                        and dec.func.attr == "task"):
                    for arg in dec.args:
                        found.setdefault(arg.value, []).append(node.name)
    return found


def test_every_task_has_tests_and_every_mark_names_a_task():
    tasks = {t.id for t in find_tasks(ROOT)}
    marked = _marked_task_ids()
    assert tasks, "no task is marked in the source"
    assert not tasks - set(marked), f"tasks without tests: {sorted(tasks - set(marked))}"
    assert not set(marked) - tasks, f"task marks naming no task: {sorted(set(marked) - tasks)}"
    assert {t.module for t in find_tasks(ROOT)} == set(MODULES)


def _check_module_edition(module: int, tmp: Path) -> list:
    """Problems found in the edition of ``module`` (empty when it is right)."""
    dest = tmp / f"module{module}"
    stripped = build_edition(dest, [module], root=ROOT, keep_caches=True)
    own = sorted((dest / TASK_TESTS).glob(f"test_m{module}_*.py"))
    _, report = run_task_tests(dest, stripped, extra=[str(p.relative_to(dest)) for p in own])
    problems = []
    seen = set()
    for nodeid, entry in report.items():
        for task in entry.get("tasks", []):
            if task not in stripped:
                continue
            seen.add(task)
            if entry["outcome"] != "failed" or f"Task {task}:" not in entry["message"] or \
                    "NotImplementedError" not in entry["message"]:
                problems.append(f"module {module} edition: {nodeid} ({task}) "
                                f"{entry['outcome']}: {entry['message'][:200]!r}")
    for task in sorted(set(stripped) - seen):
        problems.append(f"module {module} edition: task {task} ran no test")
    return problems


def test_each_module_edition_fails_exactly_its_own_tasks(tmp_path):
    modules = sorted({t.module for t in find_tasks(ROOT)})
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda m: _check_module_edition(m, tmp_path), modules))
    problems = [p for r in results for p in r]
    assert not problems, "\n".join(problems)


def test_full_edition_imports_and_fails_only_with_task_messages(tmp_path):
    dest = tmp_path / "student"
    stripped = build_edition(dest, root=ROOT, keep_caches=True)
    assert stripped == [t.id for t in find_tasks(ROOT)]
    text = (dest / "minitorch" / "layout.py").read_text()
    assert "### BEGIN SOLUTION" not in text and 'raise NotImplementedError("Task 1.1: ' in text
    imports = subprocess.run(
        [sys.executable, "-c", "import minitorch, minitorch.nn, minitorch.optim, "
         "minitorch.utils.data, minitorch.cli; print(len(minitorch.__version__))"],
        cwd=dest, capture_output=True, text=True, timeout=300)
    assert imports.returncode == 0, imports.stderr[-3000:]
    _, report = run_task_tests(dest)
    assert report, "the task tests did not run in the student edition"
    for nodeid, entry in report.items():
        assert entry["outcome"] == "failed", f"{nodeid} passes with every task stubbed"
        # (Numba's CUDA simulator prefixes the thread: "tid=[0, 0, 0] ctaid=[0, 0, 0]: ".)
        assert re.search(r"NotImplementedError: (tid=\[[^]]*\] ctaid=\[[^]]*\]: )?Task \d+\.\d+: ",
                         entry["message"]), (
            f"{nodeid} fails with something other than a task's stub: {entry['message'][:300]}")
    # The tests that need no task (the package's structure) pass around the stubs.
    structure = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n0",
         "tests/test_layers.py"], cwd=dest, capture_output=True, text=True, timeout=600)
    assert structure.returncode == 0, structure.stdout[-3000:]


def test_build_refuses_bad_destinations_and_modules(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    with pytest.raises(BuildError, match="already exists"):
        build_edition(tmp_path / "full", root=ROOT)
    with pytest.raises(BuildError, match="inside the repository"):
        build_edition(ROOT / "student", root=ROOT)
    with pytest.raises(BuildError, match="no course module 9"):
        build_edition(tmp_path / "new", [9], root=ROOT)


def test_course_commands(tmp_path):
    from minitorch.cli import main
    runner = CliRunner()
    listed = runner.invoke(main, ["course", "tasks", "--module", "1"])
    assert listed.exit_code == 0 and "1.1" in listed.output and "2.1" not in listed.output
    bad = runner.invoke(main, ["course", "test", "9.9"])
    assert bad.exit_code == 2 and "no task 9.9" in bad.output
    bad = runner.invoke(main, ["course", "test", "one"])
    assert bad.exit_code == 2 and "not a task id" in bad.output
    out = tmp_path / "edition"
    built = runner.invoke(main, ["course", "build", str(out), "--module", "1"])
    assert built.exit_code == 0, built.output
    assert "6 tasks are stubs" in built.output and (out / EDITION_FILE).exists()
    again = runner.invoke(main, ["course", "build", str(out)])
    assert again.exit_code == 1 and "already exists" in again.output
    assert "Traceback" not in again.output
    missing = runner.invoke(main, ["course", "grade", "--json", str(tmp_path / "no" / "r.json")])
    assert missing.exit_code == 1 and "does not exist" in missing.output

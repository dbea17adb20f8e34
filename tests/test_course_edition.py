"""The course edition is right: built from the reference, every task is tested by its own tests.

* every task marked in the source has tests (``@pytest.mark.task``), and every
  task mark names a real task;
* for each task, in the edition of its module with only that task solved
  (what a student has who has done the modules below and this one task), the
  task's tests pass and every test of every other task of the module fails
  with *that* task's ``NotImplementedError``: no task is untested, no test
  leans on a neighbour's stub, and solving a task turns exactly its row green;
* in the full edition (every task stubbed) the package still imports, the
  task tests fail only with task messages, and the tests that need no task
  (the package's structure) pass.

(The reference passing every task's tests is the rest of this suite.)  The
editions are built with the compiled-kernel caches, which stay valid for every
file a build leaves unchanged, so each edition compiles only what it changed.

The per-task editions are most of this file's time (31 of them, each a fresh
copy with its own pytest process), so they are checked cheaply, with the same
proof for every task:

* one test per course module (pytest-xdist spreads the modules over its
  workers); a module's editions are checked one after the other, and each
  hands its caches to the next: the byte code of every file the two share
  (the task files, whose text differs, are compiled afresh), and the Numba
  kernels when the two editions' kernel sources are the same text (editions
  4.1, 4.5 and 4.6 stub the same kernel tasks 4.2-4.4, so they compile the
  kernels once, not three times).  Numba still checks every kernel's stamp
  (a hash of its sources) before it loads one, so a handed-over kernel is
  only used where it is up to date;
* the task tests run under the ``course-edition`` hypothesis profile
  (tests/conftest.py): the same examples, but a failing test is not shrunk.
  Only a test's outcome and its error's task matter here, and a stub fails
  on the first example it meets.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from minitorch.backends.kernel_cache import source_files
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


#: The hypothesis profile of the task tests run in an edition (see tests/conftest.py).
EDITION_PROFILE = "--hypothesis-profile=course-edition"


def _kernel_source_files() -> set:
    """The files (relative to the root) whose text is in some compiled kernel's cache stamp:
    every file under minitorch/backends and every package file those import."""
    found = set()
    for path in (ROOT / "minitorch" / "backends").rglob("*.py"):
        found.update(str(p.relative_to(ROOT)) for p in source_files(path))
    return found


def _in_kernel_order(tasks: list, kernel_files: set) -> list:
    """``tasks`` with those that stub the same kernel tasks (so whose editions compile the
    same kernels) next to each other, in course order otherwise."""
    groups: dict = {}
    for task in tasks:
        key = tuple(t.id for t in tasks if t is not task and t.path in kernel_files)
        groups.setdefault(key, []).append(task)
    return [task for group in groups.values() for task in group]


def _hand_over_caches(previous: Path, dest: Path, task_files: set, kernel_files: set) -> None:
    """Copy into the edition ``dest`` the caches of ``previous`` (an edition of the same
    module, already run) that hold in ``dest`` too.

    Both are copies of the reference that differ only in the module's task files.
    Byte code (``.pyc``) is handed over for every other file: its source is the same
    text with the same modification time (Python checks both).  The Numba caches are
    handed over when the task files in kernel stamps are the same text in both; those
    files then get ``previous``'s modification time too, so that every kernel's stamp
    (its file's time and size, and a hash of its sources) is what ``previous`` saved.
    """
    shared = sorted(task_files & kernel_files)
    same_kernels = all((previous / p).read_bytes() == (dest / p).read_bytes() for p in shared)
    if same_kernels:
        for p in shared:
            st = (previous / p).stat()
            os.utime(dest / p, ns=(st.st_atime_ns, st.st_mtime_ns))
    for cache in previous.rglob("__pycache__"):
        folder = cache.parent.relative_to(previous)
        for entry in cache.iterdir():
            if entry.suffix == ".pyc":
                if str(folder / (entry.name.split(".")[0] + ".py")) in task_files:
                    continue
            elif entry.suffix not in (".nbi", ".nbc") or not same_kernels:
                continue
            target = dest / folder / "__pycache__"
            target.mkdir(exist_ok=True)
            shutil.copy2(entry, target / entry.name)


def _check_restored_task(task, dest: Path, previous: Path | None = None) -> list:
    """Problems in the edition of ``task``'s module with only ``task`` solved (empty when right).

    That edition is what a student has who has solved ``task`` and nothing
    else of its module (the modules below solved, as a course hands them out
    in order).  ``task``'s tests must now pass, and every other task of the
    module must still fail, each test with *its own* task's message: no task
    is untested, and no test leans on a neighbour's work.  The edition is
    built in ``dest``; ``previous`` is an edition of the same module already
    run, whose caches it takes over (:func:`_hand_over_caches`).
    """
    module = task.module
    tasks = [t for t in find_tasks(ROOT) if t.module == module]
    others = [t.id for t in tasks if t.id != task.id]
    stripped = build_edition(dest, tasks=others, root=ROOT, keep_caches=True)
    if previous is not None:
        _hand_over_caches(previous, dest, {t.path for t in tasks}, _kernel_source_files())
    own = sorted((dest / TASK_TESTS).glob(f"test_m{module}_*.py"))
    _, report = run_task_tests(dest, [task.id] + stripped,
                               extra=[EDITION_PROFILE] + [str(p.relative_to(dest)) for p in own])
    problems, seen = [], set()
    for nodeid, entry in report.items():
        for t in entry.get("tasks", []):
            seen.add(t)
            if t == task.id and entry["outcome"] != "passed":
                problems.append(f"only {task.id} solved: {nodeid} {entry['outcome']}: "
                                f"{entry['message'][:200]!r}")
            elif t in stripped and (entry["outcome"] != "failed"
                                    or f"NotImplementedError: Task {t}:" not in entry["message"]
                                    and f"]: Task {t}:" not in entry["message"]):
                problems.append(f"only {task.id} solved: {nodeid} ({t}) {entry['outcome']}: "
                                f"{entry['message'][:200]!r}")
    problems += [f"only {task.id} solved: task {t} ran no test"
                 for t in sorted(set([task.id] + stripped) - seen)]
    return problems


@pytest.mark.parametrize("module", sorted(MODULES))
def test_solving_one_task_of_a_module_makes_exactly_that_task_pass(module, tmp_path, monkeypatch):
    # The editions' pytest processes write byte code (into the editions, and pytest's
    # rewritten plugins into the environment), so that each edition hands it on.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    tasks = [t for t in find_tasks(ROOT) if t.module == module]
    assert tasks, f"course module {module} has no task"
    problems, previous = [], None
    for task in _in_kernel_order(tasks, _kernel_source_files()):
        dest = tmp_path / f"restored-{task.id}"
        problems += _check_restored_task(task, dest, previous)
        if previous is not None:
            shutil.rmtree(previous, ignore_errors=True)     # (31 copies of the repository)
        previous = dest
    assert not problems, "\n".join(problems)


def test_full_edition_imports_and_fails_only_with_task_messages(tmp_path, monkeypatch):
    # Its three processes share the byte code the first one writes into the edition.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
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
    _, report = run_task_tests(dest, extra=[EDITION_PROFILE, TASK_TESTS])
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

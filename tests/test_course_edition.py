"""The course, checked from the student's chair: editions driven only through ``minitorch course``.

For every module, and for the full course, an edition is built with
``minitorch course build`` and then used only through the commands a student
and the autograder run (click's CliRunner, in the edition's folder: the
commands grade the edition they are run in), reading what they print and
the ``results.json`` they write:

* untouched, ``course grade`` scores 0, lists exactly the edition's tasks
  (each with its maximum points), and every test fails with *its own*
  task's stub message;
* with some tasks' reference solutions put back, ``course status`` shows
  exactly those tasks passing with full points and every other task not
  started (status runs the started tasks' tests only).  A task that passes
  while a sibling is a stub never ran the sibling's code; the runs are
  chosen so that every task passes once with each sibling a stub (a few
  runs per module, not one per task): solving a task turns exactly its row
  green, in whatever order a student solves them;
* every wrong solution kept in ``tests/course/wrong/`` is rejected: its
  task does not get full marks.  They are checked in rounds, round k with
  wrong solution k of *every* task of the module in place at once, one
  ``course grade`` per round.  That is sound because of the previous check:
  a task's tests never reach a sibling's code (with every sibling a stub,
  they pass), so what a sibling holds cannot change a task's verdict;
* in the full edition, a syntax error in a student file is named in one line
  at the top of the output and scores nothing, through ``course grade`` and
  through the autograder's script;
* task 2.2 looping one element past the end is rejected (bounds checks).

Cost.  Each ``course grade`` is one pytest process.  The editions of a
module are one folder, edited in place as a student would; a file put back
as it was gets its old modification time back, so Python's byte code stays
valid.  The bounds-checked kernels are shared by every edition of the run:
``MINITORCH_KERNEL_CACHE_BY_CONTENT`` (backends/kernel_cache.py) files a
compiled kernel under the hash of its sources, so editions whose kernel
files are the same text load the same machine code, and editions that
differ never meet; the engine's kernels load from the reference's prebuilt
archive (``MINITORCH_PREBUILT_ARCHIVE``, read by stamp like the cache).  The
modules are separate tests (pytest-xdist spreads them over its workers).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from minitorch.backends import prebuilt_kernels
from minitorch.backends.kernel_cache import BY_CONTENT_ENV
from minitorch.course import MODULES
from minitorch.course.build import BuildError, build_edition
from minitorch.course.leaks import leaks_of_editions
from minitorch.course.markers import _blocks
from minitorch.course.record import (EDITION_FILE, read_record, task_key, task_test_files,
                                     tasks_from_markers)
from minitorch.course.wrong import MIN_WRONG, put_in_place, wrong_solutions

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.data,
              pytest.mark.skipif((ROOT / EDITION_FILE).exists(),
                                 reason="a student edition: the edition checks run in the "
                                        "reference repository")]

TASKS = tasks_from_markers(ROOT) if not (ROOT / EDITION_FILE).exists() else []
COURSE_MODULES = sorted({t.module for t in TASKS})


# ---------------------------------------------------------------------------
# The reference's course is complete
# ---------------------------------------------------------------------------
def test_every_task_has_tests_and_every_mark_names_a_task():
    tasks = {t.id for t in TASKS}
    marked = set(task_test_files(ROOT))
    assert tasks, "no task is marked in the source"
    assert not tasks - marked, f"tasks without tests: {sorted(tasks - marked, key=task_key)}"
    assert not marked - tasks, f"task marks naming no task: {sorted(marked - tasks, key=task_key)}"
    assert set(COURSE_MODULES) == set(MODULES), (
        f"modules with tasks {COURSE_MODULES}, modules named {sorted(MODULES)}")


def test_every_task_keeps_at_least_three_wrong_solutions():
    kept = wrong_solutions(ROOT)          # (parses every file: a malformed one fails here)
    assert not set(kept) - {t.id for t in TASKS}, "wrong solutions of tasks that do not exist"
    short = [f"{t.id} ({len(kept.get(t.id, []))})" for t in TASKS
             if len(kept.get(t.id, [])) < MIN_WRONG]
    assert not short, (f"tasks with fewer than {MIN_WRONG} wrong solutions in "
                       f"tests/course/wrong/: {', '.join(short)}")


def test_no_edition_gives_a_solution_away():
    """No distinctive line of a stubbed task's reference block appears in any file of its
    edition (every module's and the full one): docs, guide, docstrings, tests, twins."""
    editions = [[m] for m in COURSE_MODULES] + [None]
    problems = []
    for modules, leaks in zip(editions, leaks_of_editions(editions, ROOT)):
        name = f"module {modules[0]}" if modules else "the full edition"
        problems += [f"{name}: task {task}: {where}: {line}" for task, line, where in leaks]
    assert not problems, f"{len(problems)} solution lines shown in editions:\n" + \
        "\n".join(problems)


# ---------------------------------------------------------------------------
# Driving an edition as a student does
# ---------------------------------------------------------------------------
@pytest.fixture(scope="session")
def kernel_cache(tmp_path_factory) -> str:
    """One by-content kernel cache for every edition of the session (all xdist workers).

    A kernel is filed there under the hash of the code it is built from
    (``backends/kernel_cache.py``), so the editions share every kernel that no task
    of theirs changes.  Where the whole run already has one
    (``MINITORCH_KERNEL_CACHE_BY_CONTENT``, as CI sets it for the bare install and the
    whole suite), the editions use it too, and load the engine's kernels that the rest
    of the suite compiled; ``MINITORCH_COURSE_CI_CACHE=DIR`` names one for the editions
    alone."""
    for name in (BY_CONTENT_ENV, "MINITORCH_COURSE_CI_CACHE"):
        if os.environ.get(name):
            Path(os.environ[name]).mkdir(parents=True, exist_ok=True)
            return os.environ[name]
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    folder = base / "course-kernels"
    folder.mkdir(exist_ok=True)
    return str(folder)


@pytest.fixture
def student(monkeypatch, kernel_cache):
    """Runs ``minitorch course ...`` in a folder: ``student(folder, "grade", ...)``."""
    from minitorch.cli import main
    monkeypatch.setenv(BY_CONTENT_ENV, kernel_cache)
    # An edition ships no prebuilt kernels (they are the reference's machine code); here it
    # may use the reference's archive, read by stamp: the engine's kernels load, as they do
    # in the rest of the suite, and a kernel built from a task's code (another stamp, or
    # bounds-checked) compiles as on a student's machine.
    if prebuilt_kernels.ARCHIVE.is_file():
        monkeypatch.setenv(prebuilt_kernels.ARCHIVE_ENV, str(prebuilt_kernels.ARCHIVE))
    # The pytest processes write byte code into the edition, reused by the next run.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    runner = CliRunner()

    def run(folder: Path, *args: str, code: int | None = 0):
        monkeypatch.chdir(folder)
        result = runner.invoke(main, ["course", *args], catch_exceptions=False)
        if code is not None:
            assert result.exit_code == code, f"course {' '.join(args)}: {result.output[-3000:]}"
        return result
    return run


def _grade(student, edition: Path) -> dict:
    """``course grade --json`` in the edition: ``{task id: results.json entry}`` and the file."""
    path = edition / "results.json"
    student(edition, "grade", "--json", str(path))
    results = json.loads(path.read_text())
    return {"_": results, **{t["number"]: t for t in results["tests"]}}


def _failed_lines(entry: dict) -> list:
    """The failing tests' lines of a results.json entry ("nodeid: first line of the error")."""
    return [ln for ln in entry["output"].splitlines()[1:] if ln.strip()]


def _own_stub_problems(results: dict, ids: list, context: str) -> list:
    """Each task of ``ids``: 0 points, every test failing with that task's own stub."""
    problems = []
    for task_id in ids:
        entry = results[task_id]
        if entry["score"] != 0:
            problems.append(f"{context}: task {task_id} scores {entry['score']}")
        for line in _failed_lines(entry):
            if not re.search(rf"NotImplementedError: (tid=\[[^]]*\] ctaid=\[[^]]*\]: )?"
                             rf"Task {re.escape(task_id)}: ", line):
                problems.append(f"{context}: task {task_id}'s test fails otherwise: {line[:300]}")
    return problems


class _Editor:
    """Edits an edition's files as a student does, and puts them back exactly as they were
    (text and modification time: Python's byte code of the original stays valid).  Each
    edit gets a later modification time than any before, so byte code is never stale."""

    def __init__(self, root: Path):
        self.root = root
        self.saved: dict = {}
        self.clock = max(p.stat().st_mtime for p in (root / "minitorch").rglob("*.py")) + 10

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        if rel not in self.saved:
            st = path.stat()
            self.saved[rel] = (path.read_text(), st.st_atime_ns, st.st_mtime_ns)
        path.write_text(text)
        self.clock += 2
        os.utime(path, (self.clock, self.clock))

    def put(self, task, body: str) -> None:
        self.write(task.file, put_in_place((self.root / task.file).read_text(), task.id, body))

    def restore(self) -> None:
        for rel, (text, atime, mtime) in self.saved.items():
            (self.root / rel).write_text(text)
            os.utime(self.root / rel, ns=(atime, mtime))
        self.saved = {}


def _solution(task) -> str:
    """The reference block of ``task``, at zero indentation."""
    text = (ROOT / task.file).read_text()
    lines = text.split("\n")
    for task_id, _, _, _, begin, end in _blocks(text, task.file):
        if task_id == task.id:
            return textwrap.dedent("\n".join(lines[begin + 1:end]))
    raise AssertionError(f"no reference block for task {task.id} in {task.file}")


def _separating_runs(ids: list) -> list:
    """Sets of task ids such that for any two tasks i != j, some set holds i and not j.

    Task k gets the k-th subset of size m // 2 of the runs ``0 .. m-1`` (the
    runs in which it is solved), with m the smallest count that has enough
    such subsets.  Two different subsets of one size never contain each
    other, so i's holds a run that j's lacks.  11 tasks need 6 runs, 8 need 5.
    """
    m = 1
    while math.comb(m, m // 2) < len(ids):
        m += 1
    codes = list(itertools.combinations(range(m), m // 2))[:len(ids)]
    return [{i for i, code in zip(ids, codes) if run in code} for run in range(m)]


def test_separating_runs_separate_every_two_tasks():
    for n in range(1, 14):
        ids = [f"9.{k}" for k in range(n)]
        runs = _separating_runs(ids)
        assert all(any(i in run and j not in run for run in runs)
                   for i in ids for j in ids if i != j)
        assert len(runs) <= max(1, 2 * math.ceil(math.log2(n + 1)))


def _build(student, dest: Path, *modules: int) -> list:
    args = ["build", str(dest)] + [a for m in modules for a in ("--module", str(m))]
    student(ROOT, *args)
    return read_record(dest)


@pytest.mark.parametrize("module", COURSE_MODULES)
def test_module_edition_from_the_students_chair(module, tmp_path, student):
    edition = tmp_path / f"module{module}"
    tasks = _build(student, edition, module)
    ids = [t.id for t in tasks]
    assert ids == [t.id for t in TASKS if t.module == module]
    listed = student(edition, "tasks").output
    assert re.findall(r"^  (\d+\.\d+) ", listed, re.M) == ids
    readme = (edition / "README.md").read_text()
    assert f"module {module}" in readme and "minitorch course test" in readme

    # Untouched: 0 points, exactly the edition's tasks, each test stopped by its own stub.
    results = _grade(student, edition)
    assert [t["number"] for t in results["_"]["tests"]] == ids
    assert all(t["max_score"] == 10.0 for t in results["_"]["tests"])
    assert results["_"]["score"] == 0
    problems = _own_stub_problems(results, ids, "untouched")

    # Solutions put back: `course status` shows exactly those tasks passing, with full
    # points, and every other task not started (status runs the started tasks' tests
    # only).  A task passing with a sibling still a stub never ran that sibling's code (a
    # stub raises); the runs put back the solutions of a few tasks at a time such that
    # for any two tasks i and j one run holds i solved and j a stub (_separating_runs):
    # every task is shown to pass alone, whatever order a student solves them in, in
    # about log2 of the module's runs instead of one per task.
    editor = _Editor(edition)
    for solved in _separating_runs(ids):
        for task in tasks:
            if task.id in solved:
                editor.put(task, _solution(task))
        status = student(edition, "status").output
        editor.restore()
        rows = {m[0]: m[1:] for m in re.findall(
            r"^(\d+\.\d+)\s+(not started|failing|passing|waiting)\s+(\S+)\s+([\d.]+)", status,
            re.M)}
        want = {i: ("passing", rows.get(i, ("", "", ""))[1], "10.00") if i in solved
                else ("not started", "-", "0.00") for i in ids}
        if rows != want:
            problems.append(f"{sorted(solved)} solved: course status says\n{status[-2500:]}")

    # Every kept wrong solution rejected (round k: solution k of every task at once).
    kept = {t.id: wrong_solutions(ROOT).get(t.id, []) for t in tasks}
    by_id = {t.id: t for t in tasks}
    for k in range(max((len(s) for s in kept.values()), default=0)):
        placed = {i: s[k] for i, s in kept.items() if k < len(s)}
        for task_id, solution in placed.items():
            editor.put(by_id[task_id], solution.body)
        results = _grade(student, edition)
        editor.restore()
        for task_id, solution in placed.items():
            if results[task_id]["score"] == 10.0:
                problems.append(f"wrong solution NOT rejected: task {task_id}, "
                                f"{solution.name} ({solution.where})")
    assert not problems, "\n".join(problems)


def test_full_edition_from_the_students_chair(tmp_path, student):
    edition = tmp_path / "student"
    tasks = _build(student, edition)
    ids = [t.id for t in tasks]
    assert ids == [t.id for t in TASKS]
    assert not (edition / "tests" / "course" / "wrong").exists()
    listed = student(edition, "tasks").output
    assert re.findall(r"^  (\d+\.\d+) ", listed, re.M) == ids
    imports = subprocess.run(
        [sys.executable, "-c", "import json, sys, minitorch; print(json.dumps(sorted(sys.modules)))"
         "; import minitorch.nn, minitorch.optim, minitorch.utils.data, minitorch.cli"],
        cwd=edition, capture_output=True, text=True, timeout=300)
    assert imports.returncode == 0, imports.stderr[-3000:]
    # The modules ``import minitorch`` loads: a syntax error there stops every test.
    loaded = set(json.loads(imports.stdout.splitlines()[-1]))

    results = _grade(student, edition)
    assert [t["number"] for t in results["_"]["tests"]] == ids and results["_"]["score"] == 0
    for task_id in ids:
        for line in _failed_lines(results[task_id]):
            assert re.search(r"NotImplementedError: (tid=\[[^]]*\] ctaid=\[[^]]*\]: )?"
                             r"Task \d+\.\d+: ", line), f"{task_id} fails otherwise: {line}"

    # course status: the task put back passes, the others are not started (not run).
    first = next(t for t in tasks if t.module == min(COURSE_MODULES))
    editor = _Editor(edition)
    editor.put(first, _solution(first))
    status = student(edition, "status").output
    rows = dict(re.findall(r"^(\d+\.\d+)\s+(not started|failing|passing|waiting)", status, re.M))
    assert rows == {i: ("passing" if i == first.id else "not started") for i in ids}, status
    assert f"total: 10.00 / {10.0 * len(ids):.2f} points" in status
    editor.restore()

    # A syntax error in a student file: one line first, nothing scores (both entry points).
    # In a file that ``import minitorch`` loads (a task of module 1's): every test stops at
    # its first import, so the two runs take seconds, not a whole course's tests each.
    broken_task = next(t for t in tasks if t.file[:-3].replace("/", ".") in loaded)
    broken_file = broken_task.file
    editor.put(broken_task, _solution(broken_task))      # solved, but the file does not compile
    editor.write(broken_file, (edition / broken_file).read_text() + "\ndef broken(:\n    pass\n")
    out = student(edition, "grade", "--json", str(edition / "broken.json")).output
    assert out.splitlines()[0].startswith(f"{broken_file}:"), out[:500]
    assert "SyntaxError" in out.splitlines()[0]
    broken = json.loads((edition / "broken.json").read_text())
    assert broken["score"] == 0 and all(t["score"] == 0 for t in broken["tests"])
    script = subprocess.run([sys.executable, "minitorch/course/autograde.py", "--json",
                             "script.json"], cwd=edition, capture_output=True, text=True,
                            timeout=600, env={**os.environ, BY_CONTENT_ENV: os.environ[
                                BY_CONTENT_ENV]})
    assert script.returncode == 0, script.stdout[-2000:] + script.stderr[-2000:]
    assert script.stdout.splitlines()[0].startswith(f"{broken_file}:")
    assert json.loads((edition / "script.json").read_text())["score"] == 0
    editor.restore()

    # The tests that need no task (the package's structure) pass around the stubs.
    structure = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n0",
         "tests/test_layers.py"], cwd=edition, capture_output=True, text=True, timeout=600)
    assert structure.returncode == 0, structure.stdout[-3000:]


def _overrun(task) -> str:
    """Task ``task``'s reference with its first loop running one element further."""
    body = _solution(task)
    changed = re.sub(r"(for \w+ in p?range\()([^\n]*)(\):)", r"\1\2 + 1\3", body, count=1)
    if changed == body:
        pytest.skip(f"task {task.id}'s reference has no range loop to overrun")
    return changed


@pytest.mark.skipif(not any(t.id == "2.2" for t in TASKS), reason="no task 2.2")
def test_a_kernel_that_writes_past_the_end_is_rejected(tmp_path, student):
    """Task 2.2 (zip) looping to n + 1: course test runs with Numba's bounds checks, in a
    cache of their own, so the write past the end of ``out`` is an IndexError."""
    task = next(t for t in TASKS if t.id == "2.2")
    edition = tmp_path / "overrun"
    build_edition(edition, tasks=["2.2"], root=ROOT)
    editor = _Editor(edition)
    editor.put(next(t for t in read_record(edition) if t.id == "2.2"), _overrun(task))
    out = student(edition, "test", "2.2", code=1).output
    assert "IndexError" in out, out[-3000:]
    assert out.splitlines()[-1].startswith("task 2.2 fails"), out[-500:]


# ---------------------------------------------------------------------------
# The commands' errors: one line, a non-zero status
# ---------------------------------------------------------------------------
def test_build_refuses_bad_destinations_and_modules(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    with pytest.raises(BuildError, match="already exists"):
        build_edition(tmp_path / "full", root=ROOT)
    with pytest.raises(BuildError, match="inside the repository"):
        build_edition(ROOT / "student", root=ROOT)
    with pytest.raises(BuildError, match="no course module 9"):
        build_edition(tmp_path / "new", [9], root=ROOT)


def test_build_copies_no_virtual_environment(tmp_path):
    """A venv of any name (CI's .venv-bare) is not source: never copied into an edition
    (it made builds slow and put library code, whose lines can match a solution's, in it)."""
    from minitorch.course.build import _ignore
    (tmp_path / ".venv-bare").mkdir()
    (tmp_path / ".venv-bare" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "envs").mkdir()
    (tmp_path / "minitorch").mkdir()
    skipped = _ignore(tmp_path, keep_caches=False)(str(tmp_path), [".venv-bare", "envs", "minitorch",
                                                                    ".venv", "x.egg-info"])
    assert skipped == {".venv-bare", ".venv", "x.egg-info"}


def test_course_commands_refuse_mistakes_in_one_line(tmp_path, monkeypatch):
    from minitorch.cli import main
    monkeypatch.chdir(ROOT)
    runner = CliRunner()
    first = COURSE_MODULES[0]
    listed = runner.invoke(main, ["course", "tasks", "--module", str(first)])
    assert listed.exit_code == 0
    assert set(re.findall(r"^  (\d+\.\d+) ", listed.output, re.M)) == \
        {t.id for t in TASKS if t.module == first}
    for args, message in [(["test", "9.9"], "no task 9.9"), (["test", "one"], "not a task id"),
                          (["tasks", "--module", "9"], "no task of module 9"),
                          (["grade", "--json", str(tmp_path / "no" / "r.json")],
                           "does not exist")]:
        bad = runner.invoke(main, ["course", *args])
        assert bad.exit_code != 0 and message in bad.output, (args, bad.output)
        assert "Traceback" not in bad.output
    out = tmp_path / "edition"
    built = runner.invoke(main, ["course", "build", str(out), "--module", str(first)])
    assert built.exit_code == 0, built.output
    again = runner.invoke(main, ["course", "build", str(out)])
    assert again.exit_code == 1 and "already exists" in again.output
    monkeypatch.chdir(out)
    inside = runner.invoke(main, ["course", "build", str(tmp_path / "other")])
    assert inside.exit_code == 1 and "already a student edition" in inside.output
    (out / EDITION_FILE).write_text("{not json")
    broken = runner.invoke(main, ["course", "tasks"])
    assert broken.exit_code == 1 and "not a course edition record" in broken.output


def test_course_commands_say_in_one_line_that_they_need_the_test_extra(tmp_path):
    """Without pytest, a course command that runs tests says what to install."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(textwrap.dedent('''
        import importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "pytest" or name.startswith("pytest."):
                    raise ImportError("blocked")
        sys.meta_path.insert(0, Block())
        import importlib.util
        _find = importlib.util.find_spec
        importlib.util.find_spec = lambda name, *a: None if name == "pytest" else _find(name, *a)
    '''))
    env = {**os.environ, "PYTHONPATH": str(blocker) + os.pathsep + str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "minitorch.cli", "course", "grade"], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 1
    assert done.stderr.strip() == ('Error: this command runs the course\'s tests and needs the '
                                   'test extra (pytest is not installed): pip install -e '
                                   '".[test]"'), done.stderr

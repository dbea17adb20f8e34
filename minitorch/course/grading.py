"""Grading: the tests of each task, run and scored per task, and not fooled.

Tests say which task they grade with a marker::

    @pytest.mark.task("2.1")
    def test_map_contiguous_applies_the_op(): ...

:func:`run_tests` runs them in a fresh pytest process (with
:mod:`.pytest_plugin`, which ``tests/conftest.py`` loads, logging every event
to a file as it happens) and :func:`grade` scores each task of the edition's
record: its points times the fraction of its tests that passed.

A test scores only if it **ran and passed**; everything else fails the
tests it touches, with a message that says why:

* a test file that does not import (a syntax error, a missing name): every
  task graded by that file fails (pytest runs the other files:
  ``--continue-on-collection-errors``);
* a test that takes longer than the per-test limit (an infinite loop): the
  limit is pytest-timeout's, method ``thread``, which ends the process; so is
  a crash (a segfault, ``os._exit``).  Either way the test that was running
  fails, and the grader starts a new process for the tests that had not run
  yet, so an infinite loop costs its own task only;
* a session that stops early (interrupted, an error in ``conftest.py``, a
  package that does not import): every test that did not report a pass
  fails, and pytest's exit status is read: a run that does not end with
  status 0 or 1 (5: nothing collected) never counts as clean.

A syntax error anywhere in the package is found before the tests run and
said in one line at the top of the output (:func:`syntax_errors`).

The runs set ``MINITORCH_COURSE_CHECKS=1`` (:func:`course_env`): every
kernel built from a task's function, the student's code, is compiled with
bounds checks (a kernel that reads or writes past the end of an array
raises IndexError), and CUDA kernels in debug mode (a stub raises on a GPU
as on the simulator).  Those kernels are cached under names of their own
(``minitorch/backends/kernel_cache.py``), so an unchecked one is never
loaded; every other kernel is shared with the student's other runs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

from .markers import MODULES
from .record import TASK_TESTS, is_edition, read_record, task_key

__all__ = ["POINTS_PER_TASK", "TASK_TESTS", "TIMEOUT", "TaskScore", "TestRun", "course_env",
           "grade", "format_table", "gradescope_results", "run_tests", "run_task_tests",
           "syntax_errors"]

#: Every task is worth the same; a task scores this times the fraction of its tests passed.
POINTS_PER_TASK = 10.0

#: Seconds one test may run (its kernels' first compile included) before it fails.
TIMEOUT = 300

#: A fresh process is started after a crash or a time-out at most this many times.
MAX_RESTARTS = 20

#: A whole grading run (every restart included) may take this many per-test limits.
SESSION_FACTOR = 10

#: The task named by a stub's message (``NotImplementedError: Task 1.3: ...``).
_STUB_MESSAGE = re.compile(r"NotImplementedError: (?:tid=\[[^]]*\] ctaid=\[[^]]*\]: )?"
                           r"Task (\d+\.\d+): ")

#: The hypothesis profiles of tests/conftest.py: "course" (no reproduce blob) for
#: ``course test``; "course-edition" (no blob, no shrinking) for grading.
TEST_PROFILE = "course"
GRADE_PROFILE = "course-edition"


# ---------------------------------------------------------------------------
# The environment of a course run
# ---------------------------------------------------------------------------
def course_env(root: Path, base: dict | None = None) -> dict:
    """The environment of a course test run in ``root``: the course's checks (bounds checks
    in the kernels built from tasks, checked CUDA kernels), the Numba cache folder
    ``$MINITORCH_COURSE_NUMBA_CACHE`` if set, and ``root`` first on the import path."""
    env = dict(os.environ if base is None else base)
    env["MINITORCH_COURSE_CHECKS"] = "1"
    # In an edition, the student's code is the edition's tasks: only the kernels built from
    # them need the checks (a module-2 edition's layout functions are the course's, and
    # every strided kernel runs them).  In the reference, every task's.
    env.pop("MINITORCH_COURSE_TASKS", None)
    if is_edition(root):
        env["MINITORCH_COURSE_TASKS"] = ",".join(t.id for t in read_record(root))
    if env.get("MINITORCH_COURSE_NUMBA_CACHE"):
        env["NUMBA_CACHE_DIR"] = env["MINITORCH_COURSE_NUMBA_CACHE"]
    env["PYTHONPATH"] = str(root) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                     else "")
    return env


def syntax_errors(root: Path, folders: tuple = ("minitorch", "tests")) -> list:
    """``["minitorch/layout.py:12: SyntaxError: invalid syntax", ...]`` for every file of
    ``folders`` that Python cannot compile."""
    found = []
    for folder in folders:
        for path in sorted((Path(root) / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            try:
                stat = path.stat()
            except OSError as e:
                found.append(f"{rel}: {type(e).__name__}: {e}")
                continue
            error = _compile_error(str(path), rel, stat.st_mtime_ns, stat.st_size)
            if error:
                found.append(error)
    return found


@lru_cache(maxsize=4096)
def _compile_error(path: str, rel: str, mtime_ns: int, size: int) -> str:
    """"" if the file compiles, else one line that says where and why (once per state)."""
    try:
        compile(Path(path).read_bytes(), rel, "exec", dont_inherit=True)
    except SyntaxError as e:
        return f"{rel}:{e.lineno}: {type(e).__name__}: {e.msg}"
    except (ValueError, OSError) as e:          # null bytes, unreadable
        return f"{rel}: {type(e).__name__}: {e}"
    return ""


# ---------------------------------------------------------------------------
# Running the tests
# ---------------------------------------------------------------------------
@dataclass
class TestRun:
    """What one (possibly restarted) pytest run found."""

    tests: dict = field(default_factory=dict)           # nodeid -> {tasks, outcome, message}
    collect_errors: dict = field(default_factory=dict)  # test file -> message
    exit_codes: list = field(default_factory=list)      # pytest's, one per process
    problem: str = ""        # why the session did not finish normally ("" when it did)
    seconds: float = 0.0

    __test__ = False         # (not a pytest test class)


def _first_error_line(text: str) -> str:
    """The most telling line of pytest's output when a session stops early."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for pattern in (r"^E\s+\w*(Error|Exception)\b", r"^\w*(Error|Exception)\b:",
                    r"^E\s+", r"ERROR|Error|error"):
        for ln in lines:
            if re.search(pattern, ln):
                return ln[:300]
    return lines[-1][:300] if lines else "(no output)"


def _read_events(path: Path) -> list:
    events = []
    if path.exists():
        for line in path.read_text(errors="replace").splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                pass            # a line cut short by a crash
    return events


def run_tests(root: Path, tasks: list | None, files: list, *, profile: str = GRADE_PROFILE,
              timeout: float = TIMEOUT, tb: str | None = None, env: dict | None = None,
              echo: Callable[[str], None] | None = None, extra: list | None = None,
              max_restarts: int = MAX_RESTARTS, session_limit: float | None = None) -> TestRun:
    """Run the tests of ``tasks`` (all marked tests when None) in ``files``, in ``root``.

    One pytest process (``-n0``) at a time; a process that dies (a crash, a
    test past ``timeout`` seconds) fails its running test and a new one runs
    the tests not yet started.  ``echo`` receives pytest's output line by
    line (``course test`` shows it); otherwise it is only read.

    ``tb`` is pytest's traceback style, by default ``short`` where someone reads
    the output (``echo``) and ``native`` where no one does.  A failure's message,
    all that a grade keeps, is the same in both; but to show a frame, pytest's
    own styles parse the frame's whole source file to find the statement (for
    every frame of every failure: 4.5 of a module-4 edition's 7.6 s when its
    34 tests fail through minitorch's large files), and Python's own traceback
    (``native``) shows one line without parsing anything.
    """
    root = Path(root)
    tb = tb or ("short" if echo is not None else "native")
    env = course_env(root) if env is None else env
    session_limit = SESSION_FACTOR * timeout if session_limit is None else session_limit
    run = TestRun()
    started_all: set = set()
    begin = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="minitorch-course-") as tmp:
        for attempt in range(max_restarts + 1):
            events_path = Path(tmp) / f"events-{attempt}.jsonl"
            skip_path = Path(tmp) / f"skip-{attempt}.txt"
            skip_path.write_text("\n".join(sorted(started_all)))
            cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n0", "-q",
                   "-rN", f"--tb={tb}", "--continue-on-collection-errors",
                   f"--course-report={events_path}", f"--course-skip={skip_path}",
                   f"--hypothesis-profile={profile}",
                   f"--timeout={timeout:g}", "--timeout-method=thread"]
            cmd += [f"--task={t}" for t in tasks] if tasks else ["-m", "task"]
            cmd += list(extra or []) + list(files)
            proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, errors="replace")
            # pytest-timeout limits each test, not the collection: a test file whose import
            # never ends would hang the grader.  The whole session has a limit too.
            fired = threading.Event()

            def stop(proc=proc, fired=fired) -> None:
                fired.set()
                proc.kill()
            left = max(1.0, session_limit - (time.monotonic() - begin))
            watchdog = threading.Timer(left, stop)
            watchdog.daemon = True
            watchdog.start()
            output = []
            assert proc.stdout is not None
            try:
                for line in proc.stdout:
                    output.append(line)
                    if echo is not None:
                        echo(line.rstrip("\n"))
                rc = proc.wait()
            finally:
                watchdog.cancel()
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            killed = fired.is_set()
            run.exit_codes.append(rc)
            text = "".join(output)
            events = _read_events(events_path)
            started, finished, ended = [], set(), None
            for ev in events:
                kind = ev.get("event")
                if kind == "collected":
                    run.tests.setdefault(ev["nodeid"], {"tasks": ev["tasks"], "outcome": "not run",
                                                        "message": "", "reports": []})
                elif kind == "collect_error":
                    run.collect_errors[ev["path"]] = ev["message"]
                elif kind == "start":
                    started.append(ev["nodeid"])
                elif kind == "report" and ev["nodeid"] in run.tests:
                    run.tests[ev["nodeid"]]["reports"].append(ev)
                elif kind == "finish":
                    finished.add(ev["nodeid"])
                elif kind == "session_finish":
                    ended = ev.get("exitstatus")
            for nodeid in finished:
                if nodeid in run.tests:
                    _settle(run.tests[nodeid])
            started_all.update(started)
            if ended is not None and rc in (0, 1, 5):
                break                                   # a session that ran to its end
            if killed:
                run.problem = (f"the test session ran longer than {session_limit:g} s and was "
                               "stopped (an import that never ends?)")
                for nodeid in started:
                    if nodeid not in finished and nodeid in run.tests:
                        run.tests[nodeid]["outcome"] = "failed"
                        run.tests[nodeid]["message"] = run.problem
                break
            running = [n for n in started if n not in finished and n in run.tests]
            if ended is None and running:
                # The process died inside a test: a time-out (pytest-timeout's thread
                # method ends the process) or a crash.  That test fails; the rest go on.
                timed_out = "Timeout" in text and "+++++" in text
                why = (f"took longer than {timeout:g} s and was stopped (an infinite loop?)"
                       if timed_out else f"crashed the test process (exit status {rc}): "
                       f"{_first_error_line(text[-3000:])}")
                for nodeid in running:
                    t = run.tests[nodeid]
                    t["outcome"], t["message"] = "failed", f"this test {why}"
                remaining = [n for n in run.tests if n not in started_all]
                if remaining and attempt < max_restarts:
                    continue
            run.problem = (f"pytest stopped early (exit status {rc}): "
                           f"{_first_error_line(text)}")
            break
    run.seconds = time.monotonic() - begin
    for nodeid, t in run.tests.items():
        if t["outcome"] == "not run":
            t["outcome"] = "failed"
            t["message"] = ("this test did not run: " + run.problem if run.problem
                            else "this test did not run to its end")
        t.pop("reports", None)
    # pytest says something failed that no test or file owns: nothing is trusted.
    if (not run.problem and run.exit_codes and run.exit_codes[-1] == 1 and not run.collect_errors
            and all(t["outcome"] != "failed" for t in run.tests.values())):
        run.problem = "pytest reported a failure that no test owns (exit status 1)"
        for t in run.tests.values():
            if t["outcome"] == "passed":
                t["outcome"], t["message"] = "failed", run.problem
    return run


def run_task_tests(root: Path, tasks: list | None = None, extra: list | None = None,
                   quiet: bool = True) -> tuple:
    """``(exit status, {nodeid: {"tasks", "outcome", "message"}})``: :func:`run_tests` of
    ``tasks`` with pytest arguments ``extra`` (options, then test files)."""
    extra = list(extra or [TASK_TESTS])
    options = [a for a in extra if a.startswith("-")]
    files = [a for a in extra if not a.startswith("-")]
    run = run_tests(root, tasks, files, extra=options,
                    echo=None if quiet else (lambda line: print(line)))
    return (run.exit_codes[-1] if run.exit_codes else 1), run.tests


def _settle(test: dict) -> None:
    """A finished test's outcome from its setup/call/teardown reports."""
    reports = test["reports"]
    failed = [r for r in reports if r["outcome"] == "failed"]
    if failed:
        test["outcome"], test["message"] = "failed", failed[0]["message"]
    elif any(r["outcome"] == "skipped" for r in reports):
        test["outcome"] = "skipped"
        test["message"] = next(r["message"] for r in reports if r["outcome"] == "skipped")
    elif any(r["when"] == "call" and r["outcome"] == "passed" for r in reports):
        test["outcome"] = "passed"
    else:
        test["outcome"], test["message"] = "failed", "this test did not run to its end"


# ---------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------
@dataclass
class TaskScore:
    """How one task did: its tests, how many passed, its points."""

    id: str
    what: str
    location: str
    tests: list = field(default_factory=list)      # (nodeid, outcome, message)

    __test__ = False

    @property
    def passed(self) -> int:
        return sum(1 for _, outcome, _ in self.tests if outcome == "passed")

    @property
    def total(self) -> int:
        return len(self.tests)

    @property
    def points(self) -> float:
        return round(POINTS_PER_TASK * self.passed / self.total, 2) if self.total else 0.0

    @property
    def complete(self) -> bool:
        return self.total > 0 and self.passed == self.total

    @property
    def blocked_by(self) -> list:
        """Other tasks whose stubs this task's tests ran into, in course order.

        The tasks build on each other in course order: the autograd tasks'
        tests make tensors, so they need module 1's layout functions.  A test
        that stops at *another* task's ``NotImplementedError`` says nothing
        about this task's code yet: the table shows it as waiting on that task.
        """
        found = {m for _, outcome, message in self.tests if outcome == "failed"
                 for m in _STUB_MESSAGE.findall(message)} - {self.id}
        return sorted(found, key=task_key)

    @property
    def first_failure(self) -> str:
        """The first line of the first failing test's message ("" when none failed)."""
        for nodeid, outcome, message in self.tests:
            if outcome != "passed":
                first = message.strip().splitlines()[0] if message.strip() else outcome
                return first[:300]
        return ""


def score_run(tasks: list, run: TestRun) -> list:
    """A :class:`TaskScore` per task of ``tasks`` (CourseTask) from ``run``."""
    scores = {t.id: TaskScore(t.id, t.statement, f"{t.file}:{t.function}") for t in tasks}
    for nodeid, entry in run.tests.items():
        for task in entry.get("tasks", []):
            if task in scores:
                scores[task].tests.append((nodeid, entry["outcome"], entry["message"]))
    for t in tasks:
        message = run.collect_errors.get(t.tests)
        if message is not None:
            scores[t.id].tests.append((t.tests, "failed", f"{t.tests} does not import: {message}"))
        elif not scores[t.id].tests and run.problem:
            scores[t.id].tests.append((t.tests, "failed", run.problem))
    return [scores[t.id] for t in sorted(tasks, key=lambda t: task_key(t.id))]


@dataclass
class Grade:
    """The result of :func:`grade`: one score per task, and what went wrong globally."""

    scores: list
    warnings: list          # one line each, shown first (syntax errors, a stopped session)
    run: TestRun

    @property
    def points(self) -> float:
        return round(sum(s.points for s in self.scores), 2)


def grade(root: Path, tasks: list, *, timeout: float = TIMEOUT, profile: str = GRADE_PROFILE,
          env: dict | None = None, echo: Callable[[str], None] | None = None,
          tb: str | None = None) -> Grade:
    """Run the tests of ``tasks`` (CourseTask, from the record) in ``root`` and score each."""
    warnings = [f"{e} (the tests that import this file fail)" for e in syntax_errors(root)]
    files = sorted({t.tests for t in tasks if t.tests})
    if not files:
        run = TestRun(problem="no test file grades these tasks")
    else:
        run = run_tests(root, [t.id for t in tasks], files, timeout=timeout, profile=profile,
                        env=env, echo=echo, tb=tb)
    if run.problem:
        warnings.append(run.problem)
    for path, message in sorted(run.collect_errors.items()):
        warnings.append(f"{path} does not import: {message.splitlines()[0] if message else ''}")
    return Grade(score_run(tasks, run), warnings, run)


def format_table(scores: list) -> str:
    """A table per task: id, tests passed, points; a line per module; the total."""
    lines = [f"{'task':<6} {'tests':>7} {'points':>7}  statement"]
    module = None
    for s in scores:
        m = int(s.id.split(".")[0])
        if m != module:
            module = m
            lines.append(f"-- module {m}: {MODULES.get(m, '')}")
        what = s.what if len(s.what) <= 60 else s.what[:57] + "..."
        if s.blocked_by:
            what = f"(waits for task {', '.join(s.blocked_by)}) " + what
        lines.append(f"{s.id:<6} {f'{s.passed}/{s.total}':>7} {s.points:>7.2f}  {what}")
    total = sum(s.points for s in scores)
    lines.append(f"total: {total:.2f} / {POINTS_PER_TASK * len(scores):.2f} points")
    return "\n".join(lines)


def gradescope_results(result: Grade) -> dict:
    """Gradescope's autograder ``results.json``: one entry per task of the edition.

    The format is Gradescope's autograder specification: a top-level
    ``score``, ``output`` and ``tests``, each test with ``name``,
    ``number``, ``score``, ``max_score``, ``status`` and ``output``.
    """
    tests = []
    for s in result.scores:
        failed = [f"{nodeid}: {message.strip().splitlines()[0] if message.strip() else outcome}"
                  for nodeid, outcome, message in s.tests if outcome != "passed"]
        output = (f"{s.passed} of {s.total} tests passed." if s.total else
                  "No test of this task ran.")
        if s.blocked_by:
            output += (f" Some tests stop in task {', '.join(s.blocked_by)}, which this task "
                       "builds on: finish that first.")
        if failed:
            output += "\n" + "\n".join(failed[:50])
        tests.append({"name": f"Task {s.id}: {s.what}", "number": s.id,
                      "score": s.points, "max_score": POINTS_PER_TASK,
                      "status": "passed" if s.complete else "failed",
                      "output": output, "visibility": "visible"})
    summary = (f"{sum(1 for s in result.scores if s.complete)} of {len(result.scores)} "
               "tasks complete.")
    return {"score": result.points,
            "execution_time": round(result.run.seconds, 1),
            "output": "\n".join(result.warnings + [summary]),
            "visibility": "visible", "stdout_visibility": "visible", "tests": tests}

"""Grading: the tests of each task, run and scored per task.

Tests say which task they grade with a marker::

    @pytest.mark.task("2.1")
    def test_map_contiguous_applies_the_op(): ...

:mod:`.pytest_plugin` (loaded by ``tests/conftest.py``) adds pytest's
``--task`` and ``--course-report`` options.  :func:`grade` runs the task
tests in a fresh process, reads that report and
scores each task: its points times the fraction of its tests that pass.
:func:`gradescope_results` turns the scores into Gradescope's autograder
``results.json``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .markers import MODULES, find_tasks

__all__ = ["TASK_TESTS", "POINTS_PER_TASK", "TaskScore", "grade", "format_table", "gradescope_results",
           "run_task_tests"]

#: Where the task tests live (relative to the repository root).
TASK_TESTS = "tests/course"

#: Every task is worth the same; a task scores this times the fraction of its tests passed.
POINTS_PER_TASK = 10.0

#: The task named by a stub's message (``NotImplementedError: Task 1.3: ...``).
_STUB_MESSAGE = re.compile(r"NotImplementedError: (?:tid=\[[^]]*\] ctaid=\[[^]]*\]: )?"
                           r"Task (\d+\.\d+): ")


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
    def blocked_by(self) -> list:
        """Other tasks whose stubs this task's tests ran into, in course order.

        The tasks build on each other in course order: the autograd tasks'
        tests make tensors, so they need module 1's layout functions.  A test
        that stops at *another* task's ``NotImplementedError`` says nothing
        about this task's code yet: the table shows it as waiting on that task.
        """
        found = {m for _, outcome, message in self.tests if outcome == "failed"
                 for m in _STUB_MESSAGE.findall(message)} - {self.id}
        return sorted(found, key=lambda s: tuple(int(p) for p in s.split(".")))


def run_task_tests(root: Path, tasks: list | None = None, extra: list | None = None,
                   quiet: bool = True) -> tuple:
    """Run the tests of ``tasks`` (default: every task) in a fresh process in ``root``.

    Returns ``(exit_code, report)`` where ``report`` maps each test to its
    tasks and outcome.
    """
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        # -n0: one process, so that the report sees every test's marks (pytest-xdist
        # would collect on its workers).
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n0",
               f"--course-report={report}", "-q" if quiet else "-v", "-rN"]
        cmd += [f"--task={t}" for t in tasks] if tasks else ["-m", "task"]
        cmd += extra or [TASK_TESTS]
        env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        done = subprocess.run(cmd, cwd=root, env=env, capture_output=quiet, text=True)
        results = json.loads(report.read_text()) if report.exists() else {}
    return done.returncode, results


def grade(root: Path, tasks: list | None = None) -> list:
    """Run the task tests and score every task found in ``root``'s source."""
    known = find_tasks(root)
    _, report = run_task_tests(root, tasks)
    scores = {t.id: TaskScore(t.id, t.what, f"{t.path}:{t.function}") for t in known
              if not tasks or t.id in tasks}
    for nodeid, entry in report.items():
        for task in entry.get("tasks", []):
            if task in scores:
                scores[task].tests.append((nodeid, entry["outcome"], entry["message"]))
    return [scores[k] for k in sorted(scores, key=lambda s: tuple(int(p) for p in s.split(".")))]


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


def gradescope_results(scores: list) -> dict:
    """Gradescope's autograder ``results.json``: one entry per task."""
    tests = []
    for s in scores:
        failed = [f"{nodeid}: {message.strip().splitlines()[0] if message.strip() else outcome}"
                  for nodeid, outcome, message in s.tests if outcome != "passed"]
        output = (f"{s.passed} of {s.total} tests passed." if s.total else
                  "This task has no tests.")
        if s.blocked_by:
            output += (f" Some tests stop in task {', '.join(s.blocked_by)}, which this task "
                       "builds on: finish that first.")
        if failed:
            output += "\n" + "\n".join(failed[:10])
        tests.append({"name": f"Task {s.id}: {s.what}", "number": s.id,
                      "score": s.points, "max_score": POINTS_PER_TASK,
                      "output": output, "visibility": "visible"})
    return {"score": round(sum(s.points for s in scores), 2),
            "output": f"{sum(1 for s in scores if s.total and s.passed == s.total)} of "
                      f"{len(scores)} tasks complete.",
            "visibility": "visible", "stdout_visibility": "visible", "tests": tests}

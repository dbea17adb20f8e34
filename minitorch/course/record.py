"""The edition's record of its tasks, and the reference's (its markers).

``minitorch course build`` writes ``COURSE_EDITION.json`` at the root of
every edition.  It lists each task it turned into a stub: its id, module,
statement, the file and function that hold it, and the test file that grades
it.  Every command run inside the edition (``course tasks``, ``test``,
``grade``, ``status``) works from that list and from nothing else: a module
edition carries the *solved* blocks of the other modules (their markers are
still there), and a student's half-edited file is the student's business
until its tests run.  In the reference repository, which has no record, the
markers are the record (:func:`markers.find_tasks`).

The record of a module-2 edition, for example::

    {"format": 1, "modules": [2],
     "tasks": [{"id": "2.1", "module": 2, "statement": "...",
                "file": "minitorch/backends/cpu/elementwise.py",
                "function": "unary_contiguous",
                "tests": "tests/course/test_m2_kernels.py"}, ...],
     "stripped": ["2.1", ...]}
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from .markers import find_tasks

__all__ = ["EDITION_FILE", "TASK_TESTS", "CourseTask", "RecordError", "course_tasks",
           "is_edition", "read_record", "task_test_files", "task_key", "write_record",
           "stub_site", "is_stub"]

#: The record at the root of an edition.
EDITION_FILE = "COURSE_EDITION.json"

#: Where the task tests live (relative to the repository root).
TASK_TESTS = "tests/course"

RECORD_FORMAT = 1


class RecordError(ValueError):
    """A record (or a reference's markers and task tests) that cannot be used."""


def task_key(task_id: str) -> tuple:
    """Sort key of a task id: "2.10" after "2.9"."""
    return tuple(int(p) for p in task_id.split("."))


@dataclass(frozen=True)
class CourseTask:
    """One task as the course commands see it."""

    id: str
    module: int
    statement: str
    file: str          # relative to the root, / separators
    function: str      # the function (or Class.method) the student writes
    tests: str         # the one test file that grades it, relative to the root

    def to_json(self) -> dict:
        return asdict(self)


def task_test_files(root: Path) -> dict:
    """``{task id: test file}`` from the ``@pytest.mark.task("M.N")`` marks in tests/course.

    Read with :mod:`ast` (nothing is imported).  A task's tests live in one
    file (the course's rule): a task marked in two files is refused.
    """
    found: dict = {}
    for path in sorted((Path(root) / TASK_TESTS).glob("test_*.py")):
        rel = path.relative_to(root).as_posix()
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), rel)
        except SyntaxError as e:
            raise RecordError(f"{rel}:{e.lineno}: {e.msg}") from None
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for dec in node.decorator_list:
                if (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute)
                        and dec.func.attr == "task"):
                    for arg in dec.args:
                        if not isinstance(arg, ast.Constant) or not isinstance(arg.value, str):
                            continue
                        if found.setdefault(arg.value, rel) != rel:
                            raise RecordError(f"task {arg.value} has tests in two files: "
                                              f"{found[arg.value]} and {rel} (one file per task)")
    return found


def tasks_from_markers(root: Path) -> list:
    """The reference's tasks: its markers, each with the test file that grades it."""
    tests = task_test_files(root)
    return [CourseTask(t.id, t.module, t.what, t.path, t.function, tests.get(t.id, ""))
            for t in find_tasks(root)]


def write_record(dest: Path, tasks: list, modules: list) -> dict:
    """Write ``COURSE_EDITION.json`` into the edition ``dest``; returns what it wrote."""
    tasks = sorted(tasks, key=lambda t: task_key(t.id))
    record = {"format": RECORD_FORMAT, "modules": sorted(modules),
              "tasks": [t.to_json() for t in tasks], "stripped": [t.id for t in tasks]}
    (Path(dest) / EDITION_FILE).write_text(json.dumps(record, indent=2) + "\n")
    return record


def is_edition(root: Path) -> bool:
    return (Path(root) / EDITION_FILE).is_file()


def read_record(root: Path) -> list:
    """The tasks recorded in the edition at ``root`` (course order)."""
    path = Path(root) / EDITION_FILE
    try:
        data = json.loads(path.read_text())
        tasks = [CourseTask(str(t["id"]), int(t["module"]), str(t["statement"]), str(t["file"]),
                            str(t["function"]), str(t["tests"])) for t in data["tasks"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise RecordError(f"{path} is not a course edition record ({type(e).__name__}: {e}); "
                          "it comes with the edition: take it from the course's copy") from None
    return sorted(tasks, key=lambda t: task_key(t.id))


def course_tasks(root: Path) -> list:
    """The tasks the course commands work on: the record in an edition, else the markers."""
    return read_record(root) if is_edition(root) else tasks_from_markers(root)


def stub_site(root: Path, task: CourseTask) -> int | None:
    """The 1-based line of the task's ``# Task M.N:`` comment in its file, if it is there.

    Read leniently: a file the student is editing may be anything, and only
    says where to look.
    """
    try:
        lines = (Path(root) / task.file).read_text(encoding="utf-8", errors="replace").split("\n")
    except OSError:
        return None
    pattern = re.compile(rf"^\s*# Task {re.escape(task.id)}:")
    for i, line in enumerate(lines):
        if pattern.match(line):
            return i + 1
    return None


def is_stub(root: Path, task: CourseTask) -> bool:
    """True while the task's file still holds its stub (the student has not started)."""
    try:
        text = (Path(root) / task.file).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return f'raise NotImplementedError("Task {task.id}: ' in text

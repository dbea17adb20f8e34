"""``minitorch course ...``: build a student edition, list, test and grade its tasks.

    minitorch course tasks                      # the tasks: id, where, what
    minitorch course build ../student           # the whole course, every task a stub
    minitorch course build ../m2 --module 2     # hand out one module
    minitorch course test 2.1                   # run one task's tests
    minitorch course status                     # not started / failing / passing, points
    minitorch course grade --json results.json  # score every task (Gradescope format)

Inside an edition every command works from the edition's record
(``COURSE_EDITION.json``, see :mod:`.record`): exactly the tasks it hands
out.  In the reference repository the markers are the record.

These commands import nothing of the engine, so they run even when the
student's code does not import: the ``minitorch`` command then says why in
its first line and runs them without the engine (``minitorch_launcher.py``
beside the package), handing that line over as ``obj["engine_error"]``;
``course grade`` puts it first in results.json's ``output``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import click

from .build import BuildError, build_edition, repository_root
from .grading import (POINTS_PER_TASK, TEST_PROFILE, TIMEOUT, format_table, grade,
                      gradescope_results)
from .markers import MODULES, TaskMarkerError
from .record import (EDITION_FILE, CourseTask, RecordError, course_tasks, is_edition, is_stub,
                     stub_site, task_key)
from .wrong import WrongFileError, check_tasks

__all__ = ["course"]

_TASK_ID = re.compile(r"^\d+\.\d+$")

#: What the commands that run tests need, by import name (the ``test`` extra).
_TEST_TOOLS = ("pytest", "hypothesis", "pytest_timeout")


def _need_test_tools() -> None:
    missing = [m for m in _TEST_TOOLS if importlib.util.find_spec(m) is None]
    if missing:
        raise click.ClickException(
            f"this command runs the course's tests and needs the test extra ({missing[0]} is "
            "not installed): pip install -e \".[test]\"")


def _root() -> Path:
    """The edition the current folder is in (the nearest folder up holding its record), else
    the checkout this package runs from.

    So ``minitorch course grade`` run in an edition's folder grades that edition, with
    the grader of the ``minitorch`` that runs it: an autograder can keep its own trusted
    install and grade each submission's folder.
    """
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / EDITION_FILE).is_file() and (folder / "minitorch").is_dir():
            return folder
    try:
        return repository_root()
    except BuildError as e:
        raise click.ClickException(str(e)) from None


def _tasks(root: Path, modules: tuple = ()) -> list:
    """The tasks the commands work on (the record, or the reference's markers)."""
    try:
        tasks = course_tasks(root)
    except TaskMarkerError as e:
        raise click.ClickException(f"a solution block is not well formed: {e}") from None
    except RecordError as e:
        raise click.ClickException(str(e)) from None
    if modules:
        unknown = sorted(set(modules) - {t.module for t in tasks})
        if unknown:
            have = ", ".join(str(m) for m in sorted({t.module for t in tasks}))
            raise click.ClickException(f"no task of module {unknown[0]} here (this "
                                       f"{'edition' if is_edition(root) else 'checkout'} has "
                                       f"module{'s' if ',' in have else ''} {have})")
        tasks = [t for t in tasks if t.module in modules]
    return tasks


def _chosen(tasks: list, task_ids: tuple) -> list:
    by_id = {t.id: t for t in tasks}
    for task in task_ids:
        if not _TASK_ID.match(task):
            raise click.BadParameter(f"{task!r} is not a task id such as 2.1", param_hint="TASK")
        if task not in by_id:
            raise click.BadParameter(f"no task {task} here: see `minitorch course tasks`",
                                     param_hint="TASK")
    return [by_id[t] for t in sorted(set(task_ids), key=task_key)]


def _engine_error() -> str:
    """``"minitorch/layout.py:12: SyntaxError: ..."`` when these commands run without the
    engine because it does not import (the launcher said so already), else ``""``."""
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    return obj.get("engine_error", "") if isinstance(obj, dict) else ""


def _echo_warnings(result) -> None:
    """Print the run's one-line warnings; without the engine, its import error leads them.

    The launcher printed that error first; a warning about the same line (the
    grader's own syntax check finds a syntax error too) is not said twice, and
    ``result.warnings`` (results.json's ``output``) starts with the error.
    """
    engine = _engine_error()
    if engine:
        where = engine.split(": ", 1)[0]          # "minitorch/layout.py:12", if it names one
        same = f"{where}:" if ".py:" in where else engine
        result.warnings[:] = [engine] + [w for w in result.warnings if not w.startswith(same)]
    for line in result.warnings[1 if engine else 0:]:
        click.echo(line)


_MODULE_OPTION = click.option("--module", "modules", type=click.IntRange(min=0), multiple=True,
                              help="Only these modules (repeatable).")


@click.group()
def course() -> None:
    """The course edition: assignments cut from this code, and their grader."""


@course.command("tasks")
@_MODULE_OPTION
def tasks_command(modules: tuple[int, ...]) -> None:
    """List the tasks: id, the function to write, and what it must do."""
    root = _root()
    module = None
    edition = is_edition(root)
    for t in _tasks(root, modules):
        if t.module != module:
            module = t.module
            click.echo(f"Module {module}: {MODULES.get(module, '')}")
        line = stub_site(root, t)
        where = f"{t.file}:{line}" if line else t.file
        state = "  (stub)" if edition and is_stub(root, t) else ""
        click.echo(f"  {t.id:<5} {where} {t.function}{state}\n        {t.statement}")


@course.command("build")
@click.argument("dest", type=click.Path(file_okay=False, path_type=Path))
@click.option("--module", "modules", type=click.IntRange(min=0), multiple=True,
              help="Strip only these modules' tasks (repeatable; default: every module).")
def build_command(dest: Path, modules: tuple[int, ...]) -> None:
    """Write a student edition of the repository into DEST."""
    root = _root()
    if is_edition(root):
        raise click.ClickException("this checkout is already a student edition; build from "
                                   "the reference repository")
    _tasks(root)
    try:
        stripped = build_edition(dest, list(modules) or None, root=root)
    except (BuildError, TaskMarkerError) as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"wrote a student edition to {dest}: {len(stripped)} tasks are stubs "
               f"({', '.join(stripped)})")
    click.echo(f"next: cd {dest} && pip install -e '.[test]' && minitorch course tasks")


def _verdict(s, task: CourseTask) -> str:
    """One line: does the task pass, fail (with what), or wait for another task?"""
    if s.complete:
        return f"task {s.id} passes ({s.total} tests)"
    if not s.total:
        return f"task {s.id} fails: no test of it ran"
    if s.blocked_by:
        return (f"task {s.id} waits for task {', '.join(s.blocked_by)} (still a stub): "
                f"{s.passed} of {s.total} tests pass")
    first = s.first_failure
    if f"Task {s.id}: " in first and "NotImplementedError" in first:
        return f"task {s.id} is not started: its stub in {task.file} ({task.function}) still raises"
    return f"task {s.id} fails ({s.passed} of {s.total} tests pass): {first}"


@course.command("test")
@click.argument("task_ids", nargs=-1, required=True, metavar="TASK...")
@click.option("-v", "--verbose", is_flag=True, help="pytest's long tracebacks.")
@click.option("--timeout", type=click.FloatRange(min=1), default=TIMEOUT, show_default=True,
              help="Seconds one test may run (the first run compiles kernels).")
def test_command(task_ids: tuple[str, ...], verbose: bool, timeout: float) -> None:
    """Run the tests of one or more tasks (for example: minitorch course test 2.1).

    One process, the task's own test file, short tracebacks; the last lines
    say per task whether it passes, fails (and with what), or waits for a
    task it builds on.
    """
    _need_test_tools()
    root = _root()
    chosen = _chosen(_tasks(root), task_ids)
    result = grade(root, chosen, timeout=timeout, profile=TEST_PROFILE,
                   echo=click.echo, tb="long" if verbose else "short")
    _echo_warnings(result)
    by_id = {t.id: t for t in chosen}
    for s in result.scores:
        click.echo(_verdict(s, by_id[s.id]))
    sys.exit(0 if all(s.complete for s in result.scores) else 1)


@course.command("status")
@_MODULE_OPTION
@click.option("--timeout", type=click.FloatRange(min=1), default=TIMEOUT, show_default=True,
              help="Seconds one test may run.")
def status_command(modules: tuple[int, ...], timeout: float) -> None:
    """Your progress: each task not started (still its stub), failing or passing, and points.

    Only the tasks you started are tested (their tests, in one run).
    """
    _need_test_tools()
    root = _root()
    tasks = _tasks(root, modules)
    started = [t for t in tasks if not is_stub(root, t)]
    scores = {}
    if started:
        result = grade(root, started, timeout=timeout)
        scores = {s.id: s for s in result.scores}
        _echo_warnings(result)
    click.echo(f"{'task':<6} {'state':<12} {'tests':>7} {'points':>7}  function")
    module, total = None, 0.0
    for t in tasks:
        if t.module != module:
            module = t.module
            click.echo(f"-- module {module}: {MODULES.get(module, '')}")
        s = scores.get(t.id)
        if s is None:
            state, tests, points = "not started", "-", 0.0
        else:
            state = "passing" if s.complete else "failing"
            tests, points = f"{s.passed}/{s.total}", s.points
            if s.blocked_by and not s.complete:
                state = "waiting"
        total += points
        note = f"  (waits for task {', '.join(s.blocked_by)})" if s and s.blocked_by else ""
        click.echo(f"{t.id:<6} {state:<12} {tests:>7} {points:>7.2f}  {t.file}: {t.function}{note}")
    click.echo(f"total: {total:.2f} / {POINTS_PER_TASK * len(tasks):.2f} points; "
               f"{sum(1 for s in scores.values() if s.complete)} of {len(tasks)} tasks pass")


@course.command("grade")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Also write Gradescope's results.json here.")
@_MODULE_OPTION
@click.option("--timeout", type=click.FloatRange(min=1), default=TIMEOUT, show_default=True,
              help="Seconds one test may run before it fails.")
def grade_command(json_path: Path | None, modules: tuple[int, ...], timeout: float) -> None:
    """Run every task's tests and print a table: tests passed and points per task."""
    _need_test_tools()
    root = _root()
    if json_path is not None and not json_path.resolve().parent.is_dir():
        raise click.ClickException(f"--json {json_path}: the folder "
                                   f"{json_path.resolve().parent} does not exist")
    tasks = _tasks(root, modules)
    if not tasks:
        raise click.ClickException("no task to grade here")
    result = grade(root, tasks, timeout=timeout)
    _echo_warnings(result)
    click.echo(format_table(result.scores))
    if json_path is not None:
        json_path.write_text(json.dumps(gradescope_results(result), indent=2) + "\n")
        click.echo(f"saved to {json_path}")


@course.command("check-wrong", hidden=True)
@click.argument("task_ids", nargs=-1, metavar="[TASK...]")
@_MODULE_OPTION
@click.option("--batch", is_flag=True, help="One run per round of a module.")
def check_wrong_command(task_ids: tuple[str, ...], modules: tuple[int, ...], batch: bool) -> None:
    """(Instructors, in the reference.) Check that the kept wrong solutions are rejected."""
    _need_test_tools()
    root = _root()
    if is_edition(root):
        raise click.ClickException("the wrong solutions are checked in the reference repository")
    _chosen(_tasks(root), task_ids)
    try:
        verdicts = check_tasks(list(task_ids) or None, list(modules) or None, root, batch=batch,
                               echo=click.echo)
    except (WrongFileError, BuildError) as e:
        raise click.ClickException(str(e)) from None
    missed = [v for v in verdicts if not v.rejected]
    click.echo(f"{len(verdicts) - len(missed)} of {len(verdicts)} wrong solutions rejected")
    for v in missed:
        click.echo(f"NOT REJECTED: task {v.solution.task}, {v.solution.name} "
                   f"({v.solution.where})")
    sys.exit(1 if missed else 0)

"""``minitorch course ...``: build a student edition, list, test and grade its tasks.

    minitorch course tasks                      # every task: id, where, what
    minitorch course build ../student           # the whole course, every task a stub
    minitorch course build ../m2 --module 2     # hand out one module
    minitorch course test 2.1                   # run one task's tests
    minitorch course grade --json results.json  # score every task (Gradescope format)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import click

from .build import EDITION_FILE, BuildError, build_edition, repository_root
from .grading import TASK_TESTS, format_table, grade, gradescope_results
from .markers import MODULES, TaskMarkerError, find_tasks

__all__ = ["course"]

_TASK_ID = re.compile(r"^\d+\.\d+$")


def _root() -> Path:
    try:
        return repository_root()
    except BuildError as e:
        raise click.ClickException(str(e)) from None


def _known_tasks(root: Path) -> list:
    try:
        return find_tasks(root)
    except TaskMarkerError as e:
        raise click.ClickException(f"a solution block is not well formed: {e}") from None


@click.group()
def course() -> None:
    """The course edition: assignments cut from this code, and their grader."""


@course.command("tasks")
@click.option("--module", "modules", type=click.IntRange(min=1), multiple=True,
              help="Only these modules (repeatable).")
def tasks_command(modules: tuple[int, ...]) -> None:
    """List the tasks: id, the function to write, and what it must do."""
    root = _root()
    stripped = _stripped(root)
    module = None
    for t in _known_tasks(root):
        if modules and t.module not in modules:
            continue
        if t.module != module:
            module = t.module
            click.echo(f"Module {module}: {MODULES.get(module, '')}")
        state = "  (stub)" if t.id in stripped else ""
        click.echo(f"  {t.id:<5} {t.path}:{t.line} {t.function}{state}\n        {t.what}")


@course.command("build")
@click.argument("dest", type=click.Path(file_okay=False, path_type=Path))
@click.option("--module", "modules", type=click.IntRange(min=1), multiple=True,
              help="Strip only these modules' tasks (repeatable; default: every module).")
def build_command(dest: Path, modules: tuple[int, ...]) -> None:
    """Write a student edition of the repository into DEST."""
    root = _root()
    if _stripped(root):
        raise click.ClickException("this checkout is already a student edition; build from "
                                   "the reference repository")
    _known_tasks(root)
    try:
        stripped = build_edition(dest, list(modules) or None, root=root)
    except BuildError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"wrote a student edition to {dest}: {len(stripped)} tasks are stubs "
               f"({', '.join(stripped)})")
    click.echo(f"next: cd {dest} && pip install -e '.[test]' && minitorch course grade")


@course.command("test")
@click.argument("task_ids", nargs=-1, required=True, metavar="TASK...")
@click.option("-v", "--verbose", is_flag=True, help="pytest's verbose output.")
def test_command(task_ids: tuple[str, ...], verbose: bool) -> None:
    """Run the tests of one or more tasks (for example: minitorch course test 2.1)."""
    root = _root()
    known = {t.id for t in _known_tasks(root)}
    for task in task_ids:
        if not _TASK_ID.match(task):
            raise click.BadParameter(f"{task!r} is not a task id such as 2.1", param_hint="TASK")
        if task not in known:
            raise click.BadParameter(f"no task {task}: see `minitorch course tasks`",
                                     param_hint="TASK")
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n0", "-v" if verbose else "-q"]
    cmd += [f"--task={t}" for t in task_ids] + [TASK_TESTS]
    sys.exit(subprocess.call(cmd, cwd=root))


@course.command("grade")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Also write Gradescope's results.json here.")
@click.option("--module", "modules", type=click.IntRange(min=1), multiple=True,
              help="Grade only these modules (repeatable).")
def grade_command(json_path: Path | None, modules: tuple[int, ...]) -> None:
    """Run every task's tests and print a table: tests passed and points per task."""
    root = _root()
    if json_path is not None and not json_path.resolve().parent.is_dir():
        raise click.ClickException(f"--json {json_path}: the folder "
                                   f"{json_path.resolve().parent} does not exist")
    known = _known_tasks(root)
    chosen = [t.id for t in known if not modules or t.module in modules]
    if not chosen:
        raise click.ClickException("no task to grade in the chosen modules")
    scores = grade(root, chosen if modules else None)
    click.echo(format_table(scores))
    if json_path is not None:
        json_path.write_text(json.dumps(gradescope_results(scores), indent=2) + "\n")
        click.echo(f"saved to {json_path}")


def _stripped(root: Path) -> set:
    """The tasks that are stubs in this checkout (empty for the reference)."""
    path = root / EDITION_FILE
    if not path.is_file():
        return set()
    try:
        return set(json.loads(path.read_text()).get("stripped", []))
    except (ValueError, AttributeError):
        return set()

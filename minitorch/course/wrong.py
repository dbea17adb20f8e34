"""Wrong solutions: plausible mistakes that each task's tests must reject.

For every task the reference keeps, in ``tests/course/wrong/task_M_N.txt``,
a few wrong solutions a student could plausibly write (an off-by-one, a
write past the end, a missing broadcast rule, unreduced gradients, ...)::

    # Wrong solutions for task 2.2 (each must be rejected by the task's tests).

    ### WRONG overrun: the loop runs one element past the end of out
    for i in range(out.shape[0] + 1):
        out[i] = arith(op, a[i], b[i])
    ### END WRONG

Each body is written at zero indentation.  :func:`put_in_place` re-indents
it to the stub's indentation and puts it in place of the task's
``raise NotImplementedError("Task M.N: ...")`` line in an edition; the
task's tests must then fail.  The folder never ships in an edition (it is
:data:`.build.INSTRUCTOR_ONLY`).

From the reference checkout::

    python -m minitorch.course.wrong check 2.2 3.4     # these tasks' wrong solutions
    python -m minitorch.course.wrong check --module 2  # a module's
    python -m minitorch.course.wrong check             # every one (slow: one run each)
    python -m minitorch.course.wrong list              # what is kept, per task

``check`` builds the module's edition once in a temporary folder (every
task of the module a stub), then for each wrong solution puts it in place,
runs the task's tests (as ``course grade`` does: bounds checks on, a
per-test time limit) and puts the stub back.  It prints one line per wrong
solution and, last, those that were NOT rejected; it exits 1 if any was not.
With ``--batch``, it puts wrong solution k of *every* chosen task of a
module in place at once and runs their tests together (see
:func:`check_module_batched` for why that is sound): a module costs as many
runs as its task with the most wrong solutions, not one per solution.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .build import BuildError, build_edition, repository_root
from .grading import TIMEOUT, grade
from .record import CourseTask, RecordError, read_record, task_key, tasks_from_markers

__all__ = ["WRONG_DIR", "MIN_WRONG", "WrongSolution", "WrongFileError", "parse_wrong_file",
           "wrong_solutions", "put_in_place", "check_tasks", "check_module_batched", "main"]

#: Where the wrong solutions live (relative to the reference root).
WRONG_DIR = "tests/course/wrong"

#: The course's rule: at least this many wrong solutions per task.
MIN_WRONG = 3

_HEAD = re.compile(r"^### WRONG\s+(?P<name>.+?)\s*$")
_END = "### END WRONG"
_FILE = re.compile(r"^task_(\d+)_(\d+)\.txt$")


class WrongFileError(ValueError):
    """A wrong-solutions file that is not in the format (the message names file:line)."""


@dataclass(frozen=True)
class WrongSolution:
    """One wrong solution: its task, its name (what is wrong), its body, where it is kept."""

    task: str
    name: str
    body: str          # at zero indentation, without a final newline
    where: str         # "tests/course/wrong/task_2_2.txt:3"


def parse_wrong_file(path: Path, task: str | None = None, name: str | None = None) -> list:
    """The wrong solutions of one file (``task_M_N.txt``), in the file's order.

    Refused, with the file and line: a body outside ``### WRONG``/``### END
    WRONG``, a block without its end, an empty body, a body that is not at
    zero indentation, or one that is not valid Python on its own.
    """
    path = Path(path)
    if task is None:
        m = _FILE.match(path.name)
        if not m:
            raise WrongFileError(f"{path}: a wrong-solutions file is named task_M_N.txt")
        task = f"{m.group(1)}.{m.group(2)}"
    lines = path.read_text(encoding="utf-8").split("\n")
    found = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _HEAD.match(line)
        if m is None:
            if line.strip() == _END:
                raise WrongFileError(f"{path}:{i + 1}: '{_END}' without a '### WRONG name' above")
            if line.strip() and not line.lstrip().startswith("#"):
                raise WrongFileError(f"{path}:{i + 1}: code outside a '### WRONG' block")
            i += 1
            continue
        start = i
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != _END:
            if _HEAD.match(lines[i]):
                raise WrongFileError(f"{path}:{start + 1}: '### WRONG {m.group('name')}' has no "
                                     f"'{_END}' before the next block")
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise WrongFileError(f"{path}:{start + 1}: '### WRONG {m.group('name')}' has no "
                                 f"'{_END}'")
        i += 1
        while body and not body[-1].strip():
            body.pop()
        while body and not body[0].strip():
            body.pop(0)
        where = f"{name or path.as_posix()}:{start + 1}"
        if not body:
            raise WrongFileError(f"{where}: '### WRONG {m.group('name')}' has an empty body")
        if body[0][:1] in (" ", "\t"):
            raise WrongFileError(f"{where}: the body is written at zero indentation")
        text = "\n".join(body)
        try:
            compile(_as_function(text), where, "exec", dont_inherit=True)
        except SyntaxError as e:
            raise WrongFileError(f"{where}: the body is not valid Python ({e.msg}, line "
                                 f"{(e.lineno or 2) - 1} of the body)") from None
        found.append(WrongSolution(task, m.group("name"), text, where))
    return found


def _as_function(body: str) -> str:
    """``body`` inside a function (a wrong ``return`` or ``yield`` is valid there)."""
    return "def _wrong():\n" + "\n".join("    " + ln if ln.strip() else ln
                                          for ln in body.split("\n")) + "\n"


def wrong_solutions(root: Path) -> dict:
    """``{task id: [WrongSolution, ...]}`` for every ``task_M_N.txt`` under ``root``."""
    found: dict = {}
    folder = Path(root) / WRONG_DIR
    for path in sorted(folder.glob("*.txt")) if folder.is_dir() else []:
        solutions = parse_wrong_file(path, name=f"{WRONG_DIR}/{path.name}")
        if solutions:
            found.setdefault(solutions[0].task, []).extend(solutions)
    return dict(sorted(found.items(), key=lambda kv: task_key(kv[0])))


def put_in_place(text: str, task_id: str, body: str) -> str:
    """``text`` (a file of an edition) with task ``task_id``'s stub line replaced by ``body``,
    re-indented to the stub's indentation.  Raises ValueError if the stub is not there once."""
    pattern = re.compile(rf'^(?P<indent>[ \t]*)raise NotImplementedError\("Task '
                         rf'{re.escape(task_id)}: .*$', re.M)
    hits = list(pattern.finditer(text))
    if len(hits) != 1:
        raise ValueError(f"the stub of task {task_id} is {'missing' if not hits else 'there twice'}")
    hit = hits[0]
    indent = hit.group("indent")
    block = "\n".join(indent + ln if ln.strip() else "" for ln in body.split("\n"))
    return text[:hit.start()] + block + text[hit.end():]


@dataclass
class Verdict:
    """What the task's tests did with one wrong solution."""

    solution: WrongSolution
    rejected: bool
    detail: str           # the first failure, or why it was not rejected


def _edition(dest: Path, module: int, root: Path, keep_caches: bool) -> list:
    """Build ``module``'s edition into ``dest``; its recorded tasks."""
    build_edition(dest, [module], root=root, keep_caches=keep_caches)
    return read_record(dest)


def _judge(edition: Path, tasks: list, chosen: dict, timeout: float) -> list:
    """Put ``chosen`` ({task id: WrongSolution}) in place in ``edition`` at once, grade those
    tasks, put the stubs back; a Verdict per solution."""
    by_id = {t.id: t for t in tasks}
    originals = {}
    try:
        for task_id, solution in chosen.items():
            path = edition / by_id[task_id].file
            originals.setdefault(path, path.read_text())
            path.write_text(put_in_place(path.read_text(), task_id, solution.body))
        result = grade(edition, [by_id[t] for t in chosen], timeout=timeout)
    finally:
        for path, text in originals.items():
            path.write_text(text)
    verdicts = []
    for s in result.scores:
        solution = chosen[s.id]
        if not s.complete:
            verdicts.append(Verdict(solution, True, s.first_failure))
        else:
            verdicts.append(Verdict(solution, False, f"all {s.total} tests of task {s.id} pass"))
    return verdicts


def check_tasks(task_ids: list | None = None, modules: list | None = None,
                root: Path | None = None, timeout: float = TIMEOUT, batch: bool = False,
                work: Path | None = None, echo=print) -> list:
    """Check the wrong solutions of the chosen tasks (default: every task that has some).

    One edition per module; each wrong solution in place alone (or, with
    ``batch``, :func:`check_module_batched`).  Returns every :class:`Verdict`.
    """
    root = repository_root() if root is None else Path(root)
    known = {t.id: t for t in tasks_from_markers(root)}
    kept = wrong_solutions(root)
    unknown = sorted(set(kept) - set(known), key=task_key)
    if unknown:
        raise WrongFileError(f"{WRONG_DIR}/task_{unknown[0].replace('.', '_')}.txt names task "
                             f"{unknown[0]}, which the source does not mark")
    if task_ids:
        missing = [t for t in task_ids if t not in known]
        if missing:
            raise WrongFileError(f"no task {missing[0]}: see `minitorch course tasks`")
    chosen = [t for t in kept if (not task_ids or t in task_ids)
              and (not modules or known[t].module in modules)]
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="minitorch-wrong-", dir=work) as tmp:
        for module in sorted({known[t].module for t in chosen}):
            edition = Path(tmp) / f"module-{module}"
            tasks = _edition(edition, module, root, keep_caches=True)
            mine = {t: kept[t] for t in chosen if known[t].module == module}
            if batch:
                verdicts += check_module_batched(edition, tasks, mine, timeout, echo)
                continue
            for task_id, solutions in mine.items():
                for solution in solutions:
                    v = _judge(edition, tasks, {task_id: solution}, timeout)[0]
                    echo(_line(v))
                    verdicts.append(v)
    return verdicts


def check_module_batched(edition: Path, tasks: list, solutions: dict, timeout: float = TIMEOUT,
                         echo=print) -> list:
    """Check a module's wrong solutions in rounds: round k puts wrong solution k of every
    task (that has one) in place at once and grades those tasks in one run.

    Sound because of what the edition check proves for every task (the
    reference's tests/test_course_edition.py): a task's tests pass when
    every *other* task of its module is a stub, so they never run a
    sibling's body (a stub there would have failed them).  Replacing the
    siblings' stubs by other wrong bodies therefore cannot change a task's
    outcome: each verdict of a round is the verdict of its solution alone.
    (A body that does not parse would break the whole file: the parser
    refuses those first.)
    """
    verdicts = []
    rounds = max((len(s) for s in solutions.values()), default=0)
    for k in range(rounds):
        chosen = {t: s[k] for t, s in solutions.items() if k < len(s)}
        for v in _judge(edition, tasks, chosen, timeout):
            echo(_line(v))
            verdicts.append(v)
    return verdicts


def _line(v: Verdict) -> str:
    state = "rejected" if v.rejected else "NOT REJECTED"
    return f"{v.solution.task:<5} {state:<12} {v.solution.name}  ({v.solution.where}): {v.detail}"


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minitorch.course.wrong",
                                     description="Check that each task's tests reject its kept "
                                                 "wrong solutions (run in the reference).")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="put each wrong solution in place and run its tests")
    check.add_argument("tasks", nargs="*", metavar="TASK", help="task ids (default: all)")
    check.add_argument("--module", type=int, action="append", default=[],
                       help="only this module's tasks (repeatable)")
    check.add_argument("--batch", action="store_true",
                       help="one run per round of a module, not one per solution")
    check.add_argument("--timeout", type=float, default=TIMEOUT,
                       help=f"seconds per test (default {TIMEOUT})")
    sub.add_parser("list", help="the wrong solutions kept, per task")
    args = parser.parse_args(argv)
    try:
        root = repository_root()
        if args.command == "list":
            known = tasks_from_markers(root)
            kept = wrong_solutions(root)
            for t in known:
                names = [s.name for s in kept.get(t.id, [])]
                flag = "" if len(names) >= MIN_WRONG else f"   (fewer than {MIN_WRONG})"
                print(f"{t.id:<5} {len(names)}{flag}")
                for name in names:
                    print(f"        {name}")
            return 0
        for t in args.tasks:
            if not re.match(r"^\d+\.\d+$", t):
                raise WrongFileError(f"{t!r} is not a task id such as 2.1")
        verdicts = check_tasks(args.tasks or None, args.module or None, root, args.timeout,
                               args.batch)
    except (WrongFileError, BuildError, RecordError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    missed = [v for v in verdicts if not v.rejected]
    print(f"{len(verdicts) - len(missed)} of {len(verdicts)} wrong solutions rejected")
    for v in missed:
        print(f"NOT REJECTED: task {v.solution.task}, {v.solution.name} ({v.solution.where})")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Solution blocks in the reference source, and the stubs that replace them.

A task is written where a student would look for it: inside the one function
it asks for.  The line above the block says what to do; the block holds the
reference solution::

    # Task 2.1: apply op to every element of a contiguous buffer.
    ### BEGIN SOLUTION
    for i in range(out.shape[0]):
        out[i] = unary(op, x[i], p0, p1)
    ### END SOLUTION

:func:`strip_source` replaces each chosen block by one line at the block's
indentation::

    raise NotImplementedError("Task 2.1: apply op to every element of a contiguous buffer.")

The line compiles everywhere a solution does, Numba kernels included (Numba
compiles ``raise`` of an exception with constant arguments and raises it when
the kernel runs), so the rest of the engine imports and runs around the stub.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MODULES", "Task", "TaskMarkerError", "find_tasks", "strip_source", "stub_line"]

#: The course modules, in teaching order (they follow the engine's layers).
MODULES: dict[int, str] = {
    0: "Warm-up: autodiff on scalars",
    1: "Tensors: strides, views and broadcasting",
    2: "Kernels: map, zip, reduce and matmul in Numba",
    3: "Autograd: the graph, the engine and whole Functions",
    4: "Neural networks: convolution, pooling and losses",
    5: "Training: optimizers, schedules and data loading",
    6: "GPU: the same kernels in numba.cuda",
}

_TASK = re.compile(r"^(?P<indent>[ \t]*)# Task (?P<id>(?P<module>\d+)\.\d+): (?P<what>.+?)\s*$")
_BEGIN = "### BEGIN SOLUTION"
_END = "### END SOLUTION"


class TaskMarkerError(ValueError):
    """A solution block that is not well formed (the build refuses it)."""


@dataclass(frozen=True)
class Task:
    """One task: its id ("2.1"), its statement, and where its solution block is."""

    id: str
    what: str
    path: str            # relative to the repository root, with / separators
    line: int            # 1-based line of the ``# Task`` comment
    function: str        # the function (or Class.method) that holds the block

    @property
    def module(self) -> int:
        return int(self.id.split(".")[0])

    @property
    def number(self) -> tuple:
        return tuple(int(p) for p in self.id.split("."))


def stub_line(task_id: str, what: str, indent: str) -> str:
    """The line that replaces a solution block in the student edition."""
    message = f"Task {task_id}: {what}".replace("\\", "\\\\").replace('"', '\\"')
    return f'{indent}raise NotImplementedError("{message}")'


def _blocks(text: str, path: str) -> list:
    """``(task_id, what, indent, comment_line, begin, end)`` for each block (0-based lines)."""
    lines = text.split("\n")
    found = []
    i = 0
    while i < len(lines):
        m = _TASK.match(lines[i])
        if not m:
            if lines[i].strip() == _BEGIN:
                raise TaskMarkerError(f"{path}:{i + 1}: '### BEGIN SOLUTION' without a "
                                      "'# Task M.N: ...' line above it")
            i += 1
            continue
        indent = m.group("indent")
        what = m.group("what")
        begin = i + 1
        # A long statement continues on comment lines of the same indent.
        while (begin < len(lines) and lines[begin].startswith(indent + "# ")
               and not lines[begin].startswith(indent + "###")):
            what += " " + lines[begin][len(indent) + 2:].strip()
            begin += 1
        if begin >= len(lines) or lines[begin] != indent + _BEGIN:
            raise TaskMarkerError(f"{path}:{begin + 1}: expected '{indent}{_BEGIN}' after the "
                                  f"Task {m.group('id')} line")
        end = begin + 1
        while end < len(lines) and lines[end] != indent + _END:
            if lines[end].strip() in (_BEGIN, _END):
                raise TaskMarkerError(f"{path}:{end + 1}: misplaced solution marker inside "
                                      f"Task {m.group('id')}")
            end += 1
        if end == len(lines):
            raise TaskMarkerError(f"{path}:{i + 2}: Task {m.group('id')} has no "
                                  f"'{indent}{_END}'")
        found.append((m.group("id"), what, indent, i, begin, end))
        i = end + 1
    return found


def _enclosing_function(lines: list, line: int) -> str:
    """The name of the def (with its class) that contains 0-based ``line``."""
    indent = len(lines[line]) - len(lines[line].lstrip())
    names = []
    for k in range(line - 1, -1, -1):
        text = lines[k]
        stripped = text.lstrip()
        here = len(text) - len(stripped)
        if stripped and here < indent:
            m = re.match(r"(?:async\s+)?(def|class)\s+(\w+)", stripped)
            if m:
                names.append(m.group(2))
            indent = here
            if here == 0:
                break
    return ".".join(reversed(names))


def find_tasks(root: Path, package: str = "minitorch") -> list:
    """Every task marked in ``root/package``, sorted by id (ids must be unique)."""
    tasks = []
    for path in sorted((root / package).rglob("*.py")):
        if (root / package / "course") in path.parents:
            continue          # the course tools show the markers in their docstrings
        text = path.read_text()
        if _BEGIN not in text:
            continue
        rel = path.relative_to(root).as_posix()
        lines = text.split("\n")
        for task_id, what, _, comment, _, _ in _blocks(text, rel):
            tasks.append(Task(task_id, what, rel, comment + 1, _enclosing_function(lines, comment)))
    seen: dict = {}
    for t in tasks:
        if t.id in seen:
            raise TaskMarkerError(f"Task {t.id} is marked twice: {seen[t.id].path}:"
                                  f"{seen[t.id].line} and {t.path}:{t.line}")
        seen[t.id] = t
    return sorted(tasks, key=lambda t: t.number)


def strip_source(text: str, keep, path: str = "<source>") -> tuple:
    """``text`` with the solution blocks of tasks for which ``keep(id)`` is False stubbed.

    Returns ``(new_text, stripped_ids)``.  The ``# Task`` line stays: it tells
    the student what to write in place of the ``raise``.
    """
    lines = text.split("\n")
    stripped = []
    for task_id, what, indent, _, begin, end in reversed(_blocks(text, path)):
        if keep(task_id):
            continue
        lines[begin:end + 1] = [stub_line(task_id, what, indent)]
        stripped.append(task_id)
    return "\n".join(lines), sorted(stripped, key=lambda s: tuple(int(p) for p in s.split(".")))

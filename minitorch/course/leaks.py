"""Nothing given away: an edition must carry no solution of the tasks it hands out.

A solution leaks when a line of its reference block is readable somewhere in
the edition: in an instructor page that ships, in a docs page's example, in
a docstring, in a twin kernel that differs by one name, in a test's helper.
:func:`find_leaks` takes every *distinctive* line of each stubbed task's
reference block (see :func:`distinctive_lines`: long enough, and not a bare
loop header or ``return out`` that every kernel has) and looks for it,
whitespace-normalised, in every text file of the edition.

    python -m minitorch.course.leaks /tmp/student   # an edition built from this checkout

prints one line per leak (the task, the line, the file:line that shows it)
and exits 1 if there is any.  The reference blocks are read from this
checkout (the edition has none).

A line the reference writes in several places is an idiom, not a leak
(:data:`IDIOM_COUNT`), which would let a *twin* through: a sibling function
written with the same lines (four optimizers' steps, each the loop of the
task that is Adagrad's).  So :func:`_twins` also looks at whole functions:
one that holds a third or more of a block's lines (at least
:data:`TWIN_LINES`), idioms included, is reported as a twin of that task.
(A twin with other names, the same arithmetic over renamed variables, is
beyond a textual check: the course's rule is that such code is derived from
the student's function, see docs/course/index.md.)
"""

from __future__ import annotations

import ast
import os
import re
import sys
from pathlib import Path

from .build import INSTRUCTOR_ONLY, never_copied, repository_root
from .markers import _blocks, strip_source
from .readme import edition_readme
from .record import read_record, tasks_from_markers

__all__ = ["MIN_CHARS", "distinctive_lines", "solution_lines", "find_leaks", "main"]

#: A line shorter than this (whitespace-normalised) is too common to call a leak.
MIN_CHARS = 18

#: A line the reference writes this many times outside its solution blocks is an idiom of
#: the code base (``n, c, h, w = x.shape``), not a solution's giveaway.
IDIOM_COUNT = 3

#: A function holding this many lines of a block (and a third of them, or more) is its twin.
TWIN_LINES = 2

#: Lines every kernel and function has: loop headers over a range, a bare return, ...
_BOILERPLATE = re.compile(
    r"^(?:for \w+(?:, \w+)* in (?:p?range|zip|enumerate)\([^:]*\):"
    r"|return(?: \w+(?:\.\w+)*)?"
    r"|\w+ = (?:\w+(?:\.\w+)*(?:\[\d+\])?|0|0\.0|1|1\.0|None|True|False|\[\]|\(\))"
    r"|(?:el)?if \w+(?:\.\w+)*(?:\[\d+\])? (?:[=!<>]=?|is(?: not)?) \w+(?:\[\d+\])?:"
    r"|[\w, ]+ = \w+(?:\.\w+)*\.shape"
    r"|for \w+(?:, \w+)* in \w+(?:\.\w+)*:"
    r"|\w+(?:\.\w+)*\(\)"
    r"|return \w+\(\w+\)"
    r"|ctx\.save_for_backward\(.*\)|.* = ctx\.saved_\w+"
    r"|if \w+ not in \w+:"
    r"|else:|try:|pass|continue|break)$")

#: Files read as text (everything else in an edition is data).
TEXT_SUFFIXES = {".py", ".md", ".rst", ".txt", ".html", ".ipynb", ".cfg", ".toml", ".json",
                 ".yml", ".yaml", ".js", ".css", ".in", ".sh", ""}


def _normal(line: str) -> str:
    code = line.strip()
    return re.sub(r"\s+", " ", code)


def distinctive_lines(block: list) -> set:
    """The lines of a reference block that would give it away: code (not comments), at
    least :data:`MIN_CHARS` characters once whitespace is normalised, not boilerplate."""
    found = set()
    for line in block:
        code = _normal(line)
        if (not code or code.startswith("#") or len(code) < MIN_CHARS
                or _BOILERPLATE.match(code)):
            continue
        found.add(code)
    return found


def solution_lines(root: Path, task_ids: set, idioms: bool = True) -> dict:
    """``{task id: set of distinctive lines}`` from the reference blocks in ``root``.

    A line also counts as an idiom, not a giveaway, when the reference's
    package writes it :data:`IDIOM_COUNT` times or more outside its solution
    blocks (with ``idioms=False`` such lines are kept: :func:`_twins` counts them).
    """
    found: dict = {}
    outside: dict = {}
    for path in sorted((Path(root) / "minitorch").rglob("*.py")):
        if (Path(root) / "minitorch" / "course") in path.parents:
            continue
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        inside = set()
        if "### BEGIN SOLUTION" in text:
            for task_id, _, _, _, begin, end in _blocks(text, path.as_posix()):
                inside.update(range(begin, end + 1))
                if task_id in task_ids:
                    found[task_id] = distinctive_lines(lines[begin + 1:end])
        for i, line in enumerate(lines):
            if i not in inside:
                code = _normal(line)
                outside[code] = outside.get(code, 0) + 1
    if not idioms:
        return found
    return {t: {ln for ln in lines if outside.get(ln, 0) < IDIOM_COUNT}
            for t, lines in found.items()}


def _text_files(edition: Path):
    """``(relative path, text)`` of every text file of the folder ``edition`` (without the
    folders a build never copies: version control, environments, caches)."""
    for folder, dirs, names in os.walk(edition):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__"
                         and not never_copied(Path(folder), d))
        for name in sorted(names):
            path = Path(folder) / name
            if path.suffix not in TEXT_SUFFIXES or path.is_symlink():
                continue
            try:
                yield path.relative_to(edition).as_posix(), path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue


def find_leaks(edition: Path, reference: Path | None = None) -> list:
    """``[(task id, line, "file:line"), ...]``: each distinctive line of a stubbed task's
    reference block that some file of the edition (a built folder) shows."""
    edition = Path(edition)
    reference = repository_root() if reference is None else Path(reference)
    ids = {t.id for t in read_record(edition)}
    files = list(_text_files(edition))
    return sorted(set(_leaks(files, solution_lines(reference, ids))
                      + _twins(files, solution_lines(reference, ids, idioms=False))))


def leaks_of_modules(modules: list | None = None, reference: Path | None = None) -> list:
    """:func:`find_leaks` of the edition ``course build --module ...`` would write, without
    writing it (see :func:`leaks_of_editions`)."""
    return leaks_of_editions([modules], reference)[0]


def leaks_of_editions(editions: list, reference: Path | None = None) -> list:
    """For each entry of ``editions`` (a list of modules, or None for the full edition),
    the leaks of the edition ``course build`` would write: the reference's files as the
    build copies them, the chosen blocks stubbed, the edition's README.  The reference
    is read once for all of them."""
    reference = repository_root() if reference is None else Path(reference)
    every = tasks_from_markers(reference)
    private = tuple(p + "/" for p in INSTRUCTOR_ONLY)
    files = [(rel, text) for rel, text in _text_files(reference)
             if not rel.startswith(private) and rel != "README.md"]
    lines = solution_lines(reference, {t.id for t in every})
    blocks = solution_lines(reference, {t.id for t in every}, idioms=False)
    found = []
    for modules in editions:
        tasks = [t for t in every if not modules or t.module in modules]
        chosen = {t.id for t in tasks}
        task_files = {t.file for t in tasks}
        record = {"modules": sorted({t.module for t in tasks}),
                  "tasks": [t.to_json() for t in tasks]}
        edition = [(rel, strip_source(text, lambda i: i not in chosen, rel)[0]
                    if rel in task_files else text) for rel, text in files]
        edition.append(("README.md", edition_readme(record)))
        found.append(sorted(set(
            _leaks(edition, {t: lines[t] for t in chosen if t in lines})
            + _twins(edition, {t: blocks[t] for t in chosen if t in blocks}))))
    return found


def _leaks(files, wanted: dict) -> list:
    owner: dict = {}
    for task_id, lines in wanted.items():
        for line in lines:
            owner.setdefault(line, []).append(task_id)
    leaks = []
    for rel, text in files:
        for number, line in enumerate(text.split("\n"), 1):
            code = _normal(line)
            # Markdown and docstrings show code after a prompt or inside backticks.
            for candidate in {code, code.removeprefix(">>> ").removeprefix("... "),
                              code.strip("`")}:
                for task_id in owner.get(candidate, ()):
                    leaks.append((task_id, candidate, f"{rel}:{number}"))
    return sorted(set(leaks))


def _twins(files, blocks: dict) -> list:
    """``[(task id, "twin of its block: k of n lines", "file:line"), ...]``: each function
    (a ``def`` of a Python file of the edition) that holds :data:`TWIN_LINES` or more, and
    a third or more, of the distinctive lines of a stubbed task's block, idioms included.
    (Half let the four optimizers' steps through: two of the five lines of task 5.9's
    loop; a third finds them and nothing else in the reference's editions.)"""
    found = []
    for rel, text in files:
        if not rel.endswith(".py"):
            continue
        for name, lineno, body in _functions(text):
            for task_id, block in blocks.items():
                shared = block & body
                if len(shared) >= TWIN_LINES and 3 * len(shared) >= len(block):
                    found.append((task_id, f"twin of its block ({len(shared)} of "
                                  f"{len(block)} lines) in {name}", f"{rel}:{lineno}"))
    return found


_FUNCTIONS: dict = {}      # source text -> its functions (editions share most files)


def _functions(text: str) -> list:
    """``[(name, first line, set of whitespace-normalised lines), ...]`` of every ``def``."""
    if text not in _FUNCTIONS:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            tree = None
        lines = text.split("\n")
        _FUNCTIONS[text] = [] if tree is None else [
            (node.name, node.lineno, {_normal(ln) for ln in lines[node.lineno - 1:node.end_lineno]})
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return _FUNCTIONS[text]


def main(argv: list | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m minitorch.course.leaks EDITION", file=sys.stderr)
        return 2
    leaks = find_leaks(Path(args[0]))
    for task_id, line, where in leaks:
        print(f"task {task_id}: {where}: {line}")
    print(f"{len(leaks)} solution lines found in the edition")
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())

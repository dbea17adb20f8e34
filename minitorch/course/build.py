"""``minitorch course build DEST``: write a student edition of the repository.

The edition is a copy of the repository in which the solution blocks of the
chosen modules are stubs (see :mod:`.markers`).  Everything else is copied as
it is, so a course can hand out one module at a time: a student who has
finished module 2 gets module 3 as an edition built with ``--module 3`` on
top of the reference (or of their own code).

The copy leaves out what is not source (version control, virtual
environments, build outputs and caches) and what is for instructors only
(:data:`INSTRUCTOR_ONLY`: the wrong solutions the course's CI tries).  The
file ``COURSE_EDITION.json`` at the top records every task it stubbed (see
:mod:`.record`): the course commands read it.  The edition's ``README.md``
is its own front page (:mod:`.readme`), not the engine's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .markers import MODULES, strip_source
from .readme import edition_readme
from .record import EDITION_FILE, RecordError, task_key, tasks_from_markers, write_record

__all__ = ["EDITION_FILE", "INSTRUCTOR_ONLY", "SKIPPED", "BuildError", "repository_root",
           "build_edition"]

#: Names never copied into an edition (anywhere in the tree).  ``.course_cache`` holds the
#: course runs' own Numba cache (see :mod:`.grading`).
SKIPPED = {".git", ".venv", "venv", "build", "dist", ".hypothesis", ".pytest_cache", ".asv",
           "_build", ".mypy_cache", ".ruff_cache", ".course_cache"}

#: Paths (relative to the root) that are for instructors only: never in an edition.  The
#: prebuilt kernels are the reference's machine code, solutions included (an edition
#: compiles the student's own: backends/prebuilt_kernels.py).
INSTRUCTOR_ONLY = ("tests/course/wrong", "minitorch/backends/prebuilt")
_CACHE_FILES = (".pyc", ".nbi", ".nbc")


class BuildError(ValueError):
    """A build that cannot be done (the message names the path or the module)."""


def repository_root() -> Path:
    """The checkout this package runs from: the folder holding ``pyproject.toml``."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").is_file() or not (root / "minitorch").is_dir():
        raise BuildError(f"minitorch is not running from a source checkout ({root} has no "
                         "pyproject.toml): clone the repository and `pip install -e .` it")
    return root


def never_copied(folder: Path, name: str) -> bool:
    """Whether the entry ``name`` of ``folder`` stays out of every edition: version
    control, caches, build outputs, and any virtual environment (a folder holding a
    ``pyvenv.cfg``, whatever its name: CI's ``.venv-bare``), which is not source."""
    return (name in SKIPPED or name.endswith(".egg-info")
            or (folder / name / "pyvenv.cfg").is_file())


def _ignore(root: Path, keep_caches: bool):
    private = {(root / p).resolve() for p in INSTRUCTOR_ONLY}

    def ignore(folder: str, names: list) -> set:
        skip = {n for n in names if never_copied(Path(folder), n)
                or (Path(folder) / n).resolve() in private}
        if not keep_caches:
            skip |= {n for n in names if n == "__pycache__" or n.endswith(_CACHE_FILES)}
        return skip
    return ignore


def build_edition(dest: Path, modules: list | None = None, tasks: list | None = None,
                  root: Path | None = None, keep_caches: bool = False) -> list:
    """Write the student edition into ``dest`` (which must not exist or be empty).

    ``modules`` (default: all) chooses whole modules; ``tasks`` (ids such as
    "2.1") chooses single tasks instead.  ``keep_caches`` also copies the
    compiled-kernel caches, whose entries stay valid for every file the build
    leaves unchanged (the test suite uses it to check editions quickly).
    Returns the stripped tasks' ids.
    """
    root = repository_root() if root is None else Path(root)
    dest = Path(dest).resolve()
    if dest == root or root in dest.parents:
        raise BuildError(f"DEST {dest} is inside the repository {root}: choose a folder "
                         "outside it")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BuildError(f"DEST {dest} already exists and is not an empty folder")
    try:
        known = tasks_from_markers(root)
    except (RecordError, ValueError) as e:
        raise BuildError(str(e)) from None
    if modules:
        unknown = sorted(set(modules) - set(MODULES))
        if unknown:
            raise BuildError(f"no course module {unknown[0]}: the modules are "
                             f"{', '.join(str(m) for m in MODULES)}")
    if tasks:
        unknown = sorted(set(tasks) - {t.id for t in known})
        if unknown:
            raise BuildError(f"no task {unknown[0]}: see `minitorch course tasks`")
    chosen = {t.id for t in known
              if (tasks and t.id in tasks) or (not tasks and (not modules or t.module in modules))}
    if dest.exists():
        dest.rmdir()
    untested = sorted((t.id for t in known if t.id in chosen and not t.tests), key=task_key)
    if untested:
        raise BuildError(f"task {untested[0]} has no test marked @pytest.mark.task"
                         f"(\"{untested[0]}\") in tests/course: a task must be graded")
    shutil.copytree(root, dest, ignore=_ignore(root, keep_caches), symlinks=True)
    stripped = []
    for path in sorted({t.file for t in known if t.id in chosen}):
        target = dest / path
        text, ids = strip_source(target.read_text(), lambda i: i not in chosen, path)
        target.write_text(text)
        stripped += ids
    missing = sorted(chosen - set(stripped), key=task_key)
    if missing:
        # The copy does not hold a block the markers listed a moment before: a file changed
        # while it was copied (an editor saving).  An edition without a stub is no edition.
        where = next(t.file for t in known if t.id == missing[0])
        raise BuildError(f"the copy of {where} has no solution block of task {missing[0]} "
                         f"(did the file change during the build?): build again")
    record = write_record(dest, [t for t in known if t.id in stripped],
                          sorted({t.module for t in known if t.id in stripped}))
    (dest / "README.md").write_text(edition_readme(record))
    return record["stripped"]

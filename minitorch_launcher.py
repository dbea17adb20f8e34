"""The ``minitorch`` command's entry point: it starts even when the engine does not import.

``pip install -e .`` makes the ``minitorch`` command call :func:`main` here,
a module beside the ``minitorch`` package, not inside it.  The difference
matters in a course edition.  Any ``minitorch.<anything>`` import runs
``minitorch/__init__.py`` first, which imports the whole engine; a student
whose ``minitorch/layout.py`` has a syntax error would get a traceback from
every command, ``minitorch course test 1.1`` included, just when they need
it most.  So :func:`main`:

* imports the command line (:mod:`minitorch.cli`, and with it the engine)
  as before: with a healthy engine nothing else happens;
* if that import fails, says why in one line that names the student's file
  and line (:func:`engine_error`), for example::

      minitorch: cannot import the engine: minitorch/layout.py:527: SyntaxError: invalid syntax

* then runs a ``minitorch course ...`` command all the same: the course
  tools (``minitorch/course/``) import nothing of the engine, so they are
  loaded as a package of their own, by file path
  (:mod:`minitorch.course.autograde`), and their tests run in pytest
  processes of their own, where a file that does not import fails the tasks
  it touches and nothing else;
* any other command ends there, exit status 1, without a traceback.

This module uses only the standard library: it must import when nothing of
``minitorch`` does.  ``python cli.py`` in a checkout runs it too.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

__all__ = ["engine_error", "main"]

PACKAGE = "minitorch"

#: The start of the line said when the engine does not import.
CANNOT_IMPORT = "minitorch: cannot import the engine: "


def main(argv: list[str] | None = None) -> int:
    """Run the ``minitorch`` command with ``argv`` (default: ``sys.argv[1:]``).

    Returns (or exits with) the command's exit status, as the console script
    ``sys.exit(main())`` expects.
    """
    try:
        from minitorch.cli import main as command_line     # the engine, imported here
    except Exception as error:   # whatever the student's code raises while it is imported
        return _without_engine(sys.argv[1:] if argv is None else list(argv), error)
    return command_line(args=argv)


def engine_error(error: BaseException, root: Path) -> str:
    """Why the engine did not import, in one line: ``FILE:LINE: ErrorType: message``.

    ``root`` is the folder holding the ``minitorch`` package; FILE is written
    relative to it (``minitorch/layout.py``).  A ``SyntaxError`` names the line
    that does not compile; any other error names the innermost line *of the
    package* in its traceback (the student's line that raised it, not a line of
    Python's import machinery or of a library it called).  An error with no such
    line gets no location.
    """
    root = Path(root).resolve()
    kind = type(error).__name__
    if isinstance(error, SyntaxError):
        message = error.msg
        where = _located(error.filename, error.lineno, root)
    else:
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        where = ""
        for frame in reversed(traceback.extract_tb(error.__traceback__)):
            if _inside(frame.filename, root / PACKAGE):
                where = _located(frame.filename, frame.lineno, root)
                break
    line = f"{kind}: {message}" if message else kind
    return f"{where}: {line}" if where else line


def _inside(filename: str | None, folder: Path) -> bool:
    if not filename or filename.startswith("<"):
        return False
    try:
        return Path(filename).resolve().is_relative_to(folder)
    except OSError:
        return False


def _located(filename: str | None, lineno: int | None, root: Path) -> str:
    """``minitorch/layout.py:527`` (relative to ``root`` when the file is inside it)."""
    if not filename:
        return ""
    path = Path(filename)
    if _inside(filename, root):
        path = path.resolve().relative_to(root)
    return f"{path.as_posix()}:{lineno}" if lineno else path.as_posix()


def _package_folder() -> Path | None:
    """The ``minitorch`` package that ``import minitorch`` loads (found, not run)."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def _course_tools(package: Path) -> ModuleType:
    """``minitorch/course/autograde.py``, loaded by path: it loads the course tools as a
    package of their own (see :func:`minitorch.course.autograde.course_group`)."""
    path = package / "course" / "autograde.py"
    spec = importlib.util.spec_from_file_location("_minitorch_autograde", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _without_engine(args: list[str], error: Exception) -> int:
    """The command, when importing the engine raised ``error``."""
    package = _package_folder()
    problem = engine_error(error, package.parent if package else Path.cwd())
    if not args or args[0] != "course" or package is None:
        print(CANNOT_IMPORT + problem, file=sys.stderr)
        return 1
    # First, on stdout with the command's own output: the line a student reads first.
    print(f"{CANNOT_IMPORT}{problem} (the course commands run without it; the tests that "
          "import it fail)", flush=True)
    try:
        course = _course_tools(package).course_group()
    except Exception as tools_error:   # a course folder that does not load either
        print(f"minitorch: the course tools do not load without the engine either: "
              f"{engine_error(tools_error, package.parent)}", file=sys.stderr)
        return 1
    return course.main(args[1:], prog_name="minitorch course", obj={"engine_error": problem})


if __name__ == "__main__":
    sys.exit(main())

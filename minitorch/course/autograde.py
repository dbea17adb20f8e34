"""The grader's entry point for an autograder: ``python minitorch/course/autograde.py``.

``minitorch course grade`` runs inside the ``minitorch`` package, so it
cannot start when the student's code does not import (a syntax error in
``layout.py`` stops ``import minitorch`` before any command runs).  This
file is run *as a script*: it loads the course tools (which import nothing
of the engine) as a package of their own, from this folder, and runs
``course grade`` with the same options::

    python minitorch/course/autograde.py --json /autograder/results/results.json

Then a student file that does not compile is named in one line at the top
of the output, costs the tests that import it, and the results.json is
written all the same (with those tasks at 0).

The ``minitorch`` command does the same for every ``minitorch course``
command when the engine does not import (``minitorch_launcher.py``, beside
the package, loads this file by path and runs :func:`course_group`).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE = "_minitorch_course"


def load_course_tools():
    """This folder as the package ``_minitorch_course`` (its modules import only each other,
    the standard library and click)."""
    if PACKAGE in sys.modules:
        return sys.modules[PACKAGE]
    spec = importlib.util.spec_from_file_location(PACKAGE, HERE / "__init__.py",
                                                  submodule_search_locations=[str(HERE)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = module
    spec.loader.exec_module(module)
    return module


def course_group():
    """The ``minitorch course`` click group, from the course tools loaded by
    :func:`load_course_tools` (so without the engine).

    The ``minitorch`` command runs it this way when the engine does not import
    (``minitorch_launcher.py``, beside the package, loads this file by path).
    """
    load_course_tools()
    # Imported here, not at the top: the package exists only once loaded above.
    from _minitorch_course.commands import course
    return course


def main(argv: list | None = None) -> None:
    course_group().main(["grade", *(sys.argv[1:] if argv is None else argv)],
                        prog_name="autograde.py")


if __name__ == "__main__":
    # Running this file puts its folder first on sys.path, where build.py, markers.py ...
    # would shadow any same-named module: take it off.
    if sys.path and Path(sys.path[0]).resolve() == HERE:
        sys.path.pop(0)
    main()

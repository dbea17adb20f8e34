"""The ``minitorch`` command when the student's engine does not import (``minitorch_launcher.py``).

From the student's chair: a module-1 edition is built, its
``minitorch/layout.py`` gets a syntax error (then a NameError, then an
ImportError at import time), and the edition's own command is run in a
subprocess exactly as the installed console script runs it
(``sys.exit(main())`` with the edition first on the import path):

* ``course grade --json`` says in its first line which file and line do not
  import, writes results.json with every task of the edition at 0, and says
  the error once;
* ``course tasks`` still lists the edition's tasks;
* any other command (``info``) prints that one line and exits with 1, never
  a traceback.

Cost: one edition (a copy of the repository, about 2 s) per xdist worker,
six subprocesses that stop at the broken import (under 1 s each) and one
``course grade`` (its pytest process stops at the conftest's import); no
kernel is compiled.  The whole file: 5.7 s on the shared 2-core machine, 14 s
under a load of 4.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from minitorch.course.build import build_edition
from minitorch.course.record import EDITION_FILE, read_record

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.data,
              pytest.mark.skipif((ROOT / EDITION_FILE).exists(),
                                 reason="editions are built from the reference repository")]

#: The installed console script's body, run in the edition's folder with the edition first
#: on the import path (as ``pip install -e .`` in the edition would have it).
CONSOLE_SCRIPT = ("import sys; sys.path.insert(0, '.'); from minitorch_launcher import main; "
                  "sys.exit(main())")

CANNOT = "minitorch: cannot import the engine: "


def _launcher():
    """``minitorch_launcher.py`` of this checkout (loaded by path: it is a top-level module
    that only an install of the current pyproject.toml puts on the import path)."""
    spec = importlib.util.spec_from_file_location("minitorch_launcher",
                                                  ROOT / "minitorch_launcher.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------
# The launcher itself, in this process (no subprocess, no edition)
# ---------------------------------------------------------------------------
def test_the_installed_command_is_the_launcher():
    tomllib = pytest.importorskip("tomllib")        # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["minitorch"] == "minitorch_launcher:main"
    assert "minitorch_launcher" in project["tool"]["setuptools"]["py-modules"]


def test_a_healthy_engine_runs_the_command_line_as_before(capsys):
    with pytest.raises(SystemExit) as stop:
        _launcher().main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith("minitorch, version ")


def _raised(code: str, filename: Path, namespace: dict | None = None) -> BaseException:
    try:
        exec(compile(code, str(filename), "exec"), {} if namespace is None else namespace)
    except Exception as error:      # the error under test, whatever it is
        return error
    raise AssertionError(f"{code!r} raised nothing")


def test_engine_error_names_the_students_file_and_line(tmp_path):
    describe = _launcher().engine_error
    package = tmp_path / "minitorch"
    syntax = _raised("x = 1\ndef broken(:\n    pass\n", package / "layout.py")
    assert describe(syntax, tmp_path) == "minitorch/layout.py:2: SyntaxError: invalid syntax"
    name = _raised("y = 1\nundefined_name + 1\n", package / "ops" / "basic.py")
    assert (describe(name, tmp_path)
            == "minitorch/ops/basic.py:2: NameError: name 'undefined_name' is not defined")
    # The innermost line of the package, not the library line it called that raised.
    library: dict = {}
    exec(compile("def check(x):\n    raise ImportError(f'no {x}')\n",
                 str(tmp_path / "site-packages" / "lib.py"), "exec"), library)
    called = _raised("a = 1\nb = 2\ncheck('thing')\n", package / "tensor.py",
                     {"check": library["check"]})
    assert describe(called, tmp_path) == "minitorch/tensor.py:3: ImportError: no thing"


def test_engine_error_names_no_line_outside_the_package(tmp_path):
    describe = _launcher().engine_error
    # A file beside the package whose name starts like it is not in it.
    beside = _raised("1 / 0\n", tmp_path / "minitorch_extra" / "x.py")
    assert describe(beside, tmp_path) == "ZeroDivisionError: division by zero"
    assert describe(ImportError(), tmp_path) == "ImportError"
    # A syntax error keeps its file even outside the root (the full path, not a guess).
    elsewhere = _raised("def (:\n", tmp_path.parent / "other.py")
    assert describe(elsewhere, tmp_path).startswith(f"{(tmp_path.parent / 'other.py').as_posix()}"
                                                    ":1: SyntaxError")


# ---------------------------------------------------------------------------
# From the student's chair: a module-1 edition whose layout.py does not import
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def edition(tmp_path_factory) -> Path:
    """A module-1 edition; its untouched layout.py is kept beside it (``layout.py.clean``)."""
    dest = tmp_path_factory.mktemp("broken") / "m1"
    build_edition(dest, [1], root=ROOT)
    (dest.parent / "layout.py.clean").write_text((dest / "minitorch" / "layout.py").read_text())
    return dest


def _break(edition: Path, tail: str) -> int:
    """The edition's layout.py with the line ``tail`` at its end; the number of that line."""
    clean = (edition.parent / "layout.py.clean").read_text().rstrip("\n")
    (edition / "minitorch" / "layout.py").write_text(f"{clean}\n\n{tail}\n")
    return len(clean.splitlines()) + 2


def _minitorch(edition: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", CONSOLE_SCRIPT, *args], cwd=edition, env=env,
                          capture_output=True, text=True, timeout=600)


def _listed(output: str) -> list:
    return re.findall(r"^  (\d+\.\d+) ", output, re.M)


def test_a_syntax_error_costs_every_task_and_is_said_first(edition):
    ids = [t.id for t in read_record(edition)]
    assert ids and all(i.startswith("1.") for i in ids)
    line = _break(edition, "def broken(:")
    where = f"minitorch/layout.py:{line}: SyntaxError: invalid syntax"

    graded = _minitorch(edition, "course", "grade", "--json", "r.json")
    out = graded.stdout
    assert graded.returncode == 0, out[-2000:] + graded.stderr[-2000:]
    assert out.splitlines()[0].startswith(CANNOT + where), out[:500]
    assert out.count(f"minitorch/layout.py:{line}:") == 1, out[:2000]   # said once
    assert "Traceback" not in out + graded.stderr
    results = json.loads((edition / "r.json").read_text())
    assert [t["number"] for t in results["tests"]] == ids
    assert results["score"] == 0 and all(t["score"] == 0 for t in results["tests"])
    assert all(t["max_score"] == 10.0 for t in results["tests"])
    assert results["output"].splitlines()[0] == where

    listed = _minitorch(edition, "course", "tasks")
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert listed.stdout.splitlines()[0].startswith(CANNOT + where)
    assert _listed(listed.stdout) == ids

    info = _minitorch(edition, "info")
    assert info.returncode == 1
    assert (info.stdout, info.stderr) == ("", CANNOT + where + "\n")


@pytest.mark.parametrize("tail, error", [
    ("undefined_name_at_import + 1",
     "NameError: name 'undefined_name_at_import' is not defined"),
    ("from minitorch.dtype import no_such_dtype",
     "ImportError: cannot import name 'no_such_dtype' from 'minitorch.dtype'"),
], ids=["NameError", "ImportError"])
def test_an_error_at_import_is_said_in_one_line(edition, tail, error):
    ids = [t.id for t in read_record(edition)]
    where = f"minitorch/layout.py:{_break(edition, tail)}: {error}"

    info = _minitorch(edition, "info")
    assert info.returncode == 1 and info.stdout == ""
    assert len(info.stderr.splitlines()) == 1, info.stderr
    assert info.stderr.startswith(CANNOT + where), info.stderr

    listed = _minitorch(edition, "course", "tasks")
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert listed.stdout.splitlines()[0].startswith(CANNOT + where)
    assert _listed(listed.stdout) == ids

"""The documentation: the Sphinx site builds warning-free and its examples run.

* ``sphinx-build -W --keep-going -b html``: every page and every docstring
  that ``docs/api.md`` pulls in renders without a single warning;
* ``sphinx-build -W --keep-going -b doctest``: every ```{doctest} example on
  the pages gives exactly the output the page shows;
* the ``>>>`` examples in the package's docstrings pass, each run in its own
  module's namespace (the doctest builder does not run those: they assume
  their module's globals);
* every public module has an API page (an ``automodule`` in ``docs/api/``).

The Sphinx tests skip when the docs dependencies (``pip install -e
".[docs]"``) are missing.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.docs   # not "tensor": -m tensor must not run the Sphinx builds

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API_PAGES = [DOCS / "api.md", *sorted((DOCS / "api").glob("*.md"))]


def _run_sphinx(builder: str, tmp_path: Path) -> None:
    """One ``sphinx-build -b builder``; builds sharing ``tmp_path`` share the parsed pages
    (``-d``: the second build reads no page again)."""
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    out = tmp_path / builder
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", builder,
           "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    report = ""
    if builder == "doctest" and (out / "output.txt").exists():
        report = "\n--- output.txt ---\n" + (out / "output.txt").read_text()
    assert proc.returncode == 0, (
        f"`{' '.join(cmd)}` exited with {proc.returncode}\n"
        f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}{report}")


def test_html_builds_without_warnings_and_the_pages_examples_pass(tmp_path):
    # One test, so that the doctest build reuses the html build's parsed pages (reading
    # every page and importing every module for autodoc is most of a build's time).
    _run_sphinx("html", tmp_path)
    _run_sphinx("doctest", tmp_path)


def _api_modules() -> list[str]:
    """The modules named by ``automodule`` on the API pages, in order."""
    return [name for page in API_PAGES
            for name in re.findall(r"^\.\. automodule:: *([\w.]+)", page.read_text(), re.M)]


def _public_modules() -> set[str]:
    """Every module of the package whose dotted name has no ``_``-prefixed part."""
    import minitorch

    names = {"minitorch"}
    for info in pkgutil.walk_packages(minitorch.__path__, "minitorch."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts):
            continue
        # A CUDA backend may not import on a machine without CUDA, so its
        # modules are not required on the API page (list them there if they do).
        if info.name.startswith("minitorch.backends.cuda"):
            continue
        names.add(info.name)
    return names


def test_every_public_module_is_on_the_api_page():
    missing = sorted(_public_modules() - set(_api_modules()))
    assert not missing, (
        "these modules have no API page; add an `.. automodule::` line for each to "
        f"the page of its layer in docs/api/: {missing}")


def test_docstring_examples_pass():
    finder = doctest.DocTestFinder(exclude_empty=True)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    failures = []
    for name in _api_modules():
        module = importlib.import_module(name)
        for test in finder.find(module, name):
            if not test.examples:
                continue
            lines: list[str] = []
            runner = doctest.DocTestRunner(optionflags=flags)
            result = runner.run(test, out=lines.append)
            if result.failed:
                failures.append("".join(lines))
    assert not failures, "docstring examples failed:\n" + "\n".join(failures)

"""Sphinx configuration for the minitorch docs (Markdown pages via MyST).

Build the site:   python -m sphinx -W --keep-going -b html docs docs/_build/html
Run the examples: python -m sphinx -W --keep-going -b doctest docs docs/_build/doctest
"""

import os
import sys

# Import the package from this checkout, whether or not it is installed.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

# The examples use tiny tensors: one Numba thread runs them fastest, and it
# keeps the doctest build quick on a busy machine, where a parallel kernel's
# worker threads wait for CPU time.  (Set before Numba is first imported;
# an explicit NUMBA_NUM_THREADS in the environment wins.)
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

project = "minitorch"
author = "the minitorch developers"
copyright = "minitorch developers"  # noqa: A001  (Sphinx's name for it)

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.viewcode",
]

# Every page is Markdown (MyST); reStructuredText only appears inside
# ```{eval-rst} blocks (for autodoc).
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
myst_heading_anchors = 3
# minitorch.course.pytest_plugin imports pytest, which the docs extra does not
# install: autodoc reads its docstrings with a stand-in for it.
autodoc_mock_imports = ["pytest"]

html_theme = "alabaster"
html_title = "minitorch"

# -- autodoc ---------------------------------------------------------------
# The pages in docs/api/ hold one ``automodule`` per public module.  Each member is
# documented in the module that defines it, and only there: autodoc skips
# names a module merely imports.  ``ignore-module-all`` matters for packages
# that re-export (``minitorch.autograd`` lists ``gradcheck`` in ``__all__``):
# without it, autodoc would describe every re-exported name a second time
# under the package, and ``minitorch.autograd.gradcheck`` (the function)
# would collide with the module of the same name.  Members without a
# docstring are left out.
autodoc_default_options = {
    "members": True,
    "member-order": "bysource",
    "ignore-module-all": True,
}
autodoc_typehints = "signature"
autodoc_preserve_defaults = False

# -- doctest ---------------------------------------------------------------
# Every ```{doctest} block in the pages runs against the real package.
doctest_global_setup = """
import numpy as np
import minitorch
import minitorch as torch
"""
# Docstring examples (bare ``>>>`` blocks pulled in by autodoc) assume their
# own module's namespace; tests/test_docs.py runs them with the standard
# doctest module instead, each in its module.  Here only the pages' explicit
# doctest blocks run.
doctest_test_doctest_blocks = ""


# -- docstring workarounds -------------------------------------------------
# -- a fast doctest build ---------------------------------------------------
# The doctest builder only runs the pages' doctest blocks, so it has no use
# for the API pages; generating them is most of the reading time.  Under that
# builder ``automodule`` becomes a no-op.  (The html build still runs
# autodoc, so every docstring is still checked with -W.)
from docutils.parsers.rst import Directive  # noqa: E402


class _SkippedAutomodule(Directive):
    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = None  # accept any options

    def run(self):
        return []


def _skip_autodoc_for_doctest(app):
    if app.builder.name == "doctest":
        app.add_directive("automodule", _SkippedAutomodule, override=True)


def setup(app):
    app.connect("builder-inited", _skip_autodoc_for_doctest)

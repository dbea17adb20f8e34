"""Run an unmodified PyTorch program on minitorch: ``minitorch run prog.py [args...]``.

A PyTorch program starts with ``import torch`` and, a few lines later,
``from torch import nn`` or ``import torch.nn.functional as F``.  Writing
``import minitorch as torch`` at the top is not enough for the second kind of
line: ``from torch import nn`` makes Python's import system look for a
*module named* ``torch``; the local name ``torch`` in the program's namespace
plays no part.  So the program either fails with ``No module named 'torch'``
or, worse, finds real PyTorch installed beside minitorch and silently mixes
the two libraries.

This module runs the program the way ``python prog.py`` would, with one
change to the import system, made before the program's first line:

- ``sys.modules["torch"]`` is the ``minitorch`` package itself, so
  ``import torch`` binds minitorch;
- :class:`TorchAliasFinder`, first on ``sys.meta_path``, answers for every
  ``torch.X.Y`` with the minitorch module of the same path
  (``torch.nn.functional`` is ``minitorch.nn.functional``, the *same* module
  object, so ``torch.nn.Linear is minitorch.nn.Linear``).  Real PyTorch's
  files are never opened: the finder answers before the ordinary path search
  could reach ``site-packages/torch``.

Everything else is Python's own machinery (:func:`runpy.run_path`):
``__name__ == "__main__"``, ``sys.argv == [prog.py, args...]``, the
program's folder first on ``sys.path``, its exit status, its exceptions and
their tracebacks (without this module's frames, as ``python prog.py`` shows
them).

One thing is added: a PyTorch name that minitorch does not have, escaping
the program, ends in one line naming it instead of a traceback that points
into minitorch::

    Error: prog.py, line 7: torch.fft is not in minitorch; docs/coverage.md lists the
    PyTorch names it has

It covers missing submodules (``import torch.distributions``), missing names
imported from a module (``from torch.nn import Foo``) and missing attributes
of minitorch's modules, of ``Tensor`` and of minitorch's classes met at use
(``torch.fft.rfft(x)``, ``x.lgamma()``).  A missing attribute of an *object*
such as a ``Linear`` layer or an optimizer keeps Python's own traceback: it is
more often a slip in the program (``self.fc3`` never assigned) than a
PyTorch name.  minitorch's modules get no module-level ``__getattr__`` for
this: that would change ``minitorch.fft`` for everyone who imports
minitorch directly, and the error is only useful where a PyTorch program
runs.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import re
import runpy
import sys
import types
from contextlib import contextmanager
from typing import Iterator, Sequence

import minitorch

__all__ = ["TorchAliasFinder", "torch_is_minitorch", "run_program", "missing_name_message",
           "main"]

COVERAGE = "docs/coverage.md"
USAGE = "usage: minitorch run PROGRAM.py [ARGS...]   (or: python -m minitorch.run PROGRAM.py)"
_PACKAGE_DIR = os.path.dirname(os.path.abspath(minitorch.__file__))
_THIS_FILE = os.path.abspath(__file__)


def _in_package(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep)


# ---------------------------------------------------------------------------
# torch -> minitorch, for the import system
# ---------------------------------------------------------------------------
def _is_torch_name(name: str) -> bool:
    return name == "torch" or name.startswith("torch.")


def to_minitorch(name: str) -> str:
    """``torch.nn.functional`` -> ``minitorch.nn.functional`` (any other name unchanged)."""
    return "minitorch" + name[len("torch"):] if _is_torch_name(name) else name


def to_torch(name: str) -> str:
    """``minitorch.nn.functional`` -> ``torch.nn.functional``: the name the program wrote."""
    if name == "minitorch" or name.startswith("minitorch."):
        return "torch" + name[len("minitorch"):]
    return name


def minitorch_module(torch_name: str) -> types.ModuleType:
    """The minitorch module that stands for the PyTorch module ``torch_name``.

    A real submodule of minitorch when there is one; otherwise a module
    *object* that minitorch keeps as an attribute (``minitorch.cpu``,
    ``minitorch.cuda.amp`` are namespaces made in code, not files).  Anything
    else raises :class:`ModuleNotFoundError` with the torch name, as Python
    would for a module that does not exist.
    """
    name = to_minitorch(torch_name)
    parent_name, _, child = name.rpartition(".")
    parent = sys.modules.get(parent_name)
    if parent is not None and hasattr(parent, child) and not isinstance(
            getattr(parent, child), types.ModuleType):
        # minitorch.device is a class, minitorch.tensor a function, each hiding a
        # file of the same name.  PyTorch has no such module (import torch.device
        # fails there too), and importing the file would let Python overwrite the
        # attribute with it (the import system sets every new submodule on its
        # parent): minitorch.tensor would stop being a function.
        raise ModuleNotFoundError(f"No module named '{torch_name}' ({torch_name} is a "
                                  f"{type(getattr(parent, child)).__name__}, not a module)",
                                  name=torch_name)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        # Only "this path does not exist in minitorch" is ours to translate; a
        # module that exists but needs a missing package (mpi4py, ...) says so itself.
        if e.name is None or not (name == e.name or name.startswith(e.name + ".")):
            raise
    try:
        parent = importlib.import_module(parent_name)
    except ModuleNotFoundError:
        parent = None
    found = getattr(parent, child, None)
    if isinstance(found, types.ModuleType):
        return found
    raise ModuleNotFoundError(f"No module named '{torch_name}'", name=torch_name)


class _AliasLoader(importlib.abc.Loader):
    """Loads ``torch.X`` by handing back the minitorch module that already exists.

    Python creates a fresh placeholder module for the spec and then calls
    :meth:`exec_module`; whatever ``sys.modules[name]`` holds afterwards is what
    the import returns.  Putting the minitorch module there (instead of
    returning it from ``create_module``) leaves the minitorch module's own
    ``__spec__`` and ``__name__`` untouched: it is still ``minitorch.nn`` to
    everyone else in the process.
    """

    def __init__(self, target: types.ModuleType) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None                       # the default placeholder; replaced below

    def exec_module(self, module: types.ModuleType) -> None:
        name, target = module.__name__, self.target
        sys.modules[name] = target
        if not hasattr(target, "__path__"):
            # A plain module holding namespaces made in code (minitorch.cuda.amp):
            # Python refuses ``import torch.cuda.amp`` below a module that is no
            # package before asking any finder, unless the child is already in
            # sys.modules.  Only children named as such count (not ``cuda.np``).
            for attr, value in vars(target).items():
                if (isinstance(value, types.ModuleType)
                        and value.__name__ == f"{target.__name__}.{attr}"):
                    sys.modules.setdefault(f"{name}.{attr}", value)


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """A meta-path finder that resolves ``torch`` and every ``torch.*`` to minitorch.

    It sits first on ``sys.meta_path``, so the ordinary path search never gets
    to look for a ``torch`` package in ``site-packages``: real PyTorch cannot
    leak in, even when it is installed.
    """

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if not _is_torch_name(fullname):
            return None                   # not ours: the next finder looks
        module = minitorch_module(fullname)
        is_package = hasattr(module, "__path__")
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                              is_package=is_package)


@contextmanager
def torch_is_minitorch() -> Iterator[TorchAliasFinder]:
    """While inside, ``import torch`` (and every ``torch.*``) gives minitorch.

    Any ``torch`` modules already imported (real PyTorch, in a test process)
    are set aside on entry and put back on exit, so nothing from them can be
    reached inside and nothing from inside stays behind.
    """
    saved = {k: sys.modules.pop(k) for k in list(sys.modules) if _is_torch_name(k)}
    finder = TorchAliasFinder()
    sys.meta_path.insert(0, finder)
    sys.modules["torch"] = minitorch
    try:
        yield finder
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        for k in [k for k in sys.modules if _is_torch_name(k)]:
            del sys.modules[k]
        sys.modules.update(saved)


# ---------------------------------------------------------------------------
# the one-line message for a PyTorch name minitorch lacks
# ---------------------------------------------------------------------------
def _is_minitorch_object(obj: object) -> bool:
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "minitorch"


def _public_module(cls: type) -> str:
    """The shortest module path that exports ``cls``: ``minitorch.nn`` for ``Module``, whose
    home is ``minitorch.nn.modules.module`` (PyTorch's documented name is the short one)."""
    parts = cls.__module__.split(".")
    for i in range(1, len(parts) + 1):
        module = sys.modules.get(".".join(parts[:i]))
        if module is not None and getattr(module, cls.__qualname__, None) is cls:
            return module.__name__
    return cls.__module__


def _exists(dotted: str) -> bool:
    """Whether ``minitorch.a.b`` names something, module or not (``minitorch.device``)."""
    obj: object = minitorch
    for part in dotted.split(".")[1:]:
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def _missing_name(exc: BaseException) -> str | None:
    """The PyTorch name (``torch.fft``, ``torch.Tensor.lgamma``) ``exc`` says is missing."""
    if isinstance(exc, ModuleNotFoundError):
        name = exc.name or ""
        if name.split(".")[0] not in ("torch", "minitorch") or _exists(to_minitorch(name)):
            return None               # import torch.device: there, but not a module
        return to_torch(name)
    if isinstance(exc, ImportError):      # from torch.nn import Foo
        module = exc.name or ""
        if module.split(".")[0] != "minitorch":
            return None
        what = getattr(exc, "name_from", None)      # Python 3.12+
        if what is None:
            found = re.match(r"cannot import name '([^']+)'", str(exc))
            what = found.group(1) if found else None
        return f"{to_torch(module)}.{what}" if what else None
    if isinstance(exc, AttributeError):
        obj, attr = getattr(exc, "obj", None), getattr(exc, "name", None)
        if attr is None or obj is None:
            return None
        if isinstance(obj, types.ModuleType):
            module = obj.__name__
            return f"{to_torch(module)}.{attr}" if module.split(".")[0] == "minitorch" else None
        if isinstance(obj, minitorch.Tensor) or obj is minitorch.Tensor:
            return f"torch.Tensor.{attr}"
        if isinstance(obj, type) and _is_minitorch_object(obj):
            return f"{to_torch(_public_module(obj))}.{obj.__qualname__}.{attr}"
    return None


def _culprit(exc: BaseException) -> tuple[str, int] | None:
    """File and line of the innermost frame that is neither the import machinery nor this
    module: the line that used the name (``None`` when there is none)."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not filename.startswith("<") and os.path.abspath(filename) != _THIS_FILE:
            found = (filename, tb.tb_lineno)           # <frozen importlib._bootstrap>: skip
        tb = tb.tb_next
    return found


def missing_name_message(exc: BaseException) -> str | None:
    """One line for an exception that means "PyTorch has this name, minitorch has not".

    ``None`` for every other exception, which keeps Python's traceback; so does
    a missing name met *inside* minitorch's own code: that is a bug of minitorch's
    and its traceback is what a report needs.
    """
    name = _missing_name(exc)
    culprit = _culprit(exc)
    if name is None or (culprit is not None and _in_package(culprit[0])):
        return None
    kind = " (no such module)" if isinstance(exc, ModuleNotFoundError) else ""
    where = f"{culprit[0]}, line {culprit[1]}: " if culprit else ""
    return f"Error: {where}{name} is not in minitorch{kind}; {COVERAGE} lists the PyTorch " \
           "names it has"


# ---------------------------------------------------------------------------
# running the program
# ---------------------------------------------------------------------------
def check_program(path: str) -> str | None:
    """Why ``path`` cannot be run (one line), or ``None`` when it can."""
    if not os.path.exists(path):
        return f"Error: {path}: no such file"
    if os.path.isdir(path) and not os.path.isfile(os.path.join(path, "__main__.py")):
        return f"Error: {path} is a directory without a __main__.py"
    if not os.access(path, os.R_OK):
        return f"Error: {path}: cannot read it (permission denied)"
    return None


def _program_traceback(exc: BaseException, path: str) -> types.TracebackType | None:
    """``exc``'s traceback as ``python prog.py`` shows it: from the program's first frame
    on, without the frames of the import machinery and of this module's finder (Python
    hides its own import frames the same way)."""
    target = os.path.abspath(path)

    def in_program(tb: types.TracebackType) -> bool:
        filename = os.path.abspath(tb.tb_frame.f_code.co_filename)
        return filename == target or filename.startswith(target + os.sep)  # src/__main__.py
    tb = exc.__traceback__
    while tb is not None and not in_program(tb):
        tb = tb.tb_next
    kept = []
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not (filename.startswith("<frozen importlib") or
                os.path.abspath(filename) == _THIS_FILE):
            kept.append(tb)
        tb = tb.tb_next
    for tb, after in zip(kept, kept[1:] + [None]):
        tb.tb_next = after
    return kept[0] if kept else None   # None: the program never started (a SyntaxError)


def run_program(path: str, args: Sequence[str] = ()) -> int:
    """Run the program at ``path`` with ``args`` as ``python path args...`` would, on minitorch.

    Returns the exit status for an ordinary end (0), an uncaught exception
    (1, after the traceback or the one-line message) or Ctrl-C (130); a
    ``sys.exit(...)`` in the program propagates as :class:`SystemExit`, so
    its status and message are Python's.  ``sys.argv``, ``sys.path[0]`` and
    the import system are put back afterwards (the tests run programs in
    their own process).
    """
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [path, *args]
    # python prog.py puts the program's folder first on sys.path, where the
    # interpreter puts a script's.  Here the first entry is the minitorch
    # command's bin/ directory (or the current directory under python -m):
    # replace it.  A directory (python src/ runs src/__main__.py) is put
    # there by runpy itself, while the program runs.
    sys.path[:1] = [] if os.path.isdir(path) else [os.path.dirname(os.path.abspath(path))]
    try:
        with torch_is_minitorch():
            try:
                # The absolute path, as python prog.py gives __main__ its __file__ and
                # tracebacks (Python 3.9+).  runpy sets sys.argv[0] to the same path
                # while the program runs: absolute, where Python keeps it as typed.
                runpy.run_path(os.path.abspath(path), run_name="__main__")
            except SystemExit:
                raise
            except BaseException as exc:  # noqa: BLE001 (reported as Python would, below)
                return _report(exc, path)
        return 0
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path


def _report(exc: BaseException, path: str) -> int:
    """Print an exception that escaped the program; return the exit status Python gives."""
    sys.stdout.flush()                    # the program's output first, as at exit
    line = missing_name_message(exc)
    if line is not None:
        print(line, file=sys.stderr)
        return 1
    # Python's own report, through sys.excepthook (the program may have set one),
    # from the program's first frame on.  The hook prints the exception's own
    # __traceback__, so that is the one to trim.
    exc.__traceback__ = _program_traceback(exc, path)
    sys.excepthook(type(exc), exc, exc.__traceback__)
    return 130 if isinstance(exc, KeyboardInterrupt) else 1


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m minitorch.run PROGRAM.py [ARGS...]``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        if argv:
            print(__doc__.split("\n\n")[0])
        return 2 if not argv else 0
    problem = check_program(argv[0])
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    return run_program(argv[0], argv[1:])


if __name__ == "__main__":
    sys.exit(main())

"""Where each op says which public forms it has: ``minitorch.<name>``, ``Tensor.<name>``, ``Tensor.<name>_``.

PyTorch declares every op once, in ``native_functions.yaml``, with the
*variants* it comes in::

    - func: exp(Tensor self) -> Tensor
      variants: function, method

and generates ``torch.exp``, ``Tensor.exp`` and ``Tensor.exp_`` from that one
entry.  minitorch does the same in Python: the module that defines an op ends
with a small table of :func:`declare` calls, for example in
``ops/elementwise.py``::

    declare(exp, inplace=True)            # minitorch.exp, Tensor.exp, Tensor.exp_
    declare(sub, "sub", "subtract", inplace=True)
    declare(addmm)                        # minitorch.addmm and Tensor.addmm

``minitorch/__init__.py`` exports every op declared as a *function*, and
``minitorch.Tensor`` (``minitorch/tensor.py``) binds every op declared as a
*method*, and the in-place variants, when its class is created.  Adding an
op therefore touches the file that defines it (and, for a new kernel, the
kernel's file), and nothing else.

An in-place variant ``name_`` computes the out-of-place op and writes the
result back into ``self`` (see ``elementwise.inplace``): one definition of
the maths serves both forms, as in PyTorch's structured kernels.
"""

from __future__ import annotations

import functools
import inspect
from typing import Callable, TypeVar

__all__ = ["declare", "FUNCTIONS", "METHODS", "INPLACE", "NUMPY_NAMES"]

F = TypeVar("F", bound=Callable)

#: ``minitorch.<name>``: the functions of the public namespace.
FUNCTIONS: dict[str, Callable] = {}
#: ``Tensor.<name>``: methods whose first argument is the tensor (``t.exp()`` is ``exp(t)``).
METHODS: dict[str, Callable] = {}
#: ``Tensor.<name>_``: the in-place variants, each given by its out-of-place op.
INPLACE: dict[str, Callable] = {}


#: NumPy's names for PyTorch's arguments, NumPy's name -> PyTorch's.  PyTorch's argument
#: parser accepts both for every op with such an argument (``x.sum(axis=1)``,
#: ``torch.cat(ts, axis=0)``, ``x.mean(1, keepdims=True)``), and so do the public forms here.
NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}


def _with_numpy_names(fn: F) -> F:
    """``fn``, or a wrapper of it that also takes the :data:`NUMPY_NAMES` of its arguments.

    Only the public forms are wrapped (the ops call each other directly): a call
    pays one more Python call, and a keyword is renamed only when one is given.
    The argument names are read from the code object (of the function a decorator
    wraps, if any), which costs far less at import than ``inspect.signature``.
    """
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None:                    # a builtin or a callable object: nothing to rename
        return fn
    parameters = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    aliases = {numpy: torch for numpy, torch in NUMPY_NAMES.items() if torch in parameters}
    if not aliases:
        return fn

    @functools.wraps(fn)
    def op(*args, **kwargs):
        if kwargs:
            for numpy, torch in aliases.items():
                if numpy in kwargs:
                    if torch in kwargs:
                        raise TypeError(f"{fn.__name__}() got both {torch!r} and {numpy!r}, "
                                        f"NumPy's name for it")
                    kwargs[torch] = kwargs.pop(numpy)
        return fn(*args, **kwargs)
    return op


def declare(fn: F, *names: str, function: bool = True, method: bool = True,
            inplace: bool = False) -> F:
    """Declare the public forms of the op ``fn`` under ``names`` (default: its ``__name__``).

    ``function``: ``minitorch.<name>``; ``method``: ``Tensor.<name>``;
    ``inplace``: ``Tensor.<name>_`` too.  Returns ``fn`` unchanged; the public forms also
    take NumPy's names for ``dim`` and ``keepdim`` (:data:`NUMPY_NAMES`).
    """
    public = _with_numpy_names(fn)
    for name in names or (fn.__name__,):
        for table, wanted in ((FUNCTIONS, function), (METHODS, method), (INPLACE, inplace)):
            if not wanted:
                continue
            current = table.get(name)
            if current is not None and current is not public \
                    and getattr(current, "__wrapped__", None) is not fn:
                raise ValueError(f"op {name!r} is declared twice ({current!r} and {fn!r})")
            table[name] = public
    return fn

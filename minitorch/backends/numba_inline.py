"""Numba's inliner, made to copy a function's IR once instead of once per block.

Every elementwise kernel calls a family function of ``scalar_ops`` (``unary``,
``arith``, ...) that Numba inlines into it (``inline="always"``): a switch over
dozens of op codes, a function of about 200 basic blocks.  Before inlining,
Numba copies the callee's IR (``InlineWorker.inline_ir`` in
``numba/core/inline_closurecall.py``) with one ``copy.deepcopy`` *per block*.
Each block's variables point to the function's one ``Scope``, which lists every
variable of the function, so each of those deep copies copies the whole scope
again: the copy costs blocks x variables.  For ``unary_contiguous`` that was
about 60% of its compile time (``cProfile``: 10.6 of 16.4 s in ``deepcopy``).
The cost is known upstream (numba issues 8989 and 9204, numba-cuda issue 688).

:func:`install` gives those per-block copies one shared memo for each
function being copied, within one ``inline_ir`` call: the same copy as
``copy.deepcopy`` of all the blocks at once, in which every block's variables
point to one copied scope, as they pointed to one scope before.  What is
compiled does not change: the LLVM IR and the machine code of the kernels are
byte for byte what they were (``tests/test_numba_inline.py`` compares them);
only the time to get there does.

A new copy starts with every ``inline_ir`` call: Numba may inline one
function's IR at several call sites (``@overload(inline="always")`` keeps it),
and each site must get copies of its own.  The compiler holds Numba's global
compile lock while it inlines, so one slot for the memos serves every thread.
"""

from __future__ import annotations

import copy
import functools
import importlib
from typing import Any

#: The inliner modules patched: Numba's (CPU kernels) and numba-cuda's copy of it.
CPU_MODULE = "numba.core.inline_closurecall"
CUDA_MODULE = "numba.cuda.core.inline_closurecall"


class _SharedMemoCopy:
    """A stand-in for the ``copy`` module inside an inliner module.

    ``deepcopy(block)`` with no memo (how ``copy_ir`` calls it) uses the memo
    of the block's scope in the current ``inline_ir`` call; anything else is
    ``copy``'s own.
    """

    def __init__(self, block_class: type) -> None:
        self._block_class = block_class
        #: ``{id(scope): memo}`` during an ``inline_ir`` call, else None.
        self.memos: dict | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)

    def deepcopy(self, x: Any, memo: dict | None = None) -> Any:
        if memo is None and self.memos is not None and isinstance(x, self._block_class):
            # id() is safe as a key: the scope is alive as long as the IR being copied,
            # which lives until inline_ir returns and these memos are dropped.
            memo = self.memos.setdefault(id(x.scope), {})
        return copy.deepcopy(x, memo)


def _patch(module_name: str) -> None:
    """Patch one inliner module (once; a second call does nothing)."""
    module = importlib.import_module(module_name)
    if isinstance(module.copy, _SharedMemoCopy):
        return
    # The module's own IR classes (numba-cuda has copies of Numba's: its blocks are its own).
    shim = _SharedMemoCopy(module.ir.Block)
    worker = module.InlineWorker
    numba_inline_ir = worker.inline_ir

    @functools.wraps(numba_inline_ir)
    def inline_ir(self: Any, *args: Any, **kwargs: Any) -> Any:
        # Inlining nests (a callee's own callees are inlined while its IR is built), so
        # each call keeps the memos of the call around it and puts them back.
        outer, shim.memos = shim.memos, {}
        try:
            return numba_inline_ir(self, *args, **kwargs)
        finally:
            shim.memos = outer

    module.copy = shim
    worker.inline_ir = inline_ir


def install() -> None:
    """Patch Numba's inliner (the CPU kernels).  Called by ``backends/cpu/__init__.py``."""
    _patch(CPU_MODULE)


def install_cuda() -> None:
    """Patch numba-cuda's inliner (the GPU kernels).  Imports ``numba.cuda``: called by
    ``backends/cuda/launch.py``, never at ``import minitorch``."""
    _patch(CUDA_MODULE)

"""Fused elementwise kernels for the CPU: a program written out as Python, compiled by Numba.

:mod:`minitorch.backends.fusion_program` describes a run of elementwise ops
as an :class:`~minitorch.backends.fusion_program.ElementwiseProgram`;
:mod:`minitorch.backends.fusion_source` writes the loop body for one
element.  This module puts the CPU's loop around it and loads the file.
For ``exp(x * w)`` in float32 the forward kernel reads::

    @njit(cache=True, error_model="numpy")
    def forward(in0, in1, out0, start, stop):
        for i in range(start, stop):
            v0 = in0[i]
            v1 = in1[i]
            v2 = T(arith_mul(v0, v1))
            v3 = T(unary_exp(v2, 0.0, 0.0))
            out0[i] = v3

``arith_mul`` and ``unary_exp`` are defined in the same file: each is one
op's branch of the op-code switch of ``scalar_ops.py``, copied out of it
(:func:`~minitorch.backends.fusion_program.op_source`), so the arithmetic is
the eager kernels' own, and Numba compiles only the branches the program
uses (the whole switch, inlined at every step, took seconds to compile).
Every intermediate is rounded to the program's dtype (``T``), as the eager
ops round their results, so the fused kernel computes what the eager ops
would, without writing the intermediates to memory.  As everywhere in the
CPU backend, a ``prange`` driver over chunks runs the serial kernel when
there are several chunks of work and several threads.
"""

from __future__ import annotations

import types

from ..fusion_program import ElementwiseProgram
from .. import fusion_source
from ..fusion_source import file_text
from .elementwise import CHUNK

__all__ = ["source", "kernels_for"]


def _function(name: str, params: list, before: list, body: list, size_of: str) -> list:
    """A serial kernel over ``start..stop`` and its parallel driver over chunks."""
    args = ", ".join(params)
    return [
        "@njit(cache=True, error_model=\"numpy\")",
        f"def {name}({args}, start, stop):",
        *before,
        "    for i in range(start, stop):",
        *body,
        "",
        "",
        "@njit(parallel=True, cache=True, error_model=\"numpy\")",
        f"def {name}_parallel({args}):",
        f"    n = {size_of}.shape[0]",
        f"    for c in prange((n + {CHUNK} - 1) // {CHUNK}):",
        f"        {name}({args}, c * {CHUNK}, min(n, (c + 1) * {CHUNK}))",
        "",
        "",
    ]


def source(program: ElementwiseProgram) -> str:
    """The Python source of ``program``'s kernel file (see ``fusion_source.file_text``)."""
    return file_text(program, _function, ["from numba import njit, prange"],
                     '@njit(inline="always")')


def kernels_for(program: ElementwiseProgram) -> types.ModuleType:
    """The imported module of ``program``'s kernels (written, then imported, once)."""
    return fusion_source.kernels_for(program, source)

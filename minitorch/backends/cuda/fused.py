"""Fused elementwise kernels for the GPU: the same generated loop body, a grid-stride loop.

The CPU's fused kernels (``cpu/fused.py``) and these share everything but
the loop: :mod:`minitorch.backends.fusion_source` writes the helpers (each
op's branch of ``scalar_ops``) and the body for one element, forward or
backward.  On the GPU each thread takes one element at a time (see
``launch.py``)::

    @cuda.jit(cache=True)
    def forward(in0, in1, out0, n):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            v0 = in0[i]
            ...
            out0[i] = v3

The helpers are compiled as device functions (``cuda.jit(device=True)``).
"""

from __future__ import annotations

import types

from ..fusion_program import ElementwiseProgram
from .. import fusion_source
from ..fusion_source import file_text

__all__ = ["source", "kernels_for"]


def _kernel(name: str, params: list, before: list, loop_body: list, size_of: str) -> list:
    """A grid-stride kernel over ``n`` elements (``size_of``: the CPU's loop needs it)."""
    return [
        "@cuda.jit(cache=True)",
        f"def {name}({', '.join(params)}, n):",
        *before,
        "    for i in range(cuda.grid(1), n, cuda.gridsize(1)):",
        *loop_body,
        "",
        "",
    ]


def source(program: ElementwiseProgram) -> str:
    """The Python source of ``program``'s GPU kernel file (see ``fusion_source.file_text``)."""
    return file_text(program, _kernel, ["from numba import cuda"], "@cuda.jit(device=True)")


def kernels_for(program: ElementwiseProgram) -> types.ModuleType:
    """The imported module of ``program``'s GPU kernels (written, then imported, once)."""
    return fusion_source.kernels_for(program, source)

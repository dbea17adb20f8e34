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
from ..fusion_source import backward_lines, body, file_text, load, read_inputs

__all__ = ["source", "kernels_for"]


def _kernel(name: str, params: list, before: list, loop_body: list) -> list:
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
    """The Python source of ``program``'s GPU kernel file (forward, or with ``grads_for``
    the backward), as ``cpu/fused.source``."""
    ins = [f"in{k}" for k in range(program.n_inputs)]
    before, reads = read_inputs(program, ins)
    if program.grads_for:
        gouts = [f"gout{j}" for j in range(len(program.outputs))]
        gins = [f"gin{j}" for j in range(len(program.grads_for))]
        kernels = _kernel("backward", ins + gouts + gins, before,
                          reads + body(program) + backward_lines(program))
        what = "backward GPU kernel: the gradients of the inputs listed, by reverse mode"
    else:
        outs = [f"out{j}" for j in range(len(program.outputs))]
        writes = [f"        out{j}[i] = v{k}" for j, k in enumerate(program.outputs)]
        kernels = _kernel("forward", ins + outs, before, reads + body(program) + writes)
        what = "forward GPU kernel"
    return file_text(program, what, ["from numba import cuda"], "@cuda.jit(device=True)",
                     kernels)


_loaded: dict = {}


def kernels_for(program: ElementwiseProgram) -> types.ModuleType:
    """The imported module of ``program``'s GPU kernels (written, then imported, once)."""
    module = _loaded.get(program)
    if module is None:
        module = _loaded[program] = load(source(program))
    return module

"""Fused elementwise kernels for the CPU: a program written out as Python, compiled by Numba.

:mod:`minitorch.backends.fusion_program` describes a run of elementwise ops
as an :class:`~minitorch.backends.fusion_program.ElementwiseProgram`.  This
module *generates the source code* of two kernels for it, the forward and
the backward, writes the source to a file, imports that file, and lets
Numba compile it like any hand-written kernel.  For ``exp(x * w)`` in
float32 the forward kernel reads::

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
would, without writing the intermediates to memory.  ``minitorch.compiler.generated_source`` shows
the file of any program.

**Why a file.**  Numba's disk cache (``cache=True``) works only for
functions whose source is in a file: the generated module is written once,
under a name that is a hash of its text, into :func:`source_folder`, so the
next process imports the same file and Numba loads the machine code from its
cache instead of compiling again.  The file holds everything its kernels
run (the copied branches too), so an edit of ``scalar_ops.py`` changes the
text, hence the name: a new file, compiled afresh, never a stale one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import re
import sys
import tempfile
import types
from pathlib import Path

from ..fusion_program import (ARITH_DERIVATIVES, UNARY_DERIVATIVES, ElementwiseProgram,
                              helper_name, op_source)
from .. import scalar_ops
from .elementwise import CHUNK

__all__ = ["source", "kernels_for", "source_folder"]


def source_folder() -> Path:
    """Where generated kernel files live.

    ``MINITORCH_COMPILE_DIR`` if set; else ``minitorch_fused`` inside
    ``NUMBA_CACHE_DIR`` (one folder holds the source and its compiled code);
    else ``~/.cache/minitorch/fused`` (``$XDG_CACHE_HOME`` respected).
    """
    if os.environ.get("MINITORCH_COMPILE_DIR"):
        return Path(os.environ["MINITORCH_COMPILE_DIR"])
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"]) / "minitorch_fused"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "minitorch" / "fused"


# ---------------------------------------------------------------------------
# Writing the source
# ---------------------------------------------------------------------------
def _literal(value: float) -> str:
    """A float as Python source (``inf`` and ``nan`` have no literal)."""
    if math.isnan(value):
        return "np.nan"
    if math.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    return repr(float(value))


def _operand(arg: object) -> str:
    """An instruction operand: value ``k`` is ``vk``; a constant is rounded to ``T``."""
    return f"v{arg}" if isinstance(arg, int) else f"T({_literal(arg)})"


def _expression(ins: object) -> str:
    """The source of one instruction's result (before the rounding to ``T``)."""
    name = helper_name(ins.kind, ins.op)
    if ins.kind == "unary":
        p0, p1 = (_literal(p) for p in ins.params)
        return f"{name}({_operand(ins.args[0])}, {p0}, {p1})"
    a, b = (_operand(x) for x in ins.args)
    return f"{name}({a}, {b})"


def _helpers(code: str) -> list:
    """A small function for each op ``code`` calls: that op's branch of the scalar_ops switch."""
    lines = []
    for kind, params in (("unary", "x, p0, p1"), ("arith", "x, y")):
        ops = sorted({getattr(scalar_ops, name.upper())
                      for name in re.findall(rf"\b{kind}_(\w+)\(", code)})
        for op in ops:
            lines += ['@njit(inline="always")', f"def {helper_name(kind, op)}({params}):",
                      op_source(kind, op), "", ""]
    return lines


def _fill(template: str, names: dict) -> str:
    """Put the variables of one instruction into a derivative formula (``g``, ``x``, ...)."""
    return re.sub(r"\b(g|x|y|a|b|p0|p1)\b", lambda m: names[m.group(1)], template)


def _read_inputs(program: ElementwiseProgram, names: list) -> tuple[list, list]:
    """Lines before the loop (scalar inputs, read once) and at the top of its body."""
    before, inside = [], []
    for k in range(program.n_inputs):
        if program.scalar_inputs[k]:
            before.append(f"    v{k} = {names[k]}[0]")
        else:
            inside.append(f"        v{k} = {names[k]}[i]")
    return before, inside


def _body(program: ElementwiseProgram) -> list:
    lines = []
    for k, ins in enumerate(program.body):
        lines.append(f"        v{program.n_inputs + k} = T({_expression(ins)})")
    return lines


def _backward_lines(program: ElementwiseProgram) -> list:
    """Reverse mode over the body: ``a<k>`` is the adjoint (gradient) of value ``k``."""
    lines: list = []
    have: set = set()

    def add(k: int, contribution: str) -> None:
        if k in have:
            lines.append(f"        a{k} = T(a{k} + ({contribution}))")
        else:
            lines.append(f"        a{k} = T({contribution})")
            have.add(k)

    for j, k in enumerate(program.outputs):
        add(k, f"gout{j}[i]")
    for index in range(len(program.body) - 1, -1, -1):
        ins = program.body[index]
        k = program.n_inputs + index
        if k not in have:
            continue                    # nothing depends on this value
        p0, p1 = (_literal(p) for p in ins.params)
        lines.append(f"        # v{k} = {_expression(ins)}")
        if ins.kind == "unary":
            arg = ins.args[0]
            if isinstance(arg, int):
                add(arg, _fill(UNARY_DERIVATIVES[ins.op],
                               {"g": f"a{k}", "x": f"v{arg}", "y": f"v{k}", "p0": p0, "p1": p1}))
            continue
        names = {"g": f"a{k}", "a": _operand(ins.args[0]), "b": _operand(ins.args[1]),
                 "p0": p0, "p1": p1, "x": "", "y": f"v{k}"}
        for side, arg in enumerate(ins.args):
            if isinstance(arg, int):
                add(arg, _fill(ARITH_DERIVATIVES[ins.op][side], names))
    for j, k in enumerate(program.grads_for):
        lines.append(f"        gin{j}[i] = a{k}" if k in have else f"        gin{j}[i] = 0.0")
    return lines


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


def _describe(program: ElementwiseProgram) -> list:
    """The program in the docstring: one readable line per instruction."""
    lines = [f"    inputs: {', '.join(f'v{k}' for k in range(program.n_inputs))}"
             f" ({program.dtype})"]
    for index, ins in enumerate(program.body):
        lines.append(f"    v{program.n_inputs + index} = {_expression(ins)}")
    lines.append(f"    outputs: {', '.join(f'v{k}' for k in program.outputs)}")
    if program.grads_for:
        lines.append(f"    gradients for: {', '.join(f'v{k}' for k in program.grads_for)}")
    return lines


def source(program: ElementwiseProgram) -> str:
    """The Python source of ``program``'s kernel file.

    Without ``grads_for`` it holds the forward kernel; with it, the backward
    kernel for those inputs (a separate file: one forward serves every
    combination of inputs that need a gradient).
    """
    ins = [f"in{k}" for k in range(program.n_inputs)]
    before, reads = _read_inputs(program, ins)
    if program.grads_for:
        gouts = [f"gout{j}" for j in range(len(program.outputs))]
        gins = [f"gin{j}" for j in range(len(program.grads_for))]
        kernels = _function("backward", ins + gouts + gins, before,
                            reads + _body(program) + _backward_lines(program), "gout0")
        what = "backward kernel: the gradients of the inputs listed, by reverse mode"
    else:
        outs = [f"out{j}" for j in range(len(program.outputs))]
        writes = [f"        out{j}[i] = v{k}" for j, k in enumerate(program.outputs)]
        kernels = _function("forward", ins + outs, before, reads + _body(program) + writes,
                            "out0")
        what = "forward kernel"
    text = [
        f'"""A fused elementwise {what}, generated by minitorch.compile: do not edit.',
        "",
        "The program (values v0.. are the inputs; the rest, one per instruction):",
        "",
        *_describe(program),
        "",
        "Each helper below is one op's branch of the op-code switch in",
        "minitorch/backends/scalar_ops.py, copied (the op is known here).",
        '"""',
        "",
        "import math",
        "",
        "import numpy as np",
        "from numba import njit, prange",
        "",
        f"T = np.{program.dtype}    # every intermediate is rounded to the program's dtype",
        "",
        "",
        *_helpers("\n".join(kernels)),
        *kernels,
    ]
    return "\n".join(text).rstrip() + "\n"


# ---------------------------------------------------------------------------
# Writing the file, importing it
# ---------------------------------------------------------------------------
_modules: dict = {}


def _write_once(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless it is there: atomically (another process may race)."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def kernels_for(program: ElementwiseProgram) -> types.ModuleType:
    """The imported module of ``program``'s kernels (written and imported once per process)."""
    module = _modules.get(program)
    if module is not None:
        return module
    text = source(program)
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    path = source_folder() / f"fused_{digest}.py"
    _write_once(path, text)
    name = f"minitorch_fused_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    module.SOURCE = text
    _modules[program] = module
    return module

"""The device-neutral part of a fused kernel's source: the loop body, its derivative, the file.

A backend generates the file of a fused elementwise program
(:mod:`minitorch.backends.fusion_program`) in three parts: the *helpers*
(one small function per op, that op's branch of ``scalar_ops``), the *loop
body* for one element (the same text on every device: read the inputs,
compute each value, write the outputs; or the reverse-mode backward), and
the *loop* around it, which is the device's own (a ``range`` and a ``prange``
driver on the CPU, a grid-stride loop on the GPU: ``cpu/fused.py``,
``cuda/fused.py``).  This module writes the first two and loads the file.

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
from typing import Callable

from . import scalar_ops
from .fusion_program import ElementwiseProgram, helper_name, op_source

__all__ = ["source_folder", "literal", "expression", "helpers", "read_inputs", "body",
           "backward_lines", "describe", "file_text", "load", "kernels_for"]


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
def literal(value: float) -> str:
    """A float as Python source (``inf`` and ``nan`` have no literal)."""
    if math.isnan(value):
        return "np.nan"
    if math.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    return repr(float(value))


def operand(arg: object) -> str:
    """An instruction operand: value ``k`` is ``vk``; a constant is rounded to ``T``."""
    return f"v{arg}" if isinstance(arg, int) else f"T({literal(arg)})"


def expression(ins: object) -> str:
    """The source of one instruction's result (before the rounding to ``T``)."""
    name = helper_name(ins.kind, ins.op)
    if ins.kind == "unary":
        p0, p1 = (literal(p) for p in ins.params)
        return f"{name}({operand(ins.args[0])}, {p0}, {p1})"
    a, b = (operand(x) for x in ins.args)
    return f"{name}({a}, {b})"


def helpers(code: str, decorator: str) -> list:
    """A small function for each op ``code`` calls: that op's branch of the scalar_ops switch.

    ``decorator`` compiles each for the device (``@njit(inline="always")``,
    ``@cuda.jit(device=True)``).
    """
    lines = []
    for kind, params in (("unary", "x, p0, p1"), ("arith", "x, y")):
        ops = sorted({getattr(scalar_ops, name.upper())
                      for name in re.findall(rf"\b{kind}_(\w+)\(", code)})
        for op in ops:
            lines += [decorator, f"def {helper_name(kind, op)}({params}):",
                      op_source(kind, op), "", ""]
    return lines


def fill(template: str, names: dict) -> str:
    """Put the variables of one instruction into a derivative formula (``g``, ``x``, ...)."""
    return re.sub(r"\b(g|x|y|a|b)\b", lambda m: names[m.group(1)], template)


def read_inputs(program: ElementwiseProgram, names: list) -> tuple[list, list]:
    """Lines before the loop (scalar inputs, read once) and at the top of its body."""
    before, inside = [], []
    for k in range(program.n_inputs):
        if program.scalar_inputs[k]:
            before.append(f"    v{k} = {names[k]}[0]")
        else:
            inside.append(f"        v{k} = {names[k]}[i]")
    return before, inside


def body(program: ElementwiseProgram) -> list:
    lines = []
    for k, ins in enumerate(program.body):
        lines.append(f"        v{program.n_inputs + k} = T({expression(ins)})")
    return lines


def backward_lines(program: ElementwiseProgram) -> list:
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
        lines.append(f"        # v{k} = {expression(ins)}")
        if ins.kind == "unary":
            names = {"g": f"a{k}", "x": operand(ins.args[0]), "y": f"v{k}"}
        else:
            names = {"g": f"a{k}", "a": operand(ins.args[0]), "b": operand(ins.args[1]),
                     "y": f"v{k}"}
        for side, arg in enumerate(ins.args):
            if isinstance(arg, int):
                add(arg, fill(ins.derivatives[side], names))
    for j, k in enumerate(program.grads_for):
        lines.append(f"        gin{j}[i] = a{k}" if k in have else f"        gin{j}[i] = 0.0")
    return lines


def describe(program: ElementwiseProgram) -> list:
    """The program in the docstring: one readable line per instruction."""
    lines = [f"    inputs: {', '.join(f'v{k}' for k in range(program.n_inputs))}"
             f" ({program.dtype})"]
    for index, ins in enumerate(program.body):
        lines.append(f"    v{program.n_inputs + index} = {expression(ins)}")
    lines.append(f"    outputs: {', '.join(f'v{k}' for k in program.outputs)}")
    if program.grads_for:
        lines.append(f"    gradients for: {', '.join(f'v{k}' for k in program.grads_for)}")
    return lines


def file_text(program: ElementwiseProgram, loop: Callable, imports: list,
              helper_decorator: str) -> str:
    """The whole generated file of ``program``, with the device's ``loop`` around the body.

    Without ``grads_for`` it holds the forward kernel; with it, the backward
    kernel for those inputs (a separate file: one forward serves every
    combination of inputs that need a gradient).  ``loop(name, params,
    before, body, size_of)`` returns the device's kernel(s) as lines:
    ``before`` runs once before the loop, ``body`` for element ``i``, and
    ``size_of`` is the parameter whose length is the element count.
    """
    ins = [f"in{k}" for k in range(program.n_inputs)]
    before, reads = read_inputs(program, ins)
    if program.grads_for:
        gouts = [f"gout{j}" for j in range(len(program.outputs))]
        gins = [f"gin{j}" for j in range(len(program.grads_for))]
        kernels = loop("backward", ins + gouts + gins, before,
                       reads + body(program) + backward_lines(program), "gout0")
        what = "backward kernel: the gradients of the inputs listed, by reverse mode"
    else:
        outs = [f"out{j}" for j in range(len(program.outputs))]
        writes = [f"        out{j}[i] = v{k}" for j, k in enumerate(program.outputs)]
        kernels = loop("forward", ins + outs, before, reads + body(program) + writes, "out0")
        what = "forward kernel"
    text = [
        f'"""A fused elementwise {what}, generated by minitorch.compile: do not edit.',
        "",
        "The program (values v0.. are the inputs; the rest, one per instruction):",
        "",
        *describe(program),
        "",
        "Each helper below is one op's branch of the op-code switch in",
        "minitorch/backends/scalar_ops.py, copied (the op is known here).",
        '"""',
        "",
        "import math",
        "",
        "import numpy as np",
        *imports,
        "",
        f"T = np.{program.dtype}    # every intermediate is rounded to the program's dtype",
        "",
        "",
        *helpers("\n".join(kernels), helper_decorator),
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


def load(text: str) -> types.ModuleType:
    """The module of a generated file's ``text`` (written and imported once per process)."""
    module = _modules.get(text)
    if module is not None:
        return module
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    path = source_folder() / f"fused_{digest}.py"
    _write_once(path, text)
    name = f"minitorch_fused_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    module.SOURCE = text
    _modules[text] = module
    return module


_by_program: dict = {}


def kernels_for(program: ElementwiseProgram, source: Callable) -> types.ModuleType:
    """The module of ``program``'s file as ``source`` (a device's) writes it; made once."""
    key = (source, program)
    module = _by_program.get(key)
    if module is None:
        module = _by_program[key] = load(source(program))
    return module

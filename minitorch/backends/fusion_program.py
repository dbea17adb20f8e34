"""A fused elementwise program: many elementwise ops as one loop, and its derivative.

``minitorch.compile`` finds runs of elementwise ops in a traced function
(``y = exp(x * w + b)``: a multiply, an add, an exp) and hands each run to a
backend as an :class:`ElementwiseProgram`: straight-line code over *values*,
numbered in order.  Values ``0 .. n_inputs-1`` are the inputs; instruction
``k`` of :attr:`ElementwiseProgram.body` defines value ``n_inputs + k``::

    inputs  v0 = x, v1 = w, v2 = b
    v3 = arith(MUL, v0, v1)
    v4 = arith(ADD, v3, v2)
    v5 = unary(EXP, v4)
    outputs (v5,)

A backend turns a program into one kernel that runs the whole body for one
element at a time (``backends/cpu/fused.py`` writes it out as Python source
for Numba).  Eager minitorch runs three kernels and writes two temporaries
of the full size to memory; the fused kernel reads ``x``, ``w``, ``b`` once
and writes ``v5`` once.

The *backward* kernel is derived from the same program by reverse-mode
differentiation, one instruction at a time, newest first: each instruction
adds its inputs' share of the gradient, ``adjoint(input) += adjoint(result)
* d result / d input``.  Each instruction carries its local derivatives
(:attr:`Instruction.derivatives`) as scalar expressions over ``x`` (a unary
op's input), ``y`` (its result), ``a``, ``b`` (a binary op's inputs) and
``g`` (the result's adjoint).  They are not written here: the compiler reads
them from the eager ops' own ``backward`` (``compiler/derivative_source.py``),
so each op's derivative is written once.

Everything here is plain data and text, the same for every device.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field
from functools import lru_cache

from . import scalar_ops

__all__ = ["Instruction", "ElementwiseProgram", "unary_name", "arith_name", "op_source",
           "helper_name"]


@dataclass(frozen=True)
class Instruction:
    """One op of a program: ``kind`` is ``"unary"`` or ``"arith"``, ``op`` its op code.

    ``args`` holds, per operand, a value number (an ``int``) or a constant
    (a ``float``: ``x * 2`` multiplies by the constant ``2.0``).  ``params``
    are a unary op's ``p0, p1`` (clamp's bounds, leaky_relu's slope).
    ``derivatives`` holds, per operand, d(result)/d(operand) times ``g`` as
    source (``"g * y"`` for exp; ``("g * b", "g * a")`` for a product), in
    the names ``g``, ``x``, ``y``, ``a``, ``b``; empty for a program that is
    never differentiated.
    """

    kind: str
    op: int
    args: tuple
    params: tuple = (0.0, 0.0)
    derivatives: tuple = field(default=(), repr=False)   # long: left out of the repr


@dataclass(frozen=True)
class ElementwiseProgram:
    """Straight-line elementwise code over one float dtype; see the module docstring.

    ``scalar_inputs[i]`` says input ``i`` is a single value repeated
    (a 1-element array); the others have one element per output element.
    ``grads_for`` lists the inputs whose gradient the backward kernel computes.
    """

    dtype: str                      # "float32" or "float64"
    n_inputs: int
    scalar_inputs: tuple
    body: tuple
    outputs: tuple
    grads_for: tuple = ()

    def __post_init__(self) -> None:
        # Programs are dictionary keys on every call (the kernels of a program);
        # hashing a long body each time would cost more than the kernel of a
        # short one, so the hash is computed once.
        object.__setattr__(self, "_hash", hash((self.dtype, self.n_inputs, self.scalar_inputs,
                                                self.body, self.outputs, self.grads_for)))

    def __hash__(self) -> int:
        return self._hash

    def value_count(self) -> int:
        return self.n_inputs + len(self.body)


def _names(first: str, last: str) -> dict:
    """``{op code: name}`` for the constants of scalar_ops from ``first`` to ``last``."""
    names, inside = {}, False
    for name, value in vars(scalar_ops).items():
        if name == first:
            inside = True
        if inside and isinstance(value, int) and name.isupper():
            names[value] = name
        if name == last:
            break
    return names


_UNARY_NAMES = _names("IDENTITY", "EXP2")
_ARITH_NAMES = _names("ADD", "DIV")


def unary_name(op: int) -> str:
    """``scalar_ops``' name of unary op code ``op`` (``3`` -> ``"EXP"``)."""
    return _UNARY_NAMES[op]


def arith_name(op: int) -> str:
    """``scalar_ops``' name of arithmetic op code ``op`` (``2`` -> ``"MUL"``)."""
    return _ARITH_NAMES[op]


def helper_name(kind: str, op: int) -> str:
    """The name a generated kernel gives its copy of one op's branch (``unary_exp``)."""
    return f"{kind}_{(unary_name(op) if kind == 'unary' else arith_name(op)).lower()}"


@lru_cache(maxsize=None)
def _branches(family: str) -> dict:
    """``{op code: branch statements}`` of the ``if op == ...`` chain of ``scalar_ops.<family>``."""
    tree = ast.parse(inspect.getsource(getattr(scalar_ops, family)))
    chain = [node for node in tree.body[0].body if isinstance(node, ast.If)][0]
    branches: dict = {}
    while True:
        tests = chain.test.values if isinstance(chain.test, ast.BoolOp) else [chain.test]
        for test in tests:                       # ``op == CLAMP or op == HARDTANH``
            branches[getattr(scalar_ops, test.comparators[0].id)] = chain.body
        if len(chain.orelse) == 1 and isinstance(chain.orelse[0], ast.If):
            chain = chain.orelse[0]
        else:
            break
    return branches


def op_source(kind: str, op: int) -> str:
    """The source of one op's branch of ``scalar_ops.unary`` (or ``arith``), indented 4.

    The arithmetic of every op is written once, as one branch of the op-code
    switch in ``scalar_ops.py``.  A fused kernel applies a *known* op at each
    step, so instead of the whole switch it takes just that branch (a
    compiler calls this *specialising* the switch): ``op_source("unary",
    EXP)`` is ``"    return math.exp(x)"``.  The statements use ``x``, ``p0``,
    ``p1`` (unary) or ``x``, ``y`` (arith), and ``math``.
    """
    statements = _branches("unary" if kind == "unary" else "arith")[op]
    return "\n".join("    " + line for stmt in statements
                     for line in ast.unparse(stmt).splitlines())

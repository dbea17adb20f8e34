"""Fusion: each run of elementwise ops in a trace becomes one kernel, forward and backward.

Eager minitorch runs ``y = exp(x * w + b)`` as three ops: three kernel
launches, three trips through ``Function.apply``, two temporaries the size
of ``x`` written and read back, and in the backward three more nodes.
:func:`fuse` finds such runs in a traced :class:`~.trace.Graph`: consecutive
calls of elementwise ops (the ones ``backends/fusion_program.py`` can
differentiate) over tensors of one shape, one float dtype and one device.
It turns each run into an
:class:`~minitorch.backends.fusion_program.ElementwiseProgram` and replaces
the run's calls by one call of :class:`FusedElementwise`, whose forward runs
the program's kernel and whose backward runs its derivative's kernel.

A run's *inputs* are the values it reads but does not define; its
*outputs* are the values it defines that something after it reads (a later
op, or the function's result).  Everything else lives only in registers.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..autograd.function import Function, once_differentiable
from ..backends.fusion_program import ElementwiseProgram, Instruction
from ..backends import scalar_ops
from ..layout import broadcast_shapes, numel
from ..ops import elementwise, kernels
from ..ops.views import sum_to_shape
from .derivative_source import arith_derivatives, unary_derivative
from .trace import Call, Graph, Ref, refs

__all__ = ["fuse", "FusedElementwise", "programs"]

_ARITH_CLASSES = {elementwise.Add: scalar_ops.ADD, elementwise.Sub: scalar_ops.SUB,
                  elementwise.RSub: scalar_ops.SUB, elementwise.Mul: scalar_ops.MUL,
                  elementwise.Div: scalar_ops.DIV}
_FLOATS = ("float32", "float64")


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _instructions(call: Call, meta: list) -> list | None:
    """The call as program instructions over refs and constants, or None if it cannot fuse.

    The instructions' operands are :class:`Ref`\\ s (renumbered later) or floats.
    """
    if call.kwargs or not isinstance(call.outputs, Ref):
        return None
    out_shape, out_dtype, out_device = meta[call.outputs.index][:3]
    if out_dtype.name not in _FLOATS or not kernels.has_fused_elementwise(out_device):
        return None
    operands = []
    full = False
    for a in call.args:
        if isinstance(a, Ref):
            shape, dt, dev, _, contiguous = meta[a.index]
            if dt is not out_dtype or dev != out_device:
                return None
            if shape == out_shape:
                # The fused kernel writes contiguous results: so would eager
                # only if a same-shape input is contiguous (results follow
                # the inputs' memory order).
                if not contiguous:
                    return None
                full = True
            operands.append(a)
        elif _number(a):
            operands.append(float(a))
        else:
            return None
    if not full:
        return None
    # An op fuses when its eager derivative reads as source (derivative_source.py): the
    # fused backward then computes exactly what the eager backward would.
    cls = call.fn
    if isinstance(cls, type) and issubclass(cls, elementwise._Unary):
        if not isinstance(operands[0], Ref) or cls.grad_formula is None:
            return None
        p = [float(x) for x in operands[1:3]] + [0.0] * (3 - len(operands))
        derivative = unary_derivative(cls, p[0], p[1])
        if derivative is None:
            return None
        return [Instruction("unary", cls.op, (operands[0],), (p[0], p[1]), (derivative,))]
    op = _ARITH_CLASSES.get(cls)
    if op is None or len(operands) < 2:
        return None
    derivatives = arith_derivatives(cls)
    if derivatives is None:
        return None
    a, b = operands[0], operands[1]
    if not any(isinstance(x, Ref) for x in (a, b)):
        return None
    alpha = operands[2] if len(operands) > 2 else 1.0
    if not isinstance(alpha, float):
        return None
    if alpha != 1.0:                       # add(a, b, alpha=2): a + b * 2, as Add's forward
        scaled = arith_derivatives(elementwise.Mul)
        if scaled is None:
            return None
        return [Instruction("arith", scalar_ops.MUL, (b, alpha), derivatives=scaled),
                Instruction("arith", op, (a, None), derivatives=derivatives)]
    return [Instruction("arith", op, (a, b), derivatives=derivatives)]


def _runs(graph: Graph) -> list:
    """``(start, stop, instructions per call)`` for each run of two or more fusable calls.

    Only after the last in-place call: a fused op saves its inputs for the
    backward, and an in-place write to one of them afterwards would make that
    backward fail its version check where the eager ops (which save less)
    would not.
    """
    runs, current, shape, dtype = [], [], None, None
    first = max([p + 1 for p, c in enumerate(graph.calls) if c.mutates], default=0)

    def close(end: int) -> None:
        if len(current) >= 2:
            runs.append((end - len(current), end, list(current)))

    for position, call in enumerate(graph.calls):
        ins = _instructions(call, graph.meta) if position >= first else None
        if ins is not None:
            out_shape, out_dtype = graph.meta[call.outputs.index][:2]
            if current and (out_shape != shape or out_dtype is not dtype):
                close(position)
                current = []
            if not current:
                shape, dtype = out_shape, out_dtype
            current.append(ins)
            continue
        close(position)
        current = []
    close(len(graph.calls))
    return runs


def _later_uses(graph: Graph) -> list:
    """For each call position, the value numbers read at or after it (or returned)."""
    needed: set = {r.index for r in refs(graph.output)}
    after: list = [set()] * (len(graph.calls) + 1)
    after[len(graph.calls)] = set(needed)
    for position in range(len(graph.calls) - 1, -1, -1):
        call = graph.calls[position]
        needed = needed | {r.index for r in refs(call.args)} | {r.index for r in refs(call.kwargs)}
        after[position] = set(needed)
    return after


def _program(graph: Graph, start: int, stop: int, per_call: list, live_after: set) -> tuple:
    """The program of calls ``start..stop``, its input refs and its output refs."""
    number: dict = {}              # value number in the graph -> value number in the program
    inputs: list = []
    body: list = []
    defined: list = []
    dtype = graph.meta[graph.calls[start].outputs.index][1]
    shape = graph.meta[graph.calls[start].outputs.index][0]
    # First pass: the inputs (read, not defined, in the run), numbered first.
    defined_here = {graph.calls[p].outputs.index for p in range(start, stop)}
    for instructions in per_call:
        for ins in instructions:
            for a in ins.args:
                if isinstance(a, Ref) and a.index not in defined_here and a.index not in number:
                    number[a.index] = len(inputs)
                    inputs.append(a)
    n_inputs = len(inputs)
    for position, instructions in zip(range(start, stop), per_call):
        for ins in instructions:
            args = []
            for a in ins.args:
                if a is None:                        # the previous instruction's result
                    args.append(n_inputs + len(body) - 1)
                elif isinstance(a, Ref):
                    args.append(number[a.index])
                else:
                    args.append(a)
            body.append(replace(ins, args=tuple(args)))
        result = graph.calls[position].outputs.index
        number[result] = n_inputs + len(body) - 1
        defined.append(result)
    outputs = [k for k in defined if k in live_after]
    if not outputs:
        outputs = [defined[-1]]
    full = numel(shape)
    scalar = tuple(numel(graph.meta[r.index][0]) == 1 and full != 1 for r in inputs)
    program = ElementwiseProgram(dtype=dtype.name, n_inputs=n_inputs, scalar_inputs=scalar,
                                 body=tuple(body), outputs=tuple(number[k] for k in outputs))
    return program, inputs, [Ref(k) for k in outputs]


def fuse(graph: Graph) -> Graph:
    """``graph`` with each run of fusable elementwise calls replaced by one fused call."""
    runs = _runs(graph)
    if not runs:
        return graph
    after = _later_uses(graph)
    calls: list = []
    position = 0
    for start, stop, per_call in runs:
        calls.extend(graph.calls[position:start])
        program, inputs, outputs = _program(graph, start, stop, per_call, after[stop])
        out = tuple(outputs) if len(outputs) > 1 else outputs[0]
        calls.append(Call(FusedElementwise, (program, *inputs), {}, out))
        position = stop
    calls.extend(graph.calls[position:])
    return replace(graph, calls=calls)


def programs(graph: Graph) -> list:
    """The fused programs of a graph, in order."""
    return [c.args[0] for c in graph.calls if c.fn is FusedElementwise]


def _full(t: Any, shape: tuple, scalar: bool) -> Any:
    """``t`` as the flat array the kernel reads: contiguous in ``shape`` (one value if scalar)."""
    if scalar:
        t = kernels.contiguous(t)
        return kernels.flat(t)[:1]
    if t._shape != shape:
        out = kernels.empty(shape, t.dtype, t.device)
        kernels.copy(kernels.broadcast_operand(t, shape), out)
        return kernels.flat(out)
    return kernels.flat(kernels.contiguous(t))


_backward_programs: dict = {}


def _backward_program(program: ElementwiseProgram, wanted: tuple) -> ElementwiseProgram:
    """``program`` asking for the gradients of inputs ``wanted`` (made once per pair)."""
    key = (program, wanted)
    found = _backward_programs.get(key)
    if found is None:
        found = _backward_programs[key] = replace(program, grads_for=wanted)
    return found


class FusedElementwise(Function):
    """One call of a fused elementwise program: ``apply(program, *inputs)``."""

    _backward_name = "CompiledFunctionBackward"
    _nondiff_args = (0,)

    @staticmethod
    def forward(ctx: Any, program: ElementwiseProgram, *inputs: Any) -> Any:
        shape = broadcast_shapes(*(t._shape for t in inputs))
        first = inputs[0]
        outs = [kernels.empty(shape, first.dtype, first.device) for _ in program.outputs]
        arrays = [_full(t, shape, s) for t, s in zip(inputs, program.scalar_inputs)]
        kernels.fused_elementwise(program, arrays, [kernels.flat(o) for o in outs],
                                  first.device)
        ctx.program, ctx.shape = program, shape
        ctx.save_for_backward(*inputs)
        return tuple(outs) if len(outs) > 1 else outs[0]

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, *grads: Any) -> tuple:
        inputs = ctx.saved_tensors
        wanted = tuple(i for i in range(len(inputs)) if ctx.needs_input_grad[i + 1])
        program = _backward_program(ctx.program, wanted)
        shape = ctx.shape
        arrays = [_full(t, shape, s) for t, s in zip(inputs, program.scalar_inputs)]
        gouts = [_full(g, shape, False) for g in grads]
        first = inputs[0]
        gins = [kernels.empty(shape, first.dtype, first.device) for _ in wanted]
        kernels.fused_elementwise_backward(program, arrays, gouts,
                                           [kernels.flat(g) for g in gins], first.device)
        result: list = [None] * (len(inputs) + 1)
        for i, g in zip(wanted, gins):
            result[i + 1] = sum_to_shape(g, inputs[i]._shape)
        return tuple(result)

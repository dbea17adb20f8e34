"""Rewrites: replace a pattern of ops in a trace by an equivalent, cheaper one.

A compiler may change *how* a program computes as long as it computes the
same thing.  One example, common in convolutional networks (LeNet's
``Conv2d -> ReLU -> MaxPool2d``):

    max_pool(relu(x)) == relu(max_pool(x))

ReLU is monotone (it never reorders two values), so the largest of the
rectified values is the rectified largest value.  Pooling first means ReLU
(and its backward) runs on the pooled tensor, a quarter of the size for
2x2 windows.  The gradients agree too: where the window's maximum is
positive both orders pass the gradient to the same element, and where it
is not, both give zero.  Only the pool's *indices* can differ (in a window
of negative numbers, the first zero versus the largest negative), so the
rewrite applies only when nothing reads them.
"""

from __future__ import annotations

from ..ops import conv, elementwise
from .trace import Call, Graph, Ref, refs

__all__ = ["pool_before_relu"]


def _reads(graph: Graph) -> dict:
    """How many times each value is read by a call or returned."""
    count: dict = {}
    for call in graph.calls:
        for r in refs(call.args) + refs(call.kwargs):
            count[r.index] = count.get(r.index, 0) + 1
    for r in refs(graph.output):
        count[r.index] = count.get(r.index, 0) + 1
    return count


def pool_before_relu(graph: Graph) -> Graph:
    """``ReLU`` then ``MaxPool2d`` becomes ``MaxPool2d`` then ``ReLU`` (see the module docstring)."""
    reads = _reads(graph)
    calls, meta, changed = list(graph.calls), list(graph.meta), False
    for i in range(len(calls) - 1):
        relu, pool = calls[i], calls[i + 1]
        if not (relu.fn is elementwise.Relu and pool.fn is conv.MaxPool2d
                and isinstance(relu.outputs, Ref) and len(relu.args) == 1
                and isinstance(relu.args[0], Ref) and pool.args[:1] == (relu.outputs,)
                and not pool.kwargs and not relu.mutates and not pool.mutates
                and isinstance(pool.outputs, tuple) and len(pool.outputs) == 2
                and reads.get(relu.outputs.index, 0) == 1
                and reads.get(pool.outputs[1].index, 0) == 0):
            continue
        pooled, indices = pool.outputs
        raw = Ref(len(meta))                   # the pool of the un-rectified input
        meta.append(meta[pooled.index])
        calls[i] = Call(conv.MaxPool2d, (relu.args[0], *pool.args[1:]), {}, (raw, indices))
        calls[i + 1] = Call(elementwise.Relu, (raw,), {}, pooled)
        changed = True
    if not changed:
        return graph
    return Graph(n_inputs=graph.n_inputs, constants=graph.constants, calls=calls,
                 output=graph.output, meta=meta)

"""The backward pass: run the graph's nodes from the output back to the leaves.

1. **Discover** every node reachable from the roots and count, for each, how
   many edges point at it (its *dependencies*).  This is an explicit stack,
   not recursion, so a chain of 100,000 operations is fine.
2. **Run** nodes from a ready queue.  A node is ready when every edge into it
   has delivered its gradient; gradients arriving along several edges are
   summed first (that is the chain rule's sum over paths).  Among ready
   nodes the one created last runs first, like PyTorch.
3. **Leaves**: an ``AccumulateGrad`` node adds its gradient into the leaf's
   ``.grad`` (or, for ``autograd.grad``, hands it back to the caller).

With ``create_graph=True`` the backward formulas run with recording on, so
the gradients themselves have a graph and can be differentiated again.
Unless ``retain_graph=True``, each node frees its saved tensors after it
runs, and a second backward through it raises.
"""

from __future__ import annotations

import heapq
import warnings
from typing import Any, Sequence

from . import grad_mode
from .anomaly_mode import STATE as ANOMALY
from .graph import AccumulateGrad, accumulate_into_leaf, edge_of, run_tensor_hooks
from ..tensor_base import TensorBase
from ..trace_mode import note_untraceable

__all__ = ["backward", "grad", "accumulate_into_leaf"]


def _as_tuple(x: Any) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,)


def _make_root_grads(outputs: tuple, grad_outputs: tuple, is_grads_batched: bool = False
                     ) -> list:
    if len(grad_outputs) == 0:
        grad_outputs = (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"got {len(grad_outputs)} tensors and {len(outputs)} gradients")
    grads = []
    for out, g in zip(outputs, grad_outputs):
        if g is None:
            if out.requires_grad and out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                   f"outputs but got {out.dtype}")
            g = out.new_ones(out._shape)
        elif not isinstance(g, TensorBase):
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        elif g._shape != out._shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[0] has a shape of {g.shape} and output[0] "
                f"has a shape of {out.shape}.")
        grads.append(g)
    return grads


def _discover(roots: list) -> dict:
    """How many edges point at each node of the graph below ``roots``.

    Args:
        roots: the nodes backward starts from (``None`` entries are skipped).
        A node's edges are ``node.next_functions``: ``(next_node, output_nr)``
        pairs, where ``next_node`` may be ``None`` (an input that needs no
        gradient: no edge).

    Returns:
        ``{node: number of edges into it}`` for every node reachable from the
        roots through at least one edge; a node that two edges reach counts 2
        (even if both come from one node).  A root that no edge reaches is not
        in it.  The graph may be 100,000 nodes deep: no recursion.  Example: for
        ``y = a * a`` (a leaf ``a``) and ``roots = [y.grad_fn]``, ``a``'s
        ``AccumulateGrad`` node counts 2.
    """
    # Task 3.1: count the edges into each node reachable from roots.
    ### BEGIN SOLUTION
    deps: dict = {}
    seen = set()
    stack = [n for n in roots if n is not None]
    for n in stack:
        seen.add(n)
    while stack:
        current = stack.pop()
        for nxt, _ in current.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps
    ### END SOLUTION


def _needed(roots: list, targets: set) -> set:
    """Nodes from which some target node can be reached (only these need to run)."""
    # Build reverse adjacency once over the nodes _discover reaches, then walk back from
    # the targets.
    seen = {n for n in roots if n is not None}
    seen.update(_discover(roots))
    parents: dict = {}
    for node in seen:
        for nxt, _ in node.next_functions:
            if nxt is not None:
                parents.setdefault(nxt, []).append(node)
    needed = set()
    stack = [t for t in targets if t in seen]
    needed.update(stack)
    while stack:
        node = stack.pop()
        for p in parents.get(node, ()):
            if p not in needed:
                needed.add(p)
                stack.append(p)
    return needed


_LEAVES_FIRST = 1 << 62       # added to a leaf's key: before every other ready node


def _priority(node: Any) -> int:
    """The heap key of a ready node: the newest node runs first, and a leaf's before all.

    Running nodes newest-first (by creation sequence) follows the forward pass
    backwards.  As in PyTorch, a leaf's ``AccumulateGrad`` runs as soon as it is
    ready: its gradient is final then, and its hooks (``DistributedDataParallel``
    starts the all-reduce of a bucket there) should not wait for the rest of
    the backward pass.
    """
    # Among leaves, newest first too: the order must be the same in every process
    # (DistributedDataParallel's ranks issue their all-reduces in this order).
    if node.__class__ is AccumulateGrad:
        return -node._seq - _LEAVES_FIRST
    return -node._seq


def _no_gradient(grads: list) -> bool:
    """Did no gradient reach the node?  (Most nodes have one output: one test.)"""
    if len(grads) == 1:
        return grads[0] is None
    return all(g is None for g in grads)


def _add(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _execute(root_edges: list, root_grads: list, retain_graph: bool, create_graph: bool,
             capture: dict | None = None) -> None:
    """Run the backward pass.

    ``capture`` maps ``(node, output_nr)`` to a slot for ``autograd.grad``:
    the gradient flowing into that edge is stored there instead of being
    accumulated into a leaf, and only nodes that lead to a captured edge run.
    """
    note_untraceable("backward() ran inside the traced function")
    roots = [n for n, _ in root_edges]
    deps = _discover(roots)
    needed = None
    if capture is not None:
        needed = _needed(roots, {n for n, _ in capture})
    buffers: dict = {}
    heap: list = []

    def deliver(node: Any, nr: int, g: Any) -> None:
        buf = buffers.get(node)
        if buf is None:
            n_out = max(len(getattr(node, "_output_meta", ())), nr + 1, 1)
            buf = buffers[node] = [None] * n_out
        elif nr >= len(buf):
            buf.extend([None] * (nr + 1 - len(buf)))
        buf[nr] = _add(buf[nr], g)

    for (node, nr), g in zip(root_edges, root_grads):
        if node is not None:
            deliver(node, nr, g)
    for node in dict.fromkeys(roots):
        if node is not None and deps.get(node, 0) == 0:
            heapq.heappush(heap, (_priority(node), id(node), node))

    prev_mode = grad_mode.STATE.grad_enabled
    grad_mode.STATE.grad_enabled = create_graph
    try:
        while heap:
            _, _, node = heapq.heappop(heap)
            grads = buffers.pop(node, [None])
            # Tensor hooks and retain_grad for the tensors this node produced.
            if node._pre_hooks:
                for nr, hooks in node._pre_hooks.items():
                    if nr < len(grads) and grads[nr] is not None:
                        grads[nr] = run_tensor_hooks(hooks, grads[nr])
            if node._retain:
                for nr, ref in node._retain.items():
                    t = ref()
                    if t is not None and nr < len(grads) and grads[nr] is not None:
                        g = grads[nr]
                        if t._grad is None:
                            t._grad = g if create_graph else g.detach().clone()
                        else:
                            t._grad = t._grad + (g if create_graph else g.detach())
            if capture is not None:
                for nr, g in enumerate(grads):
                    if (node, nr) in capture:
                        capture[(node, nr)] = _add(capture[(node, nr)], g)
            if isinstance(node, AccumulateGrad):
                if capture is None and grads[0] is not None:
                    accumulate_into_leaf(node.variable, grads[0], create_graph)
                continue
            if needed is not None and node not in needed:
                continue
            if node._node_pre_hooks:
                for fn in list(node._node_pre_hooks.values()):
                    new = fn(tuple(grads))
                    if new is not None:
                        grads = list(new)
            if _no_gradient(grads):
                in_grads = (None,) * len(node.next_functions)
            else:
                in_grads = node.apply(*grads)
                if ANOMALY.enabled and ANOMALY.check_nan:
                    _check_nan(node, in_grads)
            if node._post_hooks:
                for fn in list(node._post_hooks.values()):
                    new = fn(in_grads, tuple(grads))
                    if new is not None:
                        in_grads = tuple(new)
            if not retain_graph:
                node._release()
            for (nxt, nr), g in zip(node.next_functions, in_grads):
                if nxt is None:
                    continue
                if g is not None:
                    deliver(nxt, nr, g)
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    heapq.heappush(heap, (_priority(nxt), id(nxt), nxt))
    finally:
        grad_mode.STATE.grad_enabled = prev_mode


def _check_nan(node: Any, in_grads: Sequence) -> None:
    for i, g in enumerate(in_grads):
        if g is not None and g.dtype.is_floating_point and bool(g.isnan().any()):
            if node._anomaly_trace:
                warnings.warn("Error detected in " + node.name() + ". Traceback of forward "
                              "call that caused the error:\n" + node._anomaly_trace,
                              stacklevel=3)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                               f"{i}th output.")


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Compute the gradients of ``tensors`` and add them into the leaves' ``.grad``.

    ``grad_tensors`` is the gradient of some scalar with respect to each of
    ``tensors`` (needed when they are not scalars).  ``inputs`` limits the
    accumulation to these tensors.
    """
    outputs = _as_tuple(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    for out in outputs:
        if not out.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have "
                               "a grad_fn")
    grads = _make_root_grads(outputs, _as_tuple(grad_tensors))
    root_edges = [edge_of(o) for o in outputs]
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        capture = {}
        for t in inputs:
            if not t.requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            capture[edge_of(t)] = None
        _execute(root_edges, grads, retain_graph, create_graph, capture)
        for t in inputs:
            g = capture[edge_of(t)]
            if g is not None:
                if t.is_leaf:
                    accumulate_into_leaf(t, g, create_graph)
                else:
                    t._grad = g if t._grad is None else t._grad + g
        return
    _execute(root_edges, grads, retain_graph, create_graph)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """Return the gradients of ``outputs`` with respect to ``inputs`` (no ``.grad`` is touched)."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    for out in outputs:
        if not out.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have "
                               "a grad_fn")
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_root_grads(outputs, _as_tuple(grad_outputs))
    capture = {edge_of(t): None for t in inputs}
    root_edges = [edge_of(o) for o in outputs]
    # An output that is itself one of the inputs: its gradient is the root grad.
    _execute(root_edges, grads, retain_graph, create_graph, capture)
    result = []
    for i, t in enumerate(inputs):
        g = capture[edge_of(t)]
        if g is None:
            if materialize_grads:
                g = t.new_zeros(t._shape)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is "
                                   "the desired behavior.")
        elif not create_graph:
            g = g.detach()
        result.append(g)
    return tuple(result)

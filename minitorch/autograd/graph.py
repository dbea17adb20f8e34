"""The autograd graph: nodes that know how to turn output gradients into input gradients.

Every recorded operation creates one :class:`Node` (the ``grad_fn`` of its
outputs).  A node's ``next_functions`` are the edges of the graph: for each
input of the operation, the node that produces that input's gradient and
which of that node's outputs it is, ``(node, output_nr)``.  A leaf tensor
that requires grad is represented by an :class:`AccumulateGrad` node, which
adds the gradient it receives into the leaf's ``.grad``::

    x (leaf) ---> AccumulateGrad
                        ^
    y = x * 2  --->  MulBackward0.next_functions == ((AccumulateGrad, 0), (None, 0))

The backward pass (``engine.py``) walks this graph from the output to the
leaves, calling each node once all the gradients flowing into it are known.
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any, Callable

from ..layout import is_non_overlapping_and_dense
from ..tensor_base import TensorBase

__all__ = ["Node", "AccumulateGrad", "RemovableHandle", "edge_of"]

_sequence = itertools.count()

_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


class RemovableHandle:
    """Returned by ``register_hook``; ``handle.remove()`` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks: dict) -> None:
        self._hooks_ref = weakref.ref(hooks) if hooks is not None else None
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        hooks = self._hooks_ref() if self._hooks_ref is not None else None
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


class HookDict(dict):
    """A dict that can be weakly referenced (for RemovableHandle)."""


class Node:
    """A step of the backward pass: ``apply(*grad_outputs) -> grad_inputs``."""

    # Subclasses name themselves like PyTorch ("MulBackward0").
    _node_name = "Node"

    # Defaults live on the class, so that making a node (once per op while
    # recording) sets only what differs: a node is created for every op.
    next_functions: tuple = ()
    _pre_hooks: dict | None = None           # output_nr -> HookDict of tensor hooks
    _retain: dict | None = None              # output_nr -> weakref to tensor
    _post_hooks: "HookDict | None" = None
    _node_pre_hooks: "HookDict | None" = None
    _anomaly_trace: str | None = None
    _metadata: dict | None = None

    def __init__(self) -> None:
        self._seq = next(_sequence)

    @property
    def metadata(self) -> dict:
        """A dict for the user's own notes about this node (made on first use)."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def name(self) -> str:
        return self._node_name

    def apply(self, *grads: Any) -> tuple:
        raise NotImplementedError  # abstract: every concrete node defines apply

    def __call__(self, *grads: Any) -> Any:
        out = self.apply(*grads)
        return out[0] if isinstance(out, tuple) and len(out) == 1 else out

    def _release(self) -> None:
        """Free what was saved for backward (called unless ``retain_graph``)."""

    # -- hooks on the node itself (Node.register_hook / register_prehook) --
    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node computes its gradients."""
        if self._post_hooks is None:
            self._post_hooks = HookDict()
        handle = RemovableHandle(self._post_hooks)
        self._post_hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node computes its gradients."""
        if self._node_pre_hooks is None:
            self._node_pre_hooks = HookDict()
        handle = RemovableHandle(self._node_pre_hooks)
        self._node_pre_hooks[handle.id] = fn
        return handle

    # -- tensor hooks, kept on the node that produces the tensor ------------
    def _add_tensor_hook(self, output_nr: int, fn: Callable) -> RemovableHandle:
        if self._pre_hooks is None:
            self._pre_hooks = {}
        hooks = self._pre_hooks.setdefault(output_nr, HookDict())
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def _add_retain(self, output_nr: int, tensor: Any) -> None:
        if self._retain is None:
            self._retain = {}
        self._retain[output_nr] = weakref.ref(tensor)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"


class AccumulateGrad(Node):
    """The node of a leaf tensor: adds incoming gradients into ``variable.grad``."""

    _node_name = "AccumulateGrad"

    def __init__(self, variable: Any) -> None:
        super().__init__()
        self.variable = variable
        self.next_functions = ()

    def apply(self, *grads: Any) -> tuple:
        # The engine handles leaves itself (hooks, capture for autograd.grad);
        # calling the node directly accumulates like the engine would.
        accumulate_into_leaf(self.variable, grads[0], create_graph=False)
        return ()


def edge_of(t: Any) -> tuple:
    """The graph edge for a tensor: (node that receives its gradient, output_nr)."""
    fn = t._grad_fn
    if fn is not None and t._base is not None:
        fn = t.grad_fn          # a view: the property may refresh a stale node
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        acc = t._accumulator
        if acc is None:
            acc = t._accumulator = AccumulateGrad(t)
        return (acc, 0)
    return (None, 0)


# ---------------------------------------------------------------------------
# Accumulating into a leaf's .grad (AccumulateGrad's job; the engine calls it too)
# ---------------------------------------------------------------------------
def accumulate_into_leaf(variable: Any, g: Any, create_graph: bool) -> None:
    """Add the gradient ``g`` into the leaf ``variable``'s ``.grad``.

    Args:
        variable: a leaf tensor that requires grad; ``variable._hooks`` are its
        tensor hooks (``register_hook``), ``variable._grad`` its ``.grad``.

        g: the gradient that reached it, of its shape.

        create_graph: whether backward records a graph (``create_graph=True``).

    First the hooks run on ``g`` (``run_tensor_hooks``: each may replace it;
    ``None`` at the end means nothing to add).  The first gradient becomes
    ``.grad``: detached from any graph and never sharing storage with a
    tensor someone else holds (unless ``create_graph``: then it keeps its
    graph).  A later one is added to it, without changing ``g``.  Example:
    two calls with ``[1., 2.]`` leave ``.grad == [2., 4.]``.
    """
    # Task 3.2: add g (after the leaf's hooks) into variable.grad.
    ### BEGIN SOLUTION
    g = run_tensor_hooks(variable._hooks, g)
    if g is None:
        return
    if variable._grad is None:
        if create_graph:
            variable._grad = g
        else:
            # .grad must not alias a tensor someone else holds, and is detached.
            g = g.detach()
            if (g._base is not None or g._storage is variable._storage
                    or not _obeys_layout_contract(g, variable)):
                g = _clone_like(g, variable)
            variable._grad = g
    elif create_graph or variable._grad.requires_grad:
        variable._grad = variable._grad + g
    else:
        # Neither side requires grad, so the in-place add records nothing.
        variable._grad.add_(g.detach())
    ### END SOLUTION


def _obeys_layout_contract(g: Any, variable: Any) -> bool:
    """Is ``g`` laid out as PyTorch promises ``.grad`` will be?

    The gradient of a dense leaf has the leaf's own strides (so the grad of
    a transposed parameter is transposed too, and an optimizer can walk
    both in step); any other leaf gets a contiguous gradient.
    """
    if is_non_overlapping_and_dense(variable._shape, variable._stride):
        return all(gs == vs for n, gs, vs in zip(variable._shape, g._stride, variable._stride)
                   if n != 1)
    return g.is_contiguous()


def _clone_like(g: Any, variable: Any) -> Any:
    """A copy of ``g`` that obeys the layout contract for ``variable``'s gradient."""
    dense = is_non_overlapping_and_dense(variable._shape, variable._stride)
    out = TensorBase._empty(g._shape, g.dtype, g.device, variable._stride if dense else None)
    g._backend.copy(g._operand(), out._operand())
    return out


def run_tensor_hooks(hooks: Any, g: Any) -> Any:
    if hooks:
        for fn in list(hooks.values()):
            new = fn(g)
            if new is not None:
                g = new
    return g


def freed_error() -> RuntimeError:
    return RuntimeError(_FREED_MESSAGE)

"""A tiny pytree: nested tuples, lists and dicts of tensors, flattened and rebuilt.

``torch.func`` transforms accept any nesting of containers (a model's
parameters as a dict, a pair of tensors as a tuple).  They work on the flat
list of leaves and rebuild the user's structure at the end::

    leaves, spec = tree_flatten({"w": w, "b": (b1, b2)})   # [w, b1, b2]
    tree_unflatten([2 * x for x in leaves], spec)          # same structure
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["tree_flatten", "tree_unflatten", "tree_map"]

# A spec is None for a leaf, or (container type, keys or None, child specs).
Spec = Any


def tree_flatten(tree: Any) -> tuple:
    """``(leaves, spec)``: the leaves of ``tree`` in order, and how to rebuild it."""
    leaves: list = []

    def walk(node: Any) -> Spec:
        if isinstance(node, (tuple, list)) and not hasattr(node, "_fields"):
            return (type(node), None, [walk(x) for x in node])
        if isinstance(node, tuple):                                  # a namedtuple
            return (type(node), None, [walk(x) for x in node])
        if isinstance(node, dict):
            keys = list(node)
            return (type(node), keys, [walk(node[k]) for k in keys])
        leaves.append(node)
        return None

    return leaves, walk(tree)


def tree_unflatten(leaves: list, spec: Spec) -> Any:
    """The structure ``spec`` describes, with ``leaves`` in place of the old leaves."""
    it = iter(leaves)

    def build(s: Spec) -> Any:
        if s is None:
            return next(it)
        kind, keys, children = s
        values = [build(c) for c in children]
        if keys is not None:
            return kind(zip(keys, values))
        if hasattr(kind, "_fields"):
            return kind(*values)
        return kind(values)

    return build(spec)


def tree_map(fn: Callable, tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def num_leaves(spec: Spec) -> int:
    if spec is None:
        return 1
    return sum(num_leaves(c) for c in spec[2])

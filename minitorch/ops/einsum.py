"""``einsum``: Einstein summation, built from permute, reshape and batched matmul.

``einsum('bij,bjk->bik', a, b)`` names each dimension with a letter.  Letters
that appear in the output are kept; the others are summed over.  We never
write a loop for it: each pair of operands becomes one batched matrix
product after sorting their letters into four groups::

    batch       in both operands and in the output      (b)
    contracted  in both operands, not in the output     (j)
    left/right  in one operand only, kept in the output (i / k)

    A -> (batch, left, contracted)      B -> (batch, contracted, right)
    A @ B -> (batch, left, right) -> permuted into the output's order

Letters that appear in only one operand and not in the output are summed
away first; a letter repeated inside one operand (``'ii->i'``) takes the
diagonal.  Because every step is a differentiable op, einsum has gradients
(and higher-order ones) for free.
"""

from __future__ import annotations

import math
from typing import Any

from ..tensor_base import TensorBase
from .linalg import matmul
from .registry import declare

__all__ = ["einsum"]


def _parse(equation: str, operands: tuple) -> tuple:
    equation = equation.replace(" ", "")
    if "->" in equation:
        lhs, rhs = equation.split("->")
    else:
        lhs, rhs = equation, None
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum(): more operands were provided than specified in the "
                         f"equation" if len(operands) > len(terms) else
                         "einsum(): fewer operands were provided than specified in the equation")
    used = set(c for c in equation if c.isalpha())
    spare = iter(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                 if c not in used)
    ell_letters: list = []
    new_terms = []
    for term, op in zip(terms, operands):
        if "..." in term:
            n_named = len(term.replace("...", ""))
            n_ell = op.dim() - n_named
            while len(ell_letters) < n_ell:
                ell_letters.insert(0, next(spare))
            term = term.replace("...", "".join(ell_letters[len(ell_letters) - n_ell:]))
        if len(term) != op.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(term)}) does not match the number of dimensions "
                               f"({op.dim()}) for operand {len(new_terms)}"
                               + ("" if "..." in equation else " and no ellipsis was given"))
        new_terms.append(term)
    if rhs is None:
        counts: dict = {}
        for t in new_terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        rhs = "".join(ell_letters) + "".join(sorted(c for c, n in counts.items()
                                                    if n == 1 and c not in ell_letters))
    else:
        rhs = rhs.replace("...", "".join(ell_letters))
    return new_terms, rhs


def _take_diagonals(t: TensorBase, term: str) -> tuple:
    """Collapse repeated letters within one operand to their diagonal."""
    while len(set(term)) != len(term):
        for i, c in enumerate(term):
            j = term.find(c, i + 1)
            if j != -1:
                t = t.diagonal(0, i, j)           # the diagonal becomes the last dim
                term = term[:i] + term[i + 1:j] + term[j + 1:] + c
                break
    return t, term


def _sum_out(t: TensorBase, term: str, keep: set) -> tuple:
    """Sum over letters not in ``keep``."""
    dims = tuple(i for i, c in enumerate(term) if c not in keep)
    if dims:
        t = t.sum(dims)
        term = "".join(c for c in term if c in keep)
    return t, term


def _contract(a: TensorBase, ta: str, b: TensorBase, tb: str, keep: set) -> tuple:
    """One pairwise step: returns the product and its letters."""
    batch = [c for c in ta if c in tb and c in keep]
    contracted = [c for c in ta if c in tb and c not in keep]
    left = [c for c in ta if c not in tb]
    right = [c for c in tb if c not in ta]
    sizes = {c: a._shape[i] for i, c in enumerate(ta)}
    for i, c in enumerate(tb):
        if c in sizes and sizes[c] != b._shape[i] and 1 not in (sizes[c], b._shape[i]):
            raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes "
                               f"(original->remapped): subscript {c} has size {sizes[c]} and "
                               f"{b._shape[i]}")
        sizes.setdefault(c, b._shape[i])

    def prod(letters, shape_of):
        return math.prod(shape_of[c] for c in letters)

    a_sizes = {c: a._shape[i] for i, c in enumerate(ta)}
    b_sizes = {c: b._shape[i] for i, c in enumerate(tb)}
    a3 = a.permute([ta.index(c) for c in batch + left + contracted])
    b3 = b.permute([tb.index(c) for c in batch + contracted + right])
    batch_shape = tuple(max(a_sizes[c], b_sizes[c]) for c in batch)
    a3 = a3.expand(batch_shape + a3._shape[len(batch):]) if batch else a3
    b3 = b3.expand(batch_shape + b3._shape[len(batch):]) if batch else b3
    n_batch = math.prod(batch_shape)     # named, not -1: a size may be 0
    a3 = a3.reshape((n_batch, prod(left, a_sizes), prod(contracted, a_sizes)))
    b3 = b3.reshape((n_batch, prod(contracted, b_sizes), prod(right, b_sizes)))
    out = matmul(a3, b3)
    out = out.reshape(batch_shape + tuple(a_sizes[c] for c in left)
                      + tuple(b_sizes[c] for c in right))
    return out, "".join(batch + left + right)


def einsum(equation: str, *operands: Any) -> TensorBase:
    """Einstein summation, e.g. ``einsum('ij,jk->ik', a, b)`` is ``a @ b``."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, rhs = _parse(equation, operands)
    for c in rhs:
        if not any(c in t for t in terms):
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation "
                               "for any input operand")
    items = []
    for op, term in zip(operands, terms):
        op, term = _take_diagonals(op, term)
        items.append((op, term))
    # Sum away letters that appear in exactly one operand and not in the output.
    for k, (op, term) in enumerate(items):
        others = set("".join(t for j, (_, t) in enumerate(items) if j != k)) | set(rhs)
        items[k] = _sum_out(op, term, others)
    result, term = items[0]
    for k in range(1, len(items)):
        op, t = items[k]
        later = set("".join(tt for _, tt in items[k + 1:])) | set(rhs)
        result, term = _contract(result, term, op, t, later)
    result, term = _sum_out(result, term, set(rhs))
    if term != rhs:
        result = result.permute([term.index(c) for c in rhs])
    return result


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(einsum, method=False)

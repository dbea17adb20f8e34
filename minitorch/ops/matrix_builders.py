"""Matrices built from other tensors: triangles, diagonals, blocks and products of shapes.

``tril``/``triu`` keep one triangle of the last two dims (a mask made from
two ``arange``s: element ``(i, j)`` is below diagonal ``k`` when
``j - i <= k``); ``diag``/``diag_embed``/``diagflat`` put a vector on a
diagonal or read one; ``block_diag``, ``kron``, ``vander`` and
``cartesian_prod`` arrange copies of their inputs.  Every op here is a
composition of existing differentiable ops (``where``, ``diagonal``,
``index_put``-style writes through ``diagonal`` views, ``cat``, products), so
autograd and ``create_graph=True`` come for free.
"""

from __future__ import annotations

from typing import Any

from ..dtype import int64
from ..tensor_base import TensorBase
from .creation import arange, zeros
from .elementwise import where
from .registry import declare
from .views import cat, stack

__all__ = ["tril", "triu", "tril_indices", "triu_indices", "diag", "diag_embed", "diagflat",
           "block_diag", "kron", "vander", "cartesian_prod"]


def _triangle_mask(x: TensorBase, diagonal: int, lower: bool) -> TensorBase:
    """``(rows, cols)`` bool mask: ``j - i <= diagonal`` (lower) or ``>= diagonal`` (upper)."""
    rows, cols = x._shape[-2:]
    i = arange(rows, device=x.device).unsqueeze(-1)
    j = arange(cols, device=x.device).unsqueeze(0)
    return (j - i <= diagonal) if lower else (j - i >= diagonal)


def _triangle(name: str, x: TensorBase, diagonal: int, lower: bool) -> TensorBase:
    if not isinstance(x, TensorBase):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    if x.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    mask = _triangle_mask(x, int(diagonal), lower)
    return where(mask, x, zeros((), dtype=x.dtype, device=x.device))


def tril(input: TensorBase, diagonal: int = 0) -> TensorBase:
    """The lower triangle of the last two dims (on and below ``diagonal``); the rest zeros."""
    return _triangle("tril", input, diagonal, True)


def triu(input: TensorBase, diagonal: int = 0) -> TensorBase:
    """The upper triangle of the last two dims (on and above ``diagonal``); the rest zeros."""
    return _triangle("triu", input, diagonal, False)


def _triangle_indices(row: int, col: int, offset: int, lower: bool, dtype: Any,
                      device: Any) -> TensorBase:
    i = arange(row, device=device).unsqueeze(-1).expand(row, col)
    j = arange(col, device=device).unsqueeze(0).expand(row, col)
    keep = (j - i <= offset) if lower else (j - i >= offset)
    # Row-major order, as PyTorch lists them.
    return stack([i[keep], j[keep]]).to(dtype or int64)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None, layout: Any = None) -> TensorBase:
    """The (2, N) coordinates of the lower triangle of a (row, col) matrix, row by row."""
    return _triangle_indices(row, col, offset, True, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None, layout: Any = None) -> TensorBase:
    """The (2, N) coordinates of the upper triangle of a (row, col) matrix, row by row."""
    return _triangle_indices(row, col, offset, False, dtype, device)


def diag_embed(input: TensorBase, offset: int = 0, dim1: int = -2, dim2: int = -1) -> TensorBase:
    """Each vector along the last dim of ``input`` put on diagonal ``offset`` of a new matrix.

    The matrix dims are ``dim1`` and ``dim2`` of the result.  Written as a
    ``where`` over a mask of the diagonal, so its gradient reads that diagonal back.
    """
    n = input._shape[-1] + abs(offset) if input.dim() else 1 + abs(offset)
    ndim = input.dim() + 1
    d1, d2 = dim1 % ndim, dim2 % ndim
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    i = arange(n, device=input.device).unsqueeze(-1)
    j = arange(n, device=input.device).unsqueeze(0)
    mask = (j - i) == offset
    # values[i, j] = input[..., min(i, j)] on the diagonal: pad the vector at the start
    # (offset < 0: rows below) or the end so that row i (offset>=0) or column j reads it.
    vec = input if input.dim() else input.reshape(1)
    pad = zeros(vec._shape[:-1] + (abs(offset),), dtype=vec.dtype, device=vec.device)
    padded = cat([vec, pad], -1) if offset else vec
    values = padded.unsqueeze(-1) if offset >= 0 else padded.unsqueeze(-2)
    out = where(mask, values, zeros((), dtype=vec.dtype, device=vec.device))
    # out has the matrix in its last two dims; move them to (d1, d2).
    lo, hi = sorted((d1, d2))
    out = out.movedim((-2, -1), (lo, hi))
    return out if d1 < d2 else out.transpose(lo, hi)


def diag(input: TensorBase, diagonal: int = 0) -> TensorBase:
    """A 1-D input becomes a square matrix with it on diagonal ``diagonal``; a 2-D input gives that diagonal."""
    if input.dim() == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.dim() == 2:
        return input.diagonal(diagonal).clone()
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " f"{input.dim()}D")


def diagflat(input: TensorBase, offset: int = 0) -> TensorBase:
    """``input`` flattened and put on diagonal ``offset`` of a square matrix."""
    return diag_embed(input.reshape(-1), offset, 0, 1)


def block_diag(*tensors: TensorBase) -> TensorBase:
    """The inputs (each 0-, 1- or 2-D) as blocks along the diagonal of one matrix."""
    if not tensors:
        return zeros((1, 0))
    from_2d = []
    for k, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {k} has {t.dim()} dimensions")
        from_2d.append(t.reshape(1, 1) if t.dim() == 0 else t.reshape(1, -1) if t.dim() == 1
                       else t)
    dt = from_2d[0].dtype
    for t in from_2d[1:]:
        dt = (t + zeros((), dtype=dt)).dtype if t.dtype is not dt else dt
    cols = sum(t._shape[1] for t in from_2d)
    rows, left = [], 0
    for t in from_2d:
        r, c = t._shape
        parts = [zeros((r, left), dtype=dt, device=t.device), t.to(dt),
                 zeros((r, cols - left - c), dtype=dt, device=t.device)]
        rows.append(cat(parts, 1))
        left += c
    return cat(rows, 0)


def kron(input: TensorBase, other: TensorBase) -> TensorBase:
    """The Kronecker product: every element of ``input`` times the whole of ``other``, tiled."""
    nd = max(input.dim(), other.dim())
    a = input.reshape((1,) * (nd - input.dim()) + input._shape)
    b = other.reshape((1,) * (nd - other.dim()) + other._shape)
    # a[..., i, ...] * b[..., j, ...] interleaved: shape (a0, b0, a1, b1, ...), then merged.
    a_shape, b_shape = [], []
    for sa, sb in zip(a._shape, b._shape):
        a_shape += [sa, 1]
        b_shape += [1, sb]
    out = a.reshape(a_shape) * b.reshape(b_shape)
    return out.reshape(tuple(sa * sb for sa, sb in zip(a._shape, b._shape)))


def vander(x: TensorBase, N: int | None = None, increasing: bool = False) -> TensorBase:
    """The Vandermonde matrix of a 1-D ``x``: columns ``x**(N-1), ..., x, 1`` (reversed if ``increasing``)."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    powers = arange(n, device=x.device)
    if not increasing:
        powers = powers.flip(0)
    base = x if x.dtype.is_floating_point else x.to(int64)
    return base.unsqueeze(-1) ** powers


def cartesian_prod(*tensors: TensorBase) -> TensorBase:
    """Every combination of one element from each 1-D input, as rows (like ``itertools.product``)."""
    if len(tensors) == 1:
        return tensors[0]
    k = len(tensors)
    cols = []
    for d, t in enumerate(tensors):
        shape = [1] * k
        shape[d] = t._shape[0]
        full = tuple(u._shape[0] for u in tensors)
        cols.append(t.reshape(shape).expand(full).reshape(-1))
    return stack(cols, 1)


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(block_diag, method=False)
declare(cartesian_prod, method=False)
declare(diag)
declare(diag_embed)
declare(diagflat)
declare(kron)
declare(tril, inplace=True)
declare(tril_indices, method=False)
declare(triu, inplace=True)
declare(triu_indices, method=False)
declare(vander, method=False)

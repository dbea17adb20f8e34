"""Ops that rearrange or repeat elements: ``rot90``, ``fliplr``, ``meshgrid``, ``repeat_interleave``, ...

Each is a composition of views (``flip``, ``transpose``, ``expand``,
``reshape``) and copies (``cat``, ``index_select``) that already have
gradients, so nothing here needs its own backward.
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any, Sequence

from ..dtype import int64
from ..layout import broadcast_shapes, normalize_dim
from ..tensor_base import TensorBase
from .creation import arange, tensor
from .index_ops import index_select
from .linalg import matmul
from .registry import declare
from .views import cat, flip

__all__ = ["broadcast_tensors", "meshgrid", "atleast_1d", "atleast_2d", "atleast_3d", "rot90",
           "fliplr", "flipud", "tensordot", "combinations", "repeat_interleave", "ravel",
           "hsplit", "vsplit", "dsplit", "dstack", "column_stack", "row_stack"]


def _tensors(args: tuple) -> list:
    """``f(a, b)`` and ``f([a, b])`` both mean the tensors ``a, b``."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return list(args[0])
    return list(args)


def broadcast_tensors(*tensors: TensorBase) -> tuple:
    """The inputs expanded (as views) to their common broadcast shape."""
    tensors = _tensors(tensors)
    shape = broadcast_shapes(*(t._shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


def meshgrid(*tensors: TensorBase, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-D inputs: output ``k`` varies along dim ``k`` (``'ij'``) or
    with the first two dims swapped (``'xy'``, as NumPy's default)."""
    tensors = _tensors(tensors)
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
    vecs = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(vecs) >= 2
    if swap:
        vecs[0], vecs[1] = vecs[1], vecs[0]
    shape = tuple(v._shape[0] for v in vecs)
    grids = []
    for k, v in enumerate(vecs):
        view = [1] * len(vecs)
        view[k] = -1
        grids.append(v.reshape(view).expand(shape))
    if swap:                               # built for (y, x, ...): hand back (x, y, ...)
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _atleast(args: tuple, n: int) -> Any:
    single = len(args) == 1 and isinstance(args[0], TensorBase)
    out = []
    for t in _tensors(args):
        if t.dim() >= n:
            out.append(t)
        elif n == 1:
            out.append(t.reshape(1))
        elif n == 2:
            out.append(t.reshape(1, -1) if t.dim() else t.reshape(1, 1))
        else:
            out.append(t.reshape(1, 1, 1) if t.dim() == 0 else
                       t.reshape(1, -1, 1) if t.dim() == 1 else t.unsqueeze(-1))
    return out[0] if single else tuple(out)


def atleast_1d(*tensors: TensorBase) -> Any:
    """Each input with at least 1 dim (a 0-d tensor becomes shape (1,))."""
    return _atleast(tensors, 1)


def atleast_2d(*tensors: TensorBase) -> Any:
    """Each input with at least 2 dims (a vector becomes a row)."""
    return _atleast(tensors, 2)


def atleast_3d(*tensors: TensorBase) -> Any:
    """Each input with at least 3 dims (as NumPy: (n,) -> (1, n, 1), (m, n) -> (m, n, 1))."""
    return _atleast(tensors, 3)


def rot90(input: TensorBase, k: int = 1, dims: Sequence[int] = (0, 1)) -> TensorBase:
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first towards the second."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = (normalize_dim(d, input.dim()) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return flip(input, d1).transpose(d0, d1)
    if k == 2:
        return flip(input, d0, d1)
    if k == 3:
        return flip(input, d0).transpose(d0, d1)
    return input.clone()


def fliplr(input: TensorBase) -> TensorBase:
    """Reverse the columns (dim 1)."""
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input: TensorBase) -> TensorBase:
    """Reverse the rows (dim 0)."""
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


def tensordot(a: TensorBase, b: TensorBase, dims: Any = 2, out: Any = None) -> TensorBase:
    """Sum of products over dims of ``a`` paired with dims of ``b``, as one matrix product.

    ``dims=k`` pairs the last ``k`` dims of ``a`` with the first ``k`` of
    ``b``; ``dims=([i, ...], [j, ...])`` names the pairs.  The contracted
    dims are moved together and flattened, so the work is one ``matmul``.
    """
    if isinstance(dims, TensorBase):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = list(dims[0]), list(dims[1])
        da = [da] if isinstance(da, int) else da
        db = [db] if isinstance(db, int) else db
    if len(da) != len(db):
        raise RuntimeError(f"both dimension lists should have same length")
    da = [normalize_dim(d, a.dim()) for d in da]
    db = [normalize_dim(d, b.dim()) for d in db]
    for i, j in zip(da, db):
        if a._shape[i] != b._shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a._shape[i]} in dim {i} and second has size {b._shape[j]} in "
                               f"dim {j}")
    free_a = [d for d in range(a.dim()) if d not in da]
    free_b = [d for d in range(b.dim()) if d not in db]
    k = math.prod(a._shape[d] for d in da)
    m = math.prod(a._shape[d] for d in free_a)      # named, not -1: a size may be 0
    n = math.prod(b._shape[d] for d in free_b)
    am = a.permute(free_a + da).reshape(m, k)
    bm = b.permute(db + free_b).reshape(k, n)
    shape = tuple(a._shape[d] for d in free_a) + tuple(b._shape[d] for d in free_b)
    return matmul(am, bm).reshape(shape)


def combinations(input: TensorBase, r: int = 2, with_replacement: bool = False) -> TensorBase:
    """The length-``r`` combinations of a 1-D input's elements, as rows (``itertools.combinations``)."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty((0,))
    pick = (itertools.combinations_with_replacement if with_replacement
            else itertools.combinations)
    rows = list(pick(range(input._shape[0]), r))
    if not rows:
        return input.new_empty((0, r))
    idx = tensor(rows, dtype=int64, device=input.device)
    return index_select(input, 0, idx.reshape(-1)).reshape(len(rows), r)


def repeat_interleave(input: TensorBase, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> TensorBase:
    """Each element (or slice along ``dim``) repeated ``repeats`` times in place: [1, 2] -> [1, 1, 2, 2].

    ``repeats`` is an int or a tensor with one count per element.  Called
    with only a tensor of counts, gives the indices repeated by them.
    """
    if repeats is None:                                   # repeat_interleave(counts)
        counts = input
        return repeat_interleave(arange(counts.numel(), device=counts.device), counts, 0)
    if dim is None:
        input, dim = input.reshape(-1), 0
    d = normalize_dim(dim, input.dim())
    n = input._shape[d]
    if isinstance(repeats, TensorBase):
        if repeats.dim() > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        counts = repeats.reshape(-1).tolist()
        if len(counts) == 1:
            counts = counts * n
        if len(counts) != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {len(counts)} and input.size({d}) = {n}")
    else:
        counts = [int(repeats)] * n
    if any(c < 0 for c in counts):
        raise RuntimeError("repeats can not be negative")
    positions = [i for i, c in enumerate(counts) for _ in range(c)]
    idx = tensor(positions, dtype=int64, device=input.device)
    return index_select(input, d, idx)


def ravel(input: TensorBase) -> TensorBase:
    """The elements as a 1-D tensor (a view when the layout allows)."""
    return input.reshape(-1)


def _split_along(name: str, input: TensorBase, sections: Any, dim: int, min_dim: int) -> tuple:
    if input.dim() < min_dim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, "
                           f"but got a tensor with {input.dim()} dimensions!")
    if isinstance(sections, int) and input._shape[dim] % sections:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                           f"size of the dimension {input._shape[dim]} is not divisible by the "
                           f"split_size {sections}!")
    return input.tensor_split(sections, dim)


def hsplit(input: TensorBase, indices_or_sections: Any) -> tuple:
    """Split along columns (dim 1; dim 0 for 1-D input), as NumPy's ``hsplit``."""
    return _split_along("hsplit", input, indices_or_sections, 1 if input.dim() > 1 else 0, 1)


def vsplit(input: TensorBase, indices_or_sections: Any) -> tuple:
    """Split along rows (dim 0)."""
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: TensorBase, indices_or_sections: Any) -> tuple:
    """Split along depth (dim 2)."""
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


def dstack(tensors: Sequence[TensorBase], *, out: Any = None) -> TensorBase:
    """Concatenate along dim 2 after making every input at least 3-D."""
    return cat(list(atleast_3d(list(tensors))), 2)


def column_stack(tensors: Sequence[TensorBase], *, out: Any = None) -> TensorBase:
    """Vectors become columns, then everything is concatenated along dim 1."""
    cols = [t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors]
    return cat(cols, 1)


def row_stack(tensors: Sequence[TensorBase], *, out: Any = None) -> TensorBase:
    """``vstack``: vectors become rows, then everything is concatenated along dim 0."""
    return cat(list(atleast_2d(list(tensors))), 0)


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(atleast_1d, method=False)
declare(atleast_2d, method=False)
declare(atleast_3d, method=False)
declare(broadcast_tensors, method=False)
declare(column_stack, method=False)
declare(combinations, method=False)
declare(dsplit)
declare(dstack, method=False)
declare(fliplr)
declare(flipud)
declare(hsplit)
declare(meshgrid, method=False)
declare(ravel)
declare(repeat_interleave)
declare(rot90)
declare(row_stack, method=False)
declare(tensordot, method=False)
declare(vsplit)

"""Planning a kernel call, the same for every device (host-side Python).

Before a backend launches a kernel it *plans* the call: merge the dims that
every operand walks in step, decide whether what is left is one run of
memory (the contiguous fast path) or needs the strided kernel, see a
gather's operands as rows, cut a scatter's work among threads so that no two
write one element, split a reduction's dims into kept and reduced ones.
None of that depends on the device, so both backends (``cpu/backend.py``,
``cuda/backend.py``) call the functions here and keep only what differs:
which kernel runs and how it is launched.

Some helpers take the backend's ``allocate`` and ``copy`` functions, to make
temporaries on the right device.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from ..layout import coalesce, contiguous_strides, is_contiguous, loop_plan, numel
from .operand import Operand
from .reduce_ops import ARGMAX, ARGMIN, identity

FLOAT16 = np.dtype(np.float16)


# ---------------------------------------------------------------------------
# Loops over strided operands
# ---------------------------------------------------------------------------
def plan(shape: tuple, *strides: tuple) -> tuple:
    """The loops of an elementwise kernel: ``(shape, (strides, ...))`` with dims merged.

    :func:`minitorch.layout.loop_plan` merges the dims that every operand
    walks in step and puts them in memory order; a single element becomes
    one loop of length 1.  Everything comes back as tuples of Python ints.
    """
    cshape, cstrides = loop_plan(shape, *strides)
    if not cshape:
        return (1,), tuple((1,) for _ in strides)
    return (tuple(int(n) for n in cshape),
            tuple(tuple(int(s) for s in st) for st in cstrides))


def one_run(shape: tuple, out_strides: tuple, *in_strides: tuple) -> bool:
    """Is a planned loop one run: output stride 1, each input stride 1 or 0 (a repeated value)?"""
    return len(shape) == 1 and out_strides[0] == 1 and all(s[0] in (0, 1) for s in in_strides)


def without(t: tuple, d: int) -> tuple:
    """``t`` with entry ``d`` removed."""
    return tuple(t[:d]) + tuple(t[d + 1:])


def rows_plan(shape: tuple, dim: int, strides: tuple) -> tuple | None:
    """``(outer, outer_stride, inner)`` if an operand is rows along ``dim``, else ``None``.

    The fast paths of ``index_select`` and ``index_add`` copy whole rows:
    they need the dims before ``dim`` to merge into one (``outer`` of them,
    ``outer_stride`` apart) and the dims after it to form one run of stride
    1 (``inner`` elements).
    """
    oshape, (ost,) = coalesce(shape[:dim], strides[:dim])
    ishape, (ist,) = coalesce(shape[dim + 1:], strides[dim + 1:])
    if len(oshape) > 1 or len(ishape) > 1 or (ishape and ist[0] != 1):
        return None
    return (oshape[0] if oshape else 1, ost[0] if oshape else 0,
            ishape[0] if ishape else 1)


def index_strides(ndim: int, dim: int) -> tuple:
    """Strides that read a 1-D index along ``dim`` and repeat it along every other dim."""
    return tuple(1 if d == dim else 0 for d in range(ndim))


def select_rows(src: Operand, dim: int, out: Operand) -> tuple | None:
    """``(outer, outer_stride, inner)`` when ``index_select`` can copy whole rows of ``src``
    into the contiguous ``out`` (see :func:`rows_plan`); else ``None``."""
    if not is_contiguous(out.shape, out.strides):
        return None
    return rows_plan(out.shape, dim, src.strides)


def select_as_gather(src: Operand, dim: int, idx: Any, out: Operand) -> tuple:
    """``index_select`` as a general gather: ``(source, index)`` operands over ``out``'s shape.

    The source is read with its own strides (the size along ``dim`` does not
    matter, only the stride), and the 1-D index is repeated along every
    other dim.
    """
    return (Operand(src.data, out.shape, src.strides, src.offset),
            Operand(idx, out.shape, index_strides(len(out.shape), dim), 0))


# ---------------------------------------------------------------------------
# float16: moved as bits, combined in float32
# ---------------------------------------------------------------------------
def as_bits(op: Operand) -> Operand:
    """float16 data seen as uint16: moving elements (gather, scatter 'set') needs no
    float16 arithmetic, which Numba does not have on the CPU."""
    if op.data.dtype == FLOAT16:
        return op._replace(data=op.data.view(np.uint16))
    return op


def through_float32(fn: Callable, tgt: Operand, src: Operand, allocate: Callable,
                    copy: Callable) -> None:
    """Run ``fn(tgt32, src32)``, a combining (add/multiply) scatter, on float32 copies of
    float16 operands, then copy the target back (rounding once, at the end)."""
    copies = []
    for op in (tgt, src):
        buf = allocate(numel(op.shape), np.dtype(np.float32))
        as_float32 = Operand(buf, op.shape, contiguous_strides(op.shape), 0)
        copy(op, as_float32)
        copies.append(as_float32)
    fn(*copies)
    copy(copies[0], tgt)


def flat_contiguous(op: Operand, allocate: Callable, copy: Callable) -> Any:
    """The elements of ``op`` as a flat contiguous buffer: a slice if possible, else a copy."""
    n = numel(op.shape)
    if is_contiguous(op.shape, op.strides):
        return op.data[op.offset: op.offset + n]
    tmp = allocate(n, op.data.dtype)
    copy(op, Operand(tmp, op.shape, contiguous_strides(op.shape), 0))
    return tmp


# ---------------------------------------------------------------------------
# Scatter: who writes what
# ---------------------------------------------------------------------------
def value_buckets(tasks: int, k: int, threads: int, bounds: Callable[[], tuple] | None) -> tuple:
    """``(lo, span, nbuckets)``: cut the index values into ranges for the scatter kernels.

    A scatter's independent tasks are its *lines* (see
    :func:`minitorch.backends.index_maps.owned`).  With fewer lines than
    ``threads``, each line is split further by ranges of index values, so
    that every thread has work and still no two write one element.
    ``bounds()`` returns the ``(min, max)`` of the index values (``None``:
    unknown, no split).
    """
    if tasks >= threads or k < 2 or bounds is None:
        return np.int64(0), np.int64(1), np.int64(1)
    lo, hi = bounds()
    span = hi - lo + 1
    nb = min(span, -(-threads // tasks))
    return np.int64(lo), np.int64(span), np.int64(nb)


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------
class ReducePlan(NamedTuple):
    """A reduction, planned: the kept dims (one output each) and the reduced dims, merged."""

    code: int               # the op code (reduce_ops)
    keep_shape: tuple
    keep_strides: tuple
    red_shape: tuple        # at least one dim: (1,) stride (0,) when nothing is reduced
    red_strides: tuple
    n_out: int
    n_red: int
    acc0: Any               # where accumulating ops start, float64 or int64


def plan_reduce(code: int, a: Operand, dims: tuple, memory_order: bool) -> ReducePlan:
    """Split ``a``'s dims into kept and reduced ones and merge what can be merged.

    ``memory_order``: an op that may meet its elements in any order (all but
    argmax and argmin, which return the *first* index) visits the reduced
    dims in memory order (largest stride outermost, a broadcast dim outside
    everything), so that ``x.T.sum()`` is one contiguous run, not a column
    walk.
    """
    keep = [d for d in range(len(a.shape)) if d not in dims]
    red = list(dims)
    if memory_order and code not in (ARGMAX, ARGMIN):
        red.sort(key=lambda d: -a.strides[d] if a.strides[d] else -np.inf)
    keep_shape, (keep_st,) = coalesce([a.shape[d] for d in keep], [a.strides[d] for d in keep])
    red_shape, (red_st,) = coalesce([a.shape[d] for d in red], [a.strides[d] for d in red])
    n_out, n_red = numel(keep_shape), numel(red_shape)
    if not red_shape:
        red_shape, red_st = ((1,) if n_red else (0,)), (0,)
    return ReducePlan(code, tuple(keep_shape), tuple(keep_st), tuple(red_shape), tuple(red_st),
                      n_out, n_red, identity(code, a.data.dtype.kind == "f"))

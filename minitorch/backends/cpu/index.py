"""CPU kernels for index ops: gather, scatter, masks, nonzero.

Every op that reads or writes "at positions named by another tensor"
reduces to one of two loops over an *iteration shape*:

* **gather** (read):   ``out[p] = src[src_position(p) + idx[p] * mult]``
* **scatter** (write): ``tgt[tgt_position(p) + idx[p] * mult] (op)= src[p]``

``src_position(p)`` is the usual strided position of the multi-index ``p``
with the *indexed* dimension's stride set to 0; the index value times
``mult`` (that dimension's stride) supplies the rest.  So ``gather``,
``index_select``, ``take``, ``embedding`` and advanced indexing ``x[idx]``
all run the same gather kernel: they only differ in how the backend builds
the operands (an ``index_select`` index has stride 0 everywhere except along
the indexed dim, and advanced indexing precomputes ``idx`` as storage
offsets with ``mult == 1``).

**No kernel checks its indices.**  Numba does not bounds-check array
accesses, so an index out of range would read or write outside the tensor.
The op layer therefore validates every index tensor first, with
:func:`index_bounds` (a min/max), and raises PyTorch's error before
any kernel runs.  Negative indices are wrapped (``i + size``) once, by
:func:`add_index_offsets`, so the kernels only ever see indices in range.

**Races.**  A gather only reads ``src``, so any split of the output among
threads is safe.  A scatter may write one target element several times
(``index = [0, 0]``), and two threads doing ``t[p] += v`` at once would lose
an update.  The scatter kernels therefore split the work only in ways that
give every target element a single owner: along dimensions that are *not*
indexed (two different "lines", positions in the other dims, never reach the
same element), and by *ranges of index values* (a task applies only the
entries whose index falls in its range, so equal indices always meet in the
same task).  Each task walks its entries in order, so duplicates accumulate
correctly and, for a plain copy, the last write wins as in PyTorch.

The counting ops (``masked_select``, ``nonzero``, ``masked_scatter``) need
the output position of each selected element.  They run in two passes:
count the selected elements of each chunk in parallel, turn the counts into
starting offsets (a prefix sum over the few chunks), then let each chunk fill
its own part of the output in parallel.
"""

import numpy as np
from numba import njit, prange

from ..index_maps import ADD, MUL, SET  # noqa: F401  (the scatter kernels' combine codes)
from . import odometer
from .bodies import index_maps

CHUNK = 16384      # elements per parallel task
BLOCK = 256        # columns per parallel task in the row kernels

_JIT = dict(cache=True, error_model="numpy")
_PARALLEL = dict(parallel=True, **_JIT)


# ---------------------------------------------------------------------------
# Index validation and preparation
# ---------------------------------------------------------------------------
@njit(**_JIT)
def index_bounds(idx):
    """``(min, max)`` of a non-empty 1-D int64 array."""
    return index_maps.min_max(idx, 0, idx.shape[0], 1)


@njit(**_PARALLEL)
def index_bounds_parallel(idx):
    """:func:`index_bounds` computed chunk by chunk in parallel."""
    n = idx.shape[0]
    nchunks = (n + CHUNK - 1) // CHUNK
    los = np.empty(nchunks, np.int64)
    his = np.empty(nchunks, np.int64)
    for c in prange(nchunks):
        los[c], his[c] = index_maps.min_max(idx, c * CHUNK, min(n, (c + 1) * CHUNK), 1)
    return los.min(), his.max()


@njit(**_JIT)
def add_index_offsets(acc, idx, size, stride, start, stop):
    """``acc[i] += wrap(idx[i]) * stride`` for ``i`` in ``start .. stop - 1``, where
    ``wrap(i) = i + size`` for negative ``i``.

    With ``acc`` zeroed and ``stride == 1`` this just wraps negative indices.
    Advanced indexing calls it once per index tensor to turn ``x[i, j]`` into
    storage offsets ``i * stride0 + j * stride1``.
    """
    for i in range(start, stop):
        acc[i] += index_maps.wrapped(idx[i], size) * stride


@njit(**_PARALLEL)
def add_index_offsets_parallel(acc, idx, size, stride):
    n = acc.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        add_index_offsets(acc, idx, size, stride, c * CHUNK, min(n, (c + 1) * CHUNK))


# ---------------------------------------------------------------------------
# Gather: out[p] = src[pos(p) + idx[p] * mult]
# ---------------------------------------------------------------------------
@njit(**_PARALLEL)
def gather_strided(src, s_pos, s_st, idx, i_pos, i_st, mult, out, o_pos, o_st, shape):
    """The general gather: any shape, any strides for all three operands.

    Walks the iteration ``shape`` in chunks of ``CHUNK`` elements (one
    parallel task each) with an odometer, like the strided elementwise
    kernels; the only difference is the extra ``idx[...] * mult`` term.
    """
    total = odometer.total(shape)
    last = shape.shape[0] - 1
    for c in prange((total + CHUNK - 1) // CHUNK):
        start = c * CHUNK
        stop = min(total, start + CHUNK)
        md = np.zeros(shape.shape[0], np.int64)
        ps, pi, po = odometer.start(start, shape, md, s_pos, s_st, i_pos, i_st, o_pos, o_st)
        i = start
        while i < stop:
            run = min(shape[last] - md[last], stop - i)
            ss, si, so = s_st[last], i_st[last], o_st[last]
            for j in range(run):
                out[po + j * so] = src[ps + j * ss + idx[pi + j * si] * mult]
            i += run
            ps, pi, po = odometer.advance(run, shape, md, s_st, i_st, o_st, ps, pi, po)


@njit(**_JIT)
def gather_rows(src, s_pos, s_outer, mult, idx, out, outer, k, inner, t0, t1):
    """Contiguous fast path of ``index_select``/``embedding``: copy whole rows.

    ``out`` is contiguous with shape ``(outer, k, inner)``; its row ``t =
    (o, r)`` is the ``inner`` consecutive elements of ``src`` starting at
    ``s_pos + o * s_outer + idx[r] * mult``.  Copies rows ``t0 .. t1 - 1``;
    each row is a plain memory copy.
    """
    for t in range(t0, t1):
        o = t // k
        r = t - o * k
        sp = s_pos + o * s_outer + idx[r] * mult
        op = t * inner
        for j in range(inner):
            out[op + j] = src[sp + j]


@njit(**_PARALLEL)
def gather_rows_parallel(src, s_pos, s_outer, mult, idx, out, outer, k, inner):
    """:func:`gather_rows` of every row, about ``CHUNK`` elements' worth of rows per task."""
    n = outer * k
    per = max(1, CHUNK // max(inner, 1))
    for c in prange((n + per - 1) // per):
        gather_rows(src, s_pos, s_outer, mult, idx, out, outer, k, inner, c * per,
                    min(n, (c + 1) * per))


# ---------------------------------------------------------------------------
# Scatter: tgt[pos(p) + idx[p] * mult] (op)= src[p]
# ---------------------------------------------------------------------------
@njit(**_PARALLEL)
def scatter_strided(op, tgt, t_pos, t_st, idx, i_pos, i_st, mult, src, s_pos, s_st, shape,
                    lo_val, span, nbuckets):
    """The general scatter; the *last* dim of ``shape`` is the indexed one.

    Parallel over "lines" (every position in the other dims) times
    ``nbuckets`` ranges of index values.  A line's task walks the indexed dim
    in order and applies only the entries whose index falls in its range
    ("owner computes").  No two tasks ever write the same element: different
    lines never meet (see the module docstring), and within a line each
    index value belongs to one range.  Each element still receives its
    updates in index order, so repeats add up and the last copy wins.
    With many lines ``nbuckets`` is 1; with few (a 1-D scatter) the buckets
    keep every core busy at the cost of each task reading all the indices.
    """
    ndim = shape.shape[0]
    last = ndim - 1
    k = shape[last]
    if k == 0:
        return
    lines = 1
    for d in range(last):
        lines *= shape[d]
    ts, si, ss = t_st[last], i_st[last], s_st[last]
    for task in prange(lines * nbuckets):
        line = task // nbuckets
        bucket = task - line * nbuckets
        pt, pi, ps = index_maps.line_positions(line, shape, t_pos, t_st, i_pos, i_st, s_pos,
                                               s_st)
        for j in range(k):      # in order: indices along a line may repeat
            v = idx[pi + j * si]
            if index_maps.owned(v, nbuckets, bucket, lo_val, span):
                p = pt + j * ts + v * mult
                tgt[p] = index_maps.combine(op, tgt[p], src[ps + j * ss])


@njit(**_PARALLEL)
def scatter_rows(op, tgt, t_pos, t_outer, mult, idx, src, outer, k, inner, lo_val, span,
                 nbuckets):
    """Contiguous fast path of ``index_add``/``index_copy`` (and embedding's backward).

    ``src`` is contiguous with shape ``(outer, k, inner)``; its row ``(o, r)``
    is combined into the ``inner`` consecutive target elements starting at
    ``t_pos + o * t_outer + idx[r] * mult``.  Tasks split the work by outer
    slice, by range of index values (as in :func:`scatter_strided`) and by
    block of columns; each walks the ``k`` rows in order, so repeated
    indices never race and are applied in order.
    """
    nblk = (inner + BLOCK - 1) // BLOCK
    per_outer = nbuckets * nblk
    for task in prange(outer * per_outer):
        o = task // per_outer
        rest = task - o * per_outer
        bucket = rest // nblk
        b = rest - bucket * nblk
        lo = b * BLOCK
        hi = min(inner, lo + BLOCK)
        for r in range(k):      # in order: rows may name the same target row
            v = idx[r]
            if index_maps.owned(v, nbuckets, bucket, lo_val, span):
                tp = t_pos + o * t_outer + v * mult
                sp = (o * k + r) * inner
                for j in range(lo, hi):
                    tgt[tp + j] = index_maps.combine(op, tgt[tp + j], src[sp + j])


# ---------------------------------------------------------------------------
# Masks: count, then fill
# ---------------------------------------------------------------------------
@njit(**_PARALLEL)
def chunk_starts(mask):
    """Output offset of each chunk's first selected element; the last entry is the total.

    ``starts[c]`` = number of true elements of ``mask`` before chunk ``c``.
    Counting is parallel; the prefix sum runs over one number per chunk.
    """
    n = mask.shape[0]
    nchunks = (n + CHUNK - 1) // CHUNK
    starts = np.zeros(nchunks + 1, np.int64)
    for c in prange(nchunks):
        starts[c + 1] = index_maps.count_true(mask, c * CHUNK, min(n, (c + 1) * CHUNK))
    for c in range(nchunks):
        starts[c + 1] += starts[c]
    return starts


@njit(**_PARALLEL)
def masked_compact(src, mask, starts, out):
    """``out = src[mask]`` (flat arrays): each chunk writes from its own start."""
    n = mask.shape[0]
    for c in prange(starts.shape[0] - 1):
        index_maps.compact(src, mask, c * CHUNK, min(n, (c + 1) * CHUNK), out, starts[c])


@njit(**_PARALLEL)
def masked_spread(tgt, mask, starts, source):
    """``tgt[mask] = source[:count]`` (flat arrays), the inverse of :func:`masked_compact`."""
    n = mask.shape[0]
    for c in prange(starts.shape[0] - 1):
        index_maps.spread(tgt, mask, c * CHUNK, min(n, (c + 1) * CHUNK), source, starts[c])


@njit(**_PARALLEL)
def masked_fill(tgt, mask, value):
    """``tgt[i] = value[0]`` wherever ``mask[i]`` (flat arrays of equal length)."""
    v = value[0]
    for i in prange(tgt.shape[0]):
        if mask[i]:
            tgt[i] = v


@njit(**_PARALLEL)
def nonzero_coords(mask, shape, starts, out):
    """Row ``r`` of ``out`` (count, ndim) = multi-index of the ``r``-th true element."""
    n = mask.shape[0]
    for c in prange(starts.shape[0] - 1):
        index_maps.write_coords(mask, shape, c * CHUNK, min(n, (c + 1) * CHUNK), out, starts[c])

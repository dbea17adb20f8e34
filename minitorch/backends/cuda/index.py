"""CUDA kernels for index ops: index bounds, gather, scatter, masks, nonzero.

The same two loops as ``cpu/index.py``, over an *iteration shape*:

* **gather** (read):   ``out[p] = src[src_position(p) + idx[p] * mult]``
* **scatter** (write): ``tgt[tgt_position(p) + idx[p] * mult] (op)= src[p]``

and the same rule: **no kernel checks its indices**.  A GPU thread that
reads out of bounds does not raise; it reads garbage or kills the context.
So every index is validated before launch: :func:`bounds_partial` computes
the minimum and maximum of an index tensor on the GPU and the op layer
raises PyTorch's error on the host before any gather or scatter runs.

**Scatter and races.**  Two threads doing ``t[p] += v`` at the same time can
lose an update.  Two remedies, one per combine op:

* ``add`` uses an **atomic** add (:func:`scatter_add_atomic`, one thread per
  source element): the hardware serialises the updates of one address.
  Fast, but the order of the additions (so the float rounding) varies from
  run to run, as in PyTorch's CUDA ``index_add``/``scatter_add``;
* ``set`` and ``multiply`` (no atomic multiply exists) use the CPU's
  **owner computes** scheme (:func:`scatter_owner`): one thread per "line"
  (position in the non-indexed dims) and range of index values; it walks
  its line's entries in order, so repeats apply in order and the last copy
  wins, exactly as on the CPU.

The counting ops (``masked_select``, ``nonzero``, ``masked_scatter``) run in
two passes, as on the CPU: count the true elements of each chunk, turn the
counts into starting offsets on the host (a prefix sum over a few numbers,
and the host needs the total anyway to allocate the result), then let each
chunk write its own part of the output.
"""

from numba import cuda

from .bodies import index_maps
from .launch import SIMULATOR, kernel

#: Elements per thread in the two-pass mask kernels.
CHUNK = 4 if SIMULATOR else 64


# ---------------------------------------------------------------------------
# Index validation and preparation
# ---------------------------------------------------------------------------
@kernel
def bounds_partial(idx, n, los, his):
    """Thread ``t`` writes the min and max of ``idx[t], idx[t + T], ...`` (``T`` = len(los))."""
    t = cuda.grid(1)
    if t < los.shape[0]:
        los[t], his[t] = index_maps.min_max(idx, t, n, los.shape[0])


@kernel
def add_index_offsets(acc, idx, size, stride):
    """``acc += wrap(idx) * stride`` with ``wrap(i) = i + size`` for negative ``i``."""
    for i in range(cuda.grid(1), acc.shape[0], cuda.gridsize(1)):
        acc[i] += index_maps.wrapped(idx[i], size) * stride


# ---------------------------------------------------------------------------
# Gather
# ---------------------------------------------------------------------------
@kernel
def gather_strided(src, s0, s_st, idx, i0, i_st, mult, out, o0, o_st, shape, n):
    """The general gather: any shape and strides; one thread per output element."""
    for e in range(cuda.grid(1), n, cuda.gridsize(1)):
        ps, pi, po = index_maps.positions3(e, shape, s_st, s0, i_st, i0, o_st, o0)
        out[po] = src[ps + idx[pi] * mult]


@kernel
def gather_rows(src, s0, s_outer, mult, idx, out, outer, k, inner):
    """Contiguous fast path of ``index_select``/``embedding``: whole rows.

    ``out`` is contiguous ``(outer, k, inner)``; its row ``(o, r)`` is the
    ``inner`` consecutive elements of ``src`` from ``s0 + o*s_outer +
    idx[r]*mult``.  One thread per output element, so neighbouring threads
    copy neighbouring elements of a row.
    """
    for e in range(cuda.grid(1), outer * k * inner, cuda.gridsize(1)):
        row = e // inner
        j = e - row * inner
        o = row // k
        r = row - o * k
        out[e] = src[s0 + o * s_outer + idx[r] * mult + j]


# ---------------------------------------------------------------------------
# Scatter
# ---------------------------------------------------------------------------
@kernel
def scatter_add_atomic(tgt, t0, t_st, idx, i0, i_st, mult, src, s0, s_st, shape, n):
    """``tgt[pos(p) + idx[p] * mult] += src[p]`` with atomic adds, one thread per ``p``."""
    for e in range(cuda.grid(1), n, cuda.gridsize(1)):
        pt, pi, ps = index_maps.positions3(e, shape, t_st, t0, i_st, i0, s_st, s0)
        cuda.atomic.add(tgt, pt + idx[pi] * mult, src[ps])


@kernel
def scatter_owner(op, tgt, t0, t_st, idx, i0, i_st, mult, src, s0, s_st, shape, lines,
                  lo_val, span, nbuckets):
    """Owner-computes scatter (``set``/``multiply``); the *last* dim of ``shape`` is indexed.

    ``shape`` holds the other dims (``lines`` positions in all) followed by
    ``k``, the length of the indexed dim.  Thread ``task`` = (line, value
    bucket) walks its line's ``k`` entries in order and applies those whose
    index falls in its bucket, as ``cpu/index.py::scatter_strided`` does.
    """
    last = len(shape) - 1
    k = shape[last]
    ts, si, ss = t_st[last], i_st[last], s_st[last]
    for task in range(cuda.grid(1), lines * nbuckets, cuda.gridsize(1)):
        line = task // nbuckets
        bucket = task - line * nbuckets
        pt, pi, ps = index_maps.line_positions(line, shape, t0, t_st, i0, i_st, s0, s_st)
        for j in range(k):      # in order: indices along a line may repeat
            v = idx[pi + j * si]
            if index_maps.owned(v, nbuckets, bucket, lo_val, span):
                p = pt + j * ts + v * mult
                tgt[p] = index_maps.combine(op, tgt[p], src[ps + j * ss])


# ---------------------------------------------------------------------------
# Masks: count per chunk, prefix sum on the host, then fill
# ---------------------------------------------------------------------------
@kernel
def chunk_counts(mask, n, counts):
    """``counts[c]`` = number of true elements in chunk ``c`` of ``mask``."""
    for c in range(cuda.grid(1), counts.shape[0], cuda.gridsize(1)):
        counts[c] = index_maps.count_true(mask, c * CHUNK, min(n, (c + 1) * CHUNK))


@kernel
def masked_compact(src, mask, n, starts, out):
    """``out = src[mask]``: chunk ``c`` writes from ``starts[c]``."""
    for c in range(cuda.grid(1), starts.shape[0] - 1, cuda.gridsize(1)):
        index_maps.compact(src, mask, c * CHUNK, min(n, (c + 1) * CHUNK), out, starts[c])


@kernel
def masked_spread(tgt, mask, n, starts, source):
    """``tgt[mask] = source[:count]``, the inverse of :func:`masked_compact`."""
    for c in range(cuda.grid(1), starts.shape[0] - 1, cuda.gridsize(1)):
        index_maps.spread(tgt, mask, c * CHUNK, min(n, (c + 1) * CHUNK), source, starts[c])


@kernel
def masked_fill(tgt, mask, value):
    """``tgt[i] = value`` wherever ``mask[i]`` (flat arrays of one length)."""
    for i in range(cuda.grid(1), tgt.shape[0], cuda.gridsize(1)):
        if mask[i]:
            tgt[i] = value


@kernel
def nonzero_coords(mask, n, shape, starts, out):
    """Row ``r`` of ``out`` (count, ndim) = the multi-index of the ``r``-th true element."""
    for c in range(cuda.grid(1), starts.shape[0] - 1, cuda.gridsize(1)):
        index_maps.write_coords(mask, shape, c * CHUNK, min(n, (c + 1) * CHUNK), out, starts[c])

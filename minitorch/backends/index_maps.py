"""Index arithmetic shared by the kernels of every device.

Where does element ``i`` of a strided tensor live?  Which input pixel does
column ``(c, i, j)`` of an im2col matrix read?  Which thread may write the
target element that index value ``v`` names?  These are small pieces of
integer arithmetic that the CPU and the GPU kernels need alike; they are
written once here, as plain Python, and compiled by each device (see
:mod:`minitorch.backends.shared_bodies`).  Shapes and strides may be tuples
(the GPU passes them by value with the launch) or 1-D int64 arrays (the CPU):
``len(shape)`` and ``shape[d]`` work for both.
"""

from __future__ import annotations

import math
import types

import numpy as np

from .. import layout

#: The most dims a multi-index has here (PyTorch's CUDA kernels allow 25): the size of
#: the scratch index.  The CUDA backend refuses more (``cuda/backend.py``); on the CPU the
#: bodies below check it.
MAX_DIMS = 32

#: Where a body gets its scratch multi-index: ``device.local.array(MAX_DIMS, np.int64)``,
#: spelled as in ``numba.cuda``.  Here and on the CPU it is NumPy's ``empty``; the GPU's
#: bodies get the ``numba.cuda`` module itself (see cuda/bodies.py): an array of the
#: thread's own, which the compiler keeps in registers.
device = types.ModuleType("device", "the device's scratch arrays (numba.cuda on the GPU)")
device.local = types.ModuleType("local", "scratch arrays of a kernel body")
device.local.array = np.empty


# ---------------------------------------------------------------------------
# Flat element number -> memory positions.  Written with the course's layout
# functions, the students' own: layout.to_index (task 1.2) finds the
# multi-index of element i, layout.index_to_position (task 1.1) the position
# it reads in each operand.  So the engine's strided kernels run the
# student's index arithmetic, and this module shows none of it.
# ---------------------------------------------------------------------------
def _check_dims(ndim):
    """Refuse a shape whose multi-index does not fit the scratch index."""
    if ndim > MAX_DIMS:
        raise ValueError("index_maps: more than MAX_DIMS (32) dims in one kernel")


def position(i, shape, strides, pos):
    """Memory position of element ``i`` (row-major over ``shape``): ``pos + sum(idx * strides)``.

    ``idx`` is the multi-index of element ``i``: :func:`minitorch.layout.to_index`.
    """
    _check_dims(len(shape))
    idx = device.local.array(MAX_DIMS, np.int64)[:len(shape)]
    layout.to_index(i, shape, idx)
    return layout.index_to_position(idx, strides, pos)


def positions2(i, shape, a_st, a0, b_st, b0):
    """:func:`position` of element ``i`` in two operands at once (one multi-index)."""
    _check_dims(len(shape))
    idx = device.local.array(MAX_DIMS, np.int64)[:len(shape)]
    layout.to_index(i, shape, idx)
    return layout.index_to_position(idx, a_st, a0), layout.index_to_position(idx, b_st, b0)


def positions3(i, shape, a_st, a0, b_st, b0, c_st, c0):
    """:func:`position` of element ``i`` in three operands at once."""
    _check_dims(len(shape))
    idx = device.local.array(MAX_DIMS, np.int64)[:len(shape)]
    layout.to_index(i, shape, idx)
    return (layout.index_to_position(idx, a_st, a0), layout.index_to_position(idx, b_st, b0),
            layout.index_to_position(idx, c_st, c0))


def positions4(i, shape, a_st, a0, b_st, b0, c_st, c0, d_st, d0):
    """:func:`position` of element ``i`` in four operands at once."""
    _check_dims(len(shape))
    idx = device.local.array(MAX_DIMS, np.int64)[:len(shape)]
    layout.to_index(i, shape, idx)
    return (layout.index_to_position(idx, a_st, a0), layout.index_to_position(idx, b_st, b0),
            layout.index_to_position(idx, c_st, c0), layout.index_to_position(idx, d_st, d0))


# ---------------------------------------------------------------------------
# Index tensors: validation and negative indices
# ---------------------------------------------------------------------------
def min_max(idx, start, stop, step):
    """``(min, max)`` of ``idx[start], idx[start + step], ...`` below ``stop`` (at least one)."""
    lo = idx[start]
    hi = idx[start]
    for i in range(start + step, stop, step):
        v = idx[i]
        if v < lo:
            lo = v
        if v > hi:
            hi = v
    return lo, hi


def wrapped(v, size):
    """A negative index counts from the end: ``v + size`` for ``v < 0`` (checked before)."""
    return v + size if v < 0 else v


# ---------------------------------------------------------------------------
# Scatter: tgt[pos(p) + idx[p] * mult] (op)= src[p]
# ---------------------------------------------------------------------------
# Combine op codes.
SET = 0
ADD = 1
MUL = 2
MAX = 3          # scatter_reduce(..., "amax"): NaN wins, as in PyTorch
MIN = 4          # scatter_reduce(..., "amin")

#: The op names the backends accept (``backend.scatter("add", ...)``).
SCATTER_CODES = {"set": SET, "add": ADD, "multiply": MUL, "amax": MAX, "amin": MIN}


def combine(op, old, new):
    """The target's new value: ``new`` (set), ``old + new``, ``old * new``, the max or the min."""
    if op == ADD:
        return old + new
    if op == MUL:
        return old * new
    if op == MAX:
        return new if (new > old or new != new) else old
    if op == MIN:
        return new if (new < old or new != new) else old
    return new


def owned(v, nbuckets, bucket, lo_val, span):
    """Does the task holding value bucket ``bucket`` own index value ``v``?

    A scatter may write one target element several times (``index = [0,
    0]``), and two threads doing ``t[p] += v`` at once would lose an update.
    So the index values ``[lo_val, lo_val + span)`` are cut into
    ``nbuckets`` ranges, and a task applies only the entries whose value
    falls in its range ("owner computes"): equal values always land in the
    same range, so the task owning a range is the only one writing the
    target elements those values name.
    """
    if nbuckets == 1:
        return True
    first = lo_val + bucket * span // nbuckets
    stop = lo_val + (bucket + 1) * span // nbuckets
    return first <= v < stop


def line_positions(line, shape, t0, t_st, i0, i_st, s0, s_st):
    """Start positions in target, index and source of scatter line ``line``.

    A scatter's iteration shape ends with the indexed dim; a *line* is one
    position in all the other dims (row-major over ``shape[:-1]``), and its
    entries run along the indexed dim.  Two different lines never reach the
    same target element.  The line's multi-index over ``shape[:-1]`` is
    :func:`minitorch.layout.to_index` of ``line``.
    """
    _check_dims(len(shape))
    idx = device.local.array(MAX_DIMS, np.int64)[:len(shape) - 1]
    layout.to_index(line, shape[:-1], idx)
    return (layout.index_to_position(idx, t_st[:-1], t0),
            layout.index_to_position(idx, i_st[:-1], i0),
            layout.index_to_position(idx, s_st[:-1], s0))


# ---------------------------------------------------------------------------
# Masks, a chunk at a time: count the true elements of each chunk, turn the
# counts into starting offsets (a prefix sum over the few chunks), then let
# each chunk write its own part of the output.
# ---------------------------------------------------------------------------
def count_true(mask, start, stop):
    """How many of ``mask[start:stop]`` are true."""
    count = 0
    for i in range(start, stop):
        if mask[i]:
            count += 1
    return count


def compact(src, mask, start, stop, out, w):
    """``out[w:] = src[start:stop][mask[start:stop]]``: the selected elements, in order."""
    for i in range(start, stop):
        if mask[i]:
            out[w] = src[i]
            w += 1


def spread(tgt, mask, start, stop, source, r):
    """``tgt[start:stop][mask[start:stop]] = source[r:]``, the inverse of :func:`compact`."""
    for i in range(start, stop):
        if mask[i]:
            tgt[i] = source[r]
            r += 1


def write_coords(mask, shape, start, stop, out, r):
    """Rows ``r, r + 1, ...`` of ``out`` = the multi-indices of the true ``mask[start:stop]``
    (each one :func:`minitorch.layout.to_index`)."""
    for i in range(start, stop):
        if mask[i]:
            layout.to_index(i, shape, out[r])
            r += 1


# ---------------------------------------------------------------------------
# Convolution and pooling: which input pixel an output position reads.
# Along one spatial dim, output ``o`` at kernel offset ``k`` reads input
# ``o * stride - pad + k * dilation``; outside ``[0, size)`` is padding.
# ---------------------------------------------------------------------------
def source(o, k, stride, pad, dil, size):
    """Input coordinate read by output ``o`` at kernel offset ``k``, or -1 if padding."""
    v = o * stride - pad + k * dil
    return v if 0 <= v < size else -1


def target(v, k, stride, pad, dil, out_size):
    """Output coordinate whose kernel offset ``k`` reads input ``v``, or -1 if none.

    The inverse of :func:`source`: ``v = o * stride - pad + k * dil`` solved
    for ``o``, which must be a whole number in ``[0, out_size)``.
    """
    t = v + pad - k * dil
    if t < 0 or t % stride != 0:
        return -1
    o = t // stride
    return o if o < out_size else -1


def window_max(x, b, ch, y, xo, kh, kw, sh, sw, ph, pw, dh, dw):
    """Max over the pooling window of output ``(y, xo)`` of plane ``(b, ch)`` of ``x``.

    Args:
        x: the input, shape ``(N, C, H, W)``; ``b``, ``ch`` pick one plane of it.

        y, xo: the output position whose window is searched.

        kh, kw, sh, sw, ph, pw, dh, dw: the window's size, stride, padding and
        dilation along the height and the width (:func:`source` maps an
        output position and a tap of the window to an input row or column).

    Returns:
        ``(value, flat index iy * W + ix of the winner)``.  Padding positions
        never win (they count as -inf); among equal values the first in
        row-major order wins; a NaN wins, like PyTorch (the first NaN met along a
        row of the window stays the winner of that row).

    Example: the 2x2 window at (0, 0) of ``[[1, 5], [3, 4]]`` gives ``(5.0, 1)``.
    """
    h = x.shape[2]
    w = x.shape[3]
    best = -math.inf
    best_i = -1
    # Task 4.4: the largest value of one pooling window and where it is in its plane,
    # with PyTorch's rules for padding, ties and NaN.
    ### BEGIN SOLUTION
    for i in range(kh):
        iy = source(y, i, sh, ph, dh, h)
        if iy < 0:
            continue
        for j in range(kw):
            ix = source(xo, j, sw, pw, dw, w)
            if ix < 0:
                continue
            v = x[b, ch, iy, ix]
            if best_i == -1 or v > best or v != v:
                best = v
                best_i = iy * w + ix
                if v != v:
                    break
    ### END SOLUTION
    return best, best_i

"""CPU kernels for reductions (sum, prod, max, min, argmax, argmin, all, any).

The caller has already split the input's dimensions into two groups, each
with its own shape and strides: the *kept* dims (one output element per kept
index) and the *reduced* dims (folded into that output element)::

    x: (4, 5, 6), reduce dims (1,)  ->  kept (4, 6) with strides (30, 1)
                                        reduced (5,) with stride (6,)

Each output element is the fold of its reduced elements.  When there are
few outputs but many elements per output (``x.sum()`` of a big tensor has
one output), one task per output would leave cores idle, so each output's
reduced range is cut into ``nsplit`` segments that run in parallel, and the
partial results are combined at the end.

Accumulators are wider than the data: float sums run in float64 and integer
sums in int64, which is what ``acc0`` (the starting value) sets.
"""

import numpy as np
from numba import njit, prange

SUM = 0
PROD = 1
MAX = 2
MIN = 3
ARGMAX = 4
ARGMIN = 5
ALL = 6
ANY = 7
NANSUM = 8

_SPLIT_GRAIN = 32768   # reduced elements per parallel segment when splitting


@njit(inline="always", cache=True)
def _step(op, acc, acc_i, v, r, first):
    """Fold value ``v`` (at reduced index ``r``) into ``(acc, acc_i)``."""
    if op == SUM:
        acc += v
    elif op == NANSUM:
        if v == v:
            acc += v
    elif op == PROD:
        acc *= v
    elif op == MAX or op == ARGMAX:
        # NaN wins and stays: PyTorch's max propagates NaN.
        if first or (acc == acc and (v != v or v > acc)):
            acc = v
            acc_i = r
    elif op == MIN or op == ARGMIN:
        if first or (acc == acc and (v != v or v < acc)):
            acc = v
            acc_i = r
    elif op == ALL:
        if v == 0:
            acc = 0
    elif op == ANY:
        if v != 0:
            acc = 1
    return acc, acc_i


@njit(inline="always", cache=True)
def _combine(op, acc, acc_i, v, vi):
    """Merge two partial results; ``(acc, acc_i)`` comes from earlier indices."""
    if op == SUM or op == NANSUM:
        return acc + v, acc_i
    elif op == PROD:
        return acc * v, acc_i
    elif op == MAX or op == ARGMAX:
        if acc == acc and (v != v or v > acc):
            return v, vi
        return acc, acc_i
    elif op == MIN or op == ARGMIN:
        if acc == acc and (v != v or v < acc):
            return v, vi
        return acc, acc_i
    elif op == ALL:
        return min(acc, v), acc_i
    elif op == ANY:
        return max(acc, v), acc_i
    return acc, acc_i


@njit(parallel=True, cache=True)
def reduce_strided(op, x, x_pos, keep_shape, keep_st, red_shape, red_st, nsplit, acc0,
                   out, out_idx):
    """Reduce ``x`` over the reduced dims into ``out`` (and indices into ``out_idx``).

    ``out`` and ``out_idx`` are contiguous, one element per kept index.
    """
    n_out = 1
    for d in range(keep_shape.shape[0]):
        n_out *= keep_shape[d]
    n_red = 1
    for d in range(red_shape.shape[0]):
        n_red *= red_shape[d]
    nred_dims = red_shape.shape[0]
    seg = (n_red + nsplit - 1) // nsplit
    part = np.full(n_out * nsplit, acc0)
    part_i = np.zeros(n_out * nsplit, np.int64)
    part_n = np.zeros(n_out * nsplit, np.int64)
    for t in prange(n_out * nsplit):
        o = t // nsplit
        s = t - o * nsplit
        r0 = s * seg
        r1 = min(n_red, r0 + seg)
        if r0 >= r1:
            continue
        # Position of the first reduced element of output o.
        pos = x_pos
        rem = o
        for d in range(keep_shape.shape[0] - 1, -1, -1):
            pos += (rem % keep_shape[d]) * keep_st[d]
            rem //= keep_shape[d]
        idx = np.zeros(max(nred_dims, 1), np.int64)
        rem = r0
        for d in range(nred_dims - 1, -1, -1):
            idx[d] = rem % red_shape[d]
            rem //= red_shape[d]
            pos += idx[d] * red_st[d]
        acc = acc0
        acc_i = r0
        r = r0
        last = nred_dims - 1
        inner_n = red_shape[last] if nred_dims > 0 else 1
        inner_st = red_st[last] if nred_dims > 0 else 0
        while r < r1:
            start_j = idx[last] if nred_dims > 0 else 0
            run = min(inner_n - start_j, r1 - r)
            for j in range(run):
                acc, acc_i = _step(op, acc, acc_i, x[pos + j * inner_st], r + j, r + j == r0)
            r += run
            pos += run * inner_st
            if nred_dims > 0:
                idx[last] += run
                d = last
                while d > 0 and idx[d] == red_shape[d]:
                    pos -= red_shape[d] * red_st[d]
                    idx[d] = 0
                    d -= 1
                    idx[d] += 1
                    pos += red_st[d]
        part[t] = acc
        part_i[t] = acc_i
        part_n[t] = r1 - r0
    for o in prange(n_out):
        acc = part[o * nsplit]
        acc_i = part_i[o * nsplit]
        for s in range(1, nsplit):
            t = o * nsplit + s
            if part_n[t] > 0:
                acc, acc_i = _combine(op, acc, acc_i, part[t], part_i[t])
        out[o] = acc
        out_idx[o] = acc_i


def plan_split(n_out: int, n_red: int, threads: int) -> int:
    """How many parallel segments to cut each output's reduction into."""
    if n_out >= 4 * threads or n_red < 2 * _SPLIT_GRAIN:
        return 1
    return int(min(n_red // _SPLIT_GRAIN, 8 * threads))


CUMSUM = 0
CUMPROD = 1


@njit(parallel=True, cache=True)
def scan_rows(op, x, out, acc0):
    """Running sum (op 0) or product (op 1) along each row of 2-D contiguous arrays."""
    for r in prange(x.shape[0]):
        acc = acc0
        for j in range(x.shape[1]):
            if op == CUMSUM:
                acc += x[r, j]
            else:
                acc *= x[r, j]
            out[r, j] = acc


@njit(parallel=True, cache=True)
def sum_rows(x, pos, n_red, red_stride, n_out, out):
    """Sum ``n_red`` rows of ``n_out`` contiguous elements, ``red_stride`` apart.

    The reduced dim has a large stride (``x.sum(0)`` of a matrix), so walking
    down each column would jump through memory.  Instead each task takes a
    block of outputs and adds whole rows into float64 sums: every read is
    contiguous and the inner loop vectorises.
    """
    block = 1024
    for b in prange((n_out + block - 1) // block):
        start = b * block
        stop = min(n_out, start + block)
        acc = np.zeros(stop - start, np.float64)
        for r in range(n_red):
            row = pos + r * red_stride + start
            for o in range(stop - start):
                acc[o] += x[row + o]
        for o in range(stop - start):
            out[start + o] = acc[o]

"""CUDA kernels for reductions and cumulative sums/products.

The plan is the CPU's (``cpu/reduce.py``): the input's dims are split into
*kept* dims (one output per kept index) and *reduced* dims, and each output
folds its reduced elements.  When there are few outputs and many elements
each, one thread per output would leave the GPU idle, so each output's
reduction is cut into ``nsplit`` parts that run on different threads, and
a second kernel combines the parts.  Two launches:

1. :func:`reduce_partial`: thread ``t`` = (output ``o``, part ``s``) folds
   the reduced elements ``r = s, s + nsplit, s + 2*nsplit, ...`` into
   ``part[t]`` (and the position of the chosen element into ``part_i[t]``).
   Interleaving the parts, instead of giving each a contiguous segment as
   the CPU does, makes neighbouring threads read neighbouring elements.
2. :func:`reduce_combine`: one thread per output folds its ``nsplit`` parts.

With ``nsplit == 1`` the first kernel writes the outputs directly.

Because the parts interleave, "the first maximum wins" (``argmax``) needs
the combine step to break ties by index, which the CPU's in-order combine
gets for free.  Sums accumulate in float64 (int64 for integers), as on the
CPU; only the order of the additions differs.
"""

from numba import cuda

SUM = 0
PROD = 1
MAX = 2
MIN = 3
ARGMAX = 4
ARGMIN = 5
ALL = 6
ANY = 7
NANSUM = 8


@cuda.jit(device=True)
def _better(op, acc, acc_i, v, vi):
    """True if ``(v, vi)`` beats ``(acc, acc_i)`` for max/min: NaN wins, then ties by index."""
    v_nan = v != v
    acc_nan = acc != acc
    if v_nan or acc_nan:
        if v_nan and acc_nan:
            return vi < acc_i
        return v_nan
    if v == acc:
        return vi < acc_i
    if op == MAX or op == ARGMAX:
        return v > acc
    return v < acc


@cuda.jit(device=True)
def _fold(op, acc, acc_i, v, vi, first):
    """Fold value ``v`` (reduced index ``vi``) into ``(acc, acc_i)``."""
    if op == SUM:
        acc += v
    elif op == NANSUM:
        if v == v:
            acc += v
    elif op == PROD:
        acc *= v
    elif op == ALL:
        if v == 0:
            acc = 0
    elif op == ANY:
        if v != 0:
            acc = 1
    elif first or _better(op, acc, acc_i, v, vi):
        acc = v
        acc_i = vi
    return acc, acc_i


@cuda.jit(device=True)
def _position(i, shape, st, pos):
    for d in range(len(shape) - 1, -1, -1):
        n = shape[d]
        pos += (i % n) * st[d]
        i //= n
    return pos


@cuda.jit(cache=True)
def reduce_partial(op, x, x0, keep_shape, keep_st, red_shape, red_st, n_out, n_red, nsplit,
                   acc0, part, part_i):
    """``part[o * nsplit + s]`` = fold of the elements ``s, s + nsplit, ...`` of output ``o``.

    ``part_i`` gets the reduced index of the chosen element (max/min), or
    -1 where the part had no elements.
    """
    for t in range(cuda.grid(1), n_out * nsplit, cuda.gridsize(1)):
        o = t // nsplit
        s = t - o * nsplit
        base = _position(o, keep_shape, keep_st, x0)
        acc = acc0
        acc_i = -1
        for r in range(s, n_red, nsplit):
            acc, acc_i = _fold(op, acc, acc_i, x[_position(r, red_shape, red_st, base)], r,
                               r == s)
            if op != MAX and op != MIN and op != ARGMAX and op != ARGMIN:
                acc_i = r
        part[t] = acc
        part_i[t] = acc_i


@cuda.jit(cache=True)
def reduce_combine(op, part, part_i, nsplit, n_out, out, out_idx):
    """Fold each output's ``nsplit`` parts (parts with ``part_i == -1`` are empty)."""
    for o in range(cuda.grid(1), n_out, cuda.gridsize(1)):
        acc = part[o * nsplit]
        acc_i = part_i[o * nsplit]
        for s in range(1, nsplit):
            t = o * nsplit + s
            vi = part_i[t]
            if vi < 0:
                continue
            v = part[t]
            if op == SUM or op == NANSUM:
                acc += v
            elif op == PROD:
                acc *= v
            elif op == ALL:
                acc = min(acc, v)
            elif op == ANY:
                acc = max(acc, v)
            elif _better(op, acc, acc_i, v, vi):
                acc = v
                acc_i = vi
        out[o] = acc
        out_idx[o] = acc_i


CUMSUM = 0
CUMPROD = 1


@cuda.jit(cache=True)
def scan_rows(op, x, out, acc0):
    """Running sum (op 0) or product (op 1) along each row: one thread per row.

    A row is scanned in order by its thread, as on the CPU (a parallel scan
    within a row, such as Blelloch's, would pay off only for long rows).
    """
    for r in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        acc = acc0
        for j in range(x.shape[1]):
            if op == CUMSUM:
                acc += x[r, j]
            else:
                acc *= x[r, j]
            out[r, j] = acc

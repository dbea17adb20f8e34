"""Per-row kernel bodies: sort, top-k, unique, softmax, nll_loss, cumulative sums.

Many ops work along one dim at a time.  The op layer moves that dim last
and makes the tensor contiguous, so a kernel sees a 2-D array whose rows are
independent: the CPU gives each thread some rows (``prange``), the GPU gives
each thread one row (grid-stride loop).  What happens *inside* a row is the
same on both devices and is written here once, as plain Python over 1-D
arrays (``x[r]`` of a 2-D array is such a row, on both devices).  See
:mod:`minitorch.backends.shared_bodies` for how each device compiles it.

Work arrays: a GPU thread cannot allocate memory, so a body that needs
scratch space takes it as an argument; the CPU allocates it per row, the
GPU gets it from the host.
"""

from __future__ import annotations

import math

# The ``exp`` the softmax bodies use.  The CPU replaces it with its own
# vectorisable exp (``cpu/vmath.py``) when it compiles this module.
exp = math.exp

#: Insertion-sorted run length of the merge sort.
RUN = 16

# Cumulative op codes (``scan_row``).
CUMSUM = 0
CUMPROD = 1


# ---------------------------------------------------------------------------
# Sorting: a stable merge sort of each row
# ---------------------------------------------------------------------------
def before(a, b, descending):
    """True if ``a`` must come strictly before ``b``.

    The order is PyTorch's: NaN counts as larger than every number (also
    ``+inf``), so ascending sorts put NaNs last and descending sorts put them
    first.  Descending is not "ascending reversed": that would reverse the
    order of equal elements too.  Instead the comparison itself is flipped.
    """
    if descending:
        return a > b or (a != a and b == b)
    return a < b or (b != b and a == a)


def sort_positions(key, perm, tmp, descending):
    """Fill ``perm`` with the positions ``0 .. n-1`` of ``key``, stably sorted by ``key``.

    A **merge sort**: runs of ``RUN`` elements are sorted by insertion (fast
    on tiny inputs), then neighbouring runs are merged, doubling the width
    each pass, back and forth between ``perm`` and the work row ``tmp`` (of
    ``n`` elements; unused when ``n <= RUN``).  Both steps only move an
    element past another one that must come *strictly* before it, so equal
    elements keep their original order: the sort is *stable* (PyTorch's
    ``stable=True``; we are always stable).
    """
    n = perm.shape[0]
    for j in range(n):
        perm[j] = j
    # 1. insertion sort of each run of RUN elements
    for lo in range(0, n, RUN):
        hi = min(n, lo + RUN)
        for i in range(lo + 1, hi):
            p = perm[i]
            v = key[p]
            j = i - 1
            while j >= lo and before(v, key[perm[j]], descending):
                perm[j + 1] = perm[j]
                j -= 1
            perm[j + 1] = p
    # 2. merge neighbouring runs, doubling the width, ping-ponging between buffers
    width = RUN
    src, dst = perm, tmp
    in_tmp = False
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(n, lo + width)
            hi = min(n, lo + 2 * width)
            i, j, w = lo, mid, lo
            while i < mid and j < hi:
                # take from the right run only if it is strictly first: stability
                if before(key[src[j]], key[src[i]], descending):
                    dst[w] = src[j]
                    j += 1
                else:
                    dst[w] = src[i]
                    i += 1
                w += 1
            while i < mid:
                dst[w] = src[i]
                i += 1
                w += 1
            while j < hi:
                dst[w] = src[j]
                j += 1
                w += 1
        src, dst = dst, src
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:
        for j in range(n):
            perm[j] = tmp[j]


def sort_row(key, descending, values, indices, tmp):
    """Sort one row: ``values`` = sorted ``key``, ``indices`` = where each came from."""
    sort_positions(key, indices, tmp, descending)
    for j in range(key.shape[0]):
        values[j] = key[indices[j]]


def topk_row(row, k, largest, values, positions):
    """The first ``k`` elements of a row in sorted order, without sorting the row.

    One pass keeps the best ``k`` seen so far in order (values and
    positions).  A new element enters only if it comes strictly before the
    current last one, and goes after the kept elements it does not beat: so
    ties keep their original order and the result equals the first ``k`` of
    a stable sort.  Cost: one comparison per element plus a short shift per
    insertion (few, for large rows), instead of ``n log n``.
    """
    m = 0                                   # how many are kept so far
    for i in range(row.shape[0]):
        v = row[i]
        if m == k and not before(v, values[k - 1], largest):
            continue
        j = m if m < k else k - 1           # slot to fill, then bubble left
        while j > 0 and before(v, values[j - 1], largest):
            values[j] = values[j - 1]
            positions[j] = positions[j - 1]
            j -= 1
        values[j] = v
        positions[j] = i
        if m < k:
            m += 1


def unique_sorted(values, order, uniq, inverse, counts):
    """Group the ascending ``values`` (``order[i]`` = original position of ``values[i]``).

    Fills ``uniq`` and ``counts`` with one entry per group and ``inverse``
    with each original element's group number; returns the number of
    groups.  NaN != NaN, so every NaN is its own group, as in PyTorch.
    Sequential: a group's number is a running count, which is a scan, so
    every device runs it on one thread.
    """
    m = -1
    for i in range(values.shape[0]):
        v = values[i]
        if i == 0 or v != values[i - 1]:
            m += 1
            uniq[m] = v
            counts[m] = 0
        counts[m] += 1
        inverse[order[i]] = m
    return m + 1


# ---------------------------------------------------------------------------
# softmax, log_softmax and the negative log likelihood
# ---------------------------------------------------------------------------
def softmax_row(x, out, log):
    """``out = softmax(x)`` (or ``log_softmax`` if ``log``) for a row of at least 1 element.

    ``softmax(x)`` of a row is::

        m = max(x)                     # subtracted first, so exp never overflows
        e = exp(x - m)
        softmax = e / sum(e)           log_softmax = (x - m) - log(sum(e))

    Written with the general ops that is a max reduction, a subtraction, an
    exp, a sum reduction, a log and a division: six passes over memory, six
    tensors, and six ops' Python overhead.  Here it is two passes and no
    temporaries.  As in PyTorch, the shift is the plain max: a row holding
    +inf, a row of only -inf, and a row with a NaN all come out as NaN,
    while -inf entries next to finite ones get probability 0.  The sum runs
    in float64.
    """
    n = x.shape[0]
    m = x[0]
    for j in range(1, n):
        v = x[j]
        if v > m or v != v:
            m = v
            if v != v:
                break
    s = 0.0
    if log:
        for j in range(n):
            s += exp(x[j] - m)
        ls = math.log(s)
        for j in range(n):
            out[j] = (x[j] - m) - ls
    else:
        for j in range(n):
            e = exp(x[j] - m)
            out[j] = e
            s += e
        for j in range(n):
            out[j] = out[j] / s


def softmax_backward_row(g, y, out, log):
    """The gradient through softmax (``y`` its output) or log_softmax (``y = log p``).

    softmax:      ``dx = y * (g - sum(g * y))``
    log_softmax:  ``dx = g - exp(y) * sum(g)``
    """
    n = g.shape[0]
    s = 0.0
    if log:
        for j in range(n):
            s += g[j]
        for j in range(n):
            out[j] = g[j] - exp(y[j]) * s
    else:
        for j in range(n):
            s += g[j] * y[j]
        for j in range(n):
            out[j] = y[j] * (g[j] - s)


def bad_target(t, n, ignore_index):
    """Is class index ``t`` out of range for ``n`` classes (and not ``ignore_index``)?"""
    return t != ignore_index and (t < 0 or t >= n)


def nll_row(r, logp, target, weight, has_weight, ignore_index, losses, weights):
    """``losses[r] = -w * logp[r, target[r]]`` and ``weights[r] = w`` (0 for an ignored row).

    ``w`` is ``weight[target[r]]``, or 1 without a weight.  The target must
    have been checked with :func:`bad_target`.
    """
    t = target[r]
    if t == ignore_index:
        losses[r] = 0
        weights[r] = 0
    else:
        w = weight[t] if has_weight else 1.0
        losses[r] = -logp[r, t] * w
        weights[r] = w


def nll_backward_row(out, t, weight, has_weight, ignore_index):
    """The gradient of one row's loss: ``-w`` at the target ``t``, 0 elsewhere."""
    for j in range(out.shape[0]):
        out[j] = 0
    if t != ignore_index:
        out[t] = -(weight[t] if has_weight else 1.0)


# ---------------------------------------------------------------------------
# Cumulative sums and products
# ---------------------------------------------------------------------------
def scan_row(op, x, out, acc0):
    """Running sum (``CUMSUM``) or product (``CUMPROD``) of a row, from ``acc0``.

    ``acc0``'s type (float64 or int64) is the accumulator's, as in the
    reductions.  A row is scanned in order by one thread (a parallel scan
    within a row, such as Blelloch's, would pay off only for long rows).
    """
    acc = acc0
    for j in range(x.shape[0]):
        if op == CUMSUM:
            acc += x[j]
        else:
            acc *= x[j]
        out[j] = acc

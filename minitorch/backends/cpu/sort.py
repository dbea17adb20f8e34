"""CPU kernels for sorting: a stable merge sort of each row, and unique.

Every sorting op (``sort``, ``argsort``, ``topk``, ``kthvalue``, ``median``,
``unique``) starts from the same step: sort each row of a contiguous 2-D
array and remember where every element came from.  The op layer moves the
sorted dim last and makes the input contiguous, so the kernel only sees
rows.  Rows are independent, so they are sorted in parallel.

The sort is a **merge sort**: small runs of ``RUN`` elements are sorted by
insertion (fast on tiny inputs), then neighbouring runs are merged, doubling
the width each pass, back and forth between the row and a scratch buffer.
Both steps only move an element past another one that must come *strictly*
before it, so equal elements keep their original order: the sort is
*stable* (PyTorch's ``stable=True``; we are always stable).

The order is PyTorch's: NaN counts as larger than every number (also
``+inf``), so ascending sorts put NaNs last and descending sorts put them
first.  Descending is not "ascending reversed": that would reverse the order
of equal elements too.  Instead the comparison itself is flipped.
"""

import numpy as np
from numba import njit, prange

RUN = 16

_JIT = dict(cache=True)
_PARALLEL = dict(parallel=True, cache=True)


@njit(inline="always", **_JIT)
def _before(a, b, descending):
    """True if ``a`` must come strictly before ``b`` (NaN is the largest value)."""
    if descending:
        return a > b or (a != a and b == b)
    return a < b or (b != b and a == a)


@njit(**_JIT)
def _sort_row(key, perm, tmp, descending):
    """Stable-sort the positions ``perm`` (initially 0..n-1) by ``key[perm]``."""
    n = perm.shape[0]
    # 1. insertion sort of each run of RUN elements
    for lo in range(0, n, RUN):
        hi = min(n, lo + RUN)
        for i in range(lo + 1, hi):
            p = perm[i]
            v = key[p]
            j = i - 1
            while j >= lo and _before(v, key[perm[j]], descending):
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
                if _before(key[src[j]], key[src[i]], descending):
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
        for i in range(n):
            perm[i] = tmp[i]


@njit(**_PARALLEL)
def sort_rows(keys, descending, values, indices):
    """Sort every row of the contiguous 2-D ``keys`` into ``values``; ``indices`` = positions."""
    rows = keys.shape[0]
    n = keys.shape[1]
    for r in prange(rows):
        perm = indices[r]
        for j in range(n):
            perm[j] = j
        tmp = np.empty(n if n > RUN else 0, np.int64)
        _sort_row(keys[r], perm, tmp, descending)
        for j in range(n):
            values[r, j] = keys[r, perm[j]]


@njit(**_JIT)
def unique_sorted(values, order, uniq, inverse, counts):
    """Group the ascending ``values`` (``order[i]`` = original position of ``values[i]``).

    Fills ``uniq`` and ``counts`` with one entry per group and ``inverse``
    with each original element's group number; returns the number of
    groups.  NaN != NaN, so every NaN is its own group, as in PyTorch.
    Sequential: a group's number is a running count, which is a scan.
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


@njit(**_PARALLEL)
def topk_rows(keys, k, largest, values, indices):
    """The first ``k`` elements of each row in sorted order, without sorting the row.

    One pass per row keeps the best ``k`` seen so far in order (values and
    positions).  A new element enters only if it comes strictly before the
    current last one, and goes after the kept elements it does not beat: so
    ties keep their original order and the result equals the first ``k`` of
    a stable sort.  Cost: one comparison per element plus a short shift per
    insertion (few, for large rows), instead of ``n log n``.
    """
    rows = keys.shape[0]
    n = keys.shape[1]
    for r in prange(rows):
        row = keys[r]
        vals = values[r]
        pos = indices[r]
        m = 0                                   # how many are kept so far
        for i in range(n):
            v = row[i]
            if m == k and not _before(v, vals[k - 1], largest):
                continue
            j = m if m < k else k - 1           # slot to fill, then bubble left
            while j > 0 and _before(v, vals[j - 1], largest):
                vals[j] = vals[j - 1]
                pos[j] = pos[j - 1]
                j -= 1
            vals[j] = v
            pos[j] = i
            if m < k:
                m += 1

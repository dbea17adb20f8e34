"""CUDA kernels for sorting: a stable merge sort of each row, and unique.

The algorithm is the CPU's (``cpu/sort.py``): insertion-sort runs of
``RUN`` elements, then merge neighbouring runs, doubling the width, back and
forth between the row of positions and a scratch row.  Only strictly
smaller elements move ahead, so the sort is stable, and NaN sorts as the
largest value (PyTorch's order).

**One thread per row.**  Rows are independent, so each GPU thread sorts a
whole row, exactly as each CPU task does.  That is fast for many short
rows (``topk`` over a batch of logits, ``sort(dim=-1)`` of a matrix) and
slow for one long row, where a single GPU thread does all the work; a
GPU-wide sort of one row (a bitonic or radix sort) is not implemented.
The scratch rows that the CPU allocates inside the kernel are passed in
(a GPU thread cannot allocate memory).

``unique_sorted`` numbers the groups with a running count, a scan: it runs
on one GPU thread.
"""

from numba import cuda

RUN = 16


@cuda.jit(device=True)
def _before(a, b, descending):
    """True if ``a`` must come strictly before ``b`` (NaN is the largest value)."""
    if descending:
        return a > b or (a != a and b == b)
    return a < b or (b != b and a == a)


@cuda.jit(cache=True)
def sort_rows(keys, descending, values, indices, scratch):
    """Sort each row of the 2-D ``keys`` into ``values``; ``indices`` = original positions."""
    rows = keys.shape[0]
    n = keys.shape[1]
    for r in range(cuda.grid(1), rows, cuda.gridsize(1)):
        key = keys[r]
        perm = indices[r]
        tmp = scratch[r]
        for j in range(n):
            perm[j] = j
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
            for j in range(n):
                perm[j] = tmp[j]
        for j in range(n):
            values[r, j] = key[perm[j]]


@cuda.jit(cache=True)
def unique_sorted(values, order, uniq, inverse, counts, groups):
    """Group the ascending ``values`` (one thread); ``groups[0]`` = number of groups.

    NaN != NaN, so every NaN is its own group, as in PyTorch.
    """
    if cuda.grid(1) != 0:
        return
    m = -1
    for i in range(values.shape[0]):
        v = values[i]
        if i == 0 or v != values[i - 1]:
            m += 1
            uniq[m] = v
            counts[m] = 0
        counts[m] += 1
        inverse[order[i]] = m
    groups[0] = m + 1

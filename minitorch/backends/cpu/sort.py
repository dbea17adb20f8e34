"""CPU kernels for sorting: a stable merge sort of each row, top-k, and unique.

Every sorting op (``sort``, ``argsort``, ``topk``, ``kthvalue``, ``median``,
``unique``) starts from the same step: sort each row of a contiguous 2-D
array and remember where every element came from.  The op layer moves the
sorted dim last and makes the input contiguous, so the kernels only see
rows.  What happens inside a row (the merge sort, the top-k selection, the
grouping of ``unique``) is written once in :mod:`minitorch.backends.rows`
and shared with the GPU (``cuda/sort.py``); here rows are independent, so
they are sorted in parallel, each thread allocating its own work row.
"""

import numpy as np
from numba import njit, prange

from .bodies import rows

_JIT = dict(cache=True)
_PARALLEL = dict(parallel=True, cache=True)


@njit(**_PARALLEL)
def sort_rows(keys, descending, values, indices):
    """Sort every row of the contiguous 2-D ``keys`` into ``values``; ``indices`` = positions."""
    n = keys.shape[1]
    for r in prange(keys.shape[0]):
        tmp = np.empty(n if n > rows.RUN else 0, np.int64)   # the merge's work row
        rows.sort_row(keys[r], descending, values[r], indices[r], tmp)


@njit(**_JIT)
def unique_sorted(values, order, uniq, inverse, counts):
    """Group the ascending ``values``; returns the number of groups (``rows.unique_sorted``)."""
    return rows.unique_sorted(values, order, uniq, inverse, counts)


@njit(**_PARALLEL)
def topk_rows(keys, k, largest, values, indices):
    """The first ``k`` elements of each row in sorted order, without sorting the row
    (``rows.topk_row``)."""
    for r in prange(keys.shape[0]):
        rows.topk_row(keys[r], k, largest, values[r], indices[r])

"""CUDA kernels for sorting: a stable merge sort of each row, and unique.

The row bodies are the CPU's (:mod:`minitorch.backends.rows`): insertion-sort
runs of ``RUN`` elements, then merge neighbouring runs, doubling the width,
back and forth between the row of positions and a work row.  Only strictly
smaller elements move ahead, so the sort is stable, and NaN sorts as the
largest value (PyTorch's order).

**One thread per row.**  Rows are independent, so each GPU thread sorts a
whole row, exactly as each CPU task does.  That is fast for many short
rows (``topk`` over a batch of logits, ``sort(dim=-1)`` of a matrix) and
slow for one long row, where a single GPU thread does all the work; a
GPU-wide sort of one row (a bitonic or radix sort) is not implemented.
The work rows that the CPU allocates inside the kernel are passed in
(a GPU thread cannot allocate memory).

``unique_sorted`` numbers the groups with a running count, a scan: it runs
on one GPU thread.
"""

from numba import cuda

from .bodies import rows
from .launch import kernel


@kernel
def sort_rows(keys, descending, values, indices, scratch):
    """Sort each row of the 2-D ``keys`` into ``values``; ``indices`` = original positions."""
    for r in range(cuda.grid(1), keys.shape[0], cuda.gridsize(1)):
        rows.sort_row(keys[r], descending, values[r], indices[r], scratch[r])


@kernel
def unique_sorted(values, order, uniq, inverse, counts, groups):
    """Group the ascending ``values`` (one thread); ``groups[0]`` = number of groups."""
    if cuda.grid(1) == 0:
        groups[0] = rows.unique_sorted(values, order, uniq, inverse, counts)

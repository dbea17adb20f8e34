"""CUDA kernels for softmax, log_softmax and the negative log likelihood: one thread per row.

The row bodies are the CPU's (:mod:`minitorch.backends.rows`): max, shift,
exp, sum in float64, then the output; the loss picks
``-w * logp[r, target[r]]`` after every target was checked.  A row is short
in the uses that matter here (class scores), so one thread walks it; long
rows would want a block per row with a shared-memory reduction.
"""

from numba import cuda

from .bodies import rows
from .launch import kernel


@kernel
def softmax_rows(x, out, log):
    for r in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        rows.softmax_row(x[r], out[r], log)


@kernel
def softmax_backward_rows(g, y, out, log):
    for r in range(cuda.grid(1), g.shape[0], cuda.gridsize(1)):
        rows.softmax_backward_row(g[r], y[r], out[r], log)


@kernel
def first_bad_target(target, n, ignore_index, bad):
    """``bad[0]`` becomes the smallest row whose target is out of range (atomic min)."""
    for r in range(cuda.grid(1), target.shape[0], cuda.gridsize(1)):
        if rows.bad_target(target[r], n, ignore_index):
            cuda.atomic.min(bad, 0, r)


@kernel
def nll_rows(logp, target, weight, has_weight, ignore_index, losses, weights):
    for r in range(cuda.grid(1), target.shape[0], cuda.gridsize(1)):
        rows.nll_row(r, logp, target, weight, has_weight, ignore_index, losses, weights)


@kernel
def nll_backward_rows(target, weight, has_weight, ignore_index, out):
    for r in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        rows.nll_backward_row(out[r], target[r], weight, has_weight, ignore_index)

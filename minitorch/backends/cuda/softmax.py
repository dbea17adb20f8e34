"""CUDA kernels for softmax, log_softmax and the negative log likelihood: one thread per row.

The row bodies are the CPU's (:mod:`minitorch.backends.rows`): max, shift,
exp, sum in float64, then the output; the loss picks
``-w * logp[r, target[r]]``.  A row is short in the uses that matter here
(class scores), so one thread walks it; long rows would want a block per
row with a shared-memory reduction.

A target out of range is not checked before the launch, which would make
the host wait for the GPU at every loss: the loss kernels check each row's
target themselves, never read or write through a bad one, and raise the
device's *error flag* (see :func:`nll_rows`), which the host reads the
next time it waits for the GPU anyway, as PyTorch reports its device-side
asserts.
"""

from numba import cuda

from .bodies import rows
from .launch import kernel

#: The code :func:`nll_rows` raises the error flag with (a target out of range).
BAD_TARGET = 1


@kernel
def softmax_rows(x, out, log):
    for r in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        rows.softmax_row(x[r], out[r], log)


@kernel
def softmax_backward_rows(g, y, out, log):
    for r in range(cuda.grid(1), g.shape[0], cuda.gridsize(1)):
        rows.softmax_backward_row(g[r], y[r], out[r], log)


@kernel
def nll_rows(logp, target, weight, has_weight, ignore_index, losses, weights, error):
    """Each row's loss and weight; a row with a bad target gets 0 and 0 and raises the flag
    (``BAD_TARGET``, its row, its target)."""
    n = logp.shape[1]
    for r in range(cuda.grid(1), target.shape[0], cuda.gridsize(1)):
        t = target[r]
        if rows.bad_target(t, n, ignore_index):
            losses[r] = 0
            weights[r] = 0
            # The device's error flag (three int64s): the first thread to find an error
            # since the host last looked turns error[0] from 0 to its code with an atomic
            # compare-and-swap, and alone writes the details; later errors are dropped.
            if cuda.atomic.compare_and_swap(error, 0, BAD_TARGET) == 0:
                error[1] = r
                error[2] = t
        else:
            rows.nll_row(r, logp, target, weight, has_weight, ignore_index, losses, weights)


@kernel
def nll_backward_rows(target, weight, has_weight, ignore_index, out):
    """Each row's gradient; a row with a bad target (already flagged by the forward) is 0."""
    n = out.shape[1]
    for r in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        t = target[r]
        if rows.bad_target(t, n, ignore_index):
            for j in range(n):
                out[r, j] = 0
        else:
            rows.nll_backward_row(out[r], t, weight, has_weight, ignore_index)

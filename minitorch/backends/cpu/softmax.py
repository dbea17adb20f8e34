"""CPU kernels for softmax, log_softmax and the negative log likelihood, a row at a time.

The row bodies (:mod:`minitorch.backends.rows`: ``softmax_row``,
``nll_row``, ...) are shared with the GPU; here a serial kernel takes a
range of rows, and a ``_parallel`` driver gives blocks of rows to threads
(``prange``).  A row kernel does in two passes, with no temporaries, what
the general ops would do in six (max, subtract, exp, sum, log, divide); the
same for the backward formulas and for the loss
``nll_loss(logp, target) = -logp[r, target[r]]`` (times a class weight).
``exp`` is the vectorised one of :mod:`.vmath` (``cpu/bodies.py``).
"""

from numba import njit, prange

from .bodies import rows

_JIT = dict(cache=True, error_model="numpy")
_PARALLEL = dict(parallel=True, **_JIT)
ROWS_PER_TASK = 64    # rows per parallel task in the ``_parallel`` drivers


# ---------------------------------------------------------------------------
# Serial kernels: rows ``r0 .. r1 - 1``.  The backend passes every row on one
# thread; the parallel drivers below pass one block of rows per task.  (As in
# elementwise.py: a process that never needs threads never compiles a
# ``parallel=True`` function, which takes two to three times as long.)
# ---------------------------------------------------------------------------
@njit(**_JIT)
def softmax_rows(x, out, log, r0, r1):
    """``out[r] = softmax(x[r])`` (or ``log_softmax`` if ``log``); rows of at least 1 element."""
    for r in range(r0, r1):
        rows.softmax_row(x[r], out[r], log)


@njit(**_JIT)
def softmax_backward_rows(g, y, out, log, r0, r1):
    """The gradient through softmax (``y`` its output) or log_softmax (``y = log p``)."""
    for r in range(r0, r1):
        rows.softmax_backward_row(g[r], y[r], out[r], log)


@njit(**_JIT)
def nll_rows(logp, target, weight, has_weight, ignore_index, losses, weights):
    """``losses[r] = -w * logp[r, target[r]]`` and ``weights[r] = w`` (0 for ignored rows).

    ``w`` is ``weight[target[r]]``, or 1 without a weight.  Every target is
    checked *before* any is used: the return value is the first row whose
    target is out of range (and not ``ignore_index``), or -1.  (One loop
    over the rows: cheap next to the softmax before it, so no parallel driver.)
    """
    n = logp.shape[1]
    for r in range(target.shape[0]):
        if rows.bad_target(target[r], n, ignore_index):
            return r
    for r in range(target.shape[0]):
        rows.nll_row(r, logp, target, weight, has_weight, ignore_index, losses, weights)
    return -1


@njit(**_JIT)
def nll_backward_rows(target, weight, has_weight, ignore_index, out, r0, r1):
    """The gradient of each row's loss: ``-w`` at the target, 0 elsewhere (targets checked)."""
    for r in range(r0, r1):
        rows.nll_backward_row(out[r], target[r], weight, has_weight, ignore_index)


# ---------------------------------------------------------------------------
# The parallel drivers: blocks of ROWS_PER_TASK rows, one prange task each.
# ---------------------------------------------------------------------------
@njit(inline="always", **_JIT)
def _blocks(n):
    return (n + ROWS_PER_TASK - 1) // ROWS_PER_TASK


@njit(**_PARALLEL)
def softmax_rows_parallel(x, out, log):
    n = x.shape[0]
    for b in prange(_blocks(n)):
        softmax_rows(x, out, log, b * ROWS_PER_TASK, min(n, (b + 1) * ROWS_PER_TASK))


@njit(**_PARALLEL)
def softmax_backward_rows_parallel(g, y, out, log):
    n = g.shape[0]
    for b in prange(_blocks(n)):
        softmax_backward_rows(g, y, out, log, b * ROWS_PER_TASK, min(n, (b + 1) * ROWS_PER_TASK))


@njit(**_PARALLEL)
def nll_backward_rows_parallel(target, weight, has_weight, ignore_index, out):
    n = out.shape[0]
    for b in prange(_blocks(n)):
        nll_backward_rows(target, weight, has_weight, ignore_index, out, b * ROWS_PER_TASK,
                          min(n, (b + 1) * ROWS_PER_TASK))

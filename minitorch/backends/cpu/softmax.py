"""CPU kernels for softmax, log_softmax and the negative log likelihood, a row at a time.

The row bodies (:mod:`minitorch.backends.rows`: ``softmax_row``,
``nll_row``, ...) are shared with the GPU; here each thread takes some rows
(``prange``).  A row kernel does in two passes, with no temporaries, what
the general ops would do in six (max, subtract, exp, sum, log, divide); the
same for the backward formulas and for the loss
``nll_loss(logp, target) = -logp[r, target[r]]`` (times a class weight).
``exp`` is the vectorised one of :mod:`.vmath` (``cpu/bodies.py``).
"""

from numba import njit, prange

from .bodies import rows

_PARALLEL = dict(parallel=True, cache=True, error_model="numpy")


@njit(**_PARALLEL)
def softmax_rows(x, out, log):
    """``out[r] = softmax(x[r])`` (or ``log_softmax`` if ``log``); rows of at least 1 element."""
    for r in prange(x.shape[0]):
        rows.softmax_row(x[r], out[r], log)


@njit(**_PARALLEL)
def softmax_backward_rows(g, y, out, log):
    """The gradient through softmax (``y`` its output) or log_softmax (``y = log p``)."""
    for r in prange(g.shape[0]):
        rows.softmax_backward_row(g[r], y[r], out[r], log)


@njit(**_PARALLEL)
def nll_rows(logp, target, weight, has_weight, ignore_index, losses, weights):
    """``losses[r] = -w * logp[r, target[r]]`` and ``weights[r] = w`` (0 for ignored rows).

    ``w`` is ``weight[target[r]]``, or 1 without a weight.  Every target is
    checked *before* any is used: the return value is the first row whose
    target is out of range (and not ``ignore_index``), or -1.
    """
    n = logp.shape[1]
    for r in range(target.shape[0]):
        if rows.bad_target(target[r], n, ignore_index):
            return r
    for r in prange(target.shape[0]):
        rows.nll_row(r, logp, target, weight, has_weight, ignore_index, losses, weights)
    return -1


@njit(**_PARALLEL)
def nll_backward_rows(target, weight, has_weight, ignore_index, out):
    """The gradient of each row's loss: ``-w`` at the target, 0 elsewhere (targets checked)."""
    for r in prange(out.shape[0]):
        rows.nll_backward_row(out[r], target[r], weight, has_weight, ignore_index)

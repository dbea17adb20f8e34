"""CPU kernels for softmax, log_softmax and the negative log likelihood, a row at a time.

``softmax(x)`` along a dim is, for each row ``x`` (the dim moved last)::

    m = max(x)                     # subtracted first, so exp never overflows
    e = exp(x - m)
    softmax = e / sum(e)           log_softmax = (x - m) - log(sum(e))

Written with the general ops that is a max reduction, a subtraction, an
exp, a sum reduction, a log and a division: six passes over memory, six
tensors, and six ops' Python overhead.  A row kernel does it in two passes
and no temporaries.  The same for the backward formulas and for the loss
``nll_loss(logp, target) = -logp[r, target[r]]`` (times a class weight),
which would otherwise be a comparison, a selection, a bounds check, a
gather and more.

As in PyTorch, the shift is the plain max: a row holding +inf, a row of
only -inf, and a row with a NaN all come out as NaN, while -inf entries
next to finite ones get probability 0.  Sums run in float64.
``exp`` is the vectorised one of :mod:`.vmath`.
"""

import math

import numpy as np
from numba import njit, prange

from .vmath import _exp

_PARALLEL = dict(parallel=True, cache=True, error_model="numpy")


@njit(**_PARALLEL)
def softmax_rows(x, out, log):
    """``out[r] = softmax(x[r])`` (or ``log_softmax`` if ``log``); rows of at least 1 element."""
    rows, n = x.shape
    for r in prange(rows):
        m = x[r, 0]
        for j in range(1, n):
            v = x[r, j]
            if v > m or v != v:
                m = v
                if v != v:
                    break
        s = 0.0
        if log:
            for j in range(n):
                s += _exp(x[r, j] - m)
            ls = math.log(s)
            for j in range(n):
                out[r, j] = (x[r, j] - m) - ls
        else:
            for j in range(n):
                e = _exp(x[r, j] - m)
                out[r, j] = e
                s += e
            for j in range(n):
                out[r, j] = out[r, j] / s


@njit(**_PARALLEL)
def softmax_backward_rows(g, y, out, log):
    """The gradient through softmax (``y`` its output) or log_softmax (``y = log p``).

    softmax:      ``dx = y * (g - sum(g * y))``
    log_softmax:  ``dx = g - exp(y) * sum(g)``
    """
    rows, n = g.shape
    for r in prange(rows):
        s = 0.0
        if log:
            for j in range(n):
                s += g[r, j]
            for j in range(n):
                out[r, j] = g[r, j] - _exp(y[r, j]) * s
        else:
            for j in range(n):
                s += g[r, j] * y[r, j]
            for j in range(n):
                out[r, j] = y[r, j] * (g[r, j] - s)


@njit(**_PARALLEL)
def nll_rows(logp, target, weight, has_weight, ignore_index, losses, weights):
    """``losses[r] = -w * logp[r, target[r]]`` and ``weights[r] = w`` (0 for ignored rows).

    ``w`` is ``weight[target[r]]``, or 1 without a weight.  Every target is
    checked *before* any is used: the return value is the first row whose
    target is out of range (and not ``ignore_index``), or -1.
    """
    rows, n = logp.shape
    for r in range(rows):
        t = target[r]
        if t != ignore_index and (t < 0 or t >= n):
            return r
    for r in prange(rows):
        t = target[r]
        if t == ignore_index:
            losses[r] = 0
            weights[r] = 0
        else:
            w = weight[t] if has_weight else 1.0
            losses[r] = -logp[r, t] * w
            weights[r] = w
    return -1


@njit(**_PARALLEL)
def nll_backward_rows(target, weight, has_weight, ignore_index, out):
    """The gradient of each row's loss: ``-w`` at the target, 0 elsewhere (targets checked)."""
    rows, n = out.shape
    for r in prange(rows):
        for j in range(n):
            out[r, j] = 0
        t = target[r]
        if t != ignore_index:
            out[r, t] = -(weight[t] if has_weight else 1.0)

"""CUDA kernels for softmax, log_softmax and the negative log likelihood: one thread per row.

The same row formulas as ``cpu/softmax.py`` (see there): max, shift, exp,
sum in float64, then the output; the loss picks ``-w * logp[r, target[r]]``
after every target was checked.  A row is short in the uses that matter
here (class scores), so one thread walks it; long rows would want a block
per row with a shared-memory reduction.
"""

import math

from numba import cuda


@cuda.jit(cache=True)
def softmax_rows(x, out, log):
    rows, n = x.shape
    for r in range(cuda.grid(1), rows, cuda.gridsize(1)):
        m = x[r, 0]
        for j in range(1, n):
            v = x[r, j]
            if v > m or v != v:
                m = v
                if v != v:
                    break
        s = 0.0
        for j in range(n):
            s += math.exp(x[r, j] - m)
        if log:
            ls = math.log(s)
            for j in range(n):
                out[r, j] = (x[r, j] - m) - ls
        else:
            for j in range(n):
                out[r, j] = math.exp(x[r, j] - m) / s


@cuda.jit(cache=True)
def softmax_backward_rows(g, y, out, log):
    rows, n = g.shape
    for r in range(cuda.grid(1), rows, cuda.gridsize(1)):
        s = 0.0
        if log:
            for j in range(n):
                s += g[r, j]
            for j in range(n):
                out[r, j] = g[r, j] - math.exp(y[r, j]) * s
        else:
            for j in range(n):
                s += g[r, j] * y[r, j]
            for j in range(n):
                out[r, j] = y[r, j] * (g[r, j] - s)


@cuda.jit(cache=True)
def first_bad_target(target, n, ignore_index, bad):
    """``bad[0]`` becomes the smallest row whose target is out of range (atomic min)."""
    for r in range(cuda.grid(1), target.shape[0], cuda.gridsize(1)):
        t = target[r]
        if t != ignore_index and (t < 0 or t >= n):
            cuda.atomic.min(bad, 0, r)


@cuda.jit(cache=True)
def nll_rows(logp, target, weight, has_weight, ignore_index, losses, weights):
    for r in range(cuda.grid(1), target.shape[0], cuda.gridsize(1)):
        t = target[r]
        if t == ignore_index:
            losses[r] = 0
            weights[r] = 0
        else:
            w = weight[t] if has_weight else 1.0
            losses[r] = -logp[r, t] * w
            weights[r] = w


@cuda.jit(cache=True)
def nll_backward_rows(target, weight, has_weight, ignore_index, out):
    rows, n = out.shape
    for r in range(cuda.grid(1), rows, cuda.gridsize(1)):
        for j in range(n):
            out[r, j] = 0
        t = target[r]
        if t != ignore_index:
            out[r, t] = -(weight[t] if has_weight else 1.0)

"""CPU kernels for convolution and pooling: im2col, col2im, max pooling.

Convolution as a matrix product (the "im2col" trick, used by Caffe and
PyTorch's CPU path): copy every receptive field of the input into a column
of a matrix, then one matrix product with the flattened filters computes
every output pixel at once::

    input (C, H, W), kernel (kh, kw)  ->  cols (C*kh*kw, OH*OW)
    weight (O, C, kh, kw) -> (O, C*kh*kw);   out = weight @ cols  -> (O, OH*OW)

``col2im`` is the reverse (each column is *added* back into the pixels it
came from); it is the backward of im2col.  Both split their work into tasks
of one (sample, channel) plane each (``im2col_batch``: one row of ``cols``),
so no two tasks ever write the same element.

Each kernel is serial and does the tasks ``t0 .. t1 - 1``; the backend
passes all of them.  ``<kernel>_parallel`` runs the same kernel one task at
a time in a ``prange`` loop, and the backend uses it only for large inputs
on more than one thread (see :mod:`minitorch.backends.cpu.elementwise`: a
process that never uses it never compiles it).

All arrays are contiguous; geometry comes as integers.  Padding is virtual:
positions outside the input read as 0 (im2col) or are skipped (col2im).
Which input pixel an output position reads, and the max over a pooling
window, are written once in :mod:`minitorch.backends.index_maps` (shared
with the GPU).
"""

import numpy as np
from numba import njit, prange

from .bodies import index_maps

# NumPy's error model (as inside a prange loop): no zero test before each
# integer division, which would also keep LLVM from vectorising a loop.
_JIT = dict(cache=True, error_model="numpy")
_PARALLEL = dict(parallel=True, **_JIT)


@njit(**_JIT)
def im2col(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, cols, t0, t1):
    """x: (N, C, H, W) -> cols: (N, C*kh*kw, oh*ow); task = one (sample, channel) plane."""
    n, c, h, w = x.shape
    for task in range(t0, t1):
        b = task // c
        ch = task - b * c
        for i in range(kh):
            for j in range(kw):
                row = (ch * kh + i) * kw + j
                for y in range(oh):
                    iy = index_maps.source(y, i, sh, ph, dh, h)
                    base = y * ow
                    if iy < 0:
                        for xo in range(ow):
                            cols[b, row, base + xo] = 0
                        continue
                    for xo in range(ow):
                        ix = index_maps.source(xo, j, sw, pw, dw, w)
                        if ix >= 0:
                            cols[b, row, base + xo] = x[b, ch, iy, ix]
                        else:
                            cols[b, row, base + xo] = 0


@njit(**_JIT)
def col2im(cols, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, x, t0, t1):
    """cols: (N, C*kh*kw, oh*ow) summed back into x: (N, C, H, W) (x is zeroed first)."""
    n, c, h, w = x.shape
    for task in range(t0, t1):
        b = task // c
        ch = task - b * c
        for yy in range(h):
            for xx in range(w):
                x[b, ch, yy, xx] = 0
        for i in range(kh):
            for j in range(kw):
                row = (ch * kh + i) * kw + j
                for y in range(oh):
                    iy = index_maps.source(y, i, sh, ph, dh, h)
                    if iy < 0:
                        continue
                    base = y * ow
                    for xo in range(ow):
                        ix = index_maps.source(xo, j, sw, pw, dw, w)
                        if ix >= 0:
                            x[b, ch, iy, ix] += cols[b, row, base + xo]


@njit(**_JIT)
def max_pool2d(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, out, idx, t0, t1):
    """Max over each window; ``idx`` gets the flat index (y*W + x) of the winner.

    Padding positions never win (they count as -inf), like PyTorch.  NaN wins.
    """
    n, c, h, w = x.shape
    for task in range(t0, t1):
        b = task // c
        ch = task - b * c
        for y in range(oh):
            for xo in range(ow):
                out[b, ch, y, xo], idx[b, ch, y, xo] = index_maps.window_max(
                    x, b, ch, y, xo, kh, kw, sh, sw, ph, pw, dh, dw)


@njit(**_JIT)
def max_pool2d_backward(grad, idx, out, t0, t1):
    """Route each output gradient to its window's winner (out is zeroed first)."""
    n, c, oh, ow = grad.shape
    h, w = out.shape[2], out.shape[3]
    for task in range(t0, t1):
        b = task // c
        ch = task - b * c
        for yy in range(h):
            for xx in range(w):
                out[b, ch, yy, xx] = 0
        for y in range(oh):
            for xo in range(ow):
                k = idx[b, ch, y, xo]
                out[b, ch, k // w, k % w] += grad[b, ch, y, xo]


# ---------------------------------------------------------------------------
# Batch-major columns: cols_t has shape (C*kh*kw, N*oh*ow), so a whole batch's
# convolution is ONE matrix product  weight (O, C*kh*kw) @ cols_t, instead of N
# small ones.  Row r = (c, i, j); column = (sample, output pixel).
# ---------------------------------------------------------------------------
@njit(**_JIT)
def im2col_batch(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, cols, t0, t1):
    """x: (N, C, H, W) -> cols: (C*kh*kw, N*oh*ow); task = one row of ``cols``."""
    n, c, h, w = x.shape
    L = oh * ow
    for row in range(t0, t1):
        ch = row // (kh * kw)
        rem = row - ch * kh * kw
        i = rem // kw
        j = rem - i * kw
        for b in range(n):
            base = b * L
            for y in range(oh):
                iy = index_maps.source(y, i, sh, ph, dh, h)
                start = base + y * ow
                if iy < 0:
                    for xo in range(ow):
                        cols[row, start + xo] = 0
                    continue
                for xo in range(ow):
                    ix = index_maps.source(xo, j, sw, pw, dw, w)
                    if ix >= 0:
                        cols[row, start + xo] = x[b, ch, iy, ix]
                    else:
                        cols[row, start + xo] = 0


@njit(**_JIT)
def col2im_batch(cols, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, x, t0, t1):
    """cols: (C*kh*kw, N*oh*ow) summed back into x: (N, C, H, W)."""
    n, c, h, w = x.shape
    L = oh * ow
    for task in range(t0, t1):
        b = task // c
        ch = task - b * c
        for yy in range(h):
            for xx in range(w):
                x[b, ch, yy, xx] = 0
        base = b * L
        for i in range(kh):
            for j in range(kw):
                row = (ch * kh + i) * kw + j
                for y in range(oh):
                    iy = index_maps.source(y, i, sh, ph, dh, h)
                    if iy < 0:
                        continue
                    start = base + y * ow
                    for xo in range(ow):
                        ix = index_maps.source(xo, j, sw, pw, dw, w)
                        if ix >= 0:
                            x[b, ch, iy, ix] += cols[row, start + xo]


# ---------------------------------------------------------------------------
# The parallel drivers: one prange task per task of the serial kernel.  (Numba
# makes a prange index unsigned; np.int64 keeps the serial kernel's
# signature the one the backend calls, so it is compiled once, not twice.)
# ---------------------------------------------------------------------------
@njit(**_PARALLEL)
def im2col_parallel(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, cols):
    for t in prange(x.shape[0] * x.shape[1]):
        task = np.int64(t)
        im2col(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, cols, task, task + 1)


@njit(**_PARALLEL)
def col2im_parallel(cols, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, x):
    for t in prange(x.shape[0] * x.shape[1]):
        task = np.int64(t)
        col2im(cols, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, x, task, task + 1)


@njit(**_PARALLEL)
def max_pool2d_parallel(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, out, idx):
    for t in prange(x.shape[0] * x.shape[1]):
        task = np.int64(t)
        max_pool2d(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, out, idx, task, task + 1)


@njit(**_PARALLEL)
def max_pool2d_backward_parallel(grad, idx, out):
    for t in prange(grad.shape[0] * grad.shape[1]):
        task = np.int64(t)
        max_pool2d_backward(grad, idx, out, task, task + 1)


@njit(**_PARALLEL)
def im2col_batch_parallel(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, cols):
    for t in prange(cols.shape[0]):
        task = np.int64(t)
        im2col_batch(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, cols, task, task + 1)


@njit(**_PARALLEL)
def col2im_batch_parallel(cols, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, x):
    for t in prange(x.shape[0] * x.shape[1]):
        task = np.int64(t)
        col2im_batch(cols, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, x, task, task + 1)

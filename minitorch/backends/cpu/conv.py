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
so no two tasks ever write the same element.  The batch kernels are the
course's tasks 4.2 and 4.3; the per-sample ``im2col``/``col2im`` call them
on one sample at a time.

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
    """x: (N, C, H, W) -> cols: (N, C*kh*kw, oh*ow); task = one (sample, channel) plane.

    Sample ``b``'s columns are :func:`im2col_batch` of that sample alone, and
    plane ``(b, ch)`` fills rows ``ch*kh*kw`` to ``(ch+1)*kh*kw - 1`` of them:
    so this is ``im2col_batch`` (course task 4.2) on one sample at a time.
    """
    c = x.shape[1]
    rows = kh * kw
    for task in range(t0, t1):
        b = task // c
        ch = task - b * c
        im2col_batch(x[b:b + 1], kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, cols[b],
                     ch * rows, (ch + 1) * rows)


@njit(**_JIT)
def col2im(cols, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, x, t0, t1):
    """cols: (N, C*kh*kw, oh*ow) summed back into x: (N, C, H, W) (x is zeroed first).

    :func:`col2im_batch` (course task 4.3) on one sample at a time: sample
    ``b``'s columns are a batch of one.
    """
    c = x.shape[1]
    for task in range(t0, t1):
        b = task // c
        ch = task - b * c
        col2im_batch(cols[b], kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, x[b:b + 1], ch, ch + 1)


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
    """Max pooling's backward: each output's gradient goes to the input pixel that won its window.

    Args:
        grad: the gradient of the pooled output, shape ``(N, C, oh, ow)``.

        idx: the winners that :func:`max_pool2d` recorded, same shape: the flat
        position ``iy * W + ix`` of each window's winner in its ``(H, W)`` plane.

        out: the gradient of the input, shape ``(N, C, H, W)``; its old contents
        are garbage (it must be overwritten).

        t0, t1: the planes to do: plane ``task`` is sample ``task // C``, channel
        ``task % C``, for ``t0 <= task < t1``; no other plane is touched.

    Windows overlap when the stride is smaller than the kernel: a pixel that
    wins several windows gets the sum of their gradients; a pixel that wins
    none gets 0.

    Example: a 2x2 plane pooled by one 2x2 window whose winner is pixel 2
    (row 1, column 0), with gradient 5, gives ``out = [[0, 0], [5, 0]]``.
    """
    # Task 4.9: max pooling's backward for planes t0..t1-1: every input pixel's gradient is
    # the sum of the gradients of the windows it won.
    ### BEGIN SOLUTION
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
                winner = idx[b, ch, y, xo]
                out[b, ch, winner // w, winner % w] += grad[b, ch, y, xo]
    ### END SOLUTION


# ---------------------------------------------------------------------------
# Max pooling when the windows tile the image: kernel == stride, no padding,
# no dilation, every window inside the image (LeNet's 2 x 2 pooling).  The
# specialised path beside max_pool2d: no padding tests and no index
# arithmetic per tap, and a backward that writes every input pixel once
# (each belongs to exactly one window) instead of zeroing then scattering.
# The backend takes it for large inputs only (docs/kernels.md).
# ---------------------------------------------------------------------------
@njit(**_JIT)
def max_pool2d_tiles(x, kh, kw, oh, ow, out, idx, t0, t1):
    """max_pool2d for windows that tile ``x``; the same winners as ``window_max``."""
    n, c, h, w = x.shape
    for task in range(t0, t1):
        b = task // c
        ch = task - b * c
        if kh == 2 and kw == 2:
            _max_pool_rows_2x2(x[b, ch], oh, ow, out[b, ch], idx[b, ch])
            continue
        for y in range(oh):
            for xo in range(ow):
                y0 = y * kh
                x0 = xo * kw
                best = x[b, ch, y0, x0]
                best_i = y0 * w + x0
                first = True                  # the window's first pixel is taken as it is
                for i in range(kh):
                    for j in range(kw):
                        v = x[b, ch, y0 + i, x0 + j]
                        # As window_max: the first maximum wins, a NaN wins and
                        # ends its row of the window.
                        if first or v > best or v != v:
                            best = v
                            best_i = (y0 + i) * w + x0 + j
                            first = False
                            if v != v:
                                break
                out[b, ch, y, xo] = best
                idx[b, ch, y, xo] = best_i


@njit(**_JIT)
def _max_pool_rows_2x2(plane, oh, ow, out, idx):
    """2 x 2 windows of one plane, written without branches so that LLVM
    vectorises the loop over a row of windows (several windows at once).

    Each ``take`` is window_max's test: a later pixel wins if it is larger
    or NaN, and a NaN ends its row of the window (``a1`` is skipped after a
    NaN ``a0``, ``a3`` after a NaN ``a2``).
    """
    w = plane.shape[1]
    for y in range(oh):
        r0 = plane[2 * y]
        r1 = plane[2 * y + 1]
        o_row = out[y]
        i_row = idx[y]
        base = 2 * y * w
        for xo in range(ow):
            a0 = r0[2 * xo]
            a1 = r0[2 * xo + 1]
            a2 = r1[2 * xo]
            a3 = r1[2 * xo + 1]
            best = a0
            k = 0
            take = (a1 > best or a1 != a1) and a0 == a0
            best = a1 if take else best
            k = 1 if take else k
            take = a2 > best or a2 != a2
            best = a2 if take else best
            k = w if take else k
            take = (a3 > best or a3 != a3) and a2 == a2
            best = a3 if take else best
            k = w + 1 if take else k
            o_row[xo] = best
            i_row[xo] = base + 2 * xo + k


@njit(**_JIT)
def max_pool2d_tiles_backward(grad, idx, kh, kw, out, t0, t1):
    """Zero each plane, then put each window's gradient on its winner.

    Windows that tile the input do not overlap, so each winner gets exactly
    one gradient: a plain store, where the general kernel must add (and
    find the row and column of the winner by a division).
    """
    n, c, oh, ow = grad.shape
    hw = out.shape[2] * out.shape[3]
    flat = out.reshape(n * c, hw)
    for task in range(t0, t1):
        b = task // c
        ch = task - b * c
        plane = flat[task]
        for p in range(hw):
            plane[p] = 0
        for y in range(oh):
            for xo in range(ow):
                plane[idx[b, ch, y, xo]] = grad[b, ch, y, xo]


# ---------------------------------------------------------------------------
# Batch-major columns: cols_t has shape (C*kh*kw, N*oh*ow), so a whole batch's
# convolution is ONE matrix product  weight (O, C*kh*kw) @ cols_t, instead of N
# small ones.  Row r = (c, i, j); column = (sample, output pixel).
# ---------------------------------------------------------------------------
@njit(**_JIT)
def im2col_batch(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, cols, t0, t1):
    """im2col for a whole batch: every receptive field of ``x`` becomes one column of ``cols``.

    Args:
        x: the input, shape ``(N, C, H, W)``.

        kh, kw, sh, sw, ph, pw, dh, dw: the kernel size, stride, padding and
        dilation along the height and the width.

        oh, ow: the output's height and width (each window is one output pixel).

        cols: the result, shape ``(C*kh*kw, N*oh*ow)``: row ``(ch*kh + i)*kw + j``
        holds tap ``(i, j)`` of channel ``ch``; column ``(b*oh + y)*ow + xo``
        is the window of output pixel ``(y, xo)`` of sample ``b``.  Taps that
        fall into the padding are 0.  Its old contents are garbage.

        t0, t1: the rows of ``cols`` to fill (``t0 <= row < t1``); no other row
        is touched, so rows can be filled in parallel.

    :func:`index_maps.source` gives the input row (or column) that an output
    position and a tap read, or -1 in the padding.

    Example: ``x`` of shape (1, 1, 2, 2) holding ``[[1, 2], [3, 4]]``, a 2x2 kernel,
    stride 1, no padding: ``oh = ow = 1`` and ``cols = [[1], [2], [3], [4]]``.
    """
    # Task 4.2: fill rows t0..t1-1 of cols: each column of cols is one receptive field of
    # x (one output pixel of one sample), each row one tap of one channel, 0 in the padding.
    ### BEGIN SOLUTION
    n, c, h, w = x.shape
    L = oh * ow
    taps = kh * kw
    for row in range(t0, t1):
        ch, tap = divmod(row, taps)          # row = (ch * kh + i) * kw + j
        i, j = divmod(tap, kw)
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
    ### END SOLUTION


@njit(**_JIT)
def col2im_batch(cols, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, x, t0, t1):
    """col2im for a whole batch, the adjoint of :func:`im2col_batch`: columns summed back.

    Args:
        cols: shape ``(C*kh*kw, N*oh*ow)``, laid out as :func:`im2col_batch` fills it.

        kh, kw, sh, sw, ph, pw, dh, dw, oh, ow: the geometry, as for im2col_batch.

        x: the result, shape ``(N, C, H, W)``; its old contents are garbage.

        t0, t1: the planes of ``x`` to compute: plane ``task`` is sample
        ``task // C``, channel ``task % C``, for ``t0 <= task < t1``; no other
        plane is touched.

    Each pixel of ``x`` gets the sum of every entry of ``cols`` that im2col
    would have copied from it (entries from the padding go nowhere): so for
    any ``v`` and ``cols``, ``sum(im2col(v) * cols) == sum(v * col2im(cols))``.
    This is im2col's backward.

    Example: a (1, 1, 3, 1) input, a 2x1 kernel, stride 1: ``oh = 2``, and
    ``cols = [[1, 10], [100, 1000]]`` gives ``x = [[[[1], [110], [1000]]]]``.
    """
    # Task 4.3: compute planes t0..t1-1 of x: every pixel is the sum of the entries of cols
    # that im2col would have copied from it.
    ### BEGIN SOLUTION
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
    ### END SOLUTION


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
def max_pool2d_tiles_parallel(x, kh, kw, oh, ow, out, idx):
    for t in prange(x.shape[0] * x.shape[1]):
        task = np.int64(t)
        max_pool2d_tiles(x, kh, kw, oh, ow, out, idx, task, task + 1)


@njit(**_PARALLEL)
def max_pool2d_tiles_backward_parallel(grad, idx, kh, kw, out):
    for t in prange(grad.shape[0] * grad.shape[1]):
        task = np.int64(t)
        max_pool2d_tiles_backward(grad, idx, kh, kw, out, task, task + 1)


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

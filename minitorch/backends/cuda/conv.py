"""CUDA kernels for convolution and pooling: im2col, col2im, max pooling.

Convolution is a matrix product over the columns that ``im2col`` builds
(see ``cpu/conv.py``); the product runs on the tiled matmul kernel.  Here
each kernel has **one thread per element**:

* ``im2col``: one thread per column entry; it works out which input pixel
  (or padding zero) belongs there.
* ``col2im`` is a sum *into* the image.  The CPU loops over the columns
  and adds each into its pixel, one task per plane.  On the GPU, one thread
  per pixel instead *gathers* the column entries that land on it: the
  kernel offsets ``(i, j)`` for which ``y * stride - pad + i * dilation``
  hits the pixel give at most one output position each.  No two threads
  write the same pixel, so no atomic adds are needed, and the terms are
  added in the CPU's order: the results are bit-for-bit the CPU's.
* the max-pool backward adds each output gradient into its window's
  winner, with atomic adds (its interface gives no geometry to gather with).

All arrays are contiguous; ``geometry`` is ``(kh, kw, sh, sw, ph, pw, dh,
dw, oh, ow)``.
"""

from numba import cuda

from .bodies import index_maps
from .launch import kernel


@kernel
def im2col(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, cols):
    """x: (N, C, H, W) -> cols: (N, C*kh*kw, oh*ow)."""
    n, c, h, w = x.shape
    rows = c * kh * kw
    L = oh * ow
    for e in range(cuda.grid(1), n * rows * L, cuda.gridsize(1)):
        b = e // (rows * L)
        rest = e - b * rows * L
        row = rest // L
        col = rest - row * L
        ch = row // (kh * kw)
        i = (row // kw) % kh
        j = row % kw
        iy = index_maps.source(col // ow, i, sh, ph, dh, h)
        ix = index_maps.source(col % ow, j, sw, pw, dw, w)
        cols[b, row, col] = x[b, ch, iy, ix] if iy >= 0 and ix >= 0 else 0


@kernel
def col2im(cols, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, x, zero):
    """cols: (N, C*kh*kw, oh*ow) summed back into x: (N, C, H, W).

    ``zero`` is 0 in the dtype of ``x``: the sum starts from it and stays in
    that dtype, as the CPU's ``x[...] += ...`` does.
    """
    n, c, h, w = x.shape
    for e in range(cuda.grid(1), n * c * h * w, cuda.gridsize(1)):
        b = e // (c * h * w)
        ch = (e // (h * w)) % c
        yy = (e // w) % h
        xx = e % w
        acc = zero
        for i in range(kh):
            y = index_maps.target(yy, i, sh, ph, dh, oh)
            if y < 0:
                continue
            for j in range(kw):
                xo = index_maps.target(xx, j, sw, pw, dw, ow)
                if xo >= 0:
                    acc += cols[b, (ch * kh + i) * kw + j, y * ow + xo]
        x[b, ch, yy, xx] = acc


@kernel
def im2col_batch(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, cols):
    """x: (N, C, H, W) -> cols: (C*kh*kw, N*oh*ow), all samples side by side."""
    n, c, h, w = x.shape
    L = oh * ow
    total = cols.shape[0] * cols.shape[1]
    for e in range(cuda.grid(1), total, cuda.gridsize(1)):
        row = e // (n * L)
        rest = e - row * n * L
        b = rest // L
        col = rest - b * L
        ch = row // (kh * kw)
        i = (row // kw) % kh
        j = row % kw
        iy = index_maps.source(col // ow, i, sh, ph, dh, h)
        ix = index_maps.source(col % ow, j, sw, pw, dw, w)
        cols[row, rest] = x[b, ch, iy, ix] if iy >= 0 and ix >= 0 else 0


@kernel
def col2im_batch(cols, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, x, zero):
    """cols: (C*kh*kw, N*oh*ow) summed back into x: (N, C, H, W) (``zero``: see col2im)."""
    n, c, h, w = x.shape
    L = oh * ow
    for e in range(cuda.grid(1), n * c * h * w, cuda.gridsize(1)):
        b = e // (c * h * w)
        ch = (e // (h * w)) % c
        yy = (e // w) % h
        xx = e % w
        acc = zero
        for i in range(kh):
            y = index_maps.target(yy, i, sh, ph, dh, oh)
            if y < 0:
                continue
            for j in range(kw):
                xo = index_maps.target(xx, j, sw, pw, dw, ow)
                if xo >= 0:
                    acc += cols[(ch * kh + i) * kw + j, b * L + y * ow + xo]
        x[b, ch, yy, xx] = acc


@kernel
def max_pool2d(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, out, idx):
    """Max over each window, one thread per output; ``idx`` = flat index ``y*W + x`` of the winner.

    The same search as the CPU's: padding never wins, NaN wins.
    """
    n, c, h, w = x.shape
    for e in range(cuda.grid(1), n * c * oh * ow, cuda.gridsize(1)):
        b = e // (c * oh * ow)
        ch = (e // (oh * ow)) % c
        y = (e // ow) % oh
        xo = e % ow
        out[b, ch, y, xo], idx[b, ch, y, xo] = index_maps.window_max(
            x, b, ch, y, xo, kh, kw, sh, sw, ph, pw, dh, dw)


@kernel
def max_pool2d_backward(grad, idx, out):
    """Add each output gradient to its window's winner (``out`` is zeroed first).

    One thread per output gradient, with an atomic add: windows overlap
    when the stride is smaller than the kernel, and then two threads may
    hit the same pixel.  (Without overlap every pixel gets at most one
    term, and the result is exactly the CPU's.)
    """
    n, c, oh, ow = grad.shape
    w = out.shape[3]
    for e in range(cuda.grid(1), n * c * oh * ow, cuda.gridsize(1)):
        b = e // (c * oh * ow)
        ch = (e // (oh * ow)) % c
        y = (e // ow) % oh
        xo = e % ow
        k = idx[b, ch, y, xo]
        cuda.atomic.add(out, (b, ch, k // w, k % w), grad[b, ch, y, xo])

"""CUDA kernels for convolution and pooling: im2col, col2im, max pooling.

Convolution is a matrix product over the columns that ``im2col`` builds
(see ``cpu/conv.py``); the product runs on the tiled matmul kernel.  Here
each kernel has **one thread per element**.

Which input pixel each column entry reads is not worked out here: it is
*the student's own im2col* (``cpu/conv.py::im2col_batch``, course task 4.2)
run once per geometry on an "index image", one sample whose pixels hold
their own numbers.  im2col only copies pixels, so the columns it builds
from that image say, entry by entry, which pixel lands there (or a zero
for the padding).  That *tap map* (see ``backend.py::_tap_map``) travels
to the GPU once, and then:

* ``im2col`` and ``im2col_batch``: one thread per column entry copies the
  pixel its tap map names;
* ``col2im`` and ``col2im_batch`` (im2col's adjoint): one thread per pixel adds up
  the column entries that the tap map sends to it, listed per pixel
  (``starts``/``order``, sorted by entry, which is the CPU's order of
  addition: the results are bit-for-bit the CPU's).  No two threads write
  the same pixel, so no atomic adds are needed.

The max-pool backward adds each output gradient into its window's winner:
the backend runs the general scatter-add (``index.py``) over each plane.
So none of the three is a second copy of a course task: each runs the
student's code, or a general kernel.

All arrays are contiguous.
"""

from numba import cuda

from .bodies import index_maps
from .launch import kernel


@kernel
def im2col(x, taps, cols):
    """``cols[b, k] = x[b, taps[k]]``, or 0 where ``taps[k]`` is -1 (the padding).

    ``x`` is the images, one row each (N, C*H*W); ``taps`` the tap map of one
    sample's columns, flattened (C*kh*kw*L,); ``cols`` (N, C*kh*kw*L).
    """
    n, size = cols.shape
    for e in range(cuda.grid(1), n * size, cuda.gridsize(1)):
        b = e // size
        k = e - b * size
        p = taps[k]
        cols[b, k] = x[b, p] if p >= 0 else 0


@kernel
def im2col_batch(x, taps, L, cols):
    """The batch layout: ``cols[r, b*L + c] = x[b, taps[r*L + c]]`` (0 for -1), ``cols``
    of shape (C*kh*kw, N*L)."""
    n = x.shape[0]
    total = cols.shape[0] * cols.shape[1]
    for e in range(cuda.grid(1), total, cuda.gridsize(1)):
        r = e // (n * L)
        rest = e - r * n * L
        b = rest // L
        p = taps[r * L + rest - b * L]
        cols[r, rest] = x[b, p] if p >= 0 else 0


@kernel
def col2im(cols, starts, order, x, zero):
    """``x[b, p]`` = the sum of ``cols[b, order[k]]`` for ``starts[p] <= k < starts[p + 1]``.

    ``cols`` (N, C*kh*kw*L), ``x`` (N, C*H*W).  ``zero`` is 0 in the dtype of
    ``x``: the sum starts from it and stays in that dtype, as the CPU's
    ``x[...] += ...`` does.
    """
    n, size = x.shape
    for e in range(cuda.grid(1), n * size, cuda.gridsize(1)):
        b = e // size
        p = e - b * size
        acc = zero
        for k in range(starts[p], starts[p + 1]):
            acc += cols[b, order[k]]
        x[b, p] = acc


@kernel
def col2im_batch(cols, L, starts, order, x, zero):
    """:func:`col2im` for the batch layout: entry ``q = r*L + c`` of sample ``b`` is
    ``cols[r, b*L + c]``."""
    n, size = x.shape
    for e in range(cuda.grid(1), n * size, cuda.gridsize(1)):
        b = e // size
        p = e - b * size
        acc = zero
        for k in range(starts[p], starts[p + 1]):
            q = order[k]
            r = q // L
            acc += cols[r, b * L + q - r * L]
        x[b, p] = acc


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

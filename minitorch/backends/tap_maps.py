"""Tap maps: which input pixel each entry of im2col's columns reads, for one geometry.

im2col only copies pixels (or writes 0 in the padding).  So run it once on an
*index image*, one sample whose pixels hold their own numbers 1, 2, ...,
c*h*w, and its columns say, entry by entry, which pixel lands there.  That
is the tap map of the geometry: a device that gathers by it needs no index
arithmetic of its own, and the arithmetic it runs is that of the im2col it
was made with.

The im2col here is the course's (``cpu/conv.py::im2col_batch``, task 4.2):
the student's code.  The GPU's im2col and col2im gather by its maps
(``cuda/conv.py``), so the GPU shows no second copy of that task, and they
work in an edition exactly when the student's im2col does.  (This module,
beside the device packages, is the one place where a device's kernels are
built from another's.)
"""

from __future__ import annotations

import numpy as np

from .cpu import conv as cpu_conv

__all__ = ["tap_map"]


def tap_map(c: int, h: int, w: int, geometry: tuple) -> tuple:
    """``(taps, starts, order)`` of im2col over (1, c, h, w) images with ``geometry``.

    Args:
        c, h, w: the channels, height and width of one sample.

        geometry: ``(kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)``, as the kernels take it.

    Returns:
        ``taps`` (int64, ``c*kh*kw*oh*ow`` long): entry ``r*L + col`` of the columns
        (``L = oh*ow``) reads pixel ``taps[...]`` of the flattened (c, h, w) sample,
        or -1 in the padding.  Its inverse, for col2im: ``order`` lists the entries
        that read a pixel, pixel after pixel, each pixel's in increasing order (the
        CPU's order of addition), and ``starts[p]:starts[p + 1]`` is pixel ``p``'s
        part of ``order`` (``starts`` is ``c*h*w + 1`` long).

    Example: c = 1, h = w = 2, a 2x2 kernel, stride 1, no padding: one window, so
    ``taps = [0, 1, 2, 3]``, ``starts = [0, 1, 2, 3, 4]``, ``order = [0, 1, 2, 3]``.
    """
    image = np.arange(1, c * h * w + 1, dtype=np.int64).reshape(1, c, h, w)
    kh, kw, oh, ow = geometry[0], geometry[1], geometry[8], geometry[9]
    cols = np.empty((c * kh * kw, oh * ow), np.int64)
    cpu_conv.im2col_batch(image, *geometry, cols, 0, cols.shape[0])
    taps = cols.reshape(-1) - 1
    inside = np.flatnonzero(taps >= 0)
    order = inside[np.argsort(taps[inside], kind="stable")]
    starts = np.zeros(c * h * w + 1, np.int64)
    np.cumsum(np.bincount(taps[inside], minlength=c * h * w), out=starts[1:])
    return taps, starts, order

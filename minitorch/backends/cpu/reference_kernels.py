"""Readable reference kernels: a reduction and a matrix product, written plainly.

The engine's own kernels for these two jobs (``cpu/reduce.py`` and
``cpu/matmul.py``) are tuned: runs folded by vectorised loops, columns summed
in blocks, matrices packed into tiles that stay in the cache, work split over
threads.  They are hundreds of lines, and their speed comes from details that
hide *what* they compute.  The kernels here compute the same thing in a few
lines each, the obvious way, one element at a time.  They are the
specification: the tests check that the tuned kernels give the same results
as these, on random shapes, strides and batches, and the engine then runs the
tuned ones (course tasks 2.4 and 2.5 are these two kernels).

Both take NumPy arrays and write into ``out``; neither allocates.
"""

import numpy as np
from numba import njit

from .bodies import index_maps, reduce_ops

_JIT = dict(cache=True, error_model="numpy")


@njit(**_JIT)
def reduce_reference(op, x, x_pos, keep_shape, keep_st, red_shape, red_st, acc0, out):
    """Sum, nansum, prod, all or any of ``x`` over the reduced dims, one output at a time.

    The caller has split ``x``'s dims in two groups (see ``cpu/reduce.py``):
    the *kept* dims, one output element per kept index, and the *reduced*
    dims, whose elements are folded into that output element.

    Args:
        op: a ``reduce_ops`` code of the sum family (``SUM``, ``NANSUM``,
        ``PROD``, ``ALL``, ``ANY``).

        x: the input's storage (1-D).

        x_pos: the storage position of the input's element ``(0, 0, ...)``.

        keep_shape, keep_st: the kept dims' sizes and strides (1-D int64
        arrays, maybe empty: then there is one output).

        red_shape, red_st: the reduced dims' sizes and strides (1-D int64
        arrays).

        acc0: where each fold starts (the op's identity, 0 or 1), a float64
        or an int64: the fold runs in ``acc0``'s type.

        out: the outputs (1-D, one per kept index, in row-major order of
        ``keep_shape``); the folded value is stored, cast to ``out``'s dtype.

    Each output is the fold, from ``acc0``, of its reduced elements with
    ``reduce_ops.fold(op, acc, 0, v, r)`` (which returns ``(acc, index)``;
    the index matters only for max and min).  ``index_maps.position(i, shape,
    strides, pos)`` is the storage position of the ``i``-th element of a
    strided block.  Example: ``x = [1., 2., 3., 4., 5., 6.]`` seen as a (2, 3)
    matrix (strides (3, 1)), summed over dim 1: ``keep_shape = [2]``,
    ``keep_st = [3]``, ``red_shape = [3]``, ``red_st = [1]``, and ``out``
    becomes ``[6., 15.]``.
    """
    # Task 2.5: out[o] = the fold (reduce_ops.fold, from acc0) of every reduced element of
    # output o, for every output.
    ### BEGIN SOLUTION
    n_out = 1
    for d in range(keep_shape.shape[0]):
        n_out *= keep_shape[d]
    n_red = 1
    for d in range(red_shape.shape[0]):
        n_red *= red_shape[d]
    for o in range(n_out):
        first = index_maps.position(o, keep_shape, keep_st, x_pos)
        acc = acc0
        for r in range(n_red):
            p = index_maps.position(r, red_shape, red_st, first)
            acc, _ = reduce_ops.fold(op, acc, 0, x[p], r)
        out[o] = acc
    ### END SOLUTION


@njit(**_JIT)
def matmul_reference(a, b, out):
    """A batch of matrix products: ``out[i] = a[i] @ b[i]`` for each batch index ``i``.

    Args:
        a: shape ``(nb, M, K)``, or ``(1, M, K)``: one matrix for every batch.

        b: shape ``(nb, K, N)``, or ``(1, K, N)``.

        out: shape ``(nb, M, N)``: overwritten (whatever it held before).

    Every element ``out[i, r, c]`` is the dot product of row ``r`` of
    ``a[i]`` with column ``c`` of ``b[i]``, stored in ``out``'s dtype (a
    batch of size 1 is used for every ``i``; ``K`` may be 0: then ``out`` is
    all zeros).  Example: ``a = [[[1., 2.]]]``, ``b = [[[3.], [4.]]]`` give
    ``out = [[[11.]]]``.
    """
    # Task 2.4: out[i] = a[i] @ b[i] for every batch index i (a batch of size 1 is broadcast).
    ### BEGIN SOLUTION
    nb, M, N = out.shape
    K = a.shape[2]
    for i in range(nb):
        ai = i if a.shape[0] > 1 else 0
        bi = i if b.shape[0] > 1 else 0
        for r in range(M):
            for c in range(N):
                acc = 0.0
                for k in range(K):
                    acc += a[ai, r, k] * b[bi, k, c]
                out[i, r, c] = acc
    ### END SOLUTION

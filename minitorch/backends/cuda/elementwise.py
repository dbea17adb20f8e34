"""CUDA kernels for elementwise work: fill, map, zip, where, and copy (with cast) as a map.

The same families and op codes as ``cpu/elementwise.py``, and the same
scalar functions: :mod:`minitorch.backends.scalar_ops` is compiled a second
time, for the GPU, with ``cuda.jit(device=True)`` (``cuda/bodies.py``).  So ``a + b`` on a
GPU runs exactly the arithmetic it runs on the CPU; only the loop differs.

On the CPU a few threads each walk a long chunk of the output.  On the GPU
there are tens of thousands of threads, and each takes *one element at a
time* (grid-stride loop, see ``launch.py``)::

    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        ...element i...

Each family has two kernels, as on the CPU:

* a **contiguous** kernel: every operand is a run of memory starting at a
  position (``a0``), read with step ``sa`` = 1, or 0 for one value repeated
  (a broadcast scalar).  Neighbouring threads read neighbouring
  addresses, which the hardware coalesces;
* a **strided** kernel: thread ``i`` turns its flat index into a multi-index
  with ``%`` and ``//`` (last dimension first) and each operand's position
  from its strides (``index_maps.positions2``/``3``/``4``).  A CPU thread moves like
  an odometer from one element to the next; a GPU thread jumps, so it
  computes each position from scratch.

Shapes and strides arrive as tuples (passed by value with the launch, no
copy to the device); one version of a strided kernel is compiled per number
of dimensions, and the backend merges dimensions first (``coalesce``), so
there are few.
"""

from typing import Any

from numba import cuda

from ..shared_bodies import derive as derive_kernel
from .bodies import index_maps, scalar_ops
from .launch import device_function, kernel, seed_warning_registry


# ---------------------------------------------------------------------------
# Fill.  (Copy, with cast, is the map with the identity: see below.)
# ---------------------------------------------------------------------------
@kernel
def fill_contiguous(out, o0, n, value):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[o0 + i] = value


@kernel
def fill_strided(out, o0, o_st, shape, n, value):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        po, _ = index_maps.positions2(i, shape, o_st, o0, o_st, o0)
        out[po] = value


# ---------------------------------------------------------------------------
# Map and zip: the course's tasks 6.1-6.4, and the kernels derived from them.
#
# The families of one shape differ only in the scalar function they call
# (``unary`` or ``unary_fast``; ``arith``, ``binary``, ``binary_int`` or
# ``compare``).  So each shape is written once, as a task, and the other
# families' kernels are *derived* from it (:func:`derive`): the same code
# object, compiled with a ``scalar_ops`` in which the task's function name
# means another family's function.  A student's kernel therefore runs every
# family on the GPU, and there is no twin kernel to copy from.
# ---------------------------------------------------------------------------
@kernel
def unary_contiguous(op, a, a0, sa, out, o0, n, p0, p1):
    """Map on the GPU, over runs of memory: ``out[o0 + i] = unary(op, a[a0 + i * sa], p0, p1)``.

    Args:
        op: the op code of the ``scalar_ops.unary`` family (``EXP``, ...).

        a: the input buffer (1-D device array); ``a0`` its first position;
        ``sa`` its step: 1 for a run of memory, 0 for one value repeated.

        out: the output buffer (1-D); ``o0`` its first position.

        n: how many elements to compute (``out[o0]`` .. ``out[o0 + n - 1]``).

        p0, p1: the op's parameters (``scalar_ops.unary(op, x, p0, p1)``).

    Launched as ``unary_contiguous[blocks, threads](...)`` with any number of
    threads, more or fewer than ``n``: every element is computed exactly once,
    and nothing outside ``out[o0:o0 + n]`` is written.

    Example: with ``a = [0., 1.]``, ``unary_contiguous[1, 1](EXP, a, 0, 1, out, 0, 2,
    0., 0.)`` leaves ``out = [1., e]``.
    """
    # Task 6.1: map on the GPU: every element of the output run is computed by one of
    # the launch's threads, whatever the number of blocks and threads (grid-stride).
    ### BEGIN SOLUTION
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[o0 + i] = scalar_ops.unary(op, a[a0 + i * sa], p0, p1)
    ### END SOLUTION


@kernel
def unary_strided(op, a, a0, a_st, out, o0, o_st, shape, n, p0, p1):
    """Map on the GPU, any strides: ``out[index] = unary(op, a[index], p0, p1)``.

    Args:
        op, p0, p1: as for :func:`unary_contiguous`.

        a: the input buffer (1-D); ``a0`` the position of its element 0;
        ``a_st`` its strides (a tuple, one per dimension of ``shape``;
        0 along a broadcast dimension).

        out: the output buffer (1-D); ``o0`` and ``o_st`` as for ``a``.

        shape: the output's shape (a tuple); ``n`` its number of elements.

    Every element of ``shape`` is computed exactly once, by some thread, for
    any launch size; element number ``i`` in row-major order is the one whose
    multi-index is ``i`` written in the "digits" of ``shape``.

    Example: ``a = [0., 1., 2., 3.]`` read as the transpose of a 2x2 matrix
    (``a_st = (1, 2)``), ``shape = (2, 2)``, ``o_st = (2, 1)`` and op NEG give
    ``out = [-0., -2., -1., -3.]``.
    """
    # Task 6.4: strided map on the GPU: each thread finds the positions of its elements in
    # a and out from their flat (row-major) numbers, shape and strides.
    ### BEGIN SOLUTION
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        pa, po = index_maps.positions2(i, shape, a_st, a0, o_st, o0)
        out[po] = scalar_ops.unary(op, a[pa], p0, p1)
    ### END SOLUTION


@kernel
def arith_contiguous(op, a, a0, sa, b, b0, sb, out, o0, n):
    """Zip on the GPU, over runs of memory: ``out[o0 + i] = arith(op, a[.], b[.])``.

    Args:
        op: the op code of the ``scalar_ops.arith`` family (``ADD``, ``MUL``, ...).

        a, b: the input buffers (1-D); ``a0``/``b0`` their first positions;
        ``sa``/``sb`` their steps: 1 for a run, 0 for one value repeated.

        out: the output buffer (1-D); ``o0`` its first position.

        n: how many elements to compute.

    Every ``out[o0 + i]``, ``0 <= i < n``, is computed exactly once, from the
    ``i``-th element of each input's run, for any launch size; nothing else
    is written.

    Example: ``a = [1., 2., 3.]``, ``b = [10.]`` with ``sb = 0`` and op ADD give
    ``out = [11., 12., 13.]``.
    """
    # Task 6.2: zip on the GPU: out's run of n elements from a's and b's runs (a step of 0
    # repeats one value), every element by one thread, for any launch size.
    ### BEGIN SOLUTION
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[o0 + i] = scalar_ops.arith(op, a[a0 + i * sa], b[b0 + i * sb])
    ### END SOLUTION


@kernel
def arith_strided(op, a, a0, a_st, b, b0, b_st, out, o0, o_st, shape, n):
    """Zip on the GPU, any strides: ``out[index] = arith(op, a[index], b[index])``.

    Args:
        op: as for :func:`arith_contiguous`.

        a, b, out: the buffers (1-D); ``a0``, ``b0``, ``o0`` the positions of
        their element 0; ``a_st``, ``b_st``, ``o_st`` their strides (tuples,
        one per dimension of ``shape``; 0 along a broadcast dimension).

        shape: the output's shape (a tuple); ``n`` its number of elements.

    Every element of ``shape`` is computed exactly once, for any launch size.

    Example: ``a = [0., 1., 2., 3., 4., 5.]`` read as a 3x2 transpose
    (``a_st = (1, 3)``) plus the row ``b = [100., 200.]`` broadcast down
    (``b_st = (0, 1)``), ``shape = (3, 2)``: ``out = [100., 203., 101., 204., 102., 205.]``.
    """
    # Task 6.3: strided zip on the GPU: each thread finds the positions of its elements in
    # a, b and out from their flat (row-major) numbers, shape and strides.
    ### BEGIN SOLUTION
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        pa, pb, po = index_maps.positions3(i, shape, a_st, a0, b_st, b0, o_st, o0)
        out[po] = scalar_ops.arith(op, a[pa], b[pb])
    ### END SOLUTION


def _unary_int(op, x, p0, p1):
    """``scalar_ops.unary_int`` with the map kernels' signature (the parameters unused)."""
    return scalar_ops.unary_int(op, x)


def _identity(op, x, p0, p1):
    """The value itself, for the copy kernels (the store into ``out`` converts the dtype)."""
    return x


def _twin_kernel(twin: Any) -> Any:
    """Compile a derived kernel as every kernel here is
    (:func:`~minitorch.backends.cuda.launch.kernel`), after giving its globals, a fresh
    copy, their ``__warningregistry__``
    (:func:`~minitorch.backends.cuda.launch.seed_warning_registry`)."""
    seed_warning_registry(twin.__globals__)
    return kernel(twin)


def derive(task_kernel: Any, name: str, **means: Any) -> Any:
    """:func:`minitorch.backends.shared_bodies.derive` for the GPU, as the CPU derives its
    twins: ``derive(arith_contiguous, "binary_contiguous", arith=scalar_ops.binary)`` is
    the zip kernel of the ``binary`` family, the task's loop with ``binary`` for each
    element."""
    return derive_kernel(task_kernel, name, _twin_kernel, **means)


unary_fast_contiguous = derive(unary_contiguous, "unary_fast_contiguous",
                               unary=scalar_ops.unary_fast)
unary_fast_strided = derive(unary_strided, "unary_fast_strided", unary=scalar_ops.unary_fast)
# The int family takes no parameters: the backend passes p0 = p1 = 0.
unary_int_contiguous = derive(unary_contiguous, "unary_int_contiguous",
                              unary=device_function(_unary_int))
unary_int_strided = derive(unary_strided, "unary_int_strided", unary=device_function(_unary_int))
# Copy with cast: the map with the identity (the backend passes op = p0 = p1 = 0).
copy_contiguous = derive(unary_contiguous, "copy_contiguous", unary=device_function(_identity))
copy_strided = derive(unary_strided, "copy_strided", unary=device_function(_identity))

binary_contiguous = derive(arith_contiguous, "binary_contiguous", arith=scalar_ops.binary)
binary_strided = derive(arith_strided, "binary_strided", arith=scalar_ops.binary)
binary_int_contiguous = derive(arith_contiguous, "binary_int_contiguous",
                               arith=scalar_ops.binary_int)
binary_int_strided = derive(arith_strided, "binary_int_strided", arith=scalar_ops.binary_int)
compare_contiguous = derive(arith_contiguous, "compare_contiguous", arith=scalar_ops.compare)
compare_strided = derive(arith_strided, "compare_strided", arith=scalar_ops.compare)


# ---------------------------------------------------------------------------
# where: out = a if cond else b.
# ---------------------------------------------------------------------------
@kernel
def where_contiguous(c, c0, sc, a, a0, sa, b, b0, sb, out, o0, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[o0 + i] = a[a0 + i * sa] if c[c0 + i * sc] else b[b0 + i * sb]


@kernel
def where_strided(c, c0, c_st, a, a0, a_st, b, b0, b_st, out, o0, o_st, shape, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        pc, pa, pb, po = index_maps.positions4(i, shape, c_st, c0, a_st, a0, b_st, b0, o_st, o0)
        out[po] = a[pa] if c[pc] else b[pb]

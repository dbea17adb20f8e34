"""CPU kernels for elementwise work: strided copy (with dtype cast), map and zip.

Every operand reaches a kernel as ``(buffer, position, strides)`` over the
output's shape: broadcasting has already turned a smaller operand into one
with stride 0 along the stretched dimensions, so the kernels never think
about broadcasting.  Each family has two kernels:

* a *contiguous fast path*: every operand is a plain run of memory (or a
  single value repeated), so the loop is ``out[i] = f(a[i], b[i])``, which
  LLVM vectorises;
* a *strided path* that walks any shape and strides, over a range of
  flat (row-major) element numbers ``start..stop``: it finds the starting
  multi-index once, then moves like an odometer: run along the last
  dimension, and when a dimension wraps around, carry into the next.
  Each run along the last dimension is itself checked: when the output and
  the inputs step by 1 (or an input by 0, a broadcast value) the run is the
  same simple loop as the contiguous path and vectorises; only truly
  strided runs take the general loop.  The backend sorts the dimensions
  into memory order first (:func:`minitorch.layout.memory_order`), so the
  last dimension is the one that moves fastest through memory.

The op code (``op``) selects the arithmetic inside one compiled kernel; see
:mod:`minitorch.backends.scalar_ops`, whose functions are written once and
compiled here for the CPU (``cpu/bodies.py``) and for the GPU.  Ops are grouped in small *families*
(``arith`` = add/sub/mul/div and their reversed forms, ``unary_fast`` =
neg/abs/relu/..., ``compare``, and larger math families).  A family must be
small for speed: LLVM lifts a loop-invariant ``if op == ...`` out of the
loop and vectorises each case only when there are few cases.  Only the hot
families get a strided kernel; the backend makes other families' inputs
contiguous first.

**Serial kernels, parallel drivers.**  Every kernel here is a plain serial
loop.  Running it on several threads is the job of a second, tiny function
named after it, ``<kernel>_parallel``, which cuts the work into chunks of
``CHUNK`` elements and runs the serial kernel on each chunk in a ``prange``
loop.  A chunk of a contiguous problem is the same problem on slices
(``_piece``), so the contiguous kernels are simply called on slices; the
strided kernels take the range of flat elements to do (``start, stop``).
The backend calls a ``_parallel`` driver only when there is more than one
chunk of work and more than one thread (``backend._parallel``).  Two
reasons: waking the threads costs more than a small operation, and a
``parallel=True`` function takes two to three times as long to compile as
the same loop without it (Numba outlines the loop body into a separate
function, a "gufunc", compiles it again and wraps it in a scheduler), so a
process that never needs threads (one thread, or only small tensors) never
compiles them.  The drivers call the serial kernels as ordinary functions:
each loop is compiled once and shared by both paths.

Why one kernel per family?  Numba caches a kernel on disk only if it is a
module-level function that calls module-level functions.  A kernel that
takes the scalar function as an argument is never cached and would be
compiled again in every process.  So each family gets its own kernel, but
the loops are written once: the other families' kernels (``binary``,
``compare``, ``unary_fast`` ...) are *derived* from the map, zip and strided
zip kernels by :func:`_derive` (:func:`minitorch.backends.shared_bodies.derive`,
which the CUDA backend uses too): the same code compiled with another family's
scalar function, and cached under the derived kernel's name.
"""

import numpy as np
from numba import njit, prange

from ..shared_bodies import derive, rebind
from . import odometer
from .bodies import scalar_ops

CHUNK = 16384  # elements per parallel task (see the ``_parallel`` drivers)

# The kernels use NumPy's error model: 1.0/0.0 is inf, not ZeroDivisionError.
_JIT = dict(cache=True, error_model="numpy")
_PARALLEL = dict(parallel=True, cache=True, error_model="numpy")


# ---------------------------------------------------------------------------
# Copy (with cast): out = a, converted to out's dtype by the store.
# ---------------------------------------------------------------------------
@njit(**_JIT)
def copy_contiguous(a, out):
    n = out.shape[0]
    if a.shape[0] == n:
        for i in range(n):
            out[i] = a[i]
    else:
        v = a[0]
        for i in range(n):
            out[i] = v


@njit(**_JIT)
def copy_strided(a, a_pos, a_st, out, o_pos, o_st, shape, start, stop):
    """Copy flat elements ``start..stop`` (row-major over ``shape``) of ``a`` into ``out``.

    Args:
        a, a_pos, a_st: the input's storage (1-D), the position of its element
        ``(0, 0, ...)`` and its strides (an int64 array, one per dim of
        ``shape``; 0 for a broadcast dim).

        out, o_pos, o_st: the same for the output (no stride 0); the store
        casts to ``out``'s dtype.

        shape: the shape both are walked over (int64 array, at least one dim).

        start, stop: the flat (row-major) element numbers to copy:
        ``start..stop - 1`` (a parallel driver gives each thread a chunk).

    Only those elements of ``out`` are written.  ``odometer.start`` finds the
    positions of element ``start``, ``odometer.advance`` moves them on by a
    run.  Example: ``a`` = storage ``[0., 1., 2., 3., 4., 5.]`` seen as the
    transpose of a (2, 3) matrix (shape ``[3, 2]``, strides ``[1, 3]``),
    ``out`` contiguous (strides ``[2, 1]``), ``0, 6``: ``out`` becomes
    ``[0., 3., 1., 4., 2., 5.]``.
    """
    # Task 2.3: copy the flat elements start..stop of a strided view a into a strided view
    # out, a run along the last dim at a time.
    ### BEGIN SOLUTION
    last = shape.size - 1          # the innermost dim
    sa, so = a_st[last], o_st[last]
    idx = np.zeros(shape.shape[0], np.int64)
    pa, pb, po = odometer.start(start, shape, idx, a_pos, a_st, a_pos, a_st, o_pos, o_st)
    i = start
    while i < stop:
        run = min(shape[last] - idx[last], stop - i)
        if so == 1 and sa == 1:
            x = a[pa:pa + run]
            o = out[po:po + run]
            for j in range(run):
                o[j] = x[j]
        elif so == 1 and sa == 0:
            v = a[pa]
            o = out[po:po + run]
            for j in range(run):
                o[j] = v
        else:
            for j in range(run):
                out[po + j * so] = a[pa + j * sa]
        i += run
        pa, pb, po = odometer.advance(run, shape, idx, a_st, a_st, o_st, pa, pb, po)
    ### END SOLUTION


@njit(**_JIT)
def unary_fast_strided(op, a, a_pos, a_st, out, o_pos, o_st, shape, p0, p1, start, stop):
    """Map over a strided view: ``out = unary_fast(op, a, p0, p1)`` for flat elements
    ``start..stop``.

    Args:
        op, p0, p1: the op code of the ``unary_fast`` family and its two parameters.

        a, a_pos, a_st: the input's storage (1-D), the position of its element
        ``(0, 0, ...)`` and its strides (an int64 array, one per dim of ``shape``).

        out, o_pos, o_st: the same for the output (no stride 0).

        shape: the shape both are walked over (int64 array, at least one dim).

        start, stop: the flat (row-major) element numbers to do: ``start..stop - 1``.

    Only those elements of ``out`` are written.  Example: ``a`` = storage
    ``[1., -2., 3., -4.]`` seen as the transpose of a (2, 2) matrix (strides
    ``[1, 2]``), ``out`` contiguous (strides ``[2, 1]``), ``op = NEG``,
    ``start, stop = 0, 4``: ``out`` becomes ``[-1., -3., 2., 4.]``.
    """
    # Task 2.6: out = unary_fast(op, a, p0, p1) for the flat elements start..stop of a strided
    # view, a run along the last dim at a time.
    ### BEGIN SOLUTION
    last = shape.size - 1          # the innermost dim
    sa, so = a_st[last], o_st[last]
    idx = np.zeros(shape.shape[0], np.int64)
    pa, pb, po = odometer.start(start, shape, idx, a_pos, a_st, a_pos, a_st, o_pos, o_st)
    i = start
    while i < stop:
        run = min(shape[last] - idx[last], stop - i)
        if so == 1 and sa == 1:
            x = a[pa:pa + run]
            o = out[po:po + run]
            for j in range(run):
                o[j] = scalar_ops.unary_fast(op, x[j], p0, p1)
        else:
            for j in range(run):
                out[po + j * so] = scalar_ops.unary_fast(op, a[pa + j * sa], p0, p1)
        i += run
        pa, pb, po = odometer.advance(run, shape, idx, a_st, a_st, o_st, pa, pb, po)
    ### END SOLUTION


# ---------------------------------------------------------------------------
# Map: out = f(a), contiguous.  One kernel per family.
# ---------------------------------------------------------------------------

@njit(**_JIT)
def unary_contiguous(op, a, out, p0, p1):
    """Map: apply one op of the ``unary`` family to every element of a contiguous buffer.

    Args:
        op: the op code (``scalar_ops.EXP``, ``scalar_ops.SIN``, ...).

        a: the input, 1-D, as long as ``out``.

        out: the output, 1-D; its dtype may differ from ``a``'s (the store casts).

        p0, p1: the op's two parameters (``CLAMP``'s bounds, ...), passed on to
        ``scalar_ops.unary(op, x, p0, p1)``, which computes one element.

    Every element of ``out`` is written, and nothing else.  Example: ``op =
    NEG``, ``a = [1., -2.]`` gives ``out = [-1., 2.]``.  (The ``unary_fast``
    and ``unary_int`` families' map kernels are derived from this one.)
    """
    # Task 2.1: map: every out[i] is op applied to a[i] (with the parameters p0, p1).
    ### BEGIN SOLUTION
    for i in range(out.shape[0]):
        out[i] = scalar_ops.unary(op, a[i], p0, p1)
    ### END SOLUTION


# ---------------------------------------------------------------------------
# Zip: out = f(a, b).  In the contiguous kernels an operand of length 1 is a
# value repeated (a broadcast scalar), read once before the loop.
# ---------------------------------------------------------------------------

@njit(**_JIT)
def arith_contiguous(op, a, b, out):
    """Zip: combine two contiguous buffers element by element with one ``arith`` op.

    Args:
        op: the op code (``scalar_ops.ADD``, ``SUB``, ``MUL``, ``DIV``, ``RSUB`` ...);
        ``scalar_ops.arith(op, x, y)`` computes one element.

        a, b: the inputs, 1-D: each as long as ``out``, or of length 1 (a
        broadcast number: the same value for every element).

        out: the output, 1-D.

    Every element of ``out`` is written, and nothing else.  Example: ``op =
    SUB``, ``a = [5., 6., 7.]``, ``b = [1.]`` gives ``out = [4., 5., 6.]``.
    (The ``binary``, ``binary_int`` and ``compare`` families' zip kernels,
    and ReLU's backward, are derived from this one.)
    """
    # Task 2.2: zip: every out[i] is op applied to the i-th elements of a and b; an input of
    # length 1 is one value repeated.
    ### BEGIN SOLUTION
    n = out.shape[0]
    if a.shape[0] == n and b.shape[0] == n:
        for i in range(n):
            out[i] = scalar_ops.arith(op, a[i], b[i])
    elif b.shape[0] == 1:
        y = b[0]
        for i in range(n):
            out[i] = scalar_ops.arith(op, a[i], y)
    else:
        x = a[0]
        for i in range(n):
            out[i] = scalar_ops.arith(op, x, b[i])
    ### END SOLUTION


@njit(**_JIT)
def arith_strided(op, a, a_pos, a_st, b, b_pos, b_st, out, o_pos, o_st, shape, start, stop):
    """``out = a (op) b`` over flat elements ``start..stop`` (row-major over ``shape``).

    The backend passes ``0, numel`` to do everything on one thread;
    :func:`arith_strided_parallel` passes one chunk per task.  ``sa``,
    ``sb``, ``so`` are the operands' steps along the last dimension.  Each
    run along it takes one of four loops: the first three are the loops
    LLVM vectorises (the slices make every index a plain ``j`` from 0,
    exactly as in the contiguous kernels), the last one handles any steps.
    The loops are written out here rather than in a helper that Numba
    inlines: Numba's inlining copies the helper's IR into the kernel, which
    costs compile time, and the kernel came out about 20% slower.

    Args: as :func:`unary_fast_strided`, with a second input ``b, b_pos,
    b_st`` (either input may have stride 0 along a dim: a broadcast value).
    Only elements ``start..stop - 1`` of ``out`` are written.  Example: ``a`` a
    (2, 3) matrix ``[[1, 2, 3], [4, 5, 6]]`` (strides ``[3, 1]``), ``b`` a
    broadcast row ``[10, 20, 30]`` (strides ``[0, 1]``), ``op = ADD``,
    ``0, 6``: ``out`` becomes ``[11, 22, 33, 14, 25, 36]``.
    """
    # Task 2.7: out = arith(op, a, b) for the flat elements start..stop of three strided
    # views, a run along the last dim at a time, runs of step 1 (or 0 for an input) as
    # slices.
    ### BEGIN SOLUTION
    last = shape.size - 1          # the innermost dim
    sa, sb, so = a_st[last], b_st[last], o_st[last]
    idx = np.zeros(shape.shape[0], np.int64)
    pa, pb, po = odometer.start(start, shape, idx, a_pos, a_st, b_pos, b_st, o_pos, o_st)
    i = start
    while i < stop:
        run = min(shape[last] - idx[last], stop - i)
        if so == 1 and sa == 1 and sb == 1:            # three runs
            x = a[pa:pa + run]
            y = b[pb:pb + run]
            o = out[po:po + run]
            for j in range(run):
                o[j] = scalar_ops.arith(op, x[j], y[j])
        elif so == 1 and sa == 1 and sb == 0:          # b repeated: x + bias
            x = a[pa:pa + run]
            v = b[pb]
            o = out[po:po + run]
            for j in range(run):
                o[j] = scalar_ops.arith(op, x[j], v)
        elif so == 1 and sa == 0 and sb == 1:          # a repeated
            u = a[pa]
            y = b[pb:pb + run]
            o = out[po:po + run]
            for j in range(run):
                o[j] = scalar_ops.arith(op, u, y[j])
        else:
            for j in range(run):
                out[po + j * so] = scalar_ops.arith(op, a[pa + j * sa], b[pb + j * sb])
        i += run
        pa, pb, po = odometer.advance(run, shape, idx, a_st, b_st, o_st, pa, pb, po)
    ### END SOLUTION


# ---------------------------------------------------------------------------
# where: out = a if cond else b.  Inputs are runs or single values (step 0).
# ---------------------------------------------------------------------------
@njit(**_JIT)
def where_contiguous(cond, a, b, out):
    n = out.shape[0]
    sc = 1 if cond.shape[0] == n else 0
    sa = 1 if a.shape[0] == n else 0
    sb = 1 if b.shape[0] == n else 0
    for i in range(n):
        out[i] = a[i * sa] if cond[i * sc] else b[i * sb]


@njit(**_JIT)
def threshold_backward(y, g, out):
    """ReLU's backward: ``out[i] = 0 if y[i] <= 0 else g[i]`` (``y`` the ReLU's output).

    The same arithmetic as ``scalar_ops.arith(THRESHOLD_MASK, ...)``, in a
    kernel of its own: it runs at every training step, and a loop with no
    op switch is one LLVM vectorises for sure.  (In ``arith_contiguous``,
    whose three loops each switch over seven ops, LLVM's loop-unswitching
    budget runs out and the loops stay scalar: measured 20 times slower.)
    It is the zip kernel (task 2.2) with the one op fixed: see
    :func:`_threshold_zip` below.
    """
    _threshold_zip(scalar_ops.THRESHOLD_MASK, y, g, out)


# ---------------------------------------------------------------------------
# The other families' kernels, derived from the ones above.
# ---------------------------------------------------------------------------
def _derive(task_kernel, name, **means):
    """:func:`~minitorch.backends.shared_bodies.derive` for the CPU: the twin is compiled
    (and cached on disk) as the kernels above are, ``njit(cache=True, error_model="numpy")``.
    """
    return derive(task_kernel, name, njit(**_JIT), **means)


@njit(inline="always")
def _unary_int(op, x, p0, p1):
    """``scalar_ops.unary_int`` with the map kernels' signature (the parameters unused)."""
    return scalar_ops.unary_int(op, x)


@njit(inline="always")
def _threshold(op, y, g):
    """ReLU's backward for one element, whatever ``op``: one case, so the loop vectorises."""
    return scalar_ops.arith(scalar_ops.THRESHOLD_MASK, y, g)


unary_fast_contiguous = _derive(unary_contiguous, "unary_fast_contiguous",
                                unary=scalar_ops.unary_fast)
_unary_int_map = _derive(unary_contiguous, "_unary_int_map", unary=_unary_int)
binary_contiguous = _derive(arith_contiguous, "binary_contiguous", arith=scalar_ops.binary)
binary_int_contiguous = _derive(arith_contiguous, "binary_int_contiguous",
                                arith=scalar_ops.binary_int)
compare_contiguous = _derive(arith_contiguous, "compare_contiguous", arith=scalar_ops.compare)
compare_strided = _derive(arith_strided, "compare_strided", arith=scalar_ops.compare)
_threshold_zip = _derive(arith_contiguous, "_threshold_zip", arith=_threshold)


@njit(**_JIT)
def unary_int_contiguous(op, a, out):
    _unary_int_map(op, a, out, 0, 0)


# The four rules of arithmetic, each in zip kernels of its own.  ``arith_contiguous`` and
# ``arith_strided`` test ``op`` against ``arith``'s seven ops for every element, and LLVM
# does not move that test out of their loops: they stay scalar (one float32 add at a
# time, about 7 times slower than NumPy on a million elements).  With the op fixed, as in
# ReLU's backward above, each loop is one that LLVM vectorises (8 float32 adds at a time
# with AVX2).  The twins are the task kernels' own loops (tasks 2.2 and 2.7), so a
# student's loop runs in all of them.
@njit(inline="always")
def _add(op, x, y):
    return scalar_ops.arith(scalar_ops.ADD, x, y)


@njit(inline="always")
def _sub(op, x, y):
    return scalar_ops.arith(scalar_ops.SUB, x, y)


@njit(inline="always")
def _mul(op, x, y):
    return scalar_ops.arith(scalar_ops.MUL, x, y)


@njit(inline="always")
def _div(op, x, y):
    return scalar_ops.arith(scalar_ops.DIV, x, y)


_add_zip = _derive(arith_contiguous, "_add_zip", arith=_add)
_sub_zip = _derive(arith_contiguous, "_sub_zip", arith=_sub)
_mul_zip = _derive(arith_contiguous, "_mul_zip", arith=_mul)
_div_zip = _derive(arith_contiguous, "_div_zip", arith=_div)
_add_strided = _derive(arith_strided, "_add_strided", arith=_add)
_sub_strided = _derive(arith_strided, "_sub_strided", arith=_sub)
_mul_strided = _derive(arith_strided, "_mul_strided", arith=_mul)
_div_strided = _derive(arith_strided, "_div_strided", arith=_div)


# ---------------------------------------------------------------------------
# The parallel drivers: the same work cut into chunks of CHUNK elements, one
# prange task each, every task running the serial kernel above on its chunk.
# Compiled only when the backend first calls them (more than one chunk of
# work and more than one thread).
# ---------------------------------------------------------------------------
@njit(inline="always", **_JIT)
def _chunks(n):
    return (n + CHUNK - 1) // CHUNK


@njit(inline="always", **_JIT)
def _piece(x, n, start, stop):
    """Elements ``start..stop`` of an operand of ``n`` elements; a repeated value as it is."""
    if x.shape[0] == n:
        return x[start:stop]
    return x


@njit(**_PARALLEL)
def copy_contiguous_parallel(a, out):
    n = out.shape[0]
    for c in prange(_chunks(n)):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        copy_contiguous(_piece(a, n, s, e), out[s:e])


@njit(**_PARALLEL)
def copy_strided_parallel(a, a_pos, a_st, out, o_pos, o_st, shape):
    total = odometer.total(shape)
    for c in prange(_chunks(total)):
        copy_strided(a, a_pos, a_st, out, o_pos, o_st, shape, c * CHUNK,
                     min(total, (c + 1) * CHUNK))


@njit(**_PARALLEL)
def unary_fast_strided_parallel(op, a, a_pos, a_st, out, o_pos, o_st, shape, p0, p1):
    total = odometer.total(shape)
    for c in prange(_chunks(total)):
        unary_fast_strided(op, a, a_pos, a_st, out, o_pos, o_st, shape, p0, p1, c * CHUNK,
                           min(total, (c + 1) * CHUNK))


@njit(**_PARALLEL)
def unary_fast_contiguous_parallel(op, a, out, p0, p1):
    n = out.shape[0]
    for c in prange(_chunks(n)):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        unary_fast_contiguous(op, a[s:e], out[s:e], p0, p1)


@njit(**_PARALLEL)
def unary_contiguous_parallel(op, a, out, p0, p1):
    n = out.shape[0]
    for c in prange(_chunks(n)):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        unary_contiguous(op, a[s:e], out[s:e], p0, p1)


@njit(**_PARALLEL)
def unary_int_contiguous_parallel(op, a, out):
    n = out.shape[0]
    for c in prange(_chunks(n)):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        unary_int_contiguous(op, a[s:e], out[s:e])


@njit(**_PARALLEL)
def arith_contiguous_parallel(op, a, b, out):
    n = out.shape[0]
    for c in prange(_chunks(n)):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        arith_contiguous(op, _piece(a, n, s, e), _piece(b, n, s, e), out[s:e])


@njit(**_PARALLEL)
def binary_contiguous_parallel(op, a, b, out):
    n = out.shape[0]
    for c in prange(_chunks(n)):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        binary_contiguous(op, _piece(a, n, s, e), _piece(b, n, s, e), out[s:e])


@njit(**_PARALLEL)
def binary_int_contiguous_parallel(op, a, b, out):
    n = out.shape[0]
    for c in prange(_chunks(n)):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        binary_int_contiguous(op, _piece(a, n, s, e), _piece(b, n, s, e), out[s:e])


@njit(**_PARALLEL)
def compare_contiguous_parallel(op, a, b, out):
    n = out.shape[0]
    for c in prange(_chunks(n)):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        compare_contiguous(op, _piece(a, n, s, e), _piece(b, n, s, e), out[s:e])


@njit(**_PARALLEL)
def arith_strided_parallel(op, a, a_pos, a_st, b, b_pos, b_st, out, o_pos, o_st, shape):
    total = odometer.total(shape)
    for c in prange(_chunks(total)):
        arith_strided(op, a, a_pos, a_st, b, b_pos, b_st, out, o_pos, o_st, shape, c * CHUNK,
                      min(total, (c + 1) * CHUNK))


@njit(**_PARALLEL)
def compare_strided_parallel(op, a, a_pos, a_st, b, b_pos, b_st, out, o_pos, o_st, shape):
    total = odometer.total(shape)
    for c in prange(_chunks(total)):
        compare_strided(op, a, a_pos, a_st, b, b_pos, b_st, out, o_pos, o_st, shape, c * CHUNK,
                        min(total, (c + 1) * CHUNK))


@njit(**_PARALLEL)
def threshold_backward_parallel(y, g, out):
    n = out.shape[0]
    for c in prange(_chunks(n)):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        threshold_backward(y[s:e], g[s:e], out[s:e])


@njit(**_PARALLEL)
def where_contiguous_parallel(cond, a, b, out):
    n = out.shape[0]
    for c in prange(_chunks(n)):
        s, e = c * CHUNK, min(n, (c + 1) * CHUNK)
        where_contiguous(_piece(cond, n, s, e), _piece(a, n, s, e), _piece(b, n, s, e),
                         out[s:e])


# The parallel drivers of the arithmetic twins: the drivers above, running the twin.
def _rebind_parallel(driver, name, **names):
    return rebind(driver, name, njit(**_PARALLEL), **names)


_add_zip_parallel = _rebind_parallel(arith_contiguous_parallel, "_add_zip_parallel",
                                     arith_contiguous=_add_zip)
_sub_zip_parallel = _rebind_parallel(arith_contiguous_parallel, "_sub_zip_parallel",
                                     arith_contiguous=_sub_zip)
_mul_zip_parallel = _rebind_parallel(arith_contiguous_parallel, "_mul_zip_parallel",
                                     arith_contiguous=_mul_zip)
_div_zip_parallel = _rebind_parallel(arith_contiguous_parallel, "_div_zip_parallel",
                                     arith_contiguous=_div_zip)
_add_strided_parallel = _rebind_parallel(arith_strided_parallel, "_add_strided_parallel",
                                         arith_strided=_add_strided)
_sub_strided_parallel = _rebind_parallel(arith_strided_parallel, "_sub_strided_parallel",
                                         arith_strided=_sub_strided)
_mul_strided_parallel = _rebind_parallel(arith_strided_parallel, "_mul_strided_parallel",
                                         arith_strided=_mul_strided)
_div_strided_parallel = _rebind_parallel(arith_strided_parallel, "_div_strided_parallel",
                                         arith_strided=_div_strided)

#: op code -> (contiguous kernel, strided kernel) of the ops that have twins, one thread.
#: The backend looks the op up in Python, so a program compiles the twins of the ops it
#: uses, and no other.
ARITH_TWINS = {scalar_ops.ADD: (_add_zip, _add_strided), scalar_ops.SUB: (_sub_zip, _sub_strided),
               scalar_ops.MUL: (_mul_zip, _mul_strided), scalar_ops.DIV: (_div_zip, _div_strided)}
#: The same, parallel drivers.
ARITH_TWINS_PARALLEL = {
    scalar_ops.ADD: (_add_zip_parallel, _add_strided_parallel),
    scalar_ops.SUB: (_sub_zip_parallel, _sub_strided_parallel),
    scalar_ops.MUL: (_mul_zip_parallel, _mul_strided_parallel),
    scalar_ops.DIV: (_div_zip_parallel, _div_strided_parallel),
}

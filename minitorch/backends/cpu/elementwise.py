"""CPU kernels for elementwise work: strided copy (with dtype cast), map and zip.

Every operand reaches a kernel as ``(buffer, position, strides)`` over the
output's shape: broadcasting has already turned a smaller operand into one
with stride 0 along the stretched dimensions, so the kernels never think
about broadcasting.  Each family has two kernels:

* a *contiguous fast path*: every operand is a plain run of memory (or a
  single value repeated), so the loop is ``out[i] = f(a[i], b[i])``, which
  LLVM vectorises;
* a *strided path* that walks any shape and strides.  It splits the output
  into chunks of ``CHUNK`` elements, one per parallel task; each task finds
  its starting multi-index once, then moves like an odometer: run along the
  last dimension, and when a dimension wraps around, carry into the next.
  Each run along the last dimension is itself checked: when the output and
  the inputs step by 1 (or an input by 0, a broadcast value) the run is the
  same simple loop as the contiguous path and vectorises; only truly
  strided runs take the general loop.  The backend sorts the dimensions
  into memory order first (:func:`minitorch.layout.memory_order`), so the
  last dimension is the one that moves fastest through memory.

The op code (``op``) selects the arithmetic inside one compiled kernel; see
:mod:`minitorch.backends.scalar_ops`.  Ops are grouped in small *families*
(``arith`` = add/sub/mul/div and their reversed forms, ``unary_fast`` =
neg/abs/relu/..., ``compare``, and larger math families).  A family must be
small for speed: LLVM lifts a loop-invariant ``if op == ...`` out of the
loop and vectorises each case only when there are few cases.  Only the hot
families get a strided kernel; the backend makes other families' inputs
contiguous first.

Why so many near-identical loops?  Numba caches a kernel on disk only if it
is a module-level function that calls module-level functions.  A kernel
that takes the scalar function as an argument, or one built by a factory,
is never cached and would be compiled again in every process.
"""

import numpy as np
from numba import njit, prange

from .. import scalar_ops

CHUNK = 16384  # elements per parallel task on the strided path

# Numba's disk cache decides whether a kernel is stale by hashing THIS file's
# text only; it does not notice edits to scalar_ops.py, whose functions are
# compiled into the kernels below.  So this file carries scalar_ops.py's
# hash: editing scalar_ops.py means updating this line, which changes this
# file and invalidates its cached kernels.  tests/test_kernel_cache.py fails
# (and prints the new value) when the two disagree.
SCALAR_OPS_SHA256 = "70c0bbb3bfe2d7c44fbfb8d1f60e28284d4962813868572c60cff36f2cb6bdbb"

# The kernels use NumPy's error model: 1.0/0.0 is inf, not ZeroDivisionError.
_JIT = dict(cache=True, error_model="numpy")
_PARALLEL = dict(parallel=True, cache=True, error_model="numpy")

_unary_fast = njit(inline="always", **_JIT)(scalar_ops.unary_fast)
_unary = njit(inline="always", **_JIT)(scalar_ops.unary)
_unary_int = njit(inline="always", **_JIT)(scalar_ops.unary_int)
_arith = njit(inline="always", **_JIT)(scalar_ops.arith)
_binary = njit(inline="always", **_JIT)(scalar_ops.binary)
_binary_int = njit(inline="always", **_JIT)(scalar_ops.binary_int)
_compare = njit(inline="always", **_JIT)(scalar_ops.compare)


# ---------------------------------------------------------------------------
# The odometer, shared by every strided kernel.
# ---------------------------------------------------------------------------
@njit(inline="always", **_JIT)
def _start(start, shape, idx, a_pos, a_st, b_pos, b_st, o_pos, o_st):
    """Set ``idx`` to the multi-index of flat element ``start``; return positions."""
    rem = start
    for d in range(shape.shape[0] - 1, -1, -1):
        i = rem % shape[d]
        rem //= shape[d]
        idx[d] = i
        a_pos += i * a_st[d]
        b_pos += i * b_st[d]
        o_pos += i * o_st[d]
    return a_pos, b_pos, o_pos


@njit(inline="always", **_JIT)
def _advance(run, shape, idx, a_st, b_st, o_st, a_pos, b_pos, o_pos):
    """Move ``run`` steps along the last dim, then carry wrapped dims outward."""
    last = shape.shape[0] - 1
    idx[last] += run
    a_pos += run * a_st[last]
    b_pos += run * b_st[last]
    o_pos += run * o_st[last]
    d = last
    while d > 0 and idx[d] == shape[d]:
        a_pos -= shape[d] * a_st[d]
        b_pos -= shape[d] * b_st[d]
        o_pos -= shape[d] * o_st[d]
        idx[d] = 0
        d -= 1
        idx[d] += 1
        a_pos += a_st[d]
        b_pos += b_st[d]
        o_pos += o_st[d]
    return a_pos, b_pos, o_pos


@njit(inline="always", **_JIT)
def _total(shape):
    n = 1
    for d in range(shape.shape[0]):
        n *= shape[d]
    return n


# ---------------------------------------------------------------------------
# One run along the last dimension.  ``run`` elements; position and step of
# each operand.  The special cases are the loops LLVM can vectorise: the
# slices make every index a plain ``j`` from 0, exactly as in the
# contiguous kernels.
# ---------------------------------------------------------------------------
@njit(inline="always", **_JIT)
def _copy_run(a, pa, sa, out, po, so, run):
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


@njit(inline="always", **_JIT)
def _unary_fast_run(op, a, pa, sa, out, po, so, run, p0, p1):
    if so == 1 and sa == 1:
        x = a[pa:pa + run]
        o = out[po:po + run]
        for j in range(run):
            o[j] = _unary_fast(op, x[j], p0, p1)
    else:
        for j in range(run):
            out[po + j * so] = _unary_fast(op, a[pa + j * sa], p0, p1)


@njit(inline="always", **_JIT)
def _arith_run(op, a, pa, sa, b, pb, sb, out, po, so, run):
    if so == 1 and sa == 1 and sb == 1:
        x = a[pa:pa + run]
        y = b[pb:pb + run]
        o = out[po:po + run]
        for j in range(run):
            o[j] = _arith(op, x[j], y[j])
    elif so == 1 and sa == 1 and sb == 0:
        x = a[pa:pa + run]
        v = b[pb]
        o = out[po:po + run]
        for j in range(run):
            o[j] = _arith(op, x[j], v)
    elif so == 1 and sa == 0 and sb == 1:
        u = a[pa]
        y = b[pb:pb + run]
        o = out[po:po + run]
        for j in range(run):
            o[j] = _arith(op, u, y[j])
    else:
        for j in range(run):
            out[po + j * so] = _arith(op, a[pa + j * sa], b[pb + j * sb])


@njit(inline="always", **_JIT)
def _compare_run(op, a, pa, sa, b, pb, sb, out, po, so, run):
    if so == 1 and sa == 1 and sb == 1:
        x = a[pa:pa + run]
        y = b[pb:pb + run]
        o = out[po:po + run]
        for j in range(run):
            o[j] = _compare(op, x[j], y[j])
    elif so == 1 and sa == 1 and sb == 0:
        x = a[pa:pa + run]
        v = b[pb]
        o = out[po:po + run]
        for j in range(run):
            o[j] = _compare(op, x[j], v)
    else:
        for j in range(run):
            out[po + j * so] = _compare(op, a[pa + j * sa], b[pb + j * sb])


# ---------------------------------------------------------------------------
# Copy (with cast): out = a, converted to out's dtype by the store.
# ---------------------------------------------------------------------------
@njit(**_PARALLEL)
def copy_contiguous(a, out):
    n = out.shape[0]
    if a.shape[0] == n:
        for i in prange(n):
            out[i] = a[i]
    else:
        v = a[0]
        for i in prange(n):
            out[i] = v


@njit(**_PARALLEL)
def copy_strided(a, a_pos, a_st, out, o_pos, o_st, shape):
    total = _total(shape)
    last = shape.shape[0] - 1
    for c in prange((total + CHUNK - 1) // CHUNK):
        start = c * CHUNK
        stop = min(total, start + CHUNK)
        idx = np.zeros(shape.shape[0], np.int64)
        pa, pb, po = _start(start, shape, idx, a_pos, a_st, a_pos, a_st, o_pos, o_st)
        i = start
        while i < stop:
            run = min(shape[last] - idx[last], stop - i)
            _copy_run(a, pa, a_st[last], out, po, o_st[last], run)
            i += run
            pa, pb, po = _advance(run, shape, idx, a_st, a_st, o_st, pa, pb, po)


@njit(**_PARALLEL)
def unary_fast_strided(op, a, a_pos, a_st, out, o_pos, o_st, shape, p0, p1):
    total = _total(shape)
    last = shape.shape[0] - 1
    for c in prange((total + CHUNK - 1) // CHUNK):
        start = c * CHUNK
        stop = min(total, start + CHUNK)
        idx = np.zeros(shape.shape[0], np.int64)
        pa, pb, po = _start(start, shape, idx, a_pos, a_st, a_pos, a_st, o_pos, o_st)
        i = start
        while i < stop:
            run = min(shape[last] - idx[last], stop - i)
            _unary_fast_run(op, a, pa, a_st[last], out, po, o_st[last], run, p0, p1)
            i += run
            pa, pb, po = _advance(run, shape, idx, a_st, a_st, o_st, pa, pb, po)


# ---------------------------------------------------------------------------
# Map: out = f(a), contiguous.  One kernel per family.
# ---------------------------------------------------------------------------

@njit(**_PARALLEL)
def unary_fast_contiguous(op, a, out, p0, p1):
    for i in prange(out.shape[0]):
        out[i] = _unary_fast(op, a[i], p0, p1)


@njit(**_PARALLEL)
def unary_contiguous(op, a, out, p0, p1):
    for i in prange(out.shape[0]):
        out[i] = _unary(op, a[i], p0, p1)


@njit(**_PARALLEL)
def unary_int_contiguous(op, a, out):
    for i in prange(out.shape[0]):
        out[i] = _unary_int(op, a[i])


# ---------------------------------------------------------------------------
# Zip: out = f(a, b).  In the contiguous kernels an operand of length 1 is a
# value repeated (a broadcast scalar), read once before the loop.
# ---------------------------------------------------------------------------

@njit(**_PARALLEL)
def arith_contiguous(op, a, b, out):
    n = out.shape[0]
    if a.shape[0] == n and b.shape[0] == n:
        for i in prange(n):
            out[i] = _arith(op, a[i], b[i])
    elif b.shape[0] == 1:
        y = b[0]
        for i in prange(n):
            out[i] = _arith(op, a[i], y)
    else:
        x = a[0]
        for i in prange(n):
            out[i] = _arith(op, x, b[i])


@njit(**_PARALLEL)
def binary_contiguous(op, a, b, out):
    n = out.shape[0]
    if a.shape[0] == n and b.shape[0] == n:
        for i in prange(n):
            out[i] = _binary(op, a[i], b[i])
    elif b.shape[0] == 1:
        y = b[0]
        for i in prange(n):
            out[i] = _binary(op, a[i], y)
    else:
        x = a[0]
        for i in prange(n):
            out[i] = _binary(op, x, b[i])


@njit(**_PARALLEL)
def binary_int_contiguous(op, a, b, out):
    n = out.shape[0]
    if a.shape[0] == n and b.shape[0] == n:
        for i in prange(n):
            out[i] = _binary_int(op, a[i], b[i])
    elif b.shape[0] == 1:
        y = b[0]
        for i in prange(n):
            out[i] = _binary_int(op, a[i], y)
    else:
        x = a[0]
        for i in prange(n):
            out[i] = _binary_int(op, x, b[i])


@njit(**_PARALLEL)
def compare_contiguous(op, a, b, out):
    n = out.shape[0]
    if a.shape[0] == n and b.shape[0] == n:
        for i in prange(n):
            out[i] = _compare(op, a[i], b[i])
    elif b.shape[0] == 1:
        y = b[0]
        for i in prange(n):
            out[i] = _compare(op, a[i], y)
    else:
        x = a[0]
        for i in prange(n):
            out[i] = _compare(op, x, b[i])


@njit(**_PARALLEL)
def arith_strided(op, a, a_pos, a_st, b, b_pos, b_st, out, o_pos, o_st, shape):
    total = _total(shape)
    last = shape.shape[0] - 1
    for c in prange((total + CHUNK - 1) // CHUNK):
        start = c * CHUNK
        stop = min(total, start + CHUNK)
        idx = np.zeros(shape.shape[0], np.int64)
        pa, pb, po = _start(start, shape, idx, a_pos, a_st, b_pos, b_st, o_pos, o_st)
        i = start
        while i < stop:
            run = min(shape[last] - idx[last], stop - i)
            _arith_run(op, a, pa, a_st[last], b, pb, b_st[last], out, po, o_st[last], run)
            i += run
            pa, pb, po = _advance(run, shape, idx, a_st, b_st, o_st, pa, pb, po)


@njit(**_PARALLEL)
def compare_strided(op, a, a_pos, a_st, b, b_pos, b_st, out, o_pos, o_st, shape):
    total = _total(shape)
    last = shape.shape[0] - 1
    for c in prange((total + CHUNK - 1) // CHUNK):
        start = c * CHUNK
        stop = min(total, start + CHUNK)
        idx = np.zeros(shape.shape[0], np.int64)
        pa, pb, po = _start(start, shape, idx, a_pos, a_st, b_pos, b_st, o_pos, o_st)
        i = start
        while i < stop:
            run = min(shape[last] - idx[last], stop - i)
            _compare_run(op, a, pa, a_st[last], b, pb, b_st[last], out, po, o_st[last], run)
            i += run
            pa, pb, po = _advance(run, shape, idx, a_st, b_st, o_st, pa, pb, po)


# ---------------------------------------------------------------------------
# where: out = a if cond else b.  Inputs are runs or single values (step 0).
# ---------------------------------------------------------------------------
@njit(**_PARALLEL)
def where_contiguous(cond, a, b, out):
    n = out.shape[0]
    sc = 1 if cond.shape[0] == n else 0
    sa = 1 if a.shape[0] == n else 0
    sb = 1 if b.shape[0] == n else 0
    for i in prange(n):
        out[i] = a[i * sa] if cond[i * sc] else b[i * sb]

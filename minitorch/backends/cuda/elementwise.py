"""CUDA kernels for elementwise work: strided copy (with cast), fill, map, zip, where.

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
  (a broadcast scalar).  ``out[o0 + i] = f(a[a0 + i * sa])``: neighbouring
  threads read neighbouring addresses, which the hardware coalesces;
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

from numba import cuda

from .bodies import index_maps, scalar_ops


# ---------------------------------------------------------------------------
# Copy (with cast) and fill.
# ---------------------------------------------------------------------------
@cuda.jit(cache=True)
def copy_contiguous(a, a0, sa, out, o0, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[o0 + i] = a[a0 + i * sa]


@cuda.jit(cache=True)
def copy_strided(a, a0, a_st, out, o0, o_st, shape, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        pa, po = index_maps.positions2(i, shape, a_st, a0, o_st, o0)
        out[po] = a[pa]


@cuda.jit(cache=True)
def fill_contiguous(out, o0, n, value):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[o0 + i] = value


@cuda.jit(cache=True)
def fill_strided(out, o0, o_st, shape, n, value):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        po, _ = index_maps.positions2(i, shape, o_st, o0, o_st, o0)
        out[po] = value


# ---------------------------------------------------------------------------
# Map: out = f(a).  One pair of kernels per family.
# ---------------------------------------------------------------------------
@cuda.jit(cache=True)
def unary_fast_contiguous(op, a, a0, sa, out, o0, n, p0, p1):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[o0 + i] = scalar_ops.unary_fast(op, a[a0 + i * sa], p0, p1)


@cuda.jit(cache=True)
def unary_fast_strided(op, a, a0, a_st, out, o0, o_st, shape, n, p0, p1):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        pa, po = index_maps.positions2(i, shape, a_st, a0, o_st, o0)
        out[po] = scalar_ops.unary_fast(op, a[pa], p0, p1)


@cuda.jit(cache=True)
def unary_contiguous(op, a, a0, sa, out, o0, n, p0, p1):
    # Task 6.1: map on the GPU: each thread takes elements i, i + gridsize, ... (grid-stride).
    ### BEGIN SOLUTION
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[o0 + i] = scalar_ops.unary(op, a[a0 + i * sa], p0, p1)
    ### END SOLUTION


@cuda.jit(cache=True)
def unary_strided(op, a, a0, a_st, out, o0, o_st, shape, n, p0, p1):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        pa, po = index_maps.positions2(i, shape, a_st, a0, o_st, o0)
        out[po] = scalar_ops.unary(op, a[pa], p0, p1)


@cuda.jit(cache=True)
def unary_int_contiguous(op, a, a0, sa, out, o0, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[o0 + i] = scalar_ops.unary_int(op, a[a0 + i * sa])


@cuda.jit(cache=True)
def unary_int_strided(op, a, a0, a_st, out, o0, o_st, shape, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        pa, po = index_maps.positions2(i, shape, a_st, a0, o_st, o0)
        out[po] = scalar_ops.unary_int(op, a[pa])


# ---------------------------------------------------------------------------
# Zip: out = f(a, b).  ``sa``/``sb`` are 1 for a run, 0 for a repeated value.
# ---------------------------------------------------------------------------
@cuda.jit(cache=True)
def arith_contiguous(op, a, a0, sa, b, b0, sb, out, o0, n):
    # Task 6.2: zip on the GPU: out[o0 + i] = arith(op, a[a0 + i * sa], b[b0 + i * sb]).
    ### BEGIN SOLUTION
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[o0 + i] = scalar_ops.arith(op, a[a0 + i * sa], b[b0 + i * sb])
    ### END SOLUTION


@cuda.jit(cache=True)
def arith_strided(op, a, a0, a_st, b, b0, b_st, out, o0, o_st, shape, n):
    # Task 6.3: strided zip on the GPU: each thread computes its positions from its flat index.
    ### BEGIN SOLUTION
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        pa, pb, po = index_maps.positions3(i, shape, a_st, a0, b_st, b0, o_st, o0)
        out[po] = scalar_ops.arith(op, a[pa], b[pb])
    ### END SOLUTION


@cuda.jit(cache=True)
def binary_contiguous(op, a, a0, sa, b, b0, sb, out, o0, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[o0 + i] = scalar_ops.binary(op, a[a0 + i * sa], b[b0 + i * sb])


@cuda.jit(cache=True)
def binary_strided(op, a, a0, a_st, b, b0, b_st, out, o0, o_st, shape, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        pa, pb, po = index_maps.positions3(i, shape, a_st, a0, b_st, b0, o_st, o0)
        out[po] = scalar_ops.binary(op, a[pa], b[pb])


@cuda.jit(cache=True)
def binary_int_contiguous(op, a, a0, sa, b, b0, sb, out, o0, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[o0 + i] = scalar_ops.binary_int(op, a[a0 + i * sa], b[b0 + i * sb])


@cuda.jit(cache=True)
def binary_int_strided(op, a, a0, a_st, b, b0, b_st, out, o0, o_st, shape, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        pa, pb, po = index_maps.positions3(i, shape, a_st, a0, b_st, b0, o_st, o0)
        out[po] = scalar_ops.binary_int(op, a[pa], b[pb])


@cuda.jit(cache=True)
def compare_contiguous(op, a, a0, sa, b, b0, sb, out, o0, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[o0 + i] = scalar_ops.compare(op, a[a0 + i * sa], b[b0 + i * sb])


@cuda.jit(cache=True)
def compare_strided(op, a, a0, a_st, b, b0, b_st, out, o0, o_st, shape, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        pa, pb, po = index_maps.positions3(i, shape, a_st, a0, b_st, b0, o_st, o0)
        out[po] = scalar_ops.compare(op, a[pa], b[pb])


# ---------------------------------------------------------------------------
# where: out = a if cond else b.
# ---------------------------------------------------------------------------
@cuda.jit(cache=True)
def where_contiguous(c, c0, sc, a, a0, sa, b, b0, sb, out, o0, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[o0 + i] = a[a0 + i * sa] if c[c0 + i * sc] else b[b0 + i * sb]


@cuda.jit(cache=True)
def where_strided(c, c0, c_st, a, a0, a_st, b, b0, b_st, out, o0, o_st, shape, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        pc, pa, pb, po = index_maps.positions4(i, shape, c_st, c0, a_st, a0, b_st, b0, o_st, o0)
        out[po] = a[pa] if c[pc] else b[pb]

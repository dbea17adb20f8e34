"""CPU kernel for the batched matrix product ``out[b] = a[b] @ b[b]``.

Multiplying an (M, K) matrix by a (K, N) matrix does 2*M*N*K floating-point
operations but touches only M*K + K*N + M*N numbers, so it can run at the
full speed of the arithmetic units -- *if* every number fetched from memory
is reused many times while it is close to the core.  The naive triple loop
does not do that (it streams rows and columns from memory for every output
element) and runs tens of times slower than NumPy, which calls OpenBLAS.
This module is the classic recipe (Goto's algorithm, as in BLIS and
OpenBLAS) written as plain loops that Numba compiles.  Three ideas:

1. **Packing.**  First copy A into ``ap[b, kb, i, p]`` (row i of A, column
   ``kb*kw + p``) and the *transpose* of B into ``bp[b, kb, j, p]`` (column j
   of B), C-contiguous and padded with zeros to whole tiles.  Now every row
   of ``ap`` and of ``bp`` is a contiguous run along K whatever the strides
   of the inputs were (transposed views, slices, negative strides and
   broadcast batches all look the same afterwards), and the zero padding
   means the hot loop has no edge cases.  Packing costs O(MK + KN) copying,
   small next to the O(MNK) arithmetic.  Because A and B are packed before
   ``out`` is written, ``out`` may even overlap ``a`` or ``b``.

2. **A register-tiled micro-kernel.**  The innermost unit of work computes
   an MR x NR tile of the output (4 x 6 on CPUs with 32 SIMD registers).
   For each p it loads MR numbers of A and NR numbers of B and does MR*NR
   multiply-adds: each load feeds several multiply-adds, where the naive
   loop needs two loads per multiply-add and is limited by loads, not
   arithmetic.  The MR*NR running sums must live in CPU *registers*.  We
   write them as a small array on the stack (``_stack_array`` below): once
   LLVM has fully unrolled the two tiny constant-length tile loops, every
   index into it is a constant, so LLVM turns each element into a register.
   (A NumPy array lives on the heap; LLVM cannot prove that writing it
   leaves ``ap`` and ``bp`` unchanged, so it would load and store every sum
   at every step -- we measured it over 10x slower.)

   The loop over p is then the innermost loop and reads ``ap`` and ``bp``
   contiguously, so LLVM *vectorises* it: each running sum becomes a SIMD
   register of 16 float32 (AVX-512) partial sums over different p, and the
   16 are added up once, at the end of the tile.  That reordering of the
   sum is why the micro-kernel is compiled with ``fastmath={"reassoc",
   "contract"}``: ``reassoc`` allows splitting one sum into partial sums,
   ``contract`` allows fusing ``s + x*y`` into one FMA instruction.  Both
   change only rounding -- BLAS libraries reorder sums the same way.  We do
   *not* use ``fastmath=True``, which also assumes that no value is NaN or
   infinite: a NaN in A or B must still give NaN in the output.

   Why this "dot-product" tile rather than BLIS's "outer-product" tile that
   vectorises along a row of B and needs no final sum?  Numba runs LLVM
   with its SLP (straight-line) vectoriser switched off, and the loop
   vectoriser only vectorises the innermost loop left after the tile loops
   are unrolled: the loop over p.  The price is the horizontal sum of every
   SIMD register at the end of a tile, roughly the cost of 8 steps of p.
   So long K blocks pay off (KC below), and small K is inefficient: for
   K = 64 the kernel spends about as long on the final sums as on the
   multiply-adds.

3. **Cache blocking.**  One micro-kernel call reads MR rows of ``ap`` and
   NR rows of ``bp``, each ``kw`` long (kw <= KC, 1024 float32).  The loops
   around it walk down MC rows of A (the inner ``ir`` loop) with the same NR
   rows of B, which therefore stay in the L1 cache; the MC x kw block of A
   (384 KiB) stays in the 1 MiB L2 cache while the kernel walks across NC
   columns of B, and the NC x kw block of B (3 MiB) stays in L3.  K is cut
   into blocks of at most KC so that these blocks stay small however large
   K is; ``out`` accumulates over the K blocks (the first stores, the others
   add).  KC is a compromise: a longer block spreads the final sums over
   more work, a shorter one fits the caches better (measured optimum: 4 KiB
   of K, i.e. 1024 float32 or 512 float64).

**Parallelism.**  The output is cut into tasks -- (batch item, block of
rows, block of columns) -- that write disjoint parts of ``out``, and
``prange`` spreads the tasks over the threads.  The plain-Python entry
function picks the task shape: with many matrices each task is a whole
matrix; one big matrix is cut into at least ``4 * threads`` pieces so that
the threads get equal shares.  Packing is parallel too.

**Thin products.**  Convolutions by im2col multiply thin matrices, where
the recipe above wastes its effort: with K = 25 the tile's final sums cost
as much as its multiply-adds, and with 6 rows most of each 4-row tile is
padding, while packing copies all of a huge B.  Two shapes get their own
unpacked kernel: short K with a wide B (``_gemm_small_k``, rows
of the output built from rows of B) and long K with only a few outputs
(``_gemm_long_k``, plain dot products of contiguous rows).

**Dtypes and compiled versions.**  float32 and float64 are the fast path;
int32 and int64 run exactly the same kernels (integer sums need no
``fastmath`` to be vectorised, and wrap around on overflow as NumPy's do).
Each dtype is compiled on first use (about 3 s for the first one, cached on
disk after that).  The hot kernel only ever sees C-contiguous packed arrays,
so it has one compiled version per dtype; only the packing kernel sees the
caller's layout, and the entry function orients every input so that the
common cases (contiguous, or a transposed view of something contiguous) are
read as C-contiguous: one more version for arbitrary strided views, and one
for read-only arrays.

**Speed** (measured on a 2-core Zen 4, float32, against NumPy's ``a @ b``,
which calls OpenBLAS, in the same process): on one thread about 0.65x
OpenBLAS at 256 x 256, 0.8x at 512-1024 and 0.9x at 2048; on two threads
about the same ratios.  float64 runs at about 0.85x.  Small matrices (below
~128) are several times slower than OpenBLAS: fixed costs (Python checks,
three kernel launches, the final sums of point 2) dominate there.
Products smaller than 64 x 64 x 64 run on one thread (``_SERIAL_FLOPS``).
"""

from __future__ import annotations

import platform
import threading

import numpy as np
from numba import get_num_threads, njit, prange, set_num_threads, types
from numba.core import cgutils, config
from numba.core.codegen import get_host_cpu_features
from numba.extending import intrinsic, overload
from numba.np.arrayobj import populate_array

__all__ = ["batched_matmul"]

# -- tile and block sizes ----------------------------------------------------
def _simd_shape() -> tuple[int, int]:
    """(SIMD register width in bytes, number of SIMD registers) of this CPU.

    The micro-kernel keeps MR x NR running sums plus the vectors it has just
    loaded in registers; if they do not fit, LLVM "spills" them to the stack
    and the kernel runs at half speed.  x86 CPUs have 32 vector registers of
    64 bytes with AVX-512, and 16 of 32 bytes with AVX2; AArch64 has 32 of
    16 bytes.  We ask the same place Numba asks (it honours
    NUMBA_CPU_NAME/NUMBA_CPU_FEATURES).
    """
    features = config.CPU_FEATURES
    if features is None:
        features = get_host_cpu_features()
    features = features.split(",")
    if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86"):
        if "+avx512f" in features:
            return 64, 32
        return (32, 16) if "+avx" in features else (16, 16)
    return 16, 32


VEC_BYTES, _REGISTERS = _simd_shape()
# The tile is MR rows by two SIMD vectors of columns (NR_BYTES; 16 float32
# or 8 float64 with AVX2).  Its 2*MR sums take 2*MR registers, plus two for
# the row of B just loaded and one for the broadcast number of A: MR = 6
# fills 15 of 16 registers.  But LLVM schedules two steps of p at once and
# needs a few more, so with 16 registers MR = 4 (measured: 6 spills).
MR = 4 if _REGISTERS <= 16 else 8
NR_BYTES = 2 * VEC_BYTES
NR_MAX = NR_BYTES // 4         # columns of the tile for 4-byte dtypes (the most)
KC = 256            # longest K block: the B sliver (KC x NR) stays in L1
MC = 96             # rows of A per L2 block (a multiple of MR)
NC = 768            # columns of B per L3 block (a multiple of every NR)
assert MC % MR == 0 and NC % NR_MAX == 0
# Products of fewer flops than a 64 x 64 x 64 one run on one thread: in a
# quiet machine two threads win only by ~15% there, and on a busy one a
# woken worker thread can wait milliseconds for a core.  (OpenBLAS uses a
# similar threshold.)
_SERIAL_FLOPS = 2 * 64**3

_SUPPORTED = (np.float32, np.float64, np.int32, np.int64)

_JIT = dict(cache=True, error_model="numpy")
_PARALLEL = dict(parallel=True, cache=True, error_model="numpy")


def tile_cols(dtype) -> int:
    """NR, the columns of the micro-kernel's tile for ``dtype``: two SIMD
    vectors' worth (16 float32 or 8 float64 with AVX2)."""
    return NR_MAX  # EXPERIMENT


@overload(tile_cols)
def _tile_cols_jit(dtype):
    # Inside a kernel, ``tile_cols(x.dtype)`` is worked out while Numba
    # compiles: the kernel sees a constant, so LLVM can unroll loops over it.
    n = NR_MAX  # EXPERIMENT
    return lambda dtype: n


# ---------------------------------------------------------------------------
# A fixed-size scratch array on the stack.
# ---------------------------------------------------------------------------
@intrinsic
def _stack_array(typingctx, size, dtype):
    """``_stack_array(N, arr.dtype)``: an uninitialised 1-D array of N items.

    ``N`` must be a compile-time constant (a module-level int).  The memory
    is an LLVM ``alloca`` in the function's stack frame: it is never shared,
    it never escapes, and it is freed on return, so LLVM may keep every
    element in a register (the "scalar replacement of aggregates" pass).
    This is the one piece of Numba internals in the module; everything else
    is ordinary Python.
    """
    if not isinstance(size, types.IntegerLiteral):
        return None
    n = size.literal_value
    arrty = types.Array(dtype.dtype, 1, "C")

    def codegen(context, builder, sig, args):
        llty = context.get_value_type(dtype.dtype)
        ptr = cgutils.alloca_once(builder, llty, size=n)
        itemsize = context.get_abi_sizeof(llty)
        intp = lambda v: context.get_constant(types.intp, v)  # noqa: E731
        ary = context.make_array(arrty)(context, builder)
        populate_array(ary, data=ptr, shape=[intp(n)], strides=[intp(itemsize)],
                       itemsize=intp(itemsize), meminfo=None)
        return ary._getvalue()

    return arrty(size, dtype), codegen


_TILE = MR * NR_MAX  # a module-level constant, so Numba sees it as a literal


# ---------------------------------------------------------------------------
# Packing.
# ---------------------------------------------------------------------------
@njit(**_JIT)
def _pack(src, trans, dst, t0, t1):
    """Pack slivers ``t0 .. t1-1`` of X into ``dst``, zero-padded:
    ``dst[b, kb, s, p, r] = X[b, s*RT + r, kb*kw + p]``, where X is ``src``
    (shape (B, R, K)) or, when ``trans``, ``src`` transposed (``src`` has
    shape (B, K, R)), and ``dst`` has shape (B, nkb, ns, kw, RT).

    A sliver (b, kb, s) is RT rows of X (RT = MR for A, NR for B^T) cut to
    the K block kb, stored "K-major": the RT numbers of one step p lie side
    by side, so the micro-kernel reads both slivers straight through.  The
    last K block may be shorter than kw; its tail is never read.  The entry
    function passes whichever orientation makes the *last* axis of ``src``
    the one with the smaller stride, so the inner loops read memory
    contiguously.
    """
    nb, nkb, ns, kw, rt = dst.shape
    if trans:
        K = src.shape[1]
        R = src.shape[2]
    else:
        K = src.shape[2]
        R = src.shape[1]
    for t in range(t0, t1):
        b = t // (nkb * ns)
        kb = (t // ns) % nkb
        s = t % ns
        k0 = kb * kw
        kv = min(kw, K - k0)          # steps of this K block
        r0 = s * rt
        rv = max(0, min(rt, R - r0))  # rows [0, rv) hold data, [rv, rt) padding
        d = dst[b, kb, s]
        if trans:
            for p in range(kv):
                srow = src[b, k0 + p, r0:r0 + rv]    # contiguous along R
                for r in range(rv):
                    d[p, r] = srow[r]
        else:
            for r in range(rv):
                srow = src[b, r0 + r, k0:k0 + kv]    # contiguous along K
                for p in range(kv):
                    d[p, r] = srow[p]
        for p in range(kv):
            for r in range(rv, rt):
                d[p, r] = 0


@njit(**_PARALLEL)
def _pack_parallel(src, trans, dst):
    """:func:`_pack` of every sliver, the slivers shared among the threads."""
    nb, nkb, ns = dst.shape[:3]
    n = nb * nkb * ns
    per = max(1, (n + 63) // 64)
    for c in prange((n + per - 1) // per):
        _pack(src, trans, dst, c * per, min(n, (c + 1) * per))


# ---------------------------------------------------------------------------
# The micro-kernel and the blocked loops around it.
# ---------------------------------------------------------------------------
@njit(fastmath={"contract"}, **_JIT)
def _micro(a, b, kv, out, ob, ir, jr, first):
    """One MR x NR tile: ``out[ob, ir:ir+MR, jr:jr+NR] (+)= A-sliver @ B-sliver``.

    ``a`` (kw, MR) and ``b`` (kw, NR) are packed slivers; the first ``kv``
    steps of them hold this K block.  Step p adds the outer product of
    column p of the A sliver and row p of the B sliver to the tile.
    """
    nr = tile_cols(a.dtype)           # a compile-time constant
    acc = _stack_array(_TILE, a.dtype)
    for t in range(_TILE):
        acc[t] = 0
    # The hot loop.  The loop over i has a constant trip count, so LLVM
    # unrolls it: for each j the body is MR multiply-adds of one number of
    # B into MR sums.  The loop over j is then vectorised: a step reads the
    # NR numbers of row p of B as two SIMD vectors, "broadcasts" each of the
    # MR numbers of A to a whole vector and does 2*MR vector multiply-adds,
    # each into the vector register holding NR/2 of the tile's sums.  (Put
    # the loop over j innermost and LLVM unrolls it before the vectoriser
    # sees it, leaving scalar code: Numba switches off the "SLP" vectoriser
    # that would vectorise straight-line code.)  No sum is split in parts,
    # so only ``contract`` (FMA) is needed, not ``reassoc``.
    for p in range(kv):
        for j in range(nr):
            bj = b[p, j]
            for i in range(MR):
                acc[i * nr + j] += a[p, i] * bj
    # Write back the part of the tile that lies inside ``out`` (padding
    # rows/columns are dropped).  Every index into ``acc`` must stay a
    # compile-time constant after unrolling, which keeps ``acc`` in registers.
    M = out.shape[1]
    N = out.shape[2]
    if ir + MR <= M and jr + nr <= N:             # a whole tile: vectorised
        o = out[ob]
        if first:
            for j in range(nr):
                for i in range(MR):
                    o[ir + i, jr + j] = acc[i * nr + j]
        else:
            for j in range(nr):
                for i in range(MR):
                    o[ir + i, jr + j] += acc[i * nr + j]
    else:
        for i in range(MR):
            for j in range(nr):
                if ir + i < M and jr + j < N:
                    if first:
                        out[ob, ir + i, jr + j] = acc[i * nr + j]
                    else:
                        out[ob, ir + i, jr + j] += acc[i * nr + j]


@njit(**_JIT)
def _gemm_packed(ap, bp, K, out, task_rows, task_cols, t0, t1):
    """Tasks ``t0 .. t1-1`` of ``out[b] = A[b] @ B[b]`` from packed ``ap`` (A)
    and ``bp`` (B^T), both laid out as :func:`_pack` writes them.

    ``ap``/``bp`` have batch size ``out.shape[0]`` or 1 (a broadcast
    operand is packed once).  The output is cut into tasks of
    ``task_rows`` x ``task_cols`` (multiples of MR and NR) per batch item;
    the tasks write disjoint parts of ``out``.
    """
    nb = out.shape[0]
    nkb, nsa, kw = ap.shape[1:4]
    nsb = bp.shape[2]
    nr = bp.shape[4]
    Mp = nsa * MR
    Np = nsb * nr
    ntm = (Mp + task_rows - 1) // task_rows
    ntn = (Np + task_cols - 1) // task_cols
    for t in range(t0, t1):
        b = t // (ntm * ntn)
        i0 = ((t // ntn) % ntm) * task_rows
        j0 = (t % ntn) * task_cols
        i1 = min(i0 + task_rows, Mp)
        j1 = min(j0 + task_cols, Np)
        ab = b if ap.shape[0] > 1 else 0
        bb = b if bp.shape[0] > 1 else 0
        for kb in range(nkb):                         # K block: slivers short
            kv = min(kw, K - kb * kw)
            for jc in range(j0, j1, NC):              # NC columns of B (L3)
                for ic in range(i0, i1, MC):          # MC rows of A (L2)
                    for jr in range(jc, min(jc + NC, j1), nr):   # B sliver in L1
                        bs = bp[bb, kb, jr // nr]
                        for ir in range(ic, min(ic + MC, i1), MR):
                            _micro(ap[ab, kb, ir // MR], bs, kv, out, b, ir, jr, kb == 0)


@njit(**_PARALLEL)
def _gemm_packed_parallel(ap, bp, K, out, task_rows, task_cols, ntasks):
    """:func:`_gemm_packed` with its tasks shared among the threads."""
    for t in prange(ntasks):
        _gemm_packed(ap, bp, K, out, task_rows, task_cols, t, t + 1)


# ---------------------------------------------------------------------------
# Short K: the outer-product form, no packing.
# ---------------------------------------------------------------------------
SMALL_K = 48        # K up to this (with a wide B) takes _gemm_small_k
SMALL_K_COLS = 256  # columns of out per task of _gemm_small_k, and ...
SMALL_K_ROWS = 16   # ... rows updated together: 16 x 256 float32 outputs (16 KiB) stay in L1


@njit(fastmath={"contract"}, **_PARALLEL)
def _gemm_small_k(a, b, out):
    """``out[i] = a[i] @ b[i]`` for short K: K rank-one updates of each row.

    The packed kernel above vectorises along K and sums each tile's SIMD
    register at the end, which is wasted work when K is a few dozen (an
    im2col product such as LeNet's (6, 25) @ (25, 50176) has K = 25), and it
    copies all of B into a packed buffer first.  Here each output row is
    built as ``out[i, :] = sum_k a[i, k] * b[k, :]``: the innermost loop runs
    along a row of B and a row of ``out``, both contiguous, so it vectorises
    with no final sum, and B is read straight from where it lies.  A task
    owns SMALL_K_COLS columns; it takes SMALL_K_ROWS rows at a time and, for
    each k, adds row k of B into all of them, so the block of outputs it
    updates K times and the row of B stay in the L1 cache.  (Measured: for
    K of a few hundred the packed kernel is as fast or faster, even with
    few rows.)  ``a``, ``b`` and ``out`` are C-contiguous;
    ``a`` or ``b`` may have batch size 1 (broadcast).
    """
    # Task 2.4: matmul for short K: each row of out as a sum of rows of b, tasks in parallel.
    ### BEGIN SOLUTION
    nb, M, N = out.shape
    K = a.shape[2]
    ncb = (N + SMALL_K_COLS - 1) // SMALL_K_COLS
    for t in prange(nb * ncb):
        bi = t // ncb
        j0 = (t - bi * ncb) * SMALL_K_COLS
        w = min(N, j0 + SMALL_K_COLS) - j0
        ai = bi if a.shape[0] > 1 else 0
        bj = bi if b.shape[0] > 1 else 0
        for i0 in range(0, M, SMALL_K_ROWS):
            i1 = min(M, i0 + SMALL_K_ROWS)
            r = b[bj, 0, j0:j0 + w]
            for i in range(i0, i1):
                o = out[bi, i, j0:j0 + w]
                s = a[ai, i, 0]
                for j in range(w):
                    o[j] = s * r[j]
            for k in range(1, K):
                r = b[bj, k, j0:j0 + w]          # one row of B, reused by every row below
                for i in range(i0, i1):
                    o = out[bi, i, j0:j0 + w]
                    s = a[ai, i, k]
                    for j in range(w):
                        o[j] += s * r[j]
    ### END SOLUTION


# ---------------------------------------------------------------------------
# Long K, tiny output: dot products, no packing.
# ---------------------------------------------------------------------------
LONG_K = 4096          # K from this up, with at most LONG_K_OUT outputs per matrix, ...
LONG_K_OUT = 1024      # ... takes _gemm_long_k
LONG_K_CHUNK = 512     # K elements per step: a chunk of every row of A and B^T fits L1/L2


@njit(fastmath={"reassoc", "contract"}, **_PARALLEL)
def _gemm_long_k(a, bt, out, ntasks):
    """``out[b] = a[b] @ bt[b].T``: few outputs, each a dot product of long rows.

    A weight gradient of an im2col convolution, such as LeNet's
    (6, 50176) @ (50176, 25), has 150 outputs that each sum 50176 products.
    Both ``a`` and ``bt`` (B transposed) are C-contiguous, so every output is
    a dot product of two contiguous rows: the innermost loop vectorises
    (``reassoc`` lets LLVM keep SIMD partial sums, ``contract`` use FMA).
    K is cut into chunks of LONG_K_CHUNK, and each chunk of every row is
    reused for all the outputs that need it while it is in cache.  The K
    range is split among ``ntasks`` parallel tasks with private partial
    sums, added at the end.
    """
    nb, M, N = out.shape
    K = a.shape[2]
    per = (K + ntasks - 1) // ntasks
    part = np.zeros((ntasks, nb, M, N), out.dtype)
    for t in prange(ntasks):
        k0 = t * per
        k1 = min(K, k0 + per)
        for bi in range(nb):
            ai = bi if a.shape[0] > 1 else 0
            bj = bi if bt.shape[0] > 1 else 0
            for c0 in range(k0, k1, LONG_K_CHUNK):
                c1 = min(k1, c0 + LONG_K_CHUNK)
                for i in range(M):
                    x = a[ai, i, c0:c1]
                    for j in range(N):
                        y = bt[bj, j, c0:c1]
                        s = part[t, bi, i, j]
                        for k in range(c1 - c0):
                            s += x[k] * y[k]
                        part[t, bi, i, j] = s
    for bi in range(nb):
        for i in range(M):
            for j in range(N):
                s = part[0, bi, i, j]
                for t in range(1, ntasks):
                    s += part[t, bi, i, j]
                out[bi, i, j] = s


# ---------------------------------------------------------------------------
# The entry point (plain Python: checks, layout decisions, task planning).
# ---------------------------------------------------------------------------
def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


# Packing buffers are reused from call to call (one set per Python thread).
# A fresh multi-megabyte np.empty comes straight from the operating system,
# and the first write to each 4 KiB page of it costs a page fault: for a
# 1024^3 float32 product that alone was ~1 ms of a ~15 ms call.
_WORKSPACE_MAX_BYTES = 64 << 20   # keep at most this much per thread
_workspace = threading.local()


def _aligned_bytes(nbytes: int) -> np.ndarray:
    """``nbytes`` uninitialised bytes starting on a 64-byte boundary.

    Packed rows are a multiple of 64 bytes long (KPAD elements), so every
    row then starts on a cache-line boundary and no SIMD load straddles two
    cache lines.  (np.empty only promises 16-byte alignment.)
    """
    raw = np.empty(nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start:start + nbytes]


def _buffers(shape_a, shape_b, dtype):
    """Two uninitialised, 64-byte aligned C-contiguous arrays."""
    na = int(np.prod(shape_a))
    nb = int(np.prod(shape_b))
    # B's buffer starts at the first 64-byte boundary after A's.
    na_padded = _round_up(na * dtype.itemsize, 64) // dtype.itemsize
    nbytes = (na_padded + nb) * dtype.itemsize
    if nbytes > _WORKSPACE_MAX_BYTES:
        buf = _aligned_bytes(nbytes)
    else:
        buf = getattr(_workspace, "buf", None)
        if buf is None or buf.nbytes < nbytes:
            buf = _aligned_bytes(max(nbytes, 1 << 20))
            _workspace.buf = buf
    flat = buf[:nbytes].view(dtype)
    return flat[:na].reshape(shape_a), flat[na_padded:].reshape(shape_b)


def _pack_operand(x: np.ndarray, dst: np.ndarray, parallel: bool) -> None:
    """Pack the logical (B, R, K) array ``x`` into ``dst`` (B', nkb, ns, kw, RT)."""
    # Read along the axis with the smaller stride (see _pack).
    trans = abs(x.strides[2]) > abs(x.strides[1])
    src = x.transpose(0, 2, 1) if trans else x
    if parallel:
        _pack_parallel(src, trans, dst)
    else:
        _pack(src, trans, dst, 0, dst.shape[0] * dst.shape[1] * dst.shape[2])


def _collapse_batch(x: np.ndarray) -> np.ndarray:
    """A broadcast batch (stride 0) is the same matrix repeated: keep one."""
    return x[:1] if x.shape[0] > 1 and x.strides[0] == 0 else x


def _plan_tasks(nb: int, Mp: int, Np: int, nr: int, threads: int):
    """Task shape (rows, cols): enough tasks to give every thread equal work."""
    rows, cols = Mp, Np
    want = 4 * threads if threads > 1 else 1

    def count(r, c):
        return nb * (-(-Mp // r)) * (-(-Np // c))

    while count(rows, cols) < want:
        if rows >= cols and rows > MR:
            rows = _round_up(-(-rows // 2), MR)
        elif cols > nr:
            cols = _round_up(-(-cols // 2), nr)
        elif rows > MR:
            rows = _round_up(-(-rows // 2), MR)
        else:
            break
    return rows, cols, count(rows, cols)


def _run_small_threads(fn, flops: int, *args) -> None:
    """Run ``fn(*args)``, on one thread if it is too little work to share.

    Products of fewer than _SERIAL_FLOPS flops gain little from a second
    thread, and waking a worker on a busy machine can cost milliseconds:
    with one thread the kernels run inline.
    """
    threads = get_num_threads()
    if threads > 1 and flops < _SERIAL_FLOPS:
        set_num_threads(1)
        try:
            fn(*args)
        finally:
            set_num_threads(threads)
    else:
        fn(*args)


def batched_matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = a[i] @ b[i]`` for every batch index ``i``.

    ``a``: (B, M, K), ``b``: (B, K, N), any strides (including 0 for a
    broadcast batch; a batch size of 1 also broadcasts); ``out``: a
    C-contiguous (B, M, N) array.  All three share one dtype: float32,
    float64, int32 or int64.
    """
    if a.ndim != 3 or b.ndim != 3 or out.ndim != 3:
        raise ValueError("batched_matmul expects 3-D arrays")
    if not (a.dtype == b.dtype == out.dtype):
        raise TypeError(f"dtype mismatch: {a.dtype}, {b.dtype}, {out.dtype}")
    if a.dtype.type not in _SUPPORTED:
        raise TypeError(f"batched_matmul does not support dtype {a.dtype}")
    nb, M, N = out.shape
    K = a.shape[2]
    if (a.shape[1] != M or b.shape[2] != N or b.shape[1] != K
            or a.shape[0] not in (1, nb) or b.shape[0] not in (1, nb)):
        raise ValueError(f"shapes {a.shape} @ {b.shape} -> {out.shape} do not match")
    if not out.flags.c_contiguous:
        raise ValueError("out must be C-contiguous")
    if out.size == 0:
        return
    if K == 0:
        out[...] = 0
        return
    if K <= SMALL_K and N >= 64:
        # (A copy of a strided B costs O(KN), no more than packing it would.)
        ac, bc = np.ascontiguousarray(a), np.ascontiguousarray(b)
        if not np.may_share_memory(out, ac) and not np.may_share_memory(out, bc):
            _run_small_threads(_gemm_small_k, 2 * nb * M * N * K, ac, bc, out)
            return
    if K >= LONG_K and M * N <= LONG_K_OUT:
        bt = np.ascontiguousarray(b.transpose(0, 2, 1))
        threads = get_num_threads()
        _gemm_long_k(np.ascontiguousarray(a), bt, out, max(1, min(threads, K // LONG_K)))
        return

    # Split K into nkb equal blocks of at most KC.
    nkb = -(-K // KC)
    kw = -(-K // nkb)
    nr = tile_cols(a.dtype)
    a = _collapse_batch(a)
    bt = _collapse_batch(b.transpose(0, 2, 1))   # B^T: its rows are B's columns
    ap, bp = _buffers((a.shape[0], nkb, -(-M // MR), kw, MR),
                      (bt.shape[0], nkb, -(-N // nr), kw, nr), a.dtype)
    Mp = ap.shape[2] * MR
    Np = bp.shape[2] * nr
    # One thread runs the plain (serial) kernels; several threads, with
    # enough work to share, run their parallel drivers.
    threads = get_num_threads() if 2 * nb * M * N * K >= _SERIAL_FLOPS else 1
    parallel = threads > 1
    _pack_operand(a, ap, parallel)
    _pack_operand(bt, bp, parallel)
    task_rows, task_cols, ntasks = _plan_tasks(nb, Mp, Np, nr, threads)
    if parallel:
        _gemm_packed_parallel(ap, bp, K, out, task_rows, task_cols, ntasks)
    else:
        _gemm_packed(ap, bp, K, out, task_rows, task_cols, 0, ntasks)

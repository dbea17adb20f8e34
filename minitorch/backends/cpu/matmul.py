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
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

__all__ = ["batched_matmul"]

# -- tile and block sizes ----------------------------------------------------
def _simd_register_count() -> int:
    """How many SIMD registers the code that Numba generates here may use.

    The micro-kernel keeps MR*NR running sums plus the vectors it has just
    loaded in registers; if they do not fit, LLVM "spills" them to the stack
    and the kernel runs at half speed.  x86 CPUs have 32 vector registers
    with AVX-512 and 16 without; AArch64 (and most others) have 32.  We ask
    the same place Numba asks (it honours NUMBA_CPU_NAME/NUMBA_CPU_FEATURES).
    """
    features = config.CPU_FEATURES
    if features is None:
        features = get_host_cpu_features()
    if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86"):
        return 32 if "+avx512f" in features.split(",") else 16
    return 32


# Chosen by measurement (tests/bench on a Zen 4 with 32 KiB L1d and 1 MiB L2
# per core; the 16-register choice by compiling for Haswell on the same
# machine).  Neighbouring values are within a few per cent.
if _simd_register_count() >= 32:
    MR, NR = 4, 6   # 24 sums + 4 A vectors + 1 B vector = 29 of 32 registers
else:
    MR, NR = 3, 3   # 9 sums + 3 + 3 loaded vectors = 15 of 16 registers
KC_BYTES = 4096     # longest K block in bytes: 1024 float32 or 512 float64
MC = 96             # rows of A per L2 block (a multiple of MR)
NC = 768            # columns of B per L3 block (a multiple of NR)
KPAD = 16           # packed K blocks are padded to a multiple of this
_TR = 16            # packing tile: rows
_TK = 16            # packing tile: K elements
assert MC % MR == 0 and NC % NR == 0
# Products of fewer flops than a 64 x 64 x 64 one run on one thread: in a
# quiet machine two threads win only by ~15% there, and on a busy one a
# woken worker thread can wait milliseconds for a core.  (OpenBLAS uses a
# similar threshold.)
_SERIAL_FLOPS = 2 * 64**3

_SUPPORTED = (np.float32, np.float64, np.int32, np.int64)

_JIT = dict(cache=True, error_model="numpy")
_PARALLEL = dict(parallel=True, cache=True, error_model="numpy")


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


_TILE = MR * NR  # a module-level constant, so Numba sees it as a literal


# ---------------------------------------------------------------------------
# Packing.
# ---------------------------------------------------------------------------
@njit(**_PARALLEL)
def _pack(src, trans, dst):
    """``dst[b, kb, r, p] = X[b, r, kb*kw + p]``, zero-padded, where X is
    ``src`` (shape (B, R, K)) or, when ``trans``, ``src`` transposed (``src``
    has shape (B, K, R)).  ``dst`` has shape (B, nkb, Rp, kw) with
    Rp >= R and nkb*kw >= K.

    The entry function passes whichever orientation makes the *last* axis
    of ``src`` the one with the smaller stride, so the innermost loop here
    always reads memory contiguously.  With ``trans`` the writes then jump
    by ``kw``; working on a _TR x _TK tile keeps those writes inside a few
    cache lines.
    """
    nb, nkb, R, kw = dst.shape
    if trans:
        K = src.shape[1]
        Rs = src.shape[2]
    else:
        K = src.shape[2]
        Rs = src.shape[1]
    ntr = (R + _TR - 1) // _TR
    for t in prange(nb * nkb * ntr):
        b = t // (nkb * ntr)
        kb = (t // ntr) % nkb
        r0 = (t % ntr) * _TR
        r1 = min(r0 + _TR, R)
        rv = max(r0, min(r1, Rs))     # rows [r0, rv) hold data, [rv, r1) padding
        k0 = kb * kw
        kv = min(kw, K - k0)          # K slots [0, kv) hold data, [kv, kw) padding
        if trans:
            # Transpose whole _TR x _TK tiles: constant trip counts, so LLVM
            # unrolls the tile into straight-line loads and stores.  Each
            # tile reads _TK short rows of ``src`` and fills _TR short rows of
            # ``dst``: both sides stay in a few cache lines.
            p0 = 0
            if rv - r0 == _TR:
                while p0 + _TK <= kv:
                    for p in range(_TK):
                        for r in range(_TR):
                            dst[b, kb, r0 + r, p0 + p] = src[b, k0 + p0 + p, r0 + r]
                    p0 += _TK
            for p in range(p0, kv):                   # ragged edge of the tile
                srow = src[b, k0 + p, r0:rv]
                for r in range(rv - r0):
                    dst[b, kb, r0 + r, p] = srow[r]
        else:
            for r in range(r0, rv):
                srow = src[b, r, k0:k0 + kv]          # contiguous along K
                drow = dst[b, kb, r]
                for p in range(kv):
                    drow[p] = srow[p]
        for r in range(r0, rv):
            drow = dst[b, kb, r]
            for p in range(kv, kw):
                drow[p] = 0
        for r in range(rv, r1):
            drow = dst[b, kb, r]
            for p in range(kw):
                drow[p] = 0


# ---------------------------------------------------------------------------
# The micro-kernel and the blocked loops around it.
# ---------------------------------------------------------------------------
@njit(fastmath={"reassoc", "contract"}, **_JIT)
def _micro(ap, ab, bp, bb, kb, ir, jr, out, ob, first):
    """One MR x NR tile: ``out[ob, ir:ir+MR, jr:jr+NR] (+)= ap-rows . bp-rows``.

    ``ap[ab, kb, ir+i, :]`` and ``bp[bb, kb, jr+j, :]`` are contiguous rows
    of the packed K block ``kb``; the tile is their MR x NR dot products.
    """
    kw = ap.shape[3]
    acc = _stack_array(_TILE, ap.dtype)
    for t in range(_TILE):
        acc[t] = 0
    # The hot loop.  ``i`` and ``j`` have constant trip counts, so LLVM
    # unrolls them completely: the body becomes MR loads of A, NR loads of
    # B and MR*NR multiply-adds into registers, and the loop over p is
    # vectorised (p runs from 0, so LLVM knows the index is never negative
    # and the loads are plain contiguous vector loads).
    for p in range(kw):
        for i in range(MR):
            for j in range(NR):
                acc[i * NR + j] += ap[ab, kb, ir + i, p] * bp[bb, kb, jr + j, p]
    # Write back the part of the tile that lies inside ``out`` (padding
    # rows/columns are dropped).  The loops again have constant trip counts,
    # which keeps ``acc`` in registers.
    M = out.shape[1]
    N = out.shape[2]
    for i in range(MR):
        for j in range(NR):
            if ir + i < M and jr + j < N:
                if first:
                    out[ob, ir + i, jr + j] = acc[i * NR + j]
                else:
                    out[ob, ir + i, jr + j] += acc[i * NR + j]


@njit(**_PARALLEL)
def _gemm_packed(ap, bp, out, task_rows, task_cols):
    """``out[b] = A[b] @ B[b]`` from packed ``ap`` (A) and ``bp`` (B^T).

    ``ap``/``bp`` have batch size ``out.shape[0]`` or 1 (a broadcast
    operand is packed once).  The output is cut into tasks of
    ``task_rows`` x ``task_cols`` (multiples of MR and NR) per batch item;
    the tasks are independent, so ``prange`` runs them on all threads.
    """
    nb = out.shape[0]
    nkb = ap.shape[1]
    Mp = ap.shape[2]
    Np = bp.shape[2]
    ntm = (Mp + task_rows - 1) // task_rows
    ntn = (Np + task_cols - 1) // task_cols
    for t in prange(nb * ntm * ntn):
        b = t // (ntm * ntn)
        i0 = ((t // ntn) % ntm) * task_rows
        j0 = (t % ntn) * task_cols
        i1 = min(i0 + task_rows, Mp)
        j1 = min(j0 + task_cols, Np)
        ab = b if ap.shape[0] > 1 else 0
        bb = b if bp.shape[0] > 1 else 0
        for kb in range(nkb):                         # K block: ap/bp slivers short
            for jc in range(j0, j1, NC):              # NC columns of B (L3)
                for ic in range(i0, i1, MC):          # MC rows of A (L2)
                    for jr in range(jc, min(jc + NC, j1), NR):   # B sliver in L1
                        for ir in range(ic, min(ic + MC, i1), MR):
                            _micro(ap, ab, bp, bb, kb, ir, jr, out, b, kb == 0)


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
    na = shape_a[0] * shape_a[1] * shape_a[2] * shape_a[3]
    nb = shape_b[0] * shape_b[1] * shape_b[2] * shape_b[3]
    # B's buffer starts right after A's; A's size in bytes is a multiple of
    # 64 because its last axis (kw) is a multiple of KPAD.
    nbytes = (na + nb) * dtype.itemsize
    if nbytes > _WORKSPACE_MAX_BYTES:
        buf = _aligned_bytes(nbytes)
    else:
        buf = getattr(_workspace, "buf", None)
        if buf is None or buf.nbytes < nbytes:
            buf = _aligned_bytes(max(nbytes, 1 << 20))
            _workspace.buf = buf
    flat = buf[:nbytes].view(dtype)
    return flat[:na].reshape(shape_a), flat[na:].reshape(shape_b)


def _pack_operand(x: np.ndarray, dst: np.ndarray) -> None:
    """Pack the logical (B, R, K) array ``x`` into ``dst`` (B', nkb, Rp, kw)."""
    # Read along the axis with the smaller stride (see _pack).
    if abs(x.strides[2]) <= abs(x.strides[1]):
        _pack(x, False, dst)
    else:
        _pack(x.transpose(0, 2, 1), True, dst)


def _collapse_batch(x: np.ndarray) -> np.ndarray:
    """A broadcast batch (stride 0) is the same matrix repeated: keep one."""
    return x[:1] if x.shape[0] > 1 and x.strides[0] == 0 else x


def _plan_tasks(nb: int, Mp: int, Np: int, threads: int):
    """Task shape (rows, cols): enough tasks to give every thread equal work."""
    rows, cols = Mp, Np
    want = 4 * threads if threads > 1 else 1

    def count(r, c):
        return nb * (-(-Mp // r)) * (-(-Np // c))

    while count(rows, cols) < want:
        if rows >= cols and rows > MR:
            rows = _round_up(-(-rows // 2), MR)
        elif cols > NR:
            cols = _round_up(-(-cols // 2), NR)
        elif rows > MR:
            rows = _round_up(-(-rows // 2), MR)
        else:
            break
    return rows, cols


def _gemm_one_task(a, bt, ap, bp, out, Mp, Np) -> None:
    _pack_operand(a, ap)
    _pack_operand(bt, bp)
    _gemm_packed(ap, bp, out, Mp, Np)


def _run_small_threads(fn, flops: int, *args) -> None:
    """Run ``fn(*args)``, on one thread if it is too little work to share.

    Products of fewer than _SERIAL_FLOPS flops gain little from a second
    thread, and waking a worker on a busy machine can cost milliseconds:
    with one thread the kernels run inline.  (``flops=0``: always one thread.)
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

    # Split K into nkb equal blocks of at most ~KC, each padded to KPAD.
    kc = KC_BYTES // a.dtype.itemsize
    nkb = -(-K // kc)
    kw = _round_up(-(-K // nkb), KPAD)
    Mp = _round_up(M, MR)
    Np = _round_up(N, NR)
    a = _collapse_batch(a)
    bt = _collapse_batch(b.transpose(0, 2, 1))   # B^T: its rows are B's columns
    ap, bp = _buffers((a.shape[0], nkb, Mp, kw), (bt.shape[0], nkb, Np, kw), a.dtype)

    threads = get_num_threads()
    if threads > 1 and 2 * nb * M * N * K < _SERIAL_FLOPS:
        _run_small_threads(_gemm_one_task, 0, a, bt, ap, bp, out, Mp, Np)
        return
    _pack_operand(a, ap)
    _pack_operand(bt, bp)
    task_rows, task_cols = _plan_tasks(nb, Mp, Np, threads)
    _gemm_packed(ap, bp, out, task_rows, task_cols)

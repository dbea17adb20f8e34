"""CPU kernel for the batched matrix product ``out[b] = a[b] @ b[b]``.

Multiplying an (M, K) matrix by a (K, N) matrix does 2*M*N*K floating-point
operations but touches only M*K + K*N + M*N numbers, so it can run at the
full speed of the arithmetic units -- *if* every number fetched from memory
is reused many times while it is close to the core.  The naive triple loop
does not do that (it streams rows and columns from memory for every output
element) and runs tens of times slower than NumPy, which calls OpenBLAS.
This module is the classic recipe (Goto's algorithm, as in BLIS and
OpenBLAS) written as plain loops that Numba compiles.  Three ideas:

1. **Packing.**  First copy A into *slivers* of MR rows,
   ``ap[b, kb, s, p, i]`` = A[b, s*MR + i, kb*kw + p], and B into slivers of
   NR columns, ``bp[b, kb, s, p, j]`` = B[b, kb*kw + p, s*NR + j]: the K
   axis is cut into blocks of ``kw``, and within a sliver the MR (or NR)
   numbers of one step p lie side by side.  The micro-kernel below then
   reads both slivers straight through, whatever the strides of the inputs
   were (transposed views, slices, negative strides and broadcast batches
   all look the same afterwards), and the zero padding of the last sliver
   means the hot loop has no edge cases.  Packing costs O(MK + KN) copying,
   small next to the O(MNK) arithmetic.  Because A and B are packed before
   ``out`` is written, ``out`` may even overlap ``a`` or ``b``.

2. **A register-tiled micro-kernel.**  The innermost unit of work computes
   an MR x NR tile of the output (4 x 16 float32 with AVX2, 3 x 16
   float64).  For each p it loads MR numbers of A and NR numbers of B and
   does MR*NR multiply-adds: each load feeds several multiply-adds, where
   the naive loop needs two loads per multiply-add and is limited by loads,
   not arithmetic.  This is the *outer-product* form of BLIS and OpenBLAS:
   step p adds (column p of the A sliver) x (row p of the B sliver) to the
   tile.  Row p of B is NR contiguous numbers, two SIMD vectors of float32;
   each number of A is "broadcast" to a whole vector; so one step is 2*MR
   vector multiply-adds (FMA), each into a vector of NR/2 running sums.

   The MR*NR running sums must live in CPU *registers*.  We write them as
   a small array on the stack (``_stack_array`` below): once LLVM has
   unrolled and vectorised the tile loops, every index into it is a
   constant, so LLVM turns each vector of it into a register.  (A NumPy
   array lives on the heap; LLVM cannot prove that writing it leaves ``ap``
   and ``bp`` unchanged, so it would load and store every sum at every step
   -- we measured it over 10x slower.)

   Numba runs LLVM with its SLP ("straight-line") vectoriser switched off,
   so only *loops* are vectorised, and a loop of constant length is usually
   unrolled before the vectoriser sees it, leaving scalar code.  The loops
   of ``_micro`` are ordered so that the loop over the NR columns is the
   one LLVM vectorises (see the comments there).  The kernel is compiled
   with ``fastmath={"contract"}``, which allows fusing ``s + x*y`` into one
   FMA instruction (it changes only rounding).  We do *not* use
   ``fastmath=True``, which also assumes that no value is NaN or infinite:
   a NaN in A or B must still give NaN in the output.

3. **Cache blocking.**  One micro-kernel call reads an A sliver (MR x kw)
   and a B sliver (kw x NR; kw <= KC, 1024 float32).  The loops around it
   walk down MC rows of A (the inner ``ir`` loop) with the same B sliver,
   which therefore stays in the L1 cache (or streams from L2 for long K);
   the MC x kw block of A (192 KiB) stays in the L2 cache while the kernel
   walks across NC columns of B, and the NC x kw block of B (3 MiB) stays
   in L3.  K is cut into blocks of at most KC so that these blocks stay
   small however large K is; ``out`` accumulates over the K blocks (the
   first stores, the others add).  A longer block spreads the fixed costs
   of a tile (zeroing the sums, writing them back) over more work, a
   shorter one fits the caches better (measured optimum: 4 KiB of K, i.e.
   1024 float32 or 512 float64).

**Parallelism.**  The output is cut into tasks -- (batch item, block of
rows, block of columns) -- that write disjoint parts of ``out``, and
``prange`` spreads the tasks over the threads.  The plain-Python entry
function picks the task shape: with many matrices each task is a whole
matrix; one big matrix is cut into at least ``4 * threads`` pieces so that
the threads get equal shares.  Packing is parallel too.  As in the rest of
the backend, every kernel is a plain serial function, and the
``*_parallel`` drivers only hand out its tasks: with one thread (or less
than ``_SERIAL_FLOPS`` of work) the entry function calls the serial
``_matmul_serial``, one call from Python for the whole product.

**Thin products.**  Convolutions by im2col multiply thin matrices, where
the recipe above wastes its effort: with 6 rows most of a tile is padding,
while packing copies all of a huge B.  Two shapes get their own unpacked
kernel: short K with a wide B (``_gemm_small_k``, rows of the output built
from rows of B) and long K with only a few outputs (``_gemm_long_k``,
plain dot products of contiguous rows).

**Dtypes and compiled versions.**  float32 and float64 are the fast path;
int32 and int64 run exactly the same kernels (and wrap around on overflow
as NumPy's do).  Each dtype is compiled on first use (a few seconds for the
first one, cached on disk after that).  The hot kernel only ever sees
C-contiguous packed arrays, so it has one compiled version per dtype; only
the packing kernel sees the caller's layout, and the entry function orients
every input so that the common cases (contiguous, or a transposed view of
something contiguous) are read as C-contiguous: one more version for
arbitrary strided views, and one for read-only arrays.

**Speed** (measured on a busy 2-core AVX2 Zen 3, float32, one thread,
against NumPy's ``a @ b``, which calls OpenBLAS, in the same process):
0.7x to 0.8x of OpenBLAS's speed from 128 x 128 to 1024 x 1024, and 0.75x
to 0.85x on the products of a small MLP's training step ((64, 784) @
(784, 128) and its two gradients).  The micro-kernel itself runs at about
0.9x of OpenBLAS; the rest is packing (scalar copies, see ``_pack_block``:
without the SLP vectoriser a 16-number copy is 16 moves) and the fixed
cost of a call.  float64 runs at about 0.75x too (its own tile: see
``tile_rows`` and ``_micro``).  Products smaller than 64 x 64 x 64 run on
one thread (``_SERIAL_FLOPS``).
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
def _simd_bytes() -> int:
    """The width in bytes of this CPU's SIMD registers, as Numba compiles
    for it: 64 with AVX-512, 32 with AVX2, 16 otherwise (SSE, AArch64's
    NEON).  We ask the same place Numba asks (it honours
    NUMBA_CPU_NAME/NUMBA_CPU_FEATURES).
    """
    features = config.CPU_FEATURES
    if features is None:
        features = get_host_cpu_features()
    features = features.split(",")
    if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86"):
        if "+avx512f" in features:
            return 64
        return 32 if "+avx" in features else 16
    return 16


VEC_BYTES = _simd_bytes()
# The tile is MR rows by NR columns: two SIMD vectors of float32 (16 with
# AVX2, 32 with AVX-512), four of float64.  Its running sums take
# MR*NR/lanes registers, plus the row of B just loaded and the broadcast
# number of A; if they do not fit in the registers (16 with AVX2), LLVM
# "spills" them to memory and the kernel slows down.  MR = 4 with 16
# float32 columns is 8 sum registers: just enough to keep both FMA units
# busy (an FMA takes 4 cycles, and two start every cycle).  MR = 6 would
# fill 15 of 16 registers, but LLVM then spills (measured).  For float64
# a 4 x 16 tile would need 16 sum registers, so it takes MR_WIDE = 3 rows
# (12).  Fewer columns (for example 8 float64) or a smaller loop body and
# LLVM unrolls the loop over the columns before it could vectorise it (see
# _micro).  (Measured with AVX2 only; AVX-512's 32 registers would take a
# taller tile.)
MR = 4
MR_WIDE = 3         # rows of the tile for 8-byte numbers (float64): see _micro
NR = 32 if VEC_BYTES >= 64 else 16
KC_BYTES = 4096     # longest K block in bytes: 1024 float32 or 512 float64
MC = 48             # rows of A per L2 block (a multiple of MR)
NC = 768            # columns of B per L3 block (a multiple of NR)
assert MC % MR == 0 and MC % MR_WIDE == 0 and NC % NR == 0
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


def tile_rows(dtype) -> int:
    """MR for ``dtype``: the rows of the micro-kernel's tile and of A's
    slivers.  4-byte numbers (float32) take MR, 8-byte ones (float64) the
    lower MR_WIDE: a row of their tile is twice as many SIMD vectors."""
    return MR if np.dtype(dtype).itemsize <= 4 else MR_WIDE


@overload(tile_rows)
def _tile_rows_jit(dtype):
    # Inside a kernel, ``tile_rows(x.dtype)`` is worked out while Numba
    # compiles: the kernel sees a constant, and LLVM drops the branches of
    # the other dtypes.
    rows = MR if dtype.dtype.bitwidth <= 32 else MR_WIDE
    return lambda dtype: rows


# ---------------------------------------------------------------------------
# Packing.
# ---------------------------------------------------------------------------
@njit(**_JIT)
def _pack_block(src, trans, b, k0, kv, d, rt):
    """Whole slivers of one K block (see :func:`_pack`):
    ``d[s, p, r] = X[b, s*rt + r, k0 + p]`` for every s of ``d``, p < kv,
    r < rt, where row 0 of ``src`` is the first row of these slivers."""
    if trans:
        for p in range(kv):
            row = src[b, k0 + p]                      # contiguous along R
            for s in range(d.shape[0]):
                for r in range(rt):
                    d[s, p, r] = row[s * rt + r]
    else:
        x = src[b, :, k0:k0 + kv]                     # rows contiguous along K
        for s in range(d.shape[0]):
            for p in range(kv):
                for r in range(rt):                   # rt rows read side by side
                    d[s, p, r] = x[s * rt + r, p]


@njit(**_JIT)
def _pack(src, trans, dst, nchunks, t0, t1):
    """Pack tasks ``t0 .. t1-1`` of X into ``dst``, zero-padded:
    ``dst[b, kb, s, p, r] = X[b, s*RT + r, kb*kw + p]``, where X is ``src``
    (shape (B, R, K)) or, when ``trans``, ``src`` transposed (``src`` has
    shape (B, K, R)), and ``dst`` has shape (B, nkb, ns, kw, RT).  Task t
    is chunk ``t % nchunks`` of the slivers of K block ``kb`` of batch item
    ``b``, where ``t // nchunks = b * nkb + kb``.

    A sliver (b, kb, s) is RT rows of X (RT = MR for A, NR for B^T) cut to
    the K block kb, stored "K-major": the RT numbers of one step p lie side
    by side, so the micro-kernel reads both slivers straight through.  The
    last K block may be shorter than kw; its tail is never read.  The entry
    function passes whichever orientation makes the *last* axis of ``src``
    the one with the smaller stride, so the inner loops read memory
    contiguously.  (Every index in the copy loops is a loop counter that
    starts at 0, or a sum of them: Numba then needs no test for negative
    indices, which would cost as much as the copy.  So the views are cut
    to the chunk first.)
    """
    nb, nkb, ns, kw, rt = dst.shape
    if trans:
        K = src.shape[1]
        R = src.shape[2]
    else:
        K = src.shape[2]
        R = src.shape[1]
    full = R // rt                    # slivers without padding rows
    per = (ns + nchunks - 1) // nchunks
    for t in range(t0, t1):
        b = t // (nkb * nchunks)
        kb = (t // nchunks) % nkb
        s0 = (t % nchunks) * per
        s1 = min(full, s0 + per)      # whole slivers of this chunk: [s0, s1)
        k0 = kb * kw
        kv = min(kw, K - k0)          # steps of this K block
        d = dst[b, kb]
        if s1 > s0:
            part = src[:, :, s0 * rt:s1 * rt] if trans else src[:, s0 * rt:s1 * rt]
            # The sliver width is NR or MR: pass it as that constant, so
            # that LLVM unrolls the copy of a step of a sliver (16 plain
            # moves are faster than a vectorised loop of 2 steps with its
            # checks).
            if rt == NR:
                _pack_block(part, trans, b, k0, kv, d[s0:s1], NR)
            else:
                _pack_block(part, trans, b, k0, kv, d[s0:s1], tile_rows(dst.dtype))
        if s0 <= full < min(ns, s0 + per):           # the ragged last sliver
            for p in range(kv):
                for r in range(rt):
                    d[full, p, r] = 0
                for r in range(R - full * rt):
                    if trans:
                        d[full, p, r] = src[b, k0 + p, full * rt + r]
                    else:
                        d[full, p, r] = src[b, full * rt + r, k0 + p]


@njit(**_PARALLEL)
def _pack_parallel(src, trans, dst, nchunks):
    """:func:`_pack` with its tasks (each K block cut into ``nchunks``
    chunks of slivers) shared among the threads."""
    n = dst.shape[0] * dst.shape[1] * nchunks
    for t in prange(n):
        _pack(src, trans, dst, nchunks, t, t + 1)


# ---------------------------------------------------------------------------
# The micro-kernel and the blocked loops around it.
# ---------------------------------------------------------------------------
@njit(fastmath={"contract"}, **_JIT)
def _micro(a, b, kv, out, ob, ir, jr, first):
    """One MR x NR tile: ``out[ob, ir:ir+MR, jr:jr+NR] (+)= A-sliver @ B-sliver``.

    ``a`` (kw, MR) and ``b`` (kw, NR) are packed slivers; the first ``kv``
    steps of them hold this K block.  Step p adds the outer product of
    column p of the A sliver and row p of the B sliver to the tile.
    (MR is ``tile_rows(a.dtype)``: MR_WIDE for float64.)
    """
    mr = tile_rows(a.dtype)           # a compile-time constant
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
    if mr == MR:
        for p in range(kv):
            for j in range(NR):
                bj = b[p, j]
                for i in range(MR):
                    acc[i * NR + j] += a[p, i] * bj
    else:
        # float64: a row of the tile is four SIMD vectors, so MR = 4 rows
        # would need 16 registers of sums and spill; MR_WIDE = 3 fit, but
        # a loop body of 3 multiply-adds is so small that LLVM unrolls the
        # loop over j instead of vectorising it.  Two steps of p per pass
        # make the body big enough.  (Each sum still adds its terms in the
        # order of p, as above.)
        for p in range(0, kv - 1, 2):
            for j in range(NR):
                b0 = b[p, j]
                b1 = b[p + 1, j]
                for i in range(MR_WIDE):
                    acc[i * NR + j] += a[p, i] * b0
                    acc[i * NR + j] += a[p + 1, i] * b1
        if kv % 2 == 1:
            for j in range(NR):
                bj = b[kv - 1, j]
                for i in range(MR_WIDE):
                    acc[i * NR + j] += a[kv - 1, i] * bj
    # Write back the part of the tile that lies inside ``out`` (padding
    # rows/columns are dropped), a row at a time.  ``o`` is a contiguous
    # piece of one row of ``out`` and ``cols`` is not a constant, so the
    # loop over j is vectorised too (with a constant trip count LLVM would
    # unroll it into scalar code).
    rows = min(mr, out.shape[1] - ir)
    cols = min(NR, out.shape[2] - jr)
    for i in range(rows):
        o = out[ob, ir + i, jr:jr + cols]
        if first:
            for j in range(cols):
                o[j] = acc[i * NR + j]
        else:
            for j in range(cols):
                o[j] += acc[i * NR + j]


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
    mr = tile_rows(ap.dtype)
    Mp = nsa * mr
    Np = nsb * NR
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
                    for jr in range(jc, min(jc + NC, j1), NR):   # B sliver in L1
                        bs = bp[bb, kb, jr // NR]
                        for ir in range(ic, min(ic + MC, i1), mr):
                            _micro(ap[ab, kb, ir // mr], bs, kv, out, b, ir, jr, kb == 0)


@njit(**_PARALLEL)
def _gemm_packed_parallel(ap, bp, K, out, task_rows, task_cols, ntasks):
    """:func:`_gemm_packed` with its tasks shared among the threads."""
    for t in prange(ntasks):
        _gemm_packed(ap, bp, K, out, task_rows, task_cols, t, t + 1)


@njit(**_JIT)
def _matmul_serial(a, a_trans, b, b_trans, ap, bp, K, out):
    """The whole product on one thread: pack A, pack B^T, multiply."""
    _pack(a, a_trans, ap, 1, 0, ap.shape[0] * ap.shape[1])
    _pack(b, b_trans, bp, 1, 0, bp.shape[0] * bp.shape[1])
    _gemm_packed(ap, bp, K, out, ap.shape[2] * ap.shape[4], bp.shape[2] * NR, 0,
                 out.shape[0])


# ---------------------------------------------------------------------------
# Short K: rows of B added into rows of out, no packing.
# ---------------------------------------------------------------------------
SMALL_K = 48        # K up to this (with a wide B) takes _gemm_small_k
SMALL_K_COLS = 256  # columns of out per task of _gemm_small_k, and ...
SMALL_K_ROWS = 16   # ... rows updated together: 16 x 256 float32 outputs (16 KiB) stay in L1


@njit(fastmath={"contract"}, **_PARALLEL)
def _gemm_small_k(a, b, out):
    """``out[i] = a[i] @ b[i]`` for short K: K rank-one updates of each row.

    The packed kernel above pays fixed costs per tile (zeroing its sums,
    writing them back) that only K steps share, little work when K is a few
    dozen (an im2col product such as LeNet's (6, 25) @ (25, 50176) has
    K = 25), and it copies all of B into a packed buffer first.  Here each output row is
    built as ``out[i, :] = sum_k a[i, k] * b[k, :]``: the innermost loop runs
    along a row of B and a row of ``out``, both contiguous, so it vectorises
    with no final sum, and B is read straight from where it lies.  A task
    owns SMALL_K_COLS columns; it takes SMALL_K_ROWS rows at a time and, for
    each k, adds row k of B into all of them, so the block of outputs it
    updates K times and the row of B stay in the L1 cache.  (Measured: for
    K of a few hundred the packed kernel is as fast or faster, even with
    few rows.)  ``a``, ``b`` and ``out`` are C-contiguous;
    ``a`` or ``b`` may have batch size 1 (broadcast).  It computes what
    :func:`~minitorch.backends.cpu.reference_kernels.matmul_reference` does
    (the tests check that it does).
    """
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

    A packed sliver step (NR numbers) is 64 bytes of float32, so every step
    of B then lies in one cache line and no SIMD load straddles two.
    (np.empty only promises 16-byte alignment.)
    """
    raw = np.empty(nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start:start + nbytes]


def _buffers(shape_a, shape_b, dtype):
    """Two uninitialised, 64-byte aligned C-contiguous arrays."""
    key = (shape_a, shape_b, dtype)
    views = getattr(_workspace, "views", None)
    if views is not None and key in views:
        return views[key]       # a training loop asks for the same shapes again
    na = nb = 1
    for n in shape_a:
        na *= n
    for n in shape_b:
        nb *= n
    # B's buffer starts at the first 64-byte boundary after A's.
    na_padded = _round_up(na * dtype.itemsize, 64) // dtype.itemsize
    nbytes = (na_padded + nb) * dtype.itemsize
    fresh = nbytes > _WORKSPACE_MAX_BYTES
    if fresh:
        buf = _aligned_bytes(nbytes)
    else:
        buf = getattr(_workspace, "buf", None)
        if buf is None or buf.nbytes < nbytes:
            buf = _aligned_bytes(max(nbytes, 1 << 20))
            _workspace.buf = buf
            _workspace.views = views = {}      # views of the old buffer are dropped
    flat = buf[:nbytes].view(dtype)
    pair = flat[:na].reshape(shape_a), flat[na_padded:].reshape(shape_b)
    if not fresh and len(views) < 64:
        views[key] = pair
    return pair


def _orient(x: np.ndarray):
    """``(src, trans)`` for packing the logical (B, R, K) array ``x``: read
    along the axis with the smaller stride (see _pack)."""
    if abs(x.strides[2]) > abs(x.strides[1]):
        return x.transpose(0, 2, 1), True
    return x, False


def _collapse_batch(x: np.ndarray) -> np.ndarray:
    """A broadcast batch (stride 0) is the same matrix repeated: keep one."""
    return x[:1] if x.shape[0] > 1 and x.strides[0] == 0 else x


def _plan_tasks(nb: int, Mp: int, Np: int, mr: int, threads: int):
    """Task shape (rows, cols): enough tasks to give every thread equal work."""
    rows, cols = Mp, Np
    want = 4 * threads if threads > 1 else 1

    def count(r, c):
        return nb * (-(-Mp // r)) * (-(-Np // c))

    while count(rows, cols) < want:
        if rows >= cols and rows > mr:
            rows = _round_up(-(-rows // 2), mr)
        elif cols > NR:
            cols = _round_up(-(-cols // 2), NR)
        elif rows > mr:
            rows = _round_up(-(-rows // 2), mr)
        else:
            break
    return rows, cols, count(rows, cols)


def _pack_chunks(dst: np.ndarray, threads: int) -> int:
    """How many chunks to cut each K block's slivers into for packing on
    ``threads`` threads: at least 4 tasks per thread, at least 8 slivers
    per chunk."""
    blocks = dst.shape[0] * dst.shape[1]
    want = -(-4 * threads // blocks)
    return max(1, min(want, dst.shape[2] // 8))


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

    # Split K into nkb equal blocks of at most KC_BYTES.
    nkb = -(-K // (KC_BYTES // a.dtype.itemsize))
    kw = -(-K // nkb)
    a = _collapse_batch(a)
    bt = _collapse_batch(b.transpose(0, 2, 1))   # B^T: its rows are B's columns
    mr = tile_rows(a.dtype)
    ap, bp = _buffers((a.shape[0], nkb, -(-M // mr), kw, mr),
                      (bt.shape[0], nkb, -(-N // NR), kw, NR), a.dtype)
    Mp = ap.shape[2] * mr
    Np = bp.shape[2] * NR
    # One thread runs the plain (serial) kernels, all three from one call
    # (each call from Python costs microseconds); several threads, with
    # enough work to share, run their parallel drivers.
    threads = get_num_threads() if 2 * nb * M * N * K >= _SERIAL_FLOPS else 1
    a_src, a_trans = _orient(a)
    b_src, b_trans = _orient(bt)
    if threads == 1:
        _matmul_serial(a_src, a_trans, b_src, b_trans, ap, bp, K, out)
        return
    task_rows, task_cols, ntasks = _plan_tasks(nb, Mp, Np, mr, threads)
    # Enough packing tasks for every thread, but each of at least 8 slivers.
    _pack_parallel(a_src, a_trans, ap, _pack_chunks(ap, threads))
    _pack_parallel(b_src, b_trans, bp, _pack_chunks(bp, threads))
    _gemm_packed_parallel(ap, bp, K, out, task_rows, task_cols, ntasks)

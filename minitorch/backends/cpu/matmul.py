"""CPU kernel for the batched matrix product ``out[b] = a[b] @ b[b]``.

A matrix product of an (M, K) matrix by a (K, N) matrix does 2*M*N*K
floating-point operations but touches only M*K + K*N + M*N numbers, so it
can run at the full speed of the arithmetic units -- *if* every number that
comes from memory is used many times while it is close to the core.  The
naive triple loop does not do that: it streams whole rows and columns from
main memory for every output element and runs ~50x slower than NumPy
(OpenBLAS).  This module is the classic recipe (Goto / BLIS) for getting
close, written as plain loops that Numba compiles.  It has three ideas.

1. Packing.  Before multiplying, copy A into ``ap[b, kb, i, p]`` (row i of A,
   columns ``kb*kw + p``) and copy the *transpose* of B into ``bp[b, kb, j, p]``
   (column j of B), both C-contiguous and padded with zeros to whole tiles.
   Now every row of ``ap`` and every row of ``bp`` is a contiguous run along
   K, whatever the strides of the inputs were (transposed views, slices,
   broadcast batches all look the same afterwards), and the zero padding
   means the hot loop never needs an edge case.  Packing costs O(MK + KN)
   copies, which is small next to the O(MNK) arithmetic.  Because A and B
   are fully packed before ``out`` is written, ``out`` may even overlap them.

2. A register-tiled micro-kernel.  The innermost unit of work computes an
   MR x NR tile of C (MR=3 rows, NR=8 columns here): for every p it loads
   MR numbers of A and NR numbers of B and does MR*NR multiply-adds, so each
   load feeds several multiply-adds (the naive loop does two loads per
   multiply-add, and loads, not arithmetic, then set the speed).  The MR*NR
   running sums must live in CPU *registers*, not memory.  We write them as
   a small array allocated on the stack (``_stack_array``, below): its index
   is a constant once LLVM has fully unrolled the two tiny tile loops, so
   LLVM turns each element into a register.  (A NumPy array would live on
   the heap, and LLVM could not prove that writing it does not change ``ap``
   or ``bp``, so it would load and store every sum on every step.)  The loop
   over p is then the innermost loop, and its rows in ``ap`` and ``bp`` are
   contiguous, so LLVM *vectorises* it: each running sum becomes a SIMD
   register holding 16 float32 (AVX-512) partial sums of different p's,
   added together once at the end of the tile.  That reordering of the sum
   is why the micro-kernel is compiled with ``fastmath={'reassoc',
   'contract'}``: ``reassoc`` lets LLVM split one sum into several partial
   sums, ``contract`` lets it fuse ``x*y + s`` into one FMA instruction.
   Both change only rounding (BLAS libraries reorder the sum the same way;
   results match NumPy to ~1e-6 relative in float32).  We deliberately do
   not use ``fastmath=True``, which also assumes there are no NaNs or
   infinities: a NaN in A or B must still produce NaN in the output.

   (Why this "dot product" tile rather than BLIS's "outer product" tile,
   which vectorises along the columns of B?  Numba builds with LLVM's SLP
   vectoriser switched off, and LLVM's loop vectoriser only vectorises the
   innermost loop that remains after the tile loops are unrolled -- the loop
   over p.  The price is the final horizontal sum of each SIMD register,
   which is why a long K block (KC) matters: it spreads that cost over more
   multiply-adds.)

3. Cache blocking.  One micro-kernel call reads an MR x kw sliver of ``ap``
   and an NR x kw sliver of ``bp``.  The loops around it are ordered so that
   the B sliver (NR*KC*4 bytes = 16 KiB) stays in the 32 KiB L1 cache while
   the micro-kernel walks down MC rows of A, and that block of A
   (MC*KC*4 bytes = 240 KiB) stays in the 1 MiB L2 cache while the kernel
   walks across NC columns of B.  K is split into blocks of at most KC so
   these blocks stay small however large K is; ``out`` accumulates the
   blocks (the first block stores, the others add).

Parallelism: the output is cut into tasks -- (batch, block of rows, block of
columns) -- that write disjoint parts of ``out``, and ``prange`` spreads the
tasks over the threads.  The plain-Python entry function picks the task
shape: many small matrices give one task per matrix; one big matrix is cut
into at least ``4 * threads`` pieces so that the threads get equal shares.

Dtypes: float32 and float64 use the fast path; int32 and int64 use exactly
the same kernels (integer sums need no ``fastmath`` to be vectorised, and
they wrap around on overflow exactly like NumPy's).  Each dtype is compiled
on first use and cached on disk.  To keep the number of compiled versions
small, the hot kernel only ever sees C-contiguous packed arrays (one version
per dtype); the packing kernel sees the caller's layout, and the entry
function orients each input so that the common cases (contiguous, or a
transposed view of something contiguous) are all read as C-contiguous.
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

__all__ = ["batched_matmul", "MR", "NR", "KC", "MC", "NC"]

# -- tile and block sizes ----------------------------------------------------
# Chosen by measurement on an AVX-512 x86 (Zen 4, 32 KiB L1d, 1 MiB L2 per
# core); anything near these is within a few per cent.  A 3x8 tile keeps 24
# SIMD sums + 11 loaded vectors in the 32 AVX-512 registers.
MR = 3        # rows of C per micro-kernel tile
NR = 8        # columns of C per micro-kernel tile
KC = 512      # longest K block (elements)
MC = 120      # rows of A per L2 block (a multiple of MR)
NC = 256      # columns of B per L3 block (a multiple of NR)
KPAD = 16     # packed K blocks are padded to a multiple of this (one SIMD vector)
_TR = 16      # packing tile: rows
_TK = 16      # packing tile: K elements

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
    by ``kw``; working on a TR x TK tile keeps those writes inside a few
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
            for p0 in range(0, kv, _TK):
                for p in range(p0, min(p0 + _TK, kv)):
                    srow = src[b, k0 + p, r0:rv]      # contiguous along rows
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
# The entry point (plain Python: checks, layout decisions, task planning).
# ---------------------------------------------------------------------------
def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def _pack_operand(x: np.ndarray, rows_p: int, nkb: int, kw: int) -> np.ndarray:
    """Pack the logical (B, R, K) array ``x`` into (B', nkb, rows_p, kw)."""
    if x.shape[0] > 1 and x.strides[0] == 0:
        x = x[:1]                     # a broadcast batch: pack it only once
    dst = np.empty((x.shape[0], nkb, rows_p, kw), dtype=x.dtype)
    # Read along the axis with the smaller stride (see _pack).
    if abs(x.strides[2]) <= abs(x.strides[1]):
        _pack(x, False, dst)
    else:
        _pack(x.transpose(0, 2, 1), True, dst)
    return dst


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

    # Split K into nkb equal blocks of at most ~KC, each padded to KPAD.
    nkb = -(-K // KC)
    kw = _round_up(-(-K // nkb), KPAD)
    Mp = _round_up(M, MR)
    Np = _round_up(N, NR)
    ap = _pack_operand(a, Mp, nkb, kw)
    bp = _pack_operand(b.transpose(0, 2, 1), Np, nkb, kw)   # B^T: rows are columns of B
    task_rows, task_cols = _plan_tasks(nb, Mp, Np, get_num_threads())
    _gemm_packed(ap, bp, out, task_rows, task_cols)

"""The CUDA kernel for the batched matrix product ``out[b] = a[b] @ b[b]``: shared-memory tiles.

Each output element is a dot product of a row of A and a column of B.  One
thread per output element, reading its row and column from global memory,
would fetch every number of A ``N`` times and every number of B ``M``
times.  The classic GPU recipe cuts that traffic down with two levels of
reuse, the GPU counterpart of the CPU kernel's cache blocking and register
tile (``cpu/matmul.py``):

1. **Shared-memory tiles.**  A block of threads computes a ``BM x BN`` tile
   of the output.  It walks along K in steps of ``BK``: the block's threads
   first copy a ``BM x BK`` tile of A and a ``BK x BN`` tile of B from
   global memory into *shared memory* (fast on-chip memory that the block's
   threads share), wait for each other (``cuda.syncthreads()``), and then
   compute with the tiles.  Each number of A is fetched from global memory
   once per block instead of once per thread.

2. **A register tile per thread.**  Each thread computes ``TM x TN`` output
   elements, not one: for each ``k`` it loads ``TM`` numbers of the A tile
   and ``TN`` of the B tile into registers (``cuda.local.array``) and does
   ``TM * TN`` multiply-adds with them.  Thread ``(ty, tx)`` owns the rows
   ``ty, ty + BM/TM, ty + 2*BM/TM, ...`` and the columns ``tx, tx + BN/TN, ...``
   of the tile, so that neighbouring threads read neighbouring shared-memory
   words (no bank conflicts).

The A tile is stored transposed (``sa[k, i]``), with one padding column so
that the threads storing a column of it hit different memory banks.  Tiles
that stick out of the matrices are padded with zeros, so any M, N, K work.
Operands may have any strides (transposed views, broadcast batches with
stride 0): the tile loads use them, the arithmetic never sees them.

The accumulators have the output's dtype (float32 sums stay float32, as in
cuBLAS with TF32 off).  The tile sizes are constants, one set for real GPUs
and a tiny one for the simulator (where every thread is a Python thread).
"""

from numba import cuda

from .launch import SIMULATOR, kernel

if SIMULATOR:
    BM, BN, BK, TM, TN = 16, 16, 16, 8, 8
else:
    BM, BN, BK, TM, TN = 64, 64, 8, 4, 4

#: Threads per block: each computes TM x TN outputs of the BM x BN tile.
THREADS = (BM // TM) * (BN // TN)
_TY = BM // TM          # thread rows
_TX = BN // TN          # thread columns
_PAD = BM + 1           # row length of the transposed A tile (one word of padding)


@kernel
def matmul_tiled(a, a0, a_st, b, b0, b_st, out, m, n, k):
    """``out[z, i, j] = sum_p a[z, i, p] * b[z, p, j]``; one block per output tile.

    ``a_st``/``b_st`` are the 3 strides (batch, row, column) of the operands,
    ``out`` is a contiguous 3-D array.  Launch with ``THREADS`` threads and
    one block per (batch item, tile row, tile column).
    """
    sa = cuda.shared.array((BK, _PAD), a.dtype)     # A tile, transposed: sa[p, i]
    sb = cuda.shared.array((BK, BN), b.dtype)       # B tile: sb[p, j]
    acc = cuda.local.array((TM, TN), out.dtype)
    ra = cuda.local.array(TM, a.dtype)
    rb = cuda.local.array(TN, b.dtype)

    tiles_n = (n + BN - 1) // BN
    tiles_m = (m + BM - 1) // BM
    block = cuda.blockIdx.x
    z = block // (tiles_m * tiles_n)
    rest = block - z * tiles_m * tiles_n
    row0 = (rest // tiles_n) * BM
    col0 = (rest % tiles_n) * BN
    tid = cuda.threadIdx.x
    ty = tid // _TX
    tx = tid - ty * _TX
    pa = a0 + z * a_st[0]
    pb = b0 + z * b_st[0]

    for i in range(TM):
        for j in range(TN):
            acc[i, j] = 0
    for p0 in range(0, k, BK):
        # Load the tiles: each thread copies a few elements; p varies fastest
        # along A's rows (contiguous in a row-major A), j along B's rows.
        for e in range(tid, BM * BK, THREADS):
            i = e // BK
            p = e - i * BK
            r, c = row0 + i, p0 + p
            if r < m and c < k:
                sa[p, i] = a[pa + r * a_st[1] + c * a_st[2]]
            else:
                sa[p, i] = 0
        for e in range(tid, BK * BN, THREADS):
            p = e // BN
            j = e - p * BN
            r, c = p0 + p, col0 + j
            if r < k and c < n:
                sb[p, j] = b[pb + r * b_st[1] + c * b_st[2]]
            else:
                sb[p, j] = 0
        cuda.syncthreads()
        # Multiply the tiles: TM x TN multiply-adds per loaded pair of rows.
        for p in range(BK):
            for i in range(TM):
                ra[i] = sa[p, ty + i * _TY]
            for j in range(TN):
                rb[j] = sb[p, tx + j * _TX]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += ra[i] * rb[j]
        cuda.syncthreads()      # before the next tiles overwrite these
    for i in range(TM):
        r = row0 + ty + i * _TY
        if r < m:
            for j in range(TN):
                c = col0 + tx + j * _TX
                if c < n:
                    out[z, r, c] = acc[i, j]


def blocks(batch: int, m: int, n: int) -> int:
    """How many blocks :func:`matmul_tiled` needs: one per output tile."""
    return batch * ((m + BM - 1) // BM) * ((n + BN - 1) // BN)


#: The tile of :func:`matmul_shared`: its blocks are ``TILE x TILE`` threads.
TILE = 4 if SIMULATOR else 16


@kernel
def matmul_shared(a, b, out):
    """``out = a @ b`` for 2-D arrays, one output element per thread, tiles in shared memory.

    The textbook tiled product, kept here as the course's task 6.6 (the
    backend uses :func:`matmul_tiled`, which adds a register tile per thread,
    batches and strides).

    Args:
        a: an ``(m, k)`` array; b: a ``(k, n)`` array (any m, n, k >= 1).
        out: the ``(m, n)`` result.

    Launch with blocks of ``(TILE, TILE)`` threads and a 2-D grid of
    ``(ceil(n / TILE), ceil(m / TILE))`` blocks: thread ``(x, y)`` of block
    ``(bx, by)`` owns ``out[by * TILE + y, bx * TILE + x]``.  The block walks
    along k one ``TILE``-wide step at a time: its threads load one tile of
    ``a`` and one of ``b`` into ``sa`` and ``sb`` (shared memory), together,
    then each uses the tiles for its own element.  Every number of a tile is
    read from global memory once per block, not once per thread.

    Example: ``a = [[1., 2.]]``, ``b = [[3.], [4.]]`` and one block give ``out = [[11.]]``.
    """
    sa = cuda.shared.array((TILE, TILE), a.dtype)
    sb = cuda.shared.array((TILE, TILE), b.dtype)
    # Task 6.6: tiled matmul: each thread computes its own element of out from tiles of a
    # and b that its block loads into shared memory together (zeros past the edges).
    ### BEGIN SOLUTION
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    i = cuda.blockIdx.y * TILE + ty
    j = cuda.blockIdx.x * TILE + tx
    m, k = a.shape
    n = b.shape[1]
    acc = 0.0
    for p0 in range(0, k, TILE):
        sa[ty, tx] = a[i, p0 + tx] if i < m and p0 + tx < k else 0
        sb[ty, tx] = b[p0 + ty, j] if p0 + ty < k and j < n else 0
        cuda.syncthreads()
        for p in range(TILE):
            acc += sa[ty, p] * sb[p, tx]
        cuda.syncthreads()          # before the next step overwrites the tiles
    if i < m and j < n:
        out[i, j] = acc
    ### END SOLUTION

"""CUDA kernels for reductions and cumulative sums/products.

The plan is the CPU's (``cpu/reduce.py``): the input's dims are split into
*kept* dims (one output per kept index) and *reduced* dims, and each output
folds its reduced elements.  When there are few outputs and many elements
each, one thread per output would leave the GPU idle, so each output's
reduction is cut into ``nsplit`` parts that run on different threads, and
a second kernel combines the parts.  Two launches:

1. :func:`reduce_partial`: thread ``t`` = (output ``o``, part ``s``) folds
   the reduced elements ``r = s, s + nsplit, s + 2*nsplit, ...`` into
   ``part[t]`` (and the position of the chosen element into ``part_i[t]``).
   Interleaving the parts, instead of giving each a contiguous segment as
   the CPU does, makes neighbouring threads read neighbouring elements.
2. :func:`reduce_combine`: one thread per output folds its ``nsplit`` parts.

With ``nsplit == 1`` the first kernel writes the outputs directly.

Because the parts interleave, "the first maximum wins" (``argmax``) needs
the combine step to break ties by index, which the CPU's in-order combine
gets for free.  Sums accumulate in the type of ``acc0``, which the backend
makes the result's: float32 sums add in float32, as PyTorch's CUDA sums do
(the CPU adds float32 in float64), float64 in float64, integers in int64.
"""

from numba import cuda

from ..reduce_ops import ARGMAX, ARGMIN, MAX, MIN
from .bodies import index_maps, reduce_ops, rows
from .launch import SIMULATOR, kernel

#: Threads per block of :func:`block_sum` (a power of two: each step of its tree halves it).
SUM_THREADS = 4 if SIMULATOR else 256


@kernel
def reduce_partial(op, x, x0, keep_shape, keep_st, red_shape, red_st, n_out, n_red, nsplit,
                   acc0, part, part_i):
    """The first pass of a reduction on the GPU: one part of one output per thread.

    Args:
        op: a ``reduce_ops`` code (``SUM``, ``PROD``, ``MAX``, ``ARGMAX``, ...).

        x: the input buffer (1-D); ``x0`` the position of its element 0.

        keep_shape, keep_st: the shape and strides of the kept dims (a tuple
        each): output ``o`` is element ``o`` of ``keep_shape`` in row-major order.

        red_shape, red_st: the same for the reduced dims: the reduced elements
        of an output are numbered ``r = 0 .. n_red - 1`` in row-major order.

        n_out, n_red: the numbers of outputs and of reduced elements per output.

        nsplit: each output's reduced elements are cut into ``nsplit``
        interleaved parts: part ``s`` has ``r = s, s + nsplit, s + 2*nsplit, ...``.

        acc0: where an accumulating op starts (``reduce_ops.identity``), in the
        accumulator's type.

        part, part_i: the results, ``n_out * nsplit`` long: ``part[o * nsplit + s]`` is
        part ``s`` of output ``o`` folded with ``reduce_ops.fold`` in increasing
        ``r``; ``part_i`` is the ``r`` of the element an extremum (max, min,
        argmax, argmin) chose, for the other ops any ``r >= 0`` of the part, and
        -1 when the part has no element (then ``part`` is ``acc0``).

    An extremum has no identity: it starts from the part's first element.
    Every ``(o, s)`` pair is done by exactly one thread, for any launch size.

    Example: a 2x3 ``x = [[1, 5, 2], [7, 0, 9]]`` reduced over its rows (``keep_shape =
    (2,)``, ``red_shape = (3,)``) with ``SUM`` and ``nsplit = 2`` gives
    ``part = [3, 5, 16, 0]`` (``1 + 2``, ``5``, ``7 + 9``, ``0``).
    """
    # Task 6.7: the reduction's first pass on the GPU: every (output, part) folded by one
    # thread, in the order of its reduced elements, with reduce_ops' rules (an extremum
    # starts from a real element; an empty part is marked -1).
    ### BEGIN SOLUTION
    extremum = op == MAX or op == MIN or op == ARGMAX or op == ARGMIN
    for t in range(cuda.grid(1), n_out * nsplit, cuda.gridsize(1)):
        o = t // nsplit
        s = t - o * nsplit
        base = index_maps.position(o, keep_shape, keep_st, x0)
        acc = acc0
        acc_i = -1
        for r in range(s, n_red, nsplit):
            v = x[index_maps.position(r, red_shape, red_st, base)]
            if extremum and r == s:
                acc, acc_i = v, r       # start from a real element: max/min have no identity
            else:
                acc, acc_i = reduce_ops.fold(op, acc, acc_i, v, r)
            if not extremum:
                acc_i = r               # marks the part as not empty (see reduce_combine)
        part[t] = acc
        part_i[t] = acc_i
    ### END SOLUTION


@kernel
def reduce_combine(op, part, part_i, nsplit, n_out, out, out_idx):
    """Fold each output's ``nsplit`` parts (parts with ``part_i == -1`` are empty)."""
    for o in range(cuda.grid(1), n_out, cuda.gridsize(1)):
        acc = part[o * nsplit]
        acc_i = part_i[o * nsplit]
        for s in range(1, nsplit):
            t = o * nsplit + s
            if part_i[t] >= 0:
                acc, acc_i = reduce_ops.combine(op, acc, acc_i, part[t], part_i[t])
        out[o] = acc
        out_idx[o] = acc_i


@kernel
def scan_rows(op, x, out, acc0):
    """Running sum or product (``rows.CUMSUM``/``CUMPROD``) along each row: one thread per row."""
    for r in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        rows.scan_row(op, x[r], out[r], acc0)


@kernel
def block_sum(x, out):
    """Each block's share of a sum: ``out[b] = x[b*T] + ... + x[b*T + T - 1]``, ``T = SUM_THREADS``.

    The textbook GPU reduction, kept here as the course's task 6.5: the
    backend's reductions use :func:`reduce_partial` (any dims, any op).
    Summing ``x`` is then ``block_sum`` again on ``out``, until one number is left.

    Args:
        x: the numbers to sum (1-D); elements past its end count as 0.
        out: one partial sum per block (1-D, ``ceil(len(x) / SUM_THREADS)`` long).

    Launch with ``len(out)`` blocks of exactly ``SUM_THREADS`` threads.  The
    block's threads share ``cache`` (on-chip shared memory, one slot per
    thread); every thread of the block must reach each ``cuda.syncthreads()``.

    Example: with ``SUM_THREADS = 4``, ``x = [1., 2., 3., 4., 5.]`` and two blocks give
    ``out = [10., 5.]``.
    """
    cache = cuda.shared.array(SUM_THREADS, x.dtype)
    # Task 6.5: sum each block's SUM_THREADS elements of x into out[block] in shared
    # memory, in log2(SUM_THREADS) parallel steps (a tree), not one thread's loop.
    ### BEGIN SOLUTION
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * SUM_THREADS + t
    cache[t] = x[i] if i < x.shape[0] else 0
    cuda.syncthreads()
    step = SUM_THREADS // 2
    while step > 0:
        if t < step:
            cache[t] += cache[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[cuda.blockIdx.x] = cache[0]
    ### END SOLUTION

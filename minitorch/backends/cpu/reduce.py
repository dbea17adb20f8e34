"""CPU kernels for reductions (sum, prod, max, min, argmax, argmin, all, any).

The caller has already split the input's dimensions into two groups, each
with its own shape and strides: the *kept* dims (one output element per kept
index) and the *reduced* dims (folded into that output element)::

    x: (4, 5, 6), reduce dims (1,)  ->  kept (4, 6) with strides (30, 1)
                                        reduced (5,) with stride (6,)

Each output element is the fold of its reduced elements.  Two kinds of
kernel do the folding, chosen by where the contiguous memory is:

* ``*_strided``: one task per output element.  It walks the reduced
  elements in *runs* along the innermost reduced dim, moving like an
  odometer (``_first``, ``_run_length``, ``_carry``).  When that dim has
  stride 1 (``x.sum()``, ``x.sum(1)`` of a matrix) each run is a plain
  slice of memory, folded by a tight loop per op that LLVM vectorises
  (``_fold_sum``, ``_fold_extremum``).  A strided run is first copied into
  a small contiguous buffer (``_gather``), then folded the same way.
* ``*_cols``: the reduced dim lies *outside* a contiguous kept dim
  (``x.sum(0)`` of a matrix: one output per column, each column strided).
  Walking down each column would jump through memory, so a task instead
  takes a block of columns and adds whole rows into a block of
  accumulators: every read is contiguous.  Only sum, max and min
  (``COL_OPS``) have this kernel; the backend sends other column
  reductions to the strided kernels.

**Two families.**  The ops come in two families, each with its own kernels:

* *sums* (``sum_strided``, ``sum_cols``): sum, nansum, prod, all, any.
  They start from the identity ``acc0`` and accumulate in a wider type
  than the data: float sums run in float64 and integer sums in int64,
  which is what ``acc0``'s type sets.
* *extrema* (``extremum_strided``, ``extremum_cols``): max, min, argmax,
  argmin.  They start from a real element (there is no identity), run in
  the data's own type and may track the index of the winner.

A training step uses only sums, so it compiles only the sum kernels.  Each
loop in a kernel is compiled for every dtype the kernel meets, so a kernel
that carried every op would take longer to compile and to load from the
disk cache.

For the ops that may meet their elements in any order (all but argmax and
argmin, which return the *first* index of the extremum), the backend also
puts the reduced dims in memory order, so that ``x.T.sum()`` is one
contiguous run too.

**Serial kernels, parallel drivers.**  As in
:mod:`~minitorch.backends.cpu.elementwise`, each kernel is a serial loop
over a range of tasks, and ``<kernel>_parallel`` runs it on threads; the
backend uses the driver only when there is enough work and more than one
thread.  When there are few outputs but many elements per output
(``x.sum()`` of a big tensor has one output), one task per output would
leave cores idle, so the parallel driver cuts each output's reduced range
into ``nsplit`` segments that run in parallel, and combines the partial
results at the end.

**Why the fast loops are fast.**  A sum loop ``acc += x[j]`` is one long
chain: each addition waits for the previous one (about 4 cycles), so the CPU
adds one number every 4 cycles although it could start several additions
per cycle, each on a vector of 4 to 8 numbers.  To break the chain LLVM has
to keep several partial sums (a vector of them, or a few vectors) and add
them up at the end, which changes the order of the additions.  For floats
that changes the rounding, so LLVM may do it only when told it may
*reassociate*: the kernels here are compiled with ``fastmath={"reassoc"}``
and nothing else (no ``nnan``: NaN checks must keep working).  The result
is like NumPy's pairwise sum: not bit-for-bit the left-to-right fold, and
usually more accurate.  Three details make LLVM's vectoriser take a loop:

* the loop body is one op: the ``if op == ...`` sits outside the loop, not
  inside it;
* the loop reads a *slice*, ``seg = x[p:p + n]`` and ``seg[j]``: with
  ``x[p + j]`` Numba must check for a negative index on every read
  (``p + j`` might be negative, and negative indices count from the end),
  and that check stops the vectoriser from seeing consecutive reads;
* ``if`` becomes a select: ``acc += v if v == v else 0`` rather than
  ``if v == v: acc += v``.

Max and min need one more piece: PyTorch's max lets a NaN win, and LLVM
vectorises a max loop only when it recognises the operation.  ``_maximum``
and ``_minimum`` emit LLVM's own NaN-propagating ``llvm.maximum`` (and the
integer ``smax``/``umax``), which it does recognise.
"""

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

from ..reduce_ops import ALL, ANY, ARGMAX, ARGMIN, MAX, MIN, NANSUM, PROD, SUM
from .bodies import index_maps, layout, reduce_ops, rows

_SPLIT_GRAIN = 32768   # reduced elements per parallel segment when splitting
_TASK_GRAIN = 16384    # elements per parallel chunk of tasks in the strided drivers
GATHER = 1024          # elements of a strided run copied at a time (see _gather)
COL_BLOCK = 1024       # most columns per task in the *_cols kernels (float64 acc: 8 KiB, in L1)
MIN_COLS = 8           # fewer kept columns than this: the strided kernel walks each column
MAX_COL_STEP = 4       # *_cols also take columns up to this far apart (see the backend)

# The ops with a column kernel.  Each op is one more loop for LLVM to compile
# in every signature of the kernel, so only the common column reductions
# (x.sum(0), mean, bias gradients; max for softmax over dim 0) are here.
COL_OPS = (SUM, MAX, MIN)

# Let LLVM reorder float sums and products (see the module docstring).
# NumPy's error model, as inside a prange loop: no zero test (and
# ZeroDivisionError) before each integer division of the index arithmetic.
_FAST = dict(cache=True, fastmath={"reassoc"}, error_model="numpy")
_FAST_PARALLEL = dict(parallel=True, **_FAST)


# ---------------------------------------------------------------------------
# max / min as single LLVM operations.
# ---------------------------------------------------------------------------
def _emit_minmax(context, builder, sig, args, float_name, signed_name, unsigned_name):
    """Call the LLVM intrinsic for ``a`` and ``b`` (``b`` converted to a's type)."""
    ty = sig.args[0]
    lty = context.get_value_type(ty)
    b = context.cast(builder, args[1], sig.args[1], ty)
    if isinstance(ty, types.Float):
        name = float_name
    elif isinstance(ty, types.Integer) and ty.signed:
        name = signed_name
    else:                      # unsigned integers and booleans
        name = unsigned_name
    fn = builder.module.declare_intrinsic(name, [lty], ir.FunctionType(lty, [lty, lty]))
    return builder.call(fn, [args[0], b])


@intrinsic
def _maximum(typingctx, a, b):
    """``max(a, b)`` in a's type, NaN winning (``llvm.maximum``; ``smax``/``umax`` for ints)."""
    if not isinstance(a, (types.Float, types.Integer, types.Boolean)):
        return None

    def codegen(context, builder, sig, args):
        return _emit_minmax(context, builder, sig, args, "llvm.maximum", "llvm.smax",
                            "llvm.umax")
    return a(a, b), codegen


@intrinsic
def _minimum(typingctx, a, b):
    """``min(a, b)`` in a's type, NaN winning (``llvm.minimum``; ``smin``/``umin`` for ints)."""
    if not isinstance(a, (types.Float, types.Integer, types.Boolean)):
        return None

    def codegen(context, builder, sig, args):
        return _emit_minmax(context, builder, sig, args, "llvm.minimum", "llvm.smin",
                            "llvm.umin")
    return a(a, b), codegen


# ---------------------------------------------------------------------------
# Folding one contiguous run, one family per function.
# ---------------------------------------------------------------------------
@njit(inline="always", cache=True)
def _fold_sum(op, seg, acc):
    """Fold the contiguous 1-D run ``seg`` into ``acc`` (sum, nansum, prod, all, any).

    Each op has its own loop with a one-line body, so LLVM vectorises each.
    Sums and products add into ``acc``'s wider type (float32 elements are
    converted to float64 on the way, a vector at a time); nansum adds 0 in
    place of a NaN.  All and any only remember whether some element was
    zero / nonzero: an OR over the run.
    """
    n = seg.shape[0]
    if op == SUM:
        for j in range(n):
            acc += seg[j]
    elif op == NANSUM:
        for j in range(n):
            v = seg[j]
            acc += v if v == v else 0        # a select, not an if: it vectorises
    elif op == PROD:
        for j in range(n):
            acc *= seg[j]
    elif op == ALL:
        zero = False
        for j in range(n):
            zero |= seg[j] == 0
        if zero:
            acc = 0
    elif op == ANY:
        nonzero = False
        for j in range(n):
            nonzero |= seg[j] != 0
        if nonzero:
            acc = 1
    return acc


@njit(inline="always", cache=True)
def _fold_extremum(op, seg, acc, acc_i, r):
    """Fold the run ``seg``, whose first element has reduced index ``r`` (max, min, arg*).

    Returns the new ``(acc, acc_i)``.  Runs in the data's own type (twice as
    many float32 as float64 fit in a vector) and needs ``acc`` to hold a
    real element already.  The run's best value replaces ``acc`` only if it
    is strictly better (or a NaN, unless ``acc`` is one already): on a tie
    the earlier index stays.  Only then does argmax look for the index, a
    second, short scan that stops at the first element equal to that value:
    the first index of the maximum, as PyTorch returns.
    """
    n = seg.shape[0]
    m = seg[0]
    if op == MAX or op == ARGMAX:
        for j in range(1, n):
            m = _maximum(m, seg[j])
        better = acc == acc and (m != m or m > acc)
    else:
        for j in range(1, n):
            m = _minimum(m, seg[j])
        better = acc == acc and (m != m or m < acc)
    if better:
        acc = m
        if op == ARGMAX or op == ARGMIN:
            j = 0
            if m == m:
                while seg[j] != m:
                    j += 1
            else:                            # the first NaN
                while seg[j] == seg[j]:
                    j += 1
            acc_i = r + j
    return acc, acc_i


@njit(inline="always", cache=True)
def _rows_sum(acc, a, b, c, d):
    """``acc[o] += a[o] + b[o] + c[o] + d[o]`` for each column ``o``.

    Four rows per pass: the accumulator block is loaded and stored once per
    four rows instead of once per row.  The loop is elementwise (no
    dependency from one ``o`` to the next), so it vectorises without
    reordering anything.  Writing ``acc[o] + a[o] + b[o]`` (not
    ``a[o] + b[o]``) converts each element to ``acc``'s wider type before
    it is added, so float32 input is summed in float64.
    """
    for o in range(acc.shape[0]):
        acc[o] = acc[o] + a[o] + b[o] + c[o] + d[o]


@njit(inline="always", cache=True)
def _rows_extremum(op, acc, a, b, c, d):
    """``acc[o] = max(acc[o], a[o], b[o], c[o], d[o])`` for each column ``o`` (or min)."""
    if op == MAX:
        for o in range(acc.shape[0]):
            acc[o] = _maximum(acc[o], _maximum(_maximum(a[o], b[o]), _maximum(c[o], d[o])))
    else:
        for o in range(acc.shape[0]):
            acc[o] = _minimum(acc[o], _minimum(_minimum(a[o], b[o]), _minimum(c[o], d[o])))


# ---------------------------------------------------------------------------
# Walking the reduced elements (small helpers, inlined into both families).
# ---------------------------------------------------------------------------
@njit(inline="always", cache=True)
def _total(shape):
    n = 1
    for d in range(shape.shape[0]):
        n *= shape[d]
    return n


@njit(inline="always", cache=True)
def _first(o, r0, x_pos, keep_shape, keep_st, red_shape, red_st, idx):
    """Position of reduced element ``r0`` of output ``o``; sets the odometer ``idx`` to it.

    The course's layout functions (tasks 1.2 and 1.1) do the index arithmetic:
    ``index_maps.position`` finds output ``o``'s first element, ``layout.to_index``
    the multi-index of ``r0`` among the reduced dims.
    """
    pos = index_maps.position(o, keep_shape, keep_st, x_pos)
    layout.to_index(r0, red_shape, idx)
    return layout.index_to_position(idx, red_st, pos)


@njit(inline="always", cache=True)
def _run_length(red_shape, red_st, idx, left):
    """Elements in the next run: to the end of the innermost reduced dim, at most ``left``
    (and at most ``GATHER`` if the run is strided and must be gathered)."""
    last = red_shape.shape[0] - 1
    run = min(red_shape[last] - idx[last], left)
    if red_st[last] != 1:
        run = min(run, GATHER)
    return run


@njit(inline="always", cache=True)
def _carry(run, red_shape, red_st, idx, pos):
    """Move the odometer ``run`` elements on: carry into the outer reduced dims when a
    dim wraps around.  Returns the new position."""
    last = red_shape.shape[0] - 1
    pos += run * red_st[last]
    idx[last] += run
    d = last
    while d > 0 and idx[d] == red_shape[d]:
        pos -= red_shape[d] * red_st[d]
        idx[d] = 0
        d -= 1
        idx[d] += 1
        pos += red_st[d]
    return pos


@njit(inline="always", cache=True)
def _gather(x, pos, n, st, buf):
    """The ``n`` elements ``x[pos], x[pos + st], ...`` as one contiguous array.

    With ``st == 1`` that is just a slice of ``x``.  Otherwise the elements
    are copied into ``buf`` first, one at a time (``buf`` is small, so it
    stays in the L1 cache), and the fold's vector loop then reads them as a
    contiguous run.  Both branches return the same array type, so the fold
    after it has a single call site: one inlined copy of each loop to
    compile, not one for contiguous and one for strided data.
    """
    if st == 1:
        return x[pos:pos + n]
    for j in range(n):
        buf[j] = x[pos + j * st]
    return buf[:n]


# ---------------------------------------------------------------------------
# The strided kernels.  ``out`` is contiguous, one element per kept index;
# ``red_shape`` has at least one dim.  Task ``t`` folds segment
# ``t % nsplit`` of output ``t // nsplit`` into ``out[t]``: with
# ``nsplit == 1`` (what the backend passes, with tasks ``0, n_out``) a task is
# a whole output; the parallel drivers cut outputs into segments and pass
# arrays of partial results as ``out``.
#
# Each kernel is written out in full, not built from one shared walker that
# takes the fold as an argument: Numba inlines a helper by copying its IR
# into the caller, and a walker inlined into each kernel, with both families'
# folds inlined into it, took twice as long to compile as these kernels.
# ---------------------------------------------------------------------------
@njit(**_FAST)
def sum_strided(op, x, x_pos, keep_shape, keep_st, red_shape, red_st, nsplit, acc0, out, t0,
                t1):
    """Sum, nansum, prod, all or any of ``x`` over the reduced dims, for tasks ``t0 .. t1 - 1``."""
    n_red = _total(red_shape)
    seg = (n_red + nsplit - 1) // nsplit
    last = red_shape.shape[0] - 1
    idx = np.zeros(last + 1, np.int64)
    buf = np.empty(GATHER if red_st[last] != 1 else 0, x.dtype)
    for t in range(t0, t1):
        o = t // nsplit
        r = (t - o * nsplit) * seg
        r1 = min(n_red, r + seg)
        acc = acc0
        if r < r1:
            pos = _first(o, r, x_pos, keep_shape, keep_st, red_shape, red_st, idx)
            while r < r1:
                # One run along the innermost reduced dim.
                run = _run_length(red_shape, red_st, idx, r1 - r)
                acc = _fold_sum(op, _gather(x, pos, run, red_st[last], buf), acc)
                r += run
                pos = _carry(run, red_shape, red_st, idx, pos)
        out[t] = acc


@njit(**_FAST)
def extremum_strided(op, x, x_pos, keep_shape, keep_st, red_shape, red_st, nsplit, acc0, out,
                     out_idx, t0, t1):
    """Max, min, argmax or argmin over the reduced dims, for tasks ``t0 .. t1 - 1``.

    ``out_idx[t]`` receives the reduced index of the chosen element (argmax
    and argmin; for max and min ``out_idx`` may be empty).  An empty segment
    gives ``acc0``.
    """
    n_red = _total(red_shape)
    seg = (n_red + nsplit - 1) // nsplit
    last = red_shape.shape[0] - 1
    idx = np.zeros(last + 1, np.int64)
    buf = np.empty(GATHER if red_st[last] != 1 else 0, x.dtype)
    need_idx = out_idx.shape[0] > 0
    for t in range(t0, t1):
        o = t // nsplit
        r = (t - o * nsplit) * seg
        r1 = min(n_red, r + seg)
        acc = acc0
        acc_i = r
        if r < r1:
            pos = _first(o, r, x_pos, keep_shape, keep_st, red_shape, red_st, idx)
            acc = x[pos]             # start from a real element: max/min have no identity
            while r < r1:
                run = _run_length(red_shape, red_st, idx, r1 - r)
                acc, acc_i = _fold_extremum(op, _gather(x, pos, run, red_st[last], buf), acc,
                                            acc_i, r)
                r += run
                pos = _carry(run, red_shape, red_st, idx, pos)
        out[t] = acc
        if need_idx:
            out_idx[t] = acc_i


# ---------------------------------------------------------------------------
# The column kernels: ``out[k, o] = fold over r of x[pos + k*outer_st +
# r*red_st + o]``.  The kept dims are ``(n_outer, n_col)`` with the inner one
# contiguous (``n_outer`` is 1 for ``x.sum(0)`` of a matrix); ``out`` is
# contiguous ``(n_outer, n_col)``.  Task ``t`` takes ``width`` columns of one
# outer index (see :func:`plan_cols`): it keeps one accumulator per column in
# a small array and adds rows into it four at a time.  The last group may be
# short: its missing rows are a row of zeros for a sum, and for max/min
# (which don't mind seeing a row twice) the group's first row again.  One
# call site keeps one copy of the fold's loops to compile.
# ---------------------------------------------------------------------------
@njit(**_FAST)
def sum_cols(op, x, pos, n_outer, outer_st, n_col, n_red, red_st, width, acc0, out, t0, t1):
    """Column sums (``op`` is SUM), for tasks ``t0 .. t1 - 1``."""
    n_blk = (n_col + width - 1) // width
    zeros = np.zeros(min(width, n_col), x.dtype)
    for t in range(t0, t1):
        k = t // n_blk
        start = (t - k * n_blk) * width
        w = min(width, n_col - start)
        base = pos + k * outer_st + start
        acc = np.full(w, acc0)
        fill = zeros[:w]
        for r in range(0, n_red, 4):
            p = base + r * red_st
            a = x[p:p + w]
            b = x[p + red_st:p + red_st + w] if r + 1 < n_red else fill
            c = x[p + 2 * red_st:p + 2 * red_st + w] if r + 2 < n_red else fill
            d = x[p + 3 * red_st:p + 3 * red_st + w] if r + 3 < n_red else fill
            _rows_sum(acc, a, b, c, d)
        o0 = k * n_col + start
        for o in range(w):
            out[o0 + o] = acc[o]


@njit(**_FAST)
def extremum_cols(op, x, pos, n_outer, outer_st, n_col, n_red, red_st, width, acc0, out, t0, t1):
    """Column maxima or minima (``op`` is MAX or MIN), for tasks ``t0 .. t1 - 1``."""
    n_blk = (n_col + width - 1) // width
    for t in range(t0, t1):
        k = t // n_blk
        start = (t - k * n_blk) * width
        w = min(width, n_col - start)
        base = pos + k * outer_st + start
        acc = np.full(w, acc0)
        first = x[base:base + w]
        for o in range(w):
            acc[o] = first[o]        # start from real elements, as in extremum_strided
        for r in range(0, n_red, 4):
            p = base + r * red_st
            a = x[p:p + w]
            b = x[p + red_st:p + red_st + w] if r + 1 < n_red else a
            c = x[p + 2 * red_st:p + 2 * red_st + w] if r + 2 < n_red else a
            d = x[p + 3 * red_st:p + 3 * red_st + w] if r + 3 < n_red else a
            _rows_extremum(op, acc, a, b, c, d)
        o0 = k * n_col + start
        for o in range(w):
            out[o0 + o] = acc[o]


# ---------------------------------------------------------------------------
# The parallel drivers.  The strided ones give each thread chunks of about
# ``_TASK_GRAIN`` elements' worth of tasks, so that a thread does not pay for
# a task's setup (the odometer) once per short row; with ``nsplit > 1`` they
# fold into arrays of partial results (of the accumulator's type, float64 or
# int64) and combine them at the end.
# ---------------------------------------------------------------------------
@njit(**_FAST)
def _split_plan(keep_shape, red_shape, nsplit, acc0):
    """Tasks, tasks per chunk, and the partial-result arrays (empty unless ``nsplit > 1``).

    A serial helper: in a ``parallel=True`` function Numba would turn the
    allocations into parallel loops of their own.
    """
    n_red = _total(red_shape)
    seg = (n_red + nsplit - 1) // nsplit
    n_task = _total(keep_shape) * nsplit
    per_chunk = max(1, _TASK_GRAIN // max(seg, 1))
    n_part = n_task if nsplit > 1 else 0
    part = np.empty(n_part, np.asarray(acc0).dtype)
    part_i = np.empty(n_part, np.int64)
    return n_task, per_chunk, part, part_i


@njit(**_FAST)
def _combine_parts(op, red_shape, nsplit, part, part_i, out, out_idx):
    """Combine the ``nsplit`` partial results of each output, in order (one thread)."""
    n_red = _total(red_shape)
    seg = (n_red + nsplit - 1) // nsplit
    need_idx = out_idx.shape[0] > 0
    for o in range(out.shape[0]):
        acc = part[o * nsplit]
        acc_i = part_i[o * nsplit]
        for s in range(1, nsplit):
            if s * seg < n_red:      # a segment past the end is empty
                t = o * nsplit + s
                acc, acc_i = reduce_ops.combine(op, acc, acc_i, part[t], part_i[t])
        out[o] = acc
        if need_idx:
            out_idx[o] = acc_i


@njit(**_FAST_PARALLEL)
def sum_strided_parallel(op, x, x_pos, keep_shape, keep_st, red_shape, red_st, nsplit, acc0, out):
    """:func:`sum_strided` of every output on threads, each cut into ``nsplit`` segments."""
    n_task, per_chunk, part, part_i = _split_plan(keep_shape, red_shape, nsplit, acc0)
    for c in prange((n_task + per_chunk - 1) // per_chunk):
        t0, t1 = c * per_chunk, min(n_task, (c + 1) * per_chunk)
        if nsplit == 1:
            sum_strided(op, x, x_pos, keep_shape, keep_st, red_shape, red_st, nsplit, acc0, out,
                        t0, t1)
        else:
            sum_strided(op, x, x_pos, keep_shape, keep_st, red_shape, red_st, nsplit, acc0,
                        part, t0, t1)
    if nsplit > 1:
        _combine_parts(op, red_shape, nsplit, part, part_i, out, part_i[:0])


@njit(**_FAST_PARALLEL)
def extremum_strided_parallel(op, x, x_pos, keep_shape, keep_st, red_shape, red_st, nsplit, acc0,
                              out, out_idx):
    """:func:`extremum_strided` of every output on threads, each cut into ``nsplit`` segments."""
    n_task, per_chunk, part, part_i = _split_plan(keep_shape, red_shape, nsplit, acc0)
    for c in prange((n_task + per_chunk - 1) // per_chunk):
        t0, t1 = c * per_chunk, min(n_task, (c + 1) * per_chunk)
        if nsplit == 1:
            extremum_strided(op, x, x_pos, keep_shape, keep_st, red_shape, red_st, nsplit, acc0,
                             out, out_idx, t0, t1)
        else:
            extremum_strided(op, x, x_pos, keep_shape, keep_st, red_shape, red_st, nsplit, acc0,
                             part, part_i, t0, t1)
    if nsplit > 1:
        _combine_parts(op, red_shape, nsplit, part, part_i, out, out_idx)


@njit(**_FAST_PARALLEL)
def sum_cols_parallel(op, x, pos, n_outer, outer_st, n_col, n_red, red_st, width, acc0, out):
    """:func:`sum_cols` with one task per thread at a time."""
    for t in prange(n_outer * ((n_col + width - 1) // width)):
        task = np.int64(t)          # the prange index is unsigned (see conv.py)
        sum_cols(op, x, pos, n_outer, outer_st, n_col, n_red, red_st, width, acc0, out, task,
                 task + 1)


@njit(**_FAST_PARALLEL)
def extremum_cols_parallel(op, x, pos, n_outer, outer_st, n_col, n_red, red_st, width, acc0,
                           out):
    """:func:`extremum_cols` with one task per thread at a time."""
    for t in prange(n_outer * ((n_col + width - 1) // width)):
        task = np.int64(t)          # the prange index is unsigned (see conv.py)
        extremum_cols(op, x, pos, n_outer, outer_st, n_col, n_red, red_st, width, acc0, out,
                      task, task + 1)


def plan_cols(n_outer: int, n_col: int, threads: int) -> int:
    """How many columns each task of the ``*_cols`` kernels takes.

    Wide blocks read long stretches of each row (the rows of a contiguous
    matrix are then read straight through), up to ``COL_BLOCK`` columns so
    that the accumulators stay in the L1 cache.  Narrower blocks give more
    tasks: there should be at least one per thread.  Multiples of 16 keep
    the vector loops free of leftover columns.

    >>> plan_cols(1, 1024, 1)    # x.sum(0) of a 1024 x 1024 matrix, one thread
    1024
    >>> plan_cols(1, 1024, 2)    # two threads: two blocks of 512 columns
    512
    """
    per_task = -(-n_col * n_outer // threads)          # ceil: columns per thread
    if n_outer >= threads or per_task >= n_col:
        return min(n_col, COL_BLOCK)
    return min(COL_BLOCK, max(16, -(-per_task // 16) * 16))


def plan_split(n_out: int, n_red: int, threads: int) -> int:
    """How many parallel segments to cut each output's reduction into."""
    if n_out >= 4 * threads or n_red < 2 * _SPLIT_GRAIN:
        return 1
    return int(min(n_red // _SPLIT_GRAIN, 8 * threads))


@njit(parallel=True, cache=True)
def scan_rows(op, x, out, acc0):
    """Running sum or product (``rows.CUMSUM``/``CUMPROD``) along each row of 2-D arrays."""
    for r in prange(x.shape[0]):
        rows.scan_row(op, x[r], out[r], acc0)

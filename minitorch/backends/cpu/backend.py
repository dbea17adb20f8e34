"""The CPU backend: plans each call and picks the kernel that fits.

"Planning" means: merge dimensions that every operand walks in step
(:func:`minitorch.layout.coalesce`); if what is left is one dimension of
stride 1 (a value repeated, stride 0, is fine for inputs), run the
contiguous fast path on flat slices, else run the strided kernel.

Most kernels come in pairs: a serial ``kernel`` and a ``kernel_parallel``
driver that runs it on chunks of the work in a ``prange`` loop (see
:mod:`minitorch.backends.cpu.elementwise`).  :func:`_parallel` picks the
driver only for work of more than one chunk when Numba has more than one
thread, so small operations never wake the threads, and a process on one
thread never compiles a parallel kernel.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ...layout import coalesce, contiguous_strides, is_contiguous, numel
from .. import index_maps, optimizer_rules, reduce_ops, rows
from ..interface import (ARITH, BERNOULLI, BERNOULLI_SCALAR, COMPARE, DENSE_LINALG,
                         DIRECT_CONV, FAST, FUSED_ELEMENTWISE, HOST_VIEW, INT, MATH,
                         MULTINOMIAL, NORMAL, RANDINT, RANDPERM, THRESHOLD_BACKWARD, UNIFORM,
                         BinaryFamily, RandomKind, ReduceOp, ScanOp, ScatterOp, UnaryFamily)
from ..operand import Operand
from ..planning import (as_bits, flat_contiguous, index_strides, plan, plan_reduce,
                        rows_plan, select_as_gather, select_rows, through_float32,
                        value_buckets, without)
from . import conv, elementwise, index, memory, optim, random, sort, vmath
from . import conv_direct  # stride-1 convolution without a column matrix
from . import fused  # kernels generated for minitorch.compile's fused elementwise programs
# (These three share their names with functions below.)
from . import matmul as matmul_kernels
from . import reduce as reduce_kernels
from . import softmax as softmax_kernels
from . import linalg  # dense linear algebra: LU, Cholesky, QR, SVD, eigh (ops/kernels.py: linalg)

_F16 = np.dtype(np.float16)
_I64 = np.int64

#: The optional kernels this backend has (see ``backends/interface.py``).
CAPABILITIES = frozenset({THRESHOLD_BACKWARD, DIRECT_CONV, HOST_VIEW, DENSE_LINALG,
                          FUSED_ELEMENTWISE})


def allocate(n: int, dtype: np.dtype) -> np.ndarray:
    """A new uninitialised buffer; large ones come from the caching pool (memory.py)."""
    return memory.allocate(n, dtype)


def zeros(n: int, dtype: np.dtype) -> np.ndarray:
    return np.zeros(n, dtype)


def from_host(arr: np.ndarray) -> np.ndarray:
    return arr


def to_host(data: np.ndarray) -> np.ndarray:
    return data


def num_threads() -> int:
    return numba.get_num_threads()


def to_numpy(op: Operand) -> np.ndarray:
    """A NumPy array (a copy) with the operand's elements."""
    return numpy_view(op).copy()


def numpy_view(op: Operand) -> np.ndarray:
    """A NumPy array that shares memory with the operand (no copy).

    Made the cheapest way that works (this runs for most kernel calls): a
    slice and a reshape when the operand is contiguous; else an ``ndarray``
    header over the buffer with the operand's strides (a fifth of the cost
    of NumPy's ``as_strided``, which goes through ``__array_interface__``).
    """
    data = op.data
    n = numel(op.shape)
    if n == 0:
        return np.empty(op.shape, data.dtype)
    item = data.dtype.itemsize
    strides = tuple(s * item for s in op.strides)
    if not data.flags.c_contiguous:       # (a buffer over someone's strided array)
        return np.lib.stride_tricks.as_strided(data[op.offset:], shape=op.shape,
                                               strides=strides)
    if op.strides == contiguous_strides(op.shape):
        return data[op.offset: op.offset + n].reshape(op.shape)
    return np.ndarray(op.shape, data.dtype, buffer=data, offset=op.offset * item,
                      strides=strides)


def _flat(op: Operand, stride: int, n: int) -> np.ndarray:
    """The 1-D slice a contiguous kernel reads: n elements, or 1 if broadcast."""
    data = op.data
    m = n if stride else 1
    if op.offset == 0 and data.shape[0] == m:
        return data             # a whole fresh buffer: no slice object to make
    return data[op.offset: op.offset + m]


def _arr(t) -> np.ndarray:
    return np.array(t, dtype=_I64)


def _parallel(work: int) -> bool:
    """Run the ``_parallel`` driver for ``work`` elements?  Only for more than
    one chunk (``elementwise.CHUNK``), and only with more than one thread.  The size is
    tested first: asking Numba for its thread count costs about a microsecond."""
    return work > elementwise.CHUNK and numba.get_num_threads() > 1


# ---------------------------------------------------------------------------
# copy and fill
# ---------------------------------------------------------------------------
def copy(src: Operand, dst: Operand) -> None:
    """``dst[...] = src[...]`` elementwise, converting to dst's dtype."""
    n = numel(dst.shape)
    if n == 0:
        return
    if src.data.dtype == _F16 or dst.data.dtype == _F16:
        # Numba has no float16 arithmetic on the CPU; NumPy converts.  Values
        # beyond float16's range become inf, as in PyTorch (no warning).
        with np.errstate(over="ignore", invalid="ignore"):
            np.copyto(numpy_view(dst), numpy_view(src), casting="unsafe")
        return
    shape, (ss, ds) = plan(dst.shape, src.strides, dst.strides)
    if len(shape) == 1 and ds[0] == 1 and ss[0] in (0, 1):
        kernel = (elementwise.copy_contiguous_parallel if _parallel(n)
                  else elementwise.copy_contiguous)
        kernel(_flat(src, ss[0], n), _flat(dst, 1, n))
    else:
        _copy_strided(src.data, src.offset, ss, dst.data, dst.offset, ds, shape)


def _copy_strided(data, offset, strides, dst, dst_offset, dst_strides, shape) -> None:
    """The strided copy kernel, serial or parallel (see :func:`_parallel`)."""
    n = numel(shape)
    if _parallel(n):
        elementwise.copy_strided_parallel(data, offset, _arr(strides), dst, dst_offset,
                                 _arr(dst_strides), _arr(shape))
    else:
        elementwise.copy_strided(data, offset, _arr(strides), dst, dst_offset, _arr(dst_strides),
                        _arr(shape), 0, n)


def fill(dst: Operand, value) -> None:
    """Set every element of ``dst`` to ``value``.

    A contiguous ``dst`` (zeros for a gradient, ``torch.full``) is filled by
    NumPy's ``ndarray.fill``, a memset-speed loop with nothing to compile: a
    first run then compiles no copy kernel for each dtype it fills.
    """
    src = np.array([value]).astype(dst.data.dtype)
    if is_contiguous(dst.shape, dst.strides):
        dst.data[dst.offset:dst.offset + numel(dst.shape)].fill(src[0])
        return
    copy(Operand(src, dst.shape, (0,) * len(dst.shape), 0), dst)


# ---------------------------------------------------------------------------
# map and zip
# ---------------------------------------------------------------------------
def _contiguous_input(a: Operand, shape, strides) -> tuple:
    """A flat array and stride (1, or 0 for one repeated value) for operand ``a``.

    ``shape``/``strides`` are the coalesced plan.  If the operand cannot be
    read as one run, it is copied into a fresh contiguous array first.
    """
    n = numel(shape)
    if len(shape) == 1 and strides[0] in (0, 1):
        return _flat(a, strides[0], n), strides[0]
    tmp = np.empty(n, a.data.dtype)
    copy_strided_run(a.data, a.offset, strides, tmp, shape)
    return tmp, 1


def copy_strided_run(data, offset, strides, dst, shape) -> None:
    _copy_strided(data, offset, strides, dst, 0, contiguous_strides(shape), shape)


def _run_contiguous(kernel, out: Operand, shape, so, inputs, extra=()) -> None:
    """Run a contiguous kernel, through a temporary if ``out`` is not one run."""
    n = numel(shape)
    if len(shape) == 1 and so[0] == 1:
        kernel(*inputs, _flat(out, 1, n), *extra)
        return
    tmp = np.empty(n, out.data.dtype)
    kernel(*inputs, tmp, *extra)
    _copy_strided(tmp, 0, contiguous_strides(shape), out.data, out.offset, so, shape)


_UNARY = {   # family -> (contiguous kernel, strided kernel or None)
    FAST: (elementwise.unary_fast_contiguous, elementwise.unary_fast_strided),
    MATH: (elementwise.unary_contiguous, None),
    INT: (elementwise.unary_int_contiguous, None),
}
_UNARY_PARALLEL = {     # their parallel drivers (see _parallel)
    FAST: (elementwise.unary_fast_contiguous_parallel, elementwise.unary_fast_strided_parallel),
    MATH: (elementwise.unary_contiguous_parallel, None),
    INT: (elementwise.unary_int_contiguous_parallel, None),
}


def unary(op: int, a: Operand, out: Operand, p0: float = 0.0, p1: float = 0.0,
          family: UnaryFamily = MATH) -> None:
    """``out = f(a)``; ``family`` is FAST, MATH or INT (``interface.py``; see scalar_ops)."""
    n = numel(out.shape)
    if n == 0:
        return
    par = _parallel(n)
    contiguous_kernel, strided_kernel = (_UNARY_PARALLEL if par else _UNARY)[family]
    extra = () if family == INT else (float(p0), float(p1))
    if a.strides == out.strides == contiguous_strides(out.shape):    # no planning needed
        if family != MATH or op not in vmath.OPS:
            contiguous_kernel(op, _flat(a, 1, n), _flat(out, 1, n), *extra)
            return
        if out.data.dtype in vmath.DTYPES and a.data.dtype == out.data.dtype:
            vmath.unary_contiguous(op, _flat(a, 1, n), _flat(out, 1, n))   # exp/sigmoid/tanh
            return
    shape, (sa, so) = plan(out.shape, a.strides, out.strides)
    if strided_kernel is not None and not (len(shape) == 1 and sa[0] == 1 and so[0] == 1):
        args = (op, a.data, a.offset, _arr(sa), out.data, out.offset, _arr(so), _arr(shape),
                *extra)
        strided_kernel(*args) if par else strided_kernel(*args, 0, n)   # serial: all elements
        return
    if (family == MATH and op in vmath.OPS and out.data.dtype in vmath.DTYPES
            and a.data.dtype == out.data.dtype):
        contiguous_kernel = vmath.unary_contiguous   # exp/sigmoid/tanh, vectorised (vmath.py)
    flat_a, step = _contiguous_input(a, shape, sa)
    if step == 0:   # one value repeated: compute it once, then broadcast it
        one = np.empty(1, out.data.dtype)
        if contiguous_kernel is not vmath.unary_contiguous:
            contiguous_kernel = _UNARY[family][0]       # one element: the serial kernel
        contiguous_kernel(op, flat_a, one, *extra)
        copy(Operand(one, out.shape, (0,) * len(out.shape), 0), out)
        return
    _run_contiguous(lambda *args: contiguous_kernel(op, *args), out, shape, so, (flat_a,),
                    extra)


_BINARY = {  # family -> (contiguous kernel, strided kernel or None)
    ARITH: (elementwise.arith_contiguous, elementwise.arith_strided),
    MATH: (elementwise.binary_contiguous, None),
    INT: (elementwise.binary_int_contiguous, None),
    COMPARE: (elementwise.compare_contiguous, elementwise.compare_strided),
}
_BINARY_PARALLEL = {    # their parallel drivers (see _parallel)
    ARITH: (elementwise.arith_contiguous_parallel, elementwise.arith_strided_parallel),
    MATH: (elementwise.binary_contiguous_parallel, None),
    INT: (elementwise.binary_int_contiguous_parallel, None),
    COMPARE: (elementwise.compare_contiguous_parallel, elementwise.compare_strided_parallel),
}


def _binary_kernels(op: int, family: BinaryFamily, par: bool) -> tuple:
    """(contiguous kernel, strided kernel or None) for ``op`` of ``family``.

    ``+ - * /`` have kernels of their own, the task kernels' twins with the op
    fixed, whose loops LLVM vectorises (``elementwise.ARITH_TWINS``): about 5
    times faster on large tensors than the family kernels, which test the op
    for every element.
    """
    if family == ARITH and op in elementwise.ARITH_TWINS:
        return (elementwise.ARITH_TWINS_PARALLEL if par else elementwise.ARITH_TWINS)[op]
    return (_BINARY_PARALLEL if par else _BINARY)[family]


def binary(op: int, a: Operand, b: Operand, out: Operand, family: BinaryFamily = ARITH) -> None:
    """``out = f(a, b)``; ``family`` is ARITH, MATH, INT or COMPARE (``interface.py``)."""
    n = numel(out.shape)
    if n == 0:
        return
    par = _parallel(n)
    contiguous_kernel, strided_kernel = _binary_kernels(op, family, par)
    plain = contiguous_strides(out.shape)
    if out.strides == plain:
        # The commonest calls: plain arrays of one shape, or one of them a
        # single repeated value (``x * 2``): no planning needed.
        ra, rb = a.strides == plain, b.strides == plain
        if (ra or not any(a.strides)) and (rb or not any(b.strides)) and (ra or rb or n == 1):
            contiguous_kernel(op, _flat(a, int(ra), n), _flat(b, int(rb), n), _flat(out, 1, n))
            return
    shape, (sa, sb, so) = plan(out.shape, a.strides, b.strides, out.strides)
    one_run = (len(shape) == 1 and so[0] == 1 and sa[0] in (0, 1) and sb[0] in (0, 1)
               and (sa[0] or sb[0] or n == 1))
    if one_run:
        contiguous_kernel(op, _flat(a, sa[0], n), _flat(b, sb[0], n), _flat(out, 1, n))
    elif strided_kernel is not None:
        args = (op, a.data, a.offset, _arr(sa), b.data, b.offset, _arr(sb), out.data,
                out.offset, _arr(so), _arr(shape))
        strided_kernel(*args) if par else strided_kernel(*args, 0, n)   # serial: all elements
    else:
        flat_a, step_a = _contiguous_input(a, shape, sa)
        flat_b, step_b = _contiguous_input(b, shape, sb)
        if step_a == 0 and step_b == 0:
            flat_a = np.repeat(flat_a, n)   # both scalars: let one of them be a run
        _run_contiguous(lambda *args: contiguous_kernel(op, *args), out, shape, so,
                        (flat_a, flat_b))


def binary_runs(op: int, family: BinaryFamily, a, a_offset: int, b, b_offset: int, b_step: int, out,
                n: int) -> None:
    """``out[:n] = f(a[a_offset:][:n], b[b_offset:][:n])``: plain runs, no planning.

    The lean entry for the commonest calls (two contiguous tensors of one
    shape, or a tensor and a number: ``b_step`` 0 repeats ``b[b_offset]``);
    ``out`` is a fresh buffer of ``n`` elements.
    """
    if a_offset or a.shape[0] != n:
        a = a[a_offset:a_offset + n]
    m = n if b_step else 1
    if b_offset or b.shape[0] != m:
        b = b[b_offset:b_offset + m]
    _binary_kernels(op, family, _parallel(n))[0](op, a, b, out)


def threshold_backward(y, g, out) -> None:
    """ReLU's backward over flat contiguous arrays of one float dtype (elementwise.py)."""
    n = out.shape[0]
    if _parallel(n):
        elementwise.threshold_backward_parallel(y, g, out)
    else:
        elementwise.threshold_backward(y, g, out)


def where(cond: Operand, a: Operand, b: Operand, out: Operand) -> None:
    """``out = a if cond else b`` elementwise (all four already broadcast to out's shape)."""
    n = numel(out.shape)
    if n == 0:
        return
    shape, (sc, sa, sb, so) = plan(out.shape, cond.strides, a.strides, b.strides, out.strides)
    flat = [_contiguous_input(x, shape, st)[0] for x, st in ((cond, sc), (a, sa), (b, sb))]
    kernel = elementwise.where_contiguous_parallel if _parallel(n) else elementwise.where_contiguous
    _run_contiguous(kernel, out, shape, so, tuple(flat))


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------
REDUCE_OPS = reduce_ops.CODES     # op name -> op code


def reduce(op: ReduceOp, a: Operand, dims: tuple, out: np.ndarray, out_idx: np.ndarray | None = None
           ) -> None:
    """Reduce ``a`` over ``dims`` into the contiguous ``out`` (kept dims, in order).

    ``out_idx`` receives the index along the reduced dims of the chosen element
    (for max/min/argmax/argmin).  Sums and products accumulate in float64 or
    int64 and are converted when stored.  Column sums, maxima and minima (the
    kept inner dim contiguous or nearly so, the reduced dim not) run a
    ``*_cols`` kernel; everything else runs a ``*_strided`` kernel, of the
    op's family (see :mod:`minitorch.backends.cpu.reduce`).
    """
    code = REDUCE_OPS[op]
    if out_idx is not None:
        # Values and indices (x.max(dim)): the fold that tracks the index.
        code = {reduce_ops.MAX: reduce_ops.ARGMAX, reduce_ops.MIN: reduce_ops.ARGMIN}.get(code,
                                                                                        code)
    # Visit the reduced elements in memory order where the op allows it.
    planned = plan_reduce(code, a, dims, memory_order=True)
    keep_shape, keep_st = planned.keep_shape, planned.keep_strides
    red_shape, red_st = planned.red_shape, planned.red_strides
    n_out, n_red, acc0 = planned.n_out, planned.n_red, planned.acc0
    if n_out == 0:
        return
    if out_idx is None:
        out_idx = np.empty(0, _I64)      # only argmax/argmin write indices
    par = _parallel(n_out * n_red)
    threads = num_threads() if par else 1
    extremum = code in reduce_ops.EXTREMUM_OPS               # else the sum family (no indices)
    col_step = keep_st[-1] if keep_shape else 0
    if (code in reduce_kernels.COL_OPS and 1 <= len(keep_shape) <= 2
            and keep_shape[-1] >= reduce_kernels.MIN_COLS
            and len(red_shape) == 1 and n_red > 1 and 0 < col_step <= reduce_kernels.MAX_COL_STEP
            and col_step < red_st[0]):
        # Column reductions (x.sum(0)): the kept inner dim is (nearly)
        # contiguous and the reduced dim is not, so add whole rows into a block
        # of accumulators instead of walking down each column.  Columns a few
        # elements apart (x[:, ::2].sum(0)) are reduced with the columns
        # between them, into a temporary, and every col_step-th result kept:
        # col_step times the arithmetic, but contiguous reads.
        n_outer, outer_st = (keep_shape[0], keep_st[0]) if len(keep_shape) == 2 else (1, 0)
        span = (keep_shape[-1] - 1) * col_step + 1
        dst = out if col_step == 1 else np.empty(n_outer * span, out.dtype)
        width = reduce_kernels.plan_cols(n_outer, span, threads)
        args = (code, a.data, a.offset, n_outer, outer_st, span, n_red, red_st[0], width, acc0,
                dst)
        if par:
            (reduce_kernels.extremum_cols_parallel if extremum
             else reduce_kernels.sum_cols_parallel)(*args)
        else:                                        # every task: every block of columns
            (reduce_kernels.extremum_cols if extremum
             else reduce_kernels.sum_cols)(*args, 0, n_outer * -(-span // width))
        if col_step != 1:
            out.reshape(n_outer, -1)[...] = dst.reshape(n_outer, span)[:, ::col_step]
        return
    args = (code, a.data, a.offset, _arr(keep_shape), _arr(keep_st), _arr(red_shape),
            _arr(red_st))
    nsplit = reduce_kernels.plan_split(n_out, n_red, threads) if par else 1
    if par:
        kernel, extra = ((reduce_kernels.extremum_strided_parallel, (out, out_idx)) if extremum else
                         (reduce_kernels.sum_strided_parallel, (out,)))
        kernel(*args, nsplit, acc0, *extra)
    elif extremum:                                   # tasks 0 .. n_out: every output
        reduce_kernels.extremum_strided(*args, nsplit, acc0, out, out_idx, 0, n_out)
    else:
        reduce_kernels.sum_strided(*args, nsplit, acc0, out, 0, n_out)


def scan(op: ScanOp, x: np.ndarray, out: np.ndarray) -> None:
    """Running sum/product along the rows of 2-D contiguous ``x`` into ``out``."""
    if x.size == 0:
        return
    floating = out.dtype.kind == "f"
    code = rows.CUMSUM if op == "cumsum" else rows.CUMPROD
    one = 1 if code == rows.CUMPROD else 0
    reduce_kernels.scan_rows(code, x, out, np.float64(one) if floating else np.int64(one))


# ---------------------------------------------------------------------------
# softmax, log_softmax, nll_loss: row kernels (2-D C-contiguous arrays)
# ---------------------------------------------------------------------------
def softmax(x: np.ndarray, out: np.ndarray, log: bool) -> None:
    """``out[r] = softmax(x[r])`` (``log_softmax`` if ``log``) for each row of ``x``."""
    if _parallel(x.size):
        softmax_kernels.softmax_rows_parallel(x, out, bool(log))
    elif x.size:
        softmax_kernels.softmax_rows(x, out, bool(log), 0, x.shape[0])


def softmax_backward(g: np.ndarray, y: np.ndarray, out: np.ndarray, log: bool) -> None:
    """The input gradient of softmax / log_softmax from the output ``y`` and its gradient ``g``."""
    if _parallel(g.size):
        softmax_kernels.softmax_backward_rows_parallel(g, y, out, bool(log))
    elif g.size:
        softmax_kernels.softmax_backward_rows(g, y, out, bool(log), 0, g.shape[0])


def _class_weight(weight, like: np.ndarray) -> tuple:
    if weight is None:
        return np.ones(1, like.dtype), False
    return weight, True


def nll_loss(logp: np.ndarray, target: np.ndarray, weight, ignore_index: int,
             losses: np.ndarray, weights: np.ndarray) -> int:
    """Per-row losses and weights; returns the first row with a bad target, or -1."""
    if not target.size:
        return -1
    w, has = _class_weight(weight, logp)
    return int(softmax_kernels.nll_rows(logp, target, w, has, np.int64(ignore_index), losses,
                                        weights))


def nll_loss_backward(target: np.ndarray, weight, ignore_index: int, out: np.ndarray) -> None:
    """``out[r] = -weight[target[r]]`` at the target's column, 0 elsewhere (targets checked)."""
    if out.size:
        w, has = _class_weight(weight, out)
        if _parallel(out.size):
            softmax_kernels.nll_backward_rows_parallel(target, w, has, np.int64(ignore_index), out)
        else:
            softmax_kernels.nll_backward_rows(target, w, has, np.int64(ignore_index), out, 0,
                                              out.shape[0])


# ---------------------------------------------------------------------------
# matmul and random fills
# ---------------------------------------------------------------------------
def matmul(a: Operand, b: Operand, out: np.ndarray) -> None:
    """``out[i] = a[i] @ b[i]`` for 3-D operands (batch, rows, cols); ``out`` contiguous 3-D."""
    matmul_kernels.batched_matmul(numpy_view(a), numpy_view(b), out)


def random_fill(kind: RandomKind, buf: np.ndarray, seed: np.uint64, offset: np.uint64,
                *params) -> None:
    """Fill the contiguous ``buf`` from the counter-based stream ``(seed, offset)``."""
    par = _parallel(buf.size)
    if kind == UNIFORM:
        (random.fill_uniform_parallel if par else random.fill_uniform)(
            buf, seed, offset, float(params[0]), float(params[1]))
    elif kind == NORMAL:
        (random.fill_normal_parallel if par else random.fill_normal)(
            buf, seed, offset, float(params[0]), float(params[1]))
    elif kind == RANDINT:
        (random.fill_randint_parallel if par else random.fill_randint)(
            buf, seed, offset, np.int64(params[0]), np.int64(params[1]))
    elif kind == BERNOULLI:
        (random.fill_bernoulli_parallel if par else random.fill_bernoulli)(
            buf, params[0], seed, offset)
    elif kind == BERNOULLI_SCALAR:
        (random.fill_bernoulli_scalar_parallel if par else random.fill_bernoulli_scalar)(
            buf, float(params[0]), seed, offset)
    elif kind == RANDPERM:
        random.randperm(buf, seed, offset)
    elif kind == MULTINOMIAL:
        probs, num_samples, replacement = params
        random.multinomial(probs, num_samples, replacement, buf, seed, offset)
    else:
        raise ValueError(f"unknown random fill {kind!r}")


# ---------------------------------------------------------------------------
# index kernels (see index.py).  Callers validate every index first: these
# functions trust that each index is in range and non-negative.
# ---------------------------------------------------------------------------
SCATTER_OPS = index_maps.SCATTER_CODES     # op name -> combine code


def index_bounds(idx: np.ndarray) -> tuple:
    """``(min, max)`` of a non-empty contiguous int64 array."""
    lo, hi = (index.index_bounds_parallel if _parallel(idx.shape[0]) else index.index_bounds)(idx)
    return int(lo), int(hi)


def add_index_offsets(acc: np.ndarray, idx: np.ndarray, size: int, stride: int) -> None:
    """``acc += (idx wrapped into [0, size)) * stride`` (contiguous int64 arrays)."""
    n = acc.shape[0]
    if _parallel(n):
        index.add_index_offsets_parallel(acc, idx, np.int64(size), np.int64(stride))
    elif n:
        index.add_index_offsets(acc, idx, np.int64(size), np.int64(stride), 0, n)


def gather(src: Operand, dim: int, idx: Operand, out: Operand) -> None:
    """``out[p] = src[p with coordinate dim replaced by idx[p]]`` over ``out``'s shape."""
    if numel(out.shape) == 0:
        return
    src, out = as_bits(src), as_bits(out)
    mult = src.strides[dim]
    s_st = src.strides[:dim] + (0,) + src.strides[dim + 1:]
    shape, (ss, ist, ost) = plan(out.shape, s_st, idx.strides, out.strides)
    index.gather_strided(src.data, src.offset, _arr(ss), idx.data, idx.offset, _arr(ist),
                      np.int64(mult), out.data, out.offset, _arr(ost), _arr(shape))


def index_select(src: Operand, dim: int, idx: np.ndarray, out: Operand) -> None:
    """``out = src`` with coordinate ``dim`` read through ``idx`` (1-D int64).

    ``out.shape`` is ``src.shape`` with ``dim`` of size ``len(idx)``.  The
    size of ``src`` along ``dim`` is not used, only its stride: advanced
    indexing passes storage offsets as ``idx`` with stride 1.
    """
    if numel(out.shape) == 0:
        return
    src, out = as_bits(src), as_bits(out)
    row_plan = select_rows(src, dim, out)
    if row_plan is not None:
        outer, s_outer, inner = row_plan
        args = (src.data, src.offset, s_outer, src.strides[dim], idx, out.data[out.offset:],
                outer, len(idx), inner)
        if _parallel(outer * len(idx) * inner):
            index.gather_rows_parallel(*args)
        else:
            index.gather_rows(*args, 0, outer * len(idx))
        return
    source, index_operand = select_as_gather(src, dim, idx, out)
    gather(source, dim, index_operand, out)


def scatter(op: ScatterOp, tgt: Operand, dim: int, idx: Operand, src: Operand) -> None:
    """``tgt[p with coordinate dim replaced by idx[p]] (op)= src[p]`` over ``idx``'s shape.

    ``op`` is 'set', 'add' or 'multiply'.  ``tgt`` must not have two
    elements at one memory location; ``src`` must not overlap ``tgt``.
    """
    if numel(idx.shape) == 0:
        return
    if tgt.data.dtype == _F16 and op != "set":
        through_float32(lambda t, s: scatter(op, t, dim, idx, s), tgt,
                        Operand(src.data, idx.shape, src.strides, src.offset), allocate, copy)
        return
    tgt, src = as_bits(tgt), as_bits(src)
    mult = tgt.strides[dim]
    shape = idx.shape
    t_st = without(tgt.strides, dim)
    lines, (tst, ist, sst) = coalesce(without(shape, dim), t_st, without(idx.strides, dim),
                                      without(src.strides, dim))
    k = shape[dim]
    idx_flat = idx.data[idx.offset: idx.offset + numel(idx.shape)] if is_contiguous(
        idx.shape, idx.strides) else None
    lo, span, nb = _buckets(numel(lines), k, idx_flat)
    index.scatter_strided(SCATTER_OPS[op], tgt.data, tgt.offset, _arr(tst + (0,)), idx.data,
                       idx.offset, _arr(ist + (idx.strides[dim],)), np.int64(mult), src.data,
                       src.offset, _arr(sst + (src.strides[dim],)), _arr(lines + (k,)),
                       lo, span, nb)


def _buckets(tasks: int, k: int, idx_flat) -> tuple:
    """``(lo, span, nbuckets)`` for the scatter kernels (``planning.value_buckets``)."""
    def bounds() -> tuple:
        return index_bounds(idx_flat)
    known = idx_flat is not None and idx_flat.shape[0] > 0
    return value_buckets(tasks, k, num_threads(), bounds if known else None)


def index_reduce(op: ScatterOp, tgt: Operand, dim: int, idx: np.ndarray, src: Operand) -> None:
    """``tgt[.., idx[k], ..] (op)= src[.., k, ..]`` along ``dim`` (``idx`` 1-D int64).

    The kernel of ``index_add``, ``index_copy``, ``index_fill`` and of
    advanced-index assignment.  ``src.shape`` is ``tgt.shape`` with ``dim``
    of size ``len(idx)``.
    """
    if numel(src.shape) == 0:
        return
    if tgt.data.dtype == _F16 and op != "set":
        through_float32(lambda t, s: index_reduce(op, t, dim, idx, s), tgt, src, allocate, copy)
        return
    tgt, src = as_bits(tgt), as_bits(src)
    row_plan = rows_plan(tgt.shape, dim, tgt.strides)
    if row_plan is not None and is_contiguous(src.shape, src.strides):
        outer, t_outer, inner = row_plan
        lo, span, nb = _buckets(outer * ((inner + index.BLOCK - 1) // index.BLOCK), len(idx), idx)
        index.scatter_rows(SCATTER_OPS[op], tgt.data, tgt.offset, t_outer, tgt.strides[dim], idx,
                        src.data[src.offset:], outer, len(idx), inner, lo, span, nb)
        return
    i_st = index_strides(len(src.shape), dim)
    scatter(op, tgt, dim, Operand(idx, src.shape, i_st, 0), src)


def masked_select(src: Operand, mask: Operand) -> np.ndarray:
    """The elements of ``src`` where ``mask`` (same shape) is true, in row-major order."""
    flat_mask = flat_contiguous(mask, allocate, copy)
    starts = index.chunk_starts(flat_mask)
    out = np.empty(int(starts[-1]), src.data.dtype)
    if out.shape[0]:
        bits = as_bits(src)
        index.masked_compact(flat_contiguous(bits, allocate, copy), flat_mask, starts,
                          out.view(bits.data.dtype))
    return out


def masked_scatter(tgt: np.ndarray, mask: Operand, source: np.ndarray) -> None:
    """Flat contiguous ``tgt[mask] = source[:count]``; returns nothing.  Caller checks sizes."""
    flat_mask = flat_contiguous(mask, allocate, copy)
    starts = index.chunk_starts(flat_mask)
    if starts[-1]:
        if tgt.dtype == _F16:
            tgt, source = tgt.view(np.uint16), source.view(np.uint16)
        index.masked_spread(tgt, flat_mask, starts, source)


def count_true(mask: Operand) -> int:
    """How many elements of the bool operand are true."""
    if numel(mask.shape) == 0:
        return 0
    return int(index.chunk_starts(flat_contiguous(mask, allocate, copy))[-1])


def masked_fill(tgt: np.ndarray, mask: Operand, value) -> None:
    """Flat contiguous ``tgt[i] = value`` where the bool operand ``mask`` is true."""
    if tgt.shape[0]:
        value = np.array([value]).astype(tgt.dtype)
        if tgt.dtype == _F16:
            tgt, value = tgt.view(np.uint16), value.view(np.uint16)
        index.masked_fill(tgt, flat_contiguous(mask, allocate, copy), value)


def nonzero(mask: Operand) -> np.ndarray:
    """``(count, ndim)`` int64 coordinates of the true elements of a bool operand."""
    ndim = len(mask.shape)
    if numel(mask.shape) == 0:
        return np.empty((0, ndim), _I64)
    flat_mask = flat_contiguous(mask, allocate, copy)
    starts = index.chunk_starts(flat_mask)
    out = np.empty((int(starts[-1]), ndim), _I64)
    if out.shape[0] and ndim:
        index.nonzero_coords(flat_mask, _arr(mask.shape), starts, out)
    return out


SELECT_MAX_K = 64   # up to this k, the first k of each row are selected, not sorted


def sort_rows(keys: np.ndarray, descending: bool, k: int | None = None) -> tuple:
    """Stable sort of each row of a contiguous 2-D array: ``(values, indices)``.

    With ``k``, only the first ``k`` columns of the result: for small ``k``
    one selection pass (``sort.topk_rows``) instead of a full sort.
    """
    rows, n = keys.shape
    if k is not None and k < n and k <= SELECT_MAX_K:
        values = np.empty((rows, k), keys.dtype)
        indices = np.empty((rows, k), _I64)
        if rows and k:
            sort.topk_rows(keys, np.int64(k), bool(descending), values, indices)
        return values, indices
    values = np.empty_like(keys)
    indices = np.empty(keys.shape, _I64)
    if keys.size:
        sort.sort_rows(keys, bool(descending), values, indices)
    if k is not None and k < n:
        return values[:, :k].copy(), indices[:, :k].copy()
    return values, indices


def unique_sorted(values: np.ndarray, order: np.ndarray) -> tuple:
    """Group ascending ``values``: ``(unique values, inverse, counts)``."""
    n = values.shape[0]
    uniq = np.empty(n, values.dtype)
    inverse = np.empty(n, _I64)
    counts = np.empty(n, _I64)
    m = sort.unique_sorted(values, order, uniq, inverse, counts) if n else 0
    return uniq[:m].copy(), inverse, counts[:m].copy()


# ---------------------------------------------------------------------------
# convolution and pooling (kernels in conv.py; arrays are contiguous 4-D)
# ---------------------------------------------------------------------------
# Each serial conv kernel does the tasks t0 .. t1 - 1: one (sample, channel)
# plane each (one row of cols for im2col_batch).  The backend passes them all.
def im2col(x: np.ndarray, geometry: tuple, cols: np.ndarray) -> None:
    """Receptive fields of ``x`` (N, C, H, W) as columns of ``cols`` (N, C*kh*kw, L)."""
    if _parallel(cols.size):
        conv.im2col_parallel(x, *geometry, cols)
    else:
        conv.im2col(x, *geometry, cols, 0, x.shape[0] * x.shape[1])


def col2im(cols: np.ndarray, geometry: tuple, x: np.ndarray) -> None:
    """Sum the columns back into the image ``x`` (the backward of im2col)."""
    if _parallel(cols.size):
        conv.col2im_parallel(cols, *geometry, x)
    else:
        conv.col2im(cols, *geometry, x, 0, x.shape[0] * x.shape[1])


# Direct stride-1 convolution (conv_direct.py): the images are padded onto a
# flat grid of row pitch wp and each tap is a shift along it.  The grids get a
# zero tail of _GRID_TAIL numbers, so that the kernels' loops can run over a
# whole number of SIMD steps (16: 2 x 8 float32 with AVX2) with no remainder.
_GRID_TAIL = 16


def _grid_span(oh: int, ow: int, wp: int) -> int:
    """Grid positions a direct-conv loop covers: every output, rounded up to _GRID_TAIL."""
    return -(-((oh - 1) * wp + ow) // _GRID_TAIL) * _GRID_TAIL


_TAP_OFFSETS: dict = {}


def _tap_offsets(cg: int, plane: int, wp: int, geometry: tuple) -> np.ndarray:
    """Flat offset ``c*plane + i*dh*wp + j*dw`` of each tap (c, i, j), in weight order.

    A layer asks for the same offsets at every step: they are kept (and never written:
    a read-only flag would give the kernels another compiled signature).
    """
    kh, kw, _, _, _, _, dh, dw = geometry[:8]
    key = (cg, plane, wp, kh, kw, dh, dw)
    offs = _TAP_OFFSETS.get(key)
    if offs is None:
        if len(_TAP_OFFSETS) > 256:
            _TAP_OFFSETS.clear()
        offs = (np.arange(cg, dtype=_I64)[:, None, None] * plane
                + np.arange(kh, dtype=_I64)[None, :, None] * (dh * wp)
                + np.arange(kw, dtype=_I64)[None, None, :] * dw).reshape(-1)
        _TAP_OFFSETS[key] = offs
    return offs


def _on_grid(x: np.ndarray, rows: int, wp: int, top: int, left: int) -> np.ndarray:
    """``x`` (N, C, h, w) copied onto zeroed grids (N, C, rows*wp + _GRID_TAIL) at (top, left)."""
    n, c, h, w = x.shape
    dst = np.empty((n, c, rows * wp + _GRID_TAIL), x.dtype)
    src = x.reshape(n * c, h, w)
    flat = dst.reshape(n * c, -1)
    if _parallel(dst.size):
        conv_direct.to_grid_parallel(src, wp, top, left, flat)
    else:
        conv_direct.to_grid(src, wp, top, left, flat, 0, n * c)
    return dst


def conv2d_direct(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, geometry: tuple,
                  groups: int, out: np.ndarray) -> None:
    """Stride-1 convolution of ``x`` (N, C, H, W) by ``w`` (O, C/groups, kh, kw) into
    ``out`` (N, O, oh, ow), bias added; all contiguous, one float dtype."""
    n, c, h, wd = x.shape
    o, cg = w.shape[0], w.shape[1]
    ph, pw, oh, ow = geometry[4], geometry[5], geometry[8], geometry[9]
    hp, wp = h + 2 * ph, wd + 2 * pw
    xf = _on_grid(x, hp, wp, ph, pw)
    plane = xf.shape[2]
    offs = _tap_offsets(cg, plane, wp, geometry)
    has_bias = bias is not None
    b = bias if has_bias else out.reshape(-1)[:1]       # any array of the dtype: never read
    args = (xf.reshape(n, c * plane), w.reshape(o, -1), offs, b, has_bias, o // groups,
            cg * plane, wp, oh, ow, _grid_span(oh, ow, wp), out.reshape(n, o, oh * ow))
    if n > 1 and _parallel(out.size):
        conv_direct.conv_forward_parallel(*args)
    else:
        conv_direct.conv_forward(*args, 0, n)


def _grad_on_grid(grad: np.ndarray, wp: int) -> np.ndarray:
    """The output gradient (N, O, oh, ow) on the forward's flat grid (row pitch wp)."""
    return _on_grid(grad, grad.shape[2], wp, 0, 0)


def conv2d_direct_backward(x: np.ndarray, w: np.ndarray, grad: np.ndarray, geometry: tuple,
                           groups: int, gx: np.ndarray | None, gw: np.ndarray | None,
                           gb: np.ndarray | None) -> None:
    """Gradients of :func:`conv2d_direct` with respect to the input (``gx``, like ``x``),
    the weight (``gw``, like ``w``) and the bias (``gb``, (O,)); None: not wanted."""
    n, c, h, wd = x.shape
    o, cg = w.shape[0], w.shape[1]
    ph, pw, dh, dw, oh, ow = geometry[4:10]
    hp, wp = h + 2 * ph, wd + 2 * pw
    span = _grid_span(oh, ow, wp)
    gp = _grad_on_grid(grad, wp)
    if gx is not None:
        args = (gp, w, o // groups, cg, wp, ph, pw, dh, dw, span, gx)
        if n > 1 and _parallel(gx.size):
            conv_direct.conv_input_grad_parallel(*args)
        else:
            conv_direct.conv_input_grad(*args, 0, n)
    if gw is not None or gb is not None:
        gw_ = gw if gw is not None else np.empty(w.shape, w.dtype)
        gb_ = gb if gb is not None else np.empty(o, w.dtype)
        xf = _on_grid(x, hp, wp, ph, pw)
        plane = xf.shape[2]
        offs = _tap_offsets(cg, plane, wp, geometry)
        args = (xf.reshape(n, c * plane), gp, np.int64(span), offs, o // groups, cg * plane,
                gw_.reshape(o, -1), gb_)
        if o > 1 and _parallel(xf.size):
            conv_direct.conv_weight_grad_parallel(*args)
        else:
            conv_direct.conv_weight_grad(*args, 0, o)


# Pooling windows that tile the input (kernel == stride, no padding or dilation)
# take conv.max_pool2d_tiles from this many input elements up; smaller inputs
# (most unit tests) take the general max_pool2d.
POOL_TILES_MIN = 4096


def _tiles(geometry: tuple, h: int, w: int) -> bool:
    kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = geometry
    return (kh == sh and kw == sw and ph == pw == 0 and dh == dw == 1
            and oh * kh <= h and ow * kw <= w)


def max_pool2d(x: np.ndarray, geometry: tuple, out: np.ndarray, idx: np.ndarray) -> None:
    if x.size >= POOL_TILES_MIN and _tiles(geometry, x.shape[2], x.shape[3]):
        kh, kw, oh, ow = geometry[0], geometry[1], geometry[8], geometry[9]
        if _parallel(x.size):
            conv.max_pool2d_tiles_parallel(x, kh, kw, oh, ow, out, idx)
        else:
            conv.max_pool2d_tiles(x, kh, kw, oh, ow, out, idx, 0, x.shape[0] * x.shape[1])
    elif _parallel(x.size):
        conv.max_pool2d_parallel(x, *geometry, out, idx)
    else:
        conv.max_pool2d(x, *geometry, out, idx, 0, x.shape[0] * x.shape[1])


def max_pool2d_backward(grad: np.ndarray, idx: np.ndarray, out: np.ndarray,
                        geometry: tuple | None = None) -> None:
    """Route each window's gradient to its winner; with the forward's ``geometry``,
    windows that tile the input take the one-pass kernel."""
    if (geometry is not None and out.size >= POOL_TILES_MIN
            and _tiles(geometry, out.shape[2], out.shape[3])):
        kh, kw = geometry[0], geometry[1]
        if _parallel(out.size):
            conv.max_pool2d_tiles_backward_parallel(grad, idx, kh, kw, out)
        else:
            conv.max_pool2d_tiles_backward(grad, idx, kh, kw, out, 0,
                                           grad.shape[0] * grad.shape[1])
        return
    if _parallel(out.size):
        conv.max_pool2d_backward_parallel(grad, idx, out)
    else:
        conv.max_pool2d_backward(grad, idx, out, 0, grad.shape[0] * grad.shape[1])


# ---------------------------------------------------------------------------
# optimizer updates (kernels in optim.py; all arrays contiguous, one dtype)
# ---------------------------------------------------------------------------
def fused_elementwise(program: Any, inputs: list, outputs: list) -> None:
    """Run a fused elementwise ``program`` (``backends/fusion_program.py``): one pass.

    ``inputs`` and ``outputs`` are flat contiguous arrays of the program's
    dtype; an input the program marks as scalar has one element.
    """
    module = fused.kernels_for(program)
    n = outputs[0].shape[0]
    if _parallel(n):
        module.forward_parallel(*inputs, *outputs)
    else:
        module.forward(*inputs, *outputs, 0, n)


def fused_elementwise_source(program: Any) -> str:
    """The Python source of the kernels :func:`fused_elementwise` runs for ``program``."""
    return fused.source(program)


def fused_elementwise_backward(program: Any, inputs: list, grad_outputs: list,
                               grad_inputs: list) -> None:
    """The gradients of ``program``'s inputs listed in ``program.grads_for``, one element
    each per output element (the caller sums those of broadcast inputs)."""
    module = fused.kernels_for(program)
    n = grad_outputs[0].shape[0]
    args = (*inputs, *grad_outputs, *grad_inputs)
    if _parallel(n):
        module.backward_parallel(*args)
    else:
        module.backward(*args, 0, n)


_UPDATE = {  # the step record's type -> its kernels (serial, parallel driver), optim.py
    optimizer_rules.SGDStep: (optim.sgd, optim.sgd_parallel),
    optimizer_rules.AdamStep: (optim.adam, optim.adam_parallel),
    optimizer_rules.RMSpropStep: (optim.rmsprop, optim.rmsprop_parallel),
    optimizer_rules.AdagradStep: (optim.adagrad, optim.adagrad_parallel),
}


def fused_update(hyper: optimizer_rules.OptimizerStep, arrays: list) -> None:
    """Apply one optimizer step in place: the rule named by the record's type.

    ``hyper`` is an ``optimizer_rules`` record (``SGDStep``, ``AdamStep``,
    ...); ``arrays`` are the parameter, its gradient and the rule's state
    arrays (``hyper.STATE``), all contiguous and of one float dtype.
    """
    serial, parallel = _UPDATE[type(hyper)]
    (parallel if _parallel(arrays[0].shape[0]) else serial)(*arrays, hyper)


def im2col_batch(x: np.ndarray, geometry: tuple, cols: np.ndarray) -> None:
    """Like im2col, but columns of all samples side by side: cols (C*kh*kw, N*L)."""
    if _parallel(cols.size):
        conv.im2col_batch_parallel(x, *geometry, cols)
    else:
        conv.im2col_batch(x, *geometry, cols, 0, cols.shape[0])


def col2im_batch(cols: np.ndarray, geometry: tuple, x: np.ndarray) -> None:
    if _parallel(cols.size):
        conv.col2im_batch_parallel(cols, *geometry, x)
    else:
        conv.col2im_batch(cols, *geometry, x, 0, x.shape[0] * x.shape[1])

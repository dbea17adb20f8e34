"""The CUDA backend: the interface of ``cpu/backend.py``, over ``numba.cuda`` device arrays.

Every function here takes the same arguments as its CPU twin and plans the
call the same way: merge the dims that all operands walk in step
(:func:`minitorch.layout.coalesce`), run the contiguous kernel if what is
left is one run of memory, else the strided kernel.  The difference is the
launch: ``kernel[blocks, threads](args)`` (see ``launch.py``) instead of a
call, and buffers that are device arrays (``cuda.device_array``) instead of
NumPy arrays.  Shapes and strides travel as tuples with the launch.

A kernel launch returns at once and the GPU runs the kernels in order;
the host waits only where it needs a value (``to_host``, ``index_bounds``,
the count of a mask), which is where PyTorch synchronises too.  An error a
kernel finds (a loss's target out of range) is not looked for at the launch,
which would make the host wait: the kernel raises the device's error flag,
and the host reads it where it waits anyway (:func:`check_errors`).

Which GPU: :func:`activate` makes the device of a tensor the current one
before its kernels run (``get_backend`` calls it).
"""

from __future__ import annotations

from typing import Any

import functools
import sys
import warnings

import numpy as np
from numba import cuda

from ...layout import coalesce, contiguous_strides, is_contiguous, numel
from .. import index_maps, optimizer_rules, reduce_ops, rows
from ..interface import (ARITH, BERNOULLI, BERNOULLI_SCALAR, COMPARE, DEVICES, FAST,
                         FUSED_ELEMENTWISE, INT, MATH, MULTINOMIAL, NORMAL, RANDINT, RANDPERM,
                         SCALAR_BUFFER, UNIFORM, BinaryFamily, RandomKind, ReduceOp, ScanOp,
                         ScatterOp, UnaryFamily)
from ..operand import Operand
from ..planning import (as_bits, flat_contiguous, index_strides, one_run, plan, plan_reduce,
                        select_as_gather, select_rows, through_float32, value_buckets,
                        without)
from ..tap_maps import tap_map
from . import conv, elementwise, index, optim, random, runtime, sort
from . import fused  # kernels generated for minitorch.compile's fused elementwise programs
# (These three share their names with functions below.)
from . import matmul as matmul_kernels
from . import reduce as reduce_kernels
from . import softmax as softmax_kernels
from .launch import MAX_BLOCKS, SIMULATOR, THREADS, grid, seed_warning_registry

_F16 = np.dtype(np.float16)
_I64 = np.dtype(np.int64)

#: The optional kernels this backend has (see ``backends/interface.py``).
CAPABILITIES = frozenset({SCALAR_BUFFER, FUSED_ELEMENTWISE, DEVICES})


# ---------------------------------------------------------------------------
# devices and memory (the runtime module keeps the state)
# ---------------------------------------------------------------------------
def activate(index: int) -> None:
    """Make CUDA device ``index`` current (checked: it must exist)."""
    runtime.activate(index)


def active_device() -> int:
    return runtime.active_device()


def memory_allocated(device: int) -> int:
    """Bytes held by the buffers this backend allocated on ``device`` that are still alive."""
    return runtime.memory_allocated(device)


def empty_cache() -> None:
    """Free the work buffers kept for reuse (``_scratch``) and the memory whose release
    Numba has deferred (no-op on the simulator)."""
    _SCRATCH.clear()
    runtime.empty_cache()


def synchronize() -> None:
    """Wait for every kernel launched so far, and raise what they flagged (``check_errors``)."""
    cuda.synchronize()
    check_errors()


# ---------------------------------------------------------------------------
# buffers
# ---------------------------------------------------------------------------
def allocate(n: int, dtype: np.dtype):
    return runtime.track(cuda.device_array(n, dtype))


def zeros(n: int, dtype: np.dtype):
    buf = allocate(n, dtype)
    if n:
        _launch(elementwise.fill_contiguous, n, buf, 0, n, _scalar(0, buf.dtype))
    return buf


def from_host(arr: np.ndarray):
    """A new device buffer holding a copy of the NumPy array ``arr``."""
    return runtime.track(cuda.to_device(np.ascontiguousarray(arr)))


_SCALARS: dict = {}      # (device, dtype, bytes) -> one-element device buffer


def scalar_buffer(value, dtype: np.dtype):
    """A one-element device buffer holding ``value``, for kernels to *read* (it is cached).

    ``x * 0.5`` passes the 0.5 to the kernel as a buffer read with stride 0;
    caching the buffer saves an allocation and a copy to the device each time.
    """
    host = np.array([value]).astype(dtype)
    key = (active_device(), host.dtype.str, host.tobytes())
    buf = _SCALARS.get(key)
    if buf is None:
        if len(_SCALARS) >= 1024:
            _SCALARS.clear()
        buf = _SCALARS[key] = from_host(host)
    return buf


# ---------------------------------------------------------------------------
# work buffers and the error flag: what an op needs on the device without a
# tensor, kept per device so that an op allocates nothing and waits for nothing
# ---------------------------------------------------------------------------
_SCRATCH: dict = {}      # (device, purpose, dtype) -> work buffer
#: Work buffers up to this many elements are kept for reuse; a larger one is made per use.
_SCRATCH_KEEP = 1 << 20


def _scratch(purpose: str, n: int, dtype: np.dtype):
    """A device buffer of ``n`` elements that no tensor owns, reused by every op.

    For what an op needs only while its kernels run: the partial results of
    a reduction, the indices of a sum that nobody asked for, counts read
    back.  Reusing one buffer is safe because kernels run one after another
    in launch order (one stream): the next op's kernels start only when this
    op's have finished with it.  ``purpose`` names the buffer, so that one
    op's two work buffers of one dtype are never the same memory.  (Like the
    cached scalars, they are not counted in ``memory_allocated``;
    ``empty_cache`` frees them.)
    """
    dtype = np.dtype(dtype)
    if n > _SCRATCH_KEEP:
        return allocate(n, dtype)
    key = (active_device(), purpose, dtype.str)
    buf = _SCRATCH.get(key)
    if buf is None or buf.shape[0] < n:
        buf = _SCRATCH[key] = cuda.device_array(max(n, 64), dtype)
    return buf[:n]


_ERRORS: dict = {}       # device -> its error flag: int64 [code, detail, detail], 0 = none
_FLAGGED: set = set()    # devices that ran a kernel that may raise, since the host looked


def _error_flag():
    """The current device's error flag, for a kernel that may raise it (see ``softmax.py``)."""
    device = active_device()
    flag = _ERRORS.get(device)
    if flag is None:
        flag = _ERRORS[device] = cuda.to_device(np.zeros(3, np.int64))
    _FLAGGED.add(device)
    return flag


def check_errors() -> None:
    """Raise the error a kernel flagged since the host last looked, and clear the flag.

    Called wherever the host waits for the GPU anyway (a value read back,
    ``synchronize``), and only after a kernel that may raise ran: then it
    costs one copy of three numbers, and nothing otherwise.  So an error is
    reported later than the op that made it, as PyTorch reports a CUDA
    device-side assert at the next synchronisation.
    """
    while _FLAGGED:
        device = _FLAGGED.pop()
        flag = _ERRORS[device]
        code, row, value = (int(v) for v in flag.copy_to_host())
        if code:
            flag.copy_to_device(np.zeros(3, np.int64))
            if code == softmax_kernels.BAD_TARGET:
                raise IndexError(
                    f"Target {value} is out of bounds.  (Row {row} of an nll_loss or "
                    f"cross_entropy on cuda:{device}: the GPU checks the targets and the "
                    f"host reads what it found at its next wait for the GPU, as PyTorch "
                    f"reports a device-side assert.)")
            raise RuntimeError(f"a CUDA kernel on cuda:{device} raised error code {code} "
                               f"({row}, {value})")


# torch.cuda.synchronize() (runtime.synchronize) raises what the kernels flagged too.
runtime.after_synchronize.append(check_errors)


def to_host(data) -> np.ndarray:
    check_errors()
    return data.copy_to_host()


def to_numpy(op: Operand) -> np.ndarray:
    """A NumPy array (a copy, on the host) with the operand's elements."""
    check_errors()
    n = numel(op.shape)
    if n == 0:
        return np.empty(op.shape, op.data.dtype)
    if not is_contiguous(op.shape, op.strides):
        tmp = allocate(n, op.data.dtype)
        copy(op, Operand(tmp, op.shape, contiguous_strides(op.shape), 0))
        op = Operand(tmp, op.shape, contiguous_strides(op.shape), 0)
    return op.data[op.offset: op.offset + n].copy_to_host().reshape(op.shape)


def num_threads() -> int:
    return MAX_BLOCKS * THREADS


# ---------------------------------------------------------------------------
# launching
# ---------------------------------------------------------------------------
def _launch(kernel, n: int, *args) -> None:
    """Run ``kernel`` with enough threads for ``n`` work items (grid-stride loops do the rest)."""
    blocks, threads = grid(n)
    if SIMULATOR:
        _simulate(kernel[blocks, threads], args)
    else:
        kernel[blocks, threads](*args)


def _simulate(configured, args) -> None:
    """Run a kernel on the simulator, which runs each GPU thread as a Python thread.

    Simulated kernels compute with NumPy scalars, which warn on overflow and
    division by zero where compiled kernels follow IEEE rules silently: the
    warnings are hidden.  The simulator's scheduler polls its threads in a
    loop, so each ``cuda.syncthreads()`` costs a few of the interpreter's
    thread switches: a short switch interval makes the tiled matmul ten
    times faster there.
    """
    _seed_warning_registries()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            configured(*args)
    finally:
        sys.setswitchinterval(interval)


#: ``len(sys.modules)`` when :func:`_seed_warning_registries` last looked.
_modules_seeded = 0


def _seed_warning_registries() -> None:
    """Seed the warning registry of every backend module (see ``seed_warning_registry``).

    Looks again only after an import: a registry, once made, stays (the
    warnings module clears it but never removes it).
    """
    global _modules_seeded
    if len(sys.modules) == _modules_seeded:
        return
    for name, module in list(sys.modules.items()):
        if name.startswith("minitorch.backends") and module is not None:
            seed_warning_registry(module.__dict__)
    _modules_seeded = len(sys.modules)


def _tuple(t) -> tuple:
    """A shape or strides as a kernel argument: a tuple of Python ints (passed by value).

    A GPU thread keeps its multi-index in a local array of ``index_maps.MAX_DIMS``
    entries, so more dims (left after merging) are refused here, not overrun there.
    """
    out = tuple(int(v) for v in t)
    if len(out) > index_maps.MAX_DIMS:
        raise RuntimeError(f"the CUDA kernels handle at most {index_maps.MAX_DIMS} dims after "
                           f"merging, but got {len(out)}: {out}")
    return out


def _scalar(value, dtype: np.dtype):
    """``value`` as a kernel argument of ``dtype`` (float16 travels as float32)."""
    dt = np.dtype(np.float32) if dtype == _F16 else dtype
    return np.array([value]).astype(dt)[0]


# ---------------------------------------------------------------------------
# copy and fill
# ---------------------------------------------------------------------------
def copy(src: Operand, dst: Operand) -> None:
    """``dst[...] = src[...]`` elementwise, converting to dst's dtype."""
    n = numel(dst.shape)
    if n == 0:
        return
    shape, (ss, ds) = plan(dst.shape, src.strides, dst.strides)
    # The copy kernels are the map kernels with the identity (op and parameters unused).
    if one_run(shape, ds, ss):
        _launch(elementwise.copy_contiguous, n, 0, src.data, src.offset, ss[0], dst.data,
                dst.offset, n, 0.0, 0.0)
    else:
        _launch(elementwise.copy_strided, n, 0, src.data, src.offset, ss, dst.data, dst.offset,
                ds, shape, n, 0.0, 0.0)


def fill(dst: Operand, value) -> None:
    """Set every element of ``dst`` to ``value`` (converted as NumPy's ``astype`` does)."""
    n = numel(dst.shape)
    if n == 0:
        return
    v = _scalar(value, dst.data.dtype)
    shape, (ds,) = plan(dst.shape, dst.strides)
    if one_run(shape, ds):
        _launch(elementwise.fill_contiguous, n, dst.data, dst.offset, n, v)
    else:
        _launch(elementwise.fill_strided, n, dst.data, dst.offset, ds, shape, n, v)


# ---------------------------------------------------------------------------
# map and zip
# ---------------------------------------------------------------------------
_UNARY = {   # family -> (contiguous kernel, strided kernel)
    FAST: (elementwise.unary_fast_contiguous, elementwise.unary_fast_strided),
    MATH: (elementwise.unary_contiguous, elementwise.unary_strided),
    INT: (elementwise.unary_int_contiguous, elementwise.unary_int_strided),
}


def unary(op: int, a: Operand, out: Operand, p0: float = 0.0, p1: float = 0.0,
          family: UnaryFamily = MATH) -> None:
    """``out = f(a)``; ``family`` is FAST, MATH or INT (``interface.py``; see scalar_ops)."""
    n = numel(out.shape)
    if n == 0:
        return
    contiguous_kernel, strided_kernel = _UNARY[family]
    shape, (sa, so) = plan(out.shape, a.strides, out.strides)
    extra = (float(p0), float(p1))      # (unused by the int family, whose kernels share the map's)
    if one_run(shape, so, sa):
        _launch(contiguous_kernel, n, op, a.data, a.offset, sa[0], out.data, out.offset, n,
                *extra)
    else:
        _launch(strided_kernel, n, op, a.data, a.offset, sa, out.data, out.offset, so, shape,
                n, *extra)


_BINARY = {  # family -> (contiguous kernel, strided kernel)
    ARITH: (elementwise.arith_contiguous, elementwise.arith_strided),
    MATH: (elementwise.binary_contiguous, elementwise.binary_strided),
    INT: (elementwise.binary_int_contiguous, elementwise.binary_int_strided),
    COMPARE: (elementwise.compare_contiguous, elementwise.compare_strided),
}


def binary(op: int, a: Operand, b: Operand, out: Operand, family: BinaryFamily = ARITH) -> None:
    """``out = f(a, b)``; ``family`` is ARITH, MATH, INT or COMPARE (``interface.py``)."""
    n = numel(out.shape)
    if n == 0:
        return
    contiguous_kernel, strided_kernel = _BINARY[family]
    shape, (sa, sb, so) = plan(out.shape, a.strides, b.strides, out.strides)
    if one_run(shape, so, sa, sb):
        _launch(contiguous_kernel, n, op, a.data, a.offset, sa[0], b.data, b.offset, sb[0],
                out.data, out.offset, n)
    else:
        _launch(strided_kernel, n, op, a.data, a.offset, sa, b.data, b.offset, sb, out.data,
                out.offset, so, shape, n)


def binary_runs(op: int, family: BinaryFamily, a, a_offset: int, b, b_offset: int, b_step: int, out,
                n: int) -> None:
    """``out[:n] = f(a[a_offset:][:n], b[b_offset:][:n])``: plain runs (``b_step`` 0: one value)."""
    if n:
        _launch(_BINARY[family][0], n, op, a, a_offset, 1, b, b_offset, b_step, out, 0, n)


def where(cond: Operand, a: Operand, b: Operand, out: Operand) -> None:
    """``out = a if cond else b`` elementwise (all four already broadcast to out's shape)."""
    n = numel(out.shape)
    if n == 0:
        return
    shape, (sc, sa, sb, so) = plan(out.shape, cond.strides, a.strides, b.strides, out.strides)
    if one_run(shape, so, sc, sa, sb):
        _launch(elementwise.where_contiguous, n, cond.data, cond.offset, sc[0], a.data,
                a.offset, sa[0], b.data, b.offset, sb[0], out.data, out.offset, n)
    else:
        _launch(elementwise.where_strided, n, cond.data, cond.offset, sc, a.data, a.offset, sa,
                b.data, b.offset, sb, out.data, out.offset, so, shape, n)


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------
REDUCE_OPS = reduce_ops.CODES     # op name -> op code

#: Threads worth filling with partial reductions, the fewest elements per part, and
#: the most parts per output (one thread folds an output's parts in the second pass).
_SPLIT_TARGET = 8 if SIMULATOR else 65536
_SPLIT_GRAIN = 2 if SIMULATOR else 32
_SPLIT_MAX = 8 if SIMULATOR else 4096


def plan_split(n_out: int, n_red: int) -> int:
    """How many interleaved parts to cut each output's reduction into (see ``reduce.py``)."""
    if n_out >= _SPLIT_TARGET or n_red < 2 * _SPLIT_GRAIN:
        return 1
    return max(1, min(n_red // _SPLIT_GRAIN, _SPLIT_TARGET // n_out, _SPLIT_MAX))


def reduce(op: ReduceOp, a: Operand, dims: tuple, out, out_idx=None) -> None:
    """Reduce ``a`` over ``dims`` into the contiguous ``out`` (kept dims, in order).

    ``out_idx`` receives the index along the reduced dims of the chosen
    element (max/min/argmax/argmin).  Sums and products accumulate in int64
    for integers and in ``out``'s float type for floats: a float32 sum adds
    in float32, as PyTorch's CUDA sums do (the CPU adds in float64), and a
    float64 result in float64.

    The kernels always write an index per output; when nobody asked for it
    (a sum), it goes to a work buffer, as do the partial results of a split
    reduction (``_scratch``): a reduction allocates nothing but its result.
    """
    planned = plan_reduce(REDUCE_OPS[op], a, dims, memory_order=False)
    code, n_out, n_red, acc0 = planned.code, planned.n_out, planned.n_red, planned.acc0
    if n_out == 0:
        return
    if isinstance(acc0, np.floating) and out.dtype.kind == "f":
        acc0 = out.dtype.type(acc0)
    if out_idx is None:
        out_idx = _scratch("reduce index", n_out, _I64)
    keep_shape, keep_st = planned.keep_shape, planned.keep_strides
    if not keep_shape:
        keep_shape, keep_st = (1,), (0,)
    nsplit = plan_split(n_out, n_red)
    if nsplit == 1:
        part, part_i = out, out_idx
    else:
        part = _scratch("reduce parts", n_out * nsplit, np.dtype(type(acc0)))
        part_i = _scratch("reduce part index", n_out * nsplit, _I64)
    _launch(reduce_kernels.reduce_partial, n_out * nsplit, code, a.data, a.offset,
            _tuple(keep_shape), _tuple(keep_st), _tuple(planned.red_shape),
            _tuple(planned.red_strides), n_out, n_red, nsplit, acc0, part, part_i)
    if nsplit > 1:
        _launch(reduce_kernels.reduce_combine, n_out, code, part, part_i, nsplit, n_out, out,
                out_idx)


def scan(op: ScanOp, x, out) -> None:
    """Running sum/product along the rows of 2-D contiguous ``x`` into ``out``.

    Accumulates in ``out``'s float type (float32 in float32, as PyTorch's CUDA
    scans), or int64."""
    if x.size == 0:
        return
    code = rows.CUMSUM if op == "cumsum" else rows.CUMPROD
    one = 1 if code == rows.CUMPROD else 0
    _launch(reduce_kernels.scan_rows, x.shape[0], code, x, out,
            out.dtype.type(one) if out.dtype.kind == "f" else np.int64(one))


# ---------------------------------------------------------------------------
# softmax, log_softmax, nll_loss: row kernels (2-D C-contiguous device arrays)
# ---------------------------------------------------------------------------
def softmax(x, out, log: bool) -> None:
    """``out[r] = softmax(x[r])`` (``log_softmax`` if ``log``) for each row of ``x``."""
    if x.size:
        _launch(softmax_kernels.softmax_rows, x.shape[0], x, out, bool(log))


def softmax_backward(g, y, out, log: bool) -> None:
    """The input gradient of softmax / log_softmax from the output ``y`` and its gradient ``g``."""
    if g.size:
        _launch(softmax_kernels.softmax_backward_rows, g.shape[0], g, y, out, bool(log))


def _class_weight(weight, like):
    """The kernels' weight argument: without class weights, a cached one-element buffer
    (never read: ``has_weight`` is False), so no call allocates or copies one."""
    if weight is None:
        return scalar_buffer(1, like.dtype), False
    return weight, True


def nll_loss(logp, target, weight, ignore_index: int, losses, weights) -> int:
    """Per-row losses and weights; returns -1: a bad target is reported later.

    The CPU's twin returns the first row whose target is out of range, but
    here that would cost a read back per loss, and each read waits for every
    kernel queued before it.  Instead the kernel checks each row's target
    itself, gives a bad row loss 0 (it never reads through a bad target) and
    raises the device's error flag, which :func:`check_errors` turns into the
    CPU's ``IndexError`` at the host's next wait for the GPU.
    """
    n_rows = target.shape[0]
    if n_rows:
        w, has = _class_weight(weight, logp)
        _launch(softmax_kernels.nll_rows, n_rows, logp, target, w, has, np.int64(ignore_index),
                losses, weights, _error_flag())
    return -1


def nll_loss_backward(target, weight, ignore_index: int, out) -> None:
    """``out[r] = -weight[target[r]]`` at the target's column, 0 elsewhere (a row whose
    target is out of range, which the forward flagged, is all 0)."""
    if out.size:
        w, has = _class_weight(weight, out)
        _launch(softmax_kernels.nll_backward_rows, out.shape[0], target, w, has,
                np.int64(ignore_index), out)


# ---------------------------------------------------------------------------
# matmul and random fills
# ---------------------------------------------------------------------------
def matmul(a: Operand, b: Operand, out) -> None:
    """``out[i] = a[i] @ b[i]`` for 3-D operands (batch, rows, cols); ``out`` contiguous 3-D."""
    batch, m, k = a.shape
    n = b.shape[2]
    if out.size == 0:
        return
    blocks = matmul_kernels.blocks(batch, m, n)
    kernel = matmul_kernels.matmul_tiled[blocks, matmul_kernels.THREADS]
    args = (a.data, a.offset, _tuple(a.strides), b.data, b.offset, _tuple(b.strides), out,
            m, n, k)
    if SIMULATOR:
        _simulate(kernel, args)
    else:
        kernel(*args)


def random_fill(kind: RandomKind, buf, seed: np.uint64, offset: np.uint64, *params) -> None:
    """Fill the contiguous ``buf`` from the counter-based stream ``(seed, offset)``."""
    n = buf.shape[0]
    if kind == UNIFORM:
        _launch(random.fill_uniform, n, buf, seed, offset, float(params[0]), float(params[1]))
    elif kind == NORMAL:
        _launch(random.fill_normal, (n + 1) // 2, buf, seed, offset, float(params[0]),
                float(params[1]))
    elif kind == RANDINT:
        _launch(random.fill_randint, n, buf, seed, offset, np.int64(params[0]),
                np.int64(params[1]))
    elif kind == BERNOULLI:
        _launch(random.fill_bernoulli, n, buf, params[0], seed, offset)
    elif kind == BERNOULLI_SCALAR:
        _launch(random.fill_bernoulli_scalar, n, buf, float(params[0]), seed, offset)
    elif kind == RANDPERM:
        _launch(random.randperm, 1, buf, seed, offset)
    elif kind == MULTINOMIAL:
        probs, num_samples, replacement = params
        n_rows, k = probs.shape
        d_probs = from_host(np.ascontiguousarray(probs, dtype=np.float64))
        # Work rows (a GPU thread cannot allocate): the CDF or the arrival
        # times, and the sort's two rows of positions (not needed with replacement).
        m = 0 if replacement else k
        scratch = allocate(n_rows * k, np.dtype(np.float64)).reshape((n_rows, k))
        order = allocate(n_rows * m, _I64).reshape((n_rows, m))
        order_tmp = allocate(n_rows * m, _I64).reshape((n_rows, m))
        _launch(random.multinomial, n_rows, d_probs, int(num_samples), bool(replacement), buf,
                seed, offset, scratch, order, order_tmp)
    else:
        raise ValueError(f"unknown random fill {kind!r}")


# ---------------------------------------------------------------------------
# index kernels (see index.py).  Callers validate every index first: these
# functions trust that each index is in range and non-negative.
# ---------------------------------------------------------------------------
SCATTER_OPS = index_maps.SCATTER_CODES     # op name -> combine code
#: Dtypes that CUDA can add atomically.
_ATOMIC_ADD = {np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64)}
#: Threads that the min/max of an index tensor is split over.
_BOUNDS_THREADS = 4 if SIMULATOR else 4096


def index_bounds(idx) -> tuple:
    """``(min, max)`` of a non-empty contiguous int64 device array (waits for the GPU).

    The threads' partial minima and maxima go to one work buffer, read back
    in one copy."""
    n = idx.shape[0]
    t = min(n, _BOUNDS_THREADS)
    parts = _scratch("index bounds", 2 * t, _I64)
    _launch(index.bounds_partial, t, idx, n, parts[:t], parts[t:])
    host = to_host(parts)
    return int(host[:t].min()), int(host[t:].max())


def add_index_offsets(acc, idx, size: int, stride: int) -> None:
    """``acc += (idx wrapped into [0, size)) * stride`` (contiguous int64 arrays)."""
    if acc.shape[0]:
        _launch(index.add_index_offsets, acc.shape[0], acc, idx, np.int64(size), np.int64(stride))


def gather(src: Operand, dim: int, idx: Operand, out: Operand) -> None:
    """``out[p] = src[p with coordinate dim replaced by idx[p]]`` over ``out``'s shape."""
    n = numel(out.shape)
    if n == 0:
        return
    src, out = as_bits(src), as_bits(out)
    mult = src.strides[dim]
    s_st = src.strides[:dim] + (0,) + src.strides[dim + 1:]
    shape, (ss, ist, ost) = plan(out.shape, s_st, idx.strides, out.strides)
    _launch(index.gather_strided, n, src.data, src.offset, ss, idx.data, idx.offset, ist,
            np.int64(mult), out.data, out.offset, ost, shape, n)


def index_select(src: Operand, dim: int, idx, out: Operand) -> None:
    """``out = src`` with coordinate ``dim`` read through ``idx`` (1-D int64); see the CPU's."""
    n = numel(out.shape)
    if n == 0:
        return
    src, out = as_bits(src), as_bits(out)
    row_plan = select_rows(src, dim, out)
    if row_plan is not None:
        outer, s_outer, inner = row_plan
        dst = out.data[out.offset: out.offset + n]
        _launch(index.gather_rows, n, src.data, src.offset, s_outer, src.strides[dim], idx, dst,
                outer, idx.shape[0], inner)
        return
    source, index_operand = select_as_gather(src, dim, idx, out)
    gather(source, dim, index_operand, out)


def scatter(op: ScatterOp, tgt: Operand, dim: int, idx: Operand, src: Operand) -> None:
    """The scatter of ``cpu/backend.py``: 'add' with atomic adds where CUDA has them, else
    (and for 'set' and 'multiply') the owner-computes kernel (see ``index.py``)."""
    n = numel(idx.shape)
    if n == 0:
        return
    if tgt.data.dtype == _F16 and op != "set":
        through_float32(lambda t, s: scatter(op, t, dim, idx, s), tgt,
                        Operand(src.data, idx.shape, src.strides, src.offset), allocate, copy)
        return
    mult = tgt.strides[dim]
    if op == "add" and tgt.data.dtype in _ATOMIC_ADD:
        t_st = tgt.strides[:dim] + (0,) + tgt.strides[dim + 1:]
        shape, (tst, ist, sst) = plan(idx.shape, t_st, idx.strides, src.strides)
        _launch(index.scatter_add_atomic, n, tgt.data, tgt.offset, tst, idx.data, idx.offset, ist,
                np.int64(mult), src.data, src.offset, sst, shape, n)
        return
    tgt, src = as_bits(tgt), as_bits(src)
    shape = idx.shape
    lines, (tst, ist, sst) = coalesce(without(shape, dim), without(tgt.strides, dim),
                                      without(idx.strides, dim), without(src.strides, dim))
    if not lines:
        # A 1-d scatter has one line: given as a dim of size 1 (as reduce() pads an empty
        # keep shape), since the kernel's index arithmetic cannot index an empty tuple
        # on a GPU (the simulator, running Python, can).
        lines, tst, ist, sst = (1,), (0,), (0,), (0,)
    k = shape[dim]
    n_lines = numel(lines)
    lo, span, nb = _buckets(n_lines, k, idx)
    _launch(index.scatter_owner, n_lines * nb, SCATTER_OPS[op], tgt.data, tgt.offset,
            _tuple(tst + (0,)), idx.data, idx.offset, _tuple(ist + (idx.strides[dim],)),
            np.int64(mult), src.data, src.offset, _tuple(sst + (src.strides[dim],)),
            _tuple(lines + (k,)), n_lines, lo, span, nb)


def _buckets(lines: int, k: int, idx: Operand) -> tuple:
    """``(lo, span, nbuckets)`` for ``index.scatter_owner`` (``planning.value_buckets``)."""
    def bounds() -> tuple:
        return index_bounds(idx.data[idx.offset: idx.offset + numel(idx.shape)])
    contiguous = is_contiguous(idx.shape, idx.strides)
    return value_buckets(lines, k, num_threads(), bounds if contiguous else None)


def index_reduce(op: ScatterOp, tgt: Operand, dim: int, idx, src: Operand) -> None:
    """``tgt[.., idx[k], ..] (op)= src[.., k, ..]`` along ``dim`` (``idx`` 1-D int64).

    The kernel of ``index_add``, ``index_copy``, ``index_fill`` and of
    advanced-index assignment: a scatter whose index is ``idx`` along
    ``dim``, repeated (stride 0) along the other dims.
    """
    if numel(src.shape) == 0:
        return
    i_st = index_strides(len(src.shape), dim)
    scatter(op, tgt, dim, Operand(idx, src.shape, i_st, 0), src)


def _starts(flat_mask) -> np.ndarray:
    """Host array: where each chunk's first true element goes; the last entry is the total."""
    n = flat_mask.shape[0]
    nchunks = -(-n // index.CHUNK)
    counts = _scratch("chunk counts", nchunks, _I64)
    _launch(index.chunk_counts, nchunks, flat_mask, n, counts)
    starts = np.zeros(nchunks + 1, np.int64)
    np.cumsum(to_host(counts), out=starts[1:])
    return starts


def masked_select(src: Operand, mask: Operand):
    """The elements of ``src`` where ``mask`` (same shape) is true, in row-major order."""
    flat_mask = flat_contiguous(mask, allocate, copy)
    if flat_mask.shape[0] == 0:
        return allocate(0, src.data.dtype)
    starts = _starts(flat_mask)
    out = allocate(int(starts[-1]), src.data.dtype)
    if out.shape[0]:
        bits = as_bits(src)
        out_bits = out.view(np.uint16) if out.dtype == _F16 else out
        _launch(index.masked_compact, starts.shape[0] - 1, flat_contiguous(bits, allocate, copy),
                flat_mask, flat_mask.shape[0], from_host(starts), out_bits)
    return out


def masked_scatter(tgt, mask: Operand, source) -> None:
    """Flat contiguous ``tgt[mask] = source[:count]``.  Caller checks sizes."""
    flat_mask = flat_contiguous(mask, allocate, copy)
    if flat_mask.shape[0] == 0:
        return
    starts = _starts(flat_mask)
    if starts[-1]:
        if tgt.dtype == _F16:
            tgt, source = tgt.view(np.uint16), source.view(np.uint16)
        _launch(index.masked_spread, starts.shape[0] - 1, tgt, flat_mask, flat_mask.shape[0],
                from_host(starts), source)


def count_true(mask: Operand) -> int:
    """How many elements of the bool operand are true."""
    if numel(mask.shape) == 0:
        return 0
    return int(_starts(flat_contiguous(mask, allocate, copy))[-1])


def masked_fill(tgt, mask: Operand, value) -> None:
    """Flat contiguous ``tgt[i] = value`` where the bool operand ``mask`` is true."""
    if tgt.shape[0]:
        if tgt.dtype == _F16:
            v = np.array([value]).astype(_F16).view(np.uint16)[0]
            tgt = tgt.view(np.uint16)
        else:
            v = _scalar(value, tgt.dtype)
        _launch(index.masked_fill, tgt.shape[0], tgt, flat_contiguous(mask, allocate, copy), v)


def nonzero(mask: Operand):
    """``(count, ndim)`` int64 coordinates of the true elements of a bool operand."""
    ndim = len(mask.shape)
    if numel(mask.shape) == 0:
        return allocate(0, _I64).reshape((0, ndim))
    flat_mask = flat_contiguous(mask, allocate, copy)
    starts = _starts(flat_mask)
    count = int(starts[-1])
    out = allocate(count * ndim, _I64).reshape((count, ndim))
    if count and ndim:
        _launch(index.nonzero_coords, starts.shape[0] - 1, flat_mask, flat_mask.shape[0],
                _tuple(mask.shape), from_host(starts), out)
    return out


def sort_rows(keys, descending: bool, k: int | None = None) -> tuple:
    """Stable sort of each row of a contiguous 2-D device array: ``(values, indices)``.

    With ``k``, only the first ``k`` columns (the whole rows are sorted).
    """
    rows, n = keys.shape
    values = allocate(rows * n, keys.dtype).reshape((rows, n))
    indices = allocate(rows * n, _I64).reshape((rows, n))
    if rows * n:
        scratch = allocate(rows * n, _I64).reshape((rows, n))
        _launch(sort.sort_rows, rows, keys, bool(descending), values, indices, scratch)
    if k is not None and k < n:
        return _first_columns(values, k), _first_columns(indices, k)
    return values, indices


def _first_columns(a, k: int):
    rows, n = a.shape
    out = allocate(rows * k, a.dtype)
    copy(Operand(a.reshape(rows * n), (rows, k), (n, 1), 0),
         Operand(out, (rows, k), (k, 1), 0))
    return out.reshape((rows, k))


def unique_sorted(values, order) -> tuple:
    """Group ascending ``values``: ``(unique values, inverse, counts)``."""
    n = values.shape[0]
    uniq = allocate(n, values.dtype)
    inverse = allocate(n, _I64)
    counts = allocate(n, _I64)
    if n == 0:
        return uniq, inverse, counts
    groups = _scratch("unique groups", 1, _I64)
    _launch(sort.unique_sorted, 1, values, order, uniq, inverse, counts, groups)
    m = int(to_host(groups)[0])
    return uniq[:m], inverse, counts[:m]


# ---------------------------------------------------------------------------
# convolution and pooling (kernels in conv.py; arrays are contiguous 4-D)
# ---------------------------------------------------------------------------
@functools.lru_cache(maxsize=32)
def _tap_map(device: int, c: int, h: int, w: int, geometry: tuple) -> tuple:
    """:func:`minitorch.backends.tap_maps.tap_map` of a geometry, on the GPU: made once per
    geometry and device by the course's CPU im2col (the student's code, task 4.2); the
    buffers are the cache's, outside the tensors' memory count."""
    return tuple(cuda.to_device(a) for a in tap_map(c, h, w, geometry))


def _taps(x_shape: tuple, geometry: tuple) -> tuple:
    n, c, h, w = x_shape
    return _tap_map(runtime.current_index(), int(c), int(h), int(w),
                    tuple(int(g) for g in geometry))


def im2col(x, geometry: tuple, cols) -> None:
    """Receptive fields of ``x`` (N, C, H, W) as columns of ``cols`` (N, C*kh*kw, L)."""
    if cols.size:
        n = x.shape[0]
        taps, _, _ = _taps(x.shape, geometry)
        _launch(conv.im2col, cols.size, x.reshape(n, x.size // n), taps,
                cols.reshape(n, cols.size // n))


def col2im(cols, geometry: tuple, x) -> None:
    """Sum the columns back into the image ``x`` (the backward of im2col)."""
    if x.size:
        n = x.shape[0]
        _, starts, order = _taps(x.shape, geometry)
        _launch(conv.col2im, x.size, cols.reshape(n, cols.size // n), starts, order,
                x.reshape(n, x.size // n), _scalar(0, x.dtype))


def im2col_batch(x, geometry: tuple, cols) -> None:
    """Like im2col, but columns of all samples side by side: cols (C*kh*kw, N*L)."""
    if cols.size:
        n = x.shape[0]
        taps, _, _ = _taps(x.shape, geometry)
        _launch(conv.im2col_batch, cols.size, x.reshape(n, x.size // n), taps,
                np.int64(geometry[8] * geometry[9]), cols)


def col2im_batch(cols, geometry: tuple, x) -> None:
    if x.size:
        n = x.shape[0]
        _, starts, order = _taps(x.shape, geometry)
        _launch(conv.col2im_batch, x.size, cols, np.int64(geometry[8] * geometry[9]),
                starts, order, x.reshape(n, x.size // n), _scalar(0, x.dtype))


def max_pool2d(x, geometry: tuple, out, idx) -> None:
    if out.size:
        _launch(conv.max_pool2d, out.size, x, *geometry, out, idx)


def max_pool2d_backward(grad, idx, out, geometry: tuple | None = None) -> None:
    """Each output gradient added into its window's winner: the general scatter-add over
    each (H*W) plane of ``out``, zeroed first (``geometry`` lets the CPU pick a faster
    kernel; the scatter serves every case here)."""
    if out.size:
        _launch(elementwise.fill_contiguous, out.size, out.reshape(out.size), 0, out.size,
                _scalar(0, out.dtype))
    if grad.size:
        planes = grad.shape[0] * grad.shape[1]
        hw, ohw = out.size // planes, grad.size // planes
        scatter("add", Operand(out.reshape(out.size), (planes, hw), (hw, 1), 0), 1,
                Operand(idx.reshape(idx.size), (planes, ohw), (ohw, 1), 0),
                Operand(grad.reshape(grad.size), (planes, ohw), (ohw, 1), 0))


# ---------------------------------------------------------------------------
# fused elementwise programs (minitorch.compile; kernels generated by fused.py)
# ---------------------------------------------------------------------------
def fused_elementwise(program: Any, inputs: list, outputs: list) -> None:
    """Run a fused elementwise ``program``: one grid-stride pass (see cpu/backend.py)."""
    n = outputs[0].shape[0]
    _launch(fused.kernels_for(program).forward, n, *inputs, *outputs, n)


def fused_elementwise_source(program: Any) -> str:
    """The Python source of the GPU kernels :func:`fused_elementwise` runs for ``program``."""
    return fused.source(program)


def fused_elementwise_backward(program: Any, inputs: list, grad_outputs: list,
                               grad_inputs: list) -> None:
    """The input gradients listed in ``program.grads_for`` (see cpu/backend.py)."""
    n = grad_outputs[0].shape[0]
    _launch(fused.kernels_for(program).backward, n, *inputs, *grad_outputs, *grad_inputs, n)


# ---------------------------------------------------------------------------
# optimizer updates (kernels in optim.py; all arrays contiguous, one dtype)
# ---------------------------------------------------------------------------
_UPDATE = {  # the step record's type -> its kernel (optim.py)
    optimizer_rules.SGDStep: optim.sgd,
    optimizer_rules.AdamStep: optim.adam,
    optimizer_rules.RMSpropStep: optim.rmsprop,
    optimizer_rules.AdagradStep: optim.adagrad,
}


def fused_update(hyper: optimizer_rules.OptimizerStep, arrays: list) -> None:
    """Apply one optimizer step in place: the rule named by the record's type.

    ``hyper`` is an ``optimizer_rules`` record (``SGDStep``, ``AdamStep``,
    ...); ``arrays`` are the parameter, its gradient and the rule's state
    arrays (``hyper.STATE``), all contiguous and of one float dtype.
    """
    n = arrays[0].shape[0]
    if n:
        _launch(_UPDATE[type(hyper)], n, *arrays, hyper)

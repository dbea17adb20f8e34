"""Course module 6, the GPU: map, zip, reductions and a tiled matmul as ``numba.cuda`` kernels.

``minitorch course test 6.1`` runs the tests of one task.

``tests/conftest.py`` switches Numba's CUDA simulator on (``NUMBA_ENABLE_CUDASIM=1``)
before ``numba.cuda`` is imported, so these run on any machine; with a GPU,
``NUMBA_ENABLE_CUDASIM=0`` runs them for real.  The simulator runs each GPU
thread as a Python thread, so the arrays and launches are tiny; they still
exercise every index computation: more threads than elements, fewer threads
than elements (the grid-stride loop), several blocks.

The kernels are called directly on NumPy arrays of *exact* size: a write past
the end is an IndexError.  Sentinels around the output catch a write to the
wrong place inside it.  Each task's kernel is also compiled for a real GPU
(``numba.cuda.compile_ptx``, no GPU needed, only NVIDIA's NVVM library), so a
kernel that runs in the simulator but uses something a GPU cannot compile fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from device_checks import cuda_usable

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda_usable(), reason="no CUDA device and no simulator")]

ROOT = Path(__file__).resolve().parents[2]
SENTINEL = -777.0
#: Simulated launches are slow (one Python thread per GPU thread): few examples.
FEW = settings(max_examples=25, deadline=None)


def _ops():
    from minitorch.backends import scalar_ops
    return scalar_ops


def _ew():
    from minitorch.backends.cuda import elementwise
    return elementwise


launches = st.tuples(st.integers(1, 3), st.integers(1, 4))      # (blocks, threads per block)


def _run(start, step, n):
    """The positions ``start, start + step, ...`` of a run of ``n`` elements."""
    return start + np.arange(n) * step


@st.composite
def runs(draw, inputs: int):
    """``n`` and, per input, (start, step, exact buffer size); then out's (start, size)."""
    n = draw(st.integers(0, 10))
    found = []
    for _ in range(inputs):
        start, step = draw(st.integers(0, 2)), draw(st.sampled_from([0, 1]))
        found.append((start, step, start + max(n - 1, 0) * step + 1))
    o0, tail = draw(st.integers(0, 2)), draw(st.sampled_from([0, 2]))
    return n, found, (o0, o0 + n + tail)


def _values(size, seed, kind=float):
    rng = np.random.default_rng(seed)
    if kind is int:
        return rng.integers(-50, 50, size)
    return rng.uniform(-3, 3, size)


# ---------------------------------------------------------------------------
# 6.1 map over runs (and the unary_fast / int kernels derived from it)
# ---------------------------------------------------------------------------
_UNARY = [("EXP", np.exp), ("NEG", np.negative), ("TANH", np.tanh), ("SIN", np.sin)]


def _check_map(kernel, op, oracle, launch, case, kind=float):
    n, [(a0, sa, size)], (o0, out_size) = case
    a = _values(size, n + a0, kind)
    out = np.full(out_size, -777, a.dtype)
    kernel[launch](op, a, a0, sa, out, o0, n, 0.0, 0.0)
    expected = np.full(out_size, -777, a.dtype)
    expected[o0:o0 + n] = oracle(a[_run(a0, sa, n)])
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@pytest.mark.task("6.1")
@FEW
@given(case=runs(1), launch=launches, which=st.sampled_from(_UNARY))
def test_gpu_map_computes_every_element_of_the_run_once(case, launch, which):
    name, oracle = which
    _check_map(_ew().unary_contiguous, getattr(_ops(), name), oracle, launch, case)


@pytest.mark.task("6.1")
def test_gpu_map_with_fewer_threads_than_elements_and_a_repeated_value():
    ops, ew = _ops(), _ew()
    a = np.linspace(-1, 1, 10)
    out = np.zeros(12)
    ew.unary_contiguous[2, 3](ops.EXP, a, 0, 1, out, 1, 10, 0.0, 0.0)   # 6 threads, 10 items
    np.testing.assert_allclose(out[1:11], np.exp(a))
    assert out[0] == 0 and out[11] == 0
    out = np.zeros(5)
    ew.unary_contiguous[1, 2](ops.NEG, a, 3, 0, out, 0, 5, 0.0, 0.0)    # a[3] five times
    np.testing.assert_allclose(out, np.full(5, -a[3]))


@pytest.mark.task("6.1")
@FEW
@given(case=runs(1), launch=launches)
def test_gpu_map_kernels_derived_from_it_run_the_other_families(case, launch):
    ops, ew = _ops(), _ew()
    _check_map(ew.unary_fast_contiguous, ops.RELU, lambda x: np.maximum(x, 0), launch, case)
    _check_map(ew.unary_int_contiguous, ops.ABS, np.abs, launch, case, kind=int)


# ---------------------------------------------------------------------------
# 6.2 zip over runs (and the binary / int / compare kernels derived from it)
# ---------------------------------------------------------------------------
_ARITH = [("ADD", np.add), ("SUB", np.subtract), ("MUL", np.multiply), ("DIV", np.divide)]


def _check_zip(kernel, op, oracle, launch, case, kind=float, out_dtype=None):
    n, [(a0, sa, asize), (b0, sb, bsize)], (o0, out_size) = case
    a, b = _values(asize, 1 + n, kind), _values(bsize, 2 + a0, kind)
    if kind is float:
        b[np.abs(b) < 0.1] = 0.5                      # no division by (almost) zero
    dtype = out_dtype or a.dtype
    out = np.full(out_size, -7, dtype)
    kernel[launch](op, a, a0, sa, b, b0, sb, out, o0, n)
    expected = np.full(out_size, -7, dtype)
    expected[o0:o0 + n] = oracle(a[_run(a0, sa, n)], b[_run(b0, sb, n)])
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@pytest.mark.task("6.2")
@FEW
@given(case=runs(2), launch=launches, which=st.sampled_from(_ARITH))
def test_gpu_zip_computes_every_element_of_the_run_once(case, launch, which):
    name, oracle = which
    _check_zip(_ew().arith_contiguous, getattr(_ops(), name), oracle, launch, case)


@pytest.mark.task("6.2")
def test_gpu_zip_with_runs_and_a_repeated_value():
    ops, ew = _ops(), _ew()
    a, b = np.arange(8.0), np.array([0.0, 10.0])
    out = np.zeros(8)
    ew.arith_contiguous[2, 2](ops.ADD, a, 0, 1, b, 1, 0, out, 0, 8)     # b[1] repeated
    np.testing.assert_allclose(out, a + 10.0)
    ew.arith_contiguous[1, 4](ops.SUB, a, 2, 1, a, 0, 1, out, 0, 6)     # a[2:8] - a[0:6]
    np.testing.assert_allclose(out[:6], a[2:8] - a[:6])


@pytest.mark.task("6.2")
@FEW
@given(case=runs(2), launch=launches)
def test_gpu_zip_kernels_derived_from_it_run_the_other_families(case, launch):
    ops, ew = _ops(), _ew()
    _check_zip(ew.binary_contiguous, ops.ATAN2, np.arctan2, launch, case)
    _check_zip(ew.binary_int_contiguous, ops.MAXIMUM, np.maximum, launch, case, kind=int)
    _check_zip(ew.compare_contiguous, ops.LT, np.less, launch, case, out_dtype=np.bool_)


# ---------------------------------------------------------------------------
# 6.3 / 6.4 strided zip and map: any strides, broadcast inputs (stride 0), offsets
# ---------------------------------------------------------------------------
@st.composite
def layouts(draw, inputs: int):
    """A shape, and per operand (inputs first, then out) its (offset, strides, exact size).

    Each operand's memory order is a permutation of the dims (a transposed
    view); inputs may be broadcast (stride 0) along some dims.
    """
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
    found = []
    for k in range(inputs + 1):
        order = draw(st.permutations(list(range(ndim))))
        strides, step = [0] * ndim, 1
        for d in reversed(order):
            strides[d] = step
            step *= shape[d]
        if k < inputs:
            for d in range(ndim):
                if draw(st.booleans()) and draw(st.booleans()):
                    strides[d] = 0
        offset = draw(st.integers(0, 2))
        size = offset + sum((s - 1) * t for s, t in zip(shape, strides)) + 1
        found.append((offset, tuple(strides), size))
    return shape, found


def _view(buf, offset, strides, shape):
    return np.lib.stride_tricks.as_strided(buf[offset:], shape,
                                           [s * buf.itemsize for s in strides])


def _check_strided(kernel, op, oracle, launch, case, params=()):
    shape, operands = case
    *ins, (o0, o_st, o_size) = operands
    bufs = [_values(size, 3 + k + size) for k, (_, _, size) in enumerate(ins)]
    out = np.full(o_size, SENTINEL)
    args = [op]
    for buf, (off, stv, _) in zip(bufs, ins):
        args += [buf, off, stv]
    n = int(np.prod(shape))
    kernel[launch](*args, out, o0, o_st, shape, n, *params)
    expected = np.full(o_size, SENTINEL)
    _view(expected, o0, o_st, shape)[...] = oracle(
        *[_view(buf, off, stv, shape) for buf, (off, stv, _) in zip(bufs, ins)])
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@pytest.mark.task("6.3")
@FEW
@given(case=layouts(2), launch=launches, which=st.sampled_from(_ARITH[:3]))
def test_gpu_strided_zip_matches_numpy_on_any_strides(case, launch, which):
    name, oracle = which
    _check_strided(_ew().arith_strided, getattr(_ops(), name), oracle, launch, case)


@pytest.mark.task("6.3")
def test_gpu_strided_zip_of_a_transpose_and_a_broadcast_row():
    ops, ew = _ops(), _ew()
    a = np.arange(6.0)                   # read as (3, 2) transposed: strides (1, 3)
    b = np.array([100.0, 200.0])         # a row broadcast down: strides (0, 1)
    out = np.zeros(6)
    ew.arith_strided[2, 2](ops.ADD, a, 0, (1, 3), b, 0, (0, 1), out, 0, (2, 1), (3, 2), 6)
    np.testing.assert_allclose(out.reshape(3, 2), a.reshape(2, 3).T + b)


@pytest.mark.task("6.3")
@FEW
@given(case=layouts(2), launch=launches)
def test_gpu_strided_kernels_derived_from_it_run_the_other_families(case, launch):
    ops, ew = _ops(), _ew()
    _check_strided(ew.binary_strided, ops.MAXIMUM, np.maximum, launch, case)


@pytest.mark.task("6.4")
@FEW
@given(case=layouts(1), launch=launches, which=st.sampled_from(_UNARY))
def test_gpu_strided_map_matches_numpy_on_any_strides(case, launch, which):
    name, oracle = which
    _check_strided(_ew().unary_strided, getattr(_ops(), name), oracle, launch, case, (0.0, 0.0))


@pytest.mark.task("6.4")
def test_gpu_strided_map_of_a_transpose_with_an_offset():
    ops, ew = _ops(), _ew()
    a = np.arange(7.0)                   # a[1:] read as (2, 3) transposed: strides (1, 2)
    out = np.full(6, SENTINEL)
    ew.unary_strided[1, 4](ops.NEG, a, 1, (1, 2), out, 0, (3, 1), (2, 3), 6, 0.0, 0.0)
    np.testing.assert_allclose(out.reshape(2, 3), -a[1:].reshape(3, 2).T)


@pytest.mark.task("6.4")
@FEW
@given(case=layouts(1), launch=launches)
def test_gpu_strided_map_kernels_derived_from_it_run_the_other_families(case, launch):
    ops, ew = _ops(), _ew()
    _check_strided(ew.unary_fast_strided, ops.SQUARE, np.square, launch, case, (0.0, 0.0))


# ---------------------------------------------------------------------------
# 6.5 a shared-memory tree reduction, 6.6 a tiled matmul
# ---------------------------------------------------------------------------
def _reduce():
    from minitorch.backends.cuda import reduce
    return reduce


@pytest.mark.task("6.5")
@FEW
@given(n=st.integers(1, 19), seed=st.integers(0, 3))
def test_block_sum_gives_each_block_the_sum_of_its_share(n, seed):
    red = _reduce()
    t = red.SUM_THREADS
    x = np.random.default_rng(seed).integers(-9, 9, n).astype(np.float64)
    blocks = -(-n // t)
    out = np.full(blocks, SENTINEL)
    red.block_sum[blocks, t](x, out)
    padded = np.concatenate([x, np.zeros(blocks * t - n)])
    np.testing.assert_array_equal(out, padded.reshape(blocks, t).sum(1))


@pytest.mark.task("6.5")
def test_block_sum_twice_sums_everything():
    red = _reduce()
    t = red.SUM_THREADS
    x = np.arange(1.0, t * t + 2)                 # t*t + 1 numbers: t + 1 blocks, then 2
    partial = np.empty(t + 1)
    red.block_sum[t + 1, t](x, partial)
    total = np.empty(2)
    red.block_sum[2, t](partial, total)
    assert total.sum() == x.sum()


@st.composite
def reductions(draw):
    """x (exact size, some layout), the kept and reduced dims' shapes and strides, nsplit."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    order = draw(st.permutations(list(range(ndim))))
    strides, step = [0] * ndim, 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    reduced = draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim))
    if not any(reduced):
        reduced[-1] = True
    keep = [d for d in range(ndim) if not reduced[d]]
    red = [d for d in range(ndim) if reduced[d]]
    x0 = draw(st.integers(0, 2))
    keep_shape, keep_st = tuple(shape[d] for d in keep), tuple(strides[d] for d in keep)
    if not keep:
        # As the backend launches it: a kernel indexing an empty tuple in a loop does not
        # compile for a GPU (the simulator, running Python, never notices).
        keep_shape, keep_st = (1,), (0,)
    return (x0, x0 + step, keep_shape, keep_st,
            tuple(shape[d] for d in red), tuple(strides[d] for d in red),
            draw(st.integers(1, 3)))


def _parts_oracle(op_name, x, x0, keep_shape, keep_st, red_shape, red_st, nsplit, acc0):
    """Each part's fold, with NumPy: sums in order; extrema with NaN winning, first index
    on ties; -1 for an empty part."""
    n_out, n_red = int(np.prod(keep_shape)), int(np.prod(red_shape))
    part, part_i = [], []
    for o in range(n_out):
        base = x0 + sum(i * s for i, s in zip(np.unravel_index(o, keep_shape), keep_st)) \
            if keep_shape else x0
        values = np.array([x[base + sum(i * s for i, s in zip(np.unravel_index(r, red_shape),
                                                                red_st))]
                           for r in range(n_red)])
        for s in range(nsplit):
            rs = list(range(s, n_red, nsplit))
            if not rs:
                part.append(acc0)
                part_i.append(-1)
                continue
            v = values[rs]
            if op_name == "SUM":
                part.append(acc0 + v.sum())
                part_i.append(None)                        # any index of the part
            else:
                nan = np.isnan(v)
                k = int(np.argmax(nan)) if nan.any() else int(
                    np.argmax(v) if op_name in ("MAX", "ARGMAX") else np.argmin(v))
                part.append(v[k])
                part_i.append(rs[k])
    return np.array(part), part_i


@pytest.mark.task("6.7")
@FEW
@given(case=reductions(), op_name=st.sampled_from(["SUM", "MAX", "ARGMIN"]),
       launch=launches, seed=st.integers(0, 9), nans=st.booleans())
def test_reduce_partial_folds_every_part_of_every_output(case, op_name, launch, seed, nans):
    red = _reduce()
    from minitorch.backends import reduce_ops
    x0, size, keep_shape, keep_st, red_shape, red_st, nsplit = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, size).astype(np.float64)      # small integers: ties
    if nans:
        x[rng.random(size) < 0.2] = np.nan
    n_out, n_red = int(np.prod(keep_shape)), int(np.prod(red_shape))
    acc0 = np.float64(0.0)
    part, part_i = np.full(n_out * nsplit, SENTINEL), np.full(n_out * nsplit, -7, np.int64)
    red.reduce_partial[launch](getattr(reduce_ops, op_name), x, x0, keep_shape, keep_st,
                               red_shape, red_st, n_out, n_red, nsplit, acc0, part, part_i)
    expected, expected_i = _parts_oracle(op_name, x, x0, keep_shape, keep_st, red_shape,
                                         red_st, nsplit, acc0)
    np.testing.assert_allclose(part, expected, rtol=1e-12)
    for got, want in zip(part_i, expected_i):
        assert got >= 0 if want is None else got == want


@pytest.mark.task("6.7")
def test_reduce_partial_of_the_rows_of_a_matrix():
    red = _reduce()
    from minitorch.backends import reduce_ops
    x = np.array([1.0, 5.0, 2.0, 7.0, 0.0, 9.0])               # [[1, 5, 2], [7, 0, 9]]
    part, part_i = np.full(4, SENTINEL), np.full(4, -7, np.int64)
    red.reduce_partial[1, 3](reduce_ops.SUM, x, 0, (2,), (3,), (3,), (1,), 2, 3, 2,
                             np.float64(0.0), part, part_i)
    np.testing.assert_array_equal(part, [3.0, 5.0, 16.0, 0.0])
    part, part_i = np.full(6, SENTINEL), np.full(6, -7, np.int64)
    red.reduce_partial[2, 2](reduce_ops.ARGMAX, x, 0, (3,), (1,), (2,), (3,), 3, 2, 2,
                             np.float64(0.0), part, part_i)     # over the columns, 2 parts
    np.testing.assert_array_equal(part, [1.0, 7.0, 5.0, 0.0, 2.0, 9.0])
    np.testing.assert_array_equal(part_i, [0, 1, 0, 1, 0, 1])


def _matmul():
    from minitorch.backends.cuda import matmul
    return matmul


@pytest.mark.task("6.6")
@FEW
@given(m=st.integers(1, 9), k=st.integers(1, 9), n=st.integers(1, 9), seed=st.integers(0, 3))
def test_matmul_shared_matches_numpy_for_any_sizes(m, k, n, seed):
    mm = _matmul()
    rng = np.random.default_rng(seed)
    a, b = rng.integers(-5, 5, (m, k)).astype(np.float64), rng.integers(-5, 5, (k, n)) * 1.0
    out = np.full((m, n), SENTINEL)
    grid = (-(-n // mm.TILE), -(-m // mm.TILE))
    mm.matmul_shared[grid, (mm.TILE, mm.TILE)](a, b, out)
    np.testing.assert_array_equal(out, a @ b)


@pytest.mark.task("6.6")
def test_matmul_shared_of_non_square_operands():
    mm = _matmul()
    t = mm.TILE
    a = np.arange(1.0, 2 * (t + 1) + 1).reshape(2, t + 1)        # k crosses a tile edge
    b = np.arange(1.0, (t + 1) * 3 + 1).reshape(t + 1, 3)
    out = np.full((2, 3), SENTINEL)
    mm.matmul_shared[(1, 1), (t, t)](a, b, out)
    np.testing.assert_array_equal(out, a @ b)


# ---------------------------------------------------------------------------
# Every task kernel (and the kernels derived from it) compiles for a real GPU.
# ---------------------------------------------------------------------------
_PTX = r"""
import json, os, sys, types
os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
try:
    from numba.cuda.cudadrv import nvvm
    nvvm.NVVM()
except Exception as e:
    print(json.dumps({"unavailable": f"{type(e).__name__}: {e}"}))
    raise SystemExit(0)
import numba.cuda.dispatcher as dispatcher
from numba import cuda, float64, int64, boolean, types as nt
# A device function asks the current GPU for its compute capability when it is compiled;
# without a GPU, say (8, 0), the one compile_ptx is asked for below.
dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=(8, 0))
from minitorch.backends.cuda import elementwise as ew, reduce as red, matmul as mm
f, i, b = float64[::1], int64, boolean[::1]
t2 = nt.UniTuple(int64, 2)
m2 = float64[:, ::1]
sigs = {
    "unary_contiguous": (ew, (i, f, i, i, f, i, i, float64, float64)),
    "unary_fast_contiguous": (ew, (i, f, i, i, f, i, i, float64, float64)),
    "unary_int_contiguous": (ew, (i, int64[::1], i, i, int64[::1], i, i, float64, float64)),
    "arith_contiguous": (ew, (i, f, i, i, f, i, i, f, i, i)),
    "binary_contiguous": (ew, (i, f, i, i, f, i, i, f, i, i)),
    "compare_contiguous": (ew, (i, f, i, i, f, i, i, b, i, i)),
    "arith_strided": (ew, (i, f, i, t2, f, i, t2, f, i, t2, t2, i)),
    "binary_strided": (ew, (i, f, i, t2, f, i, t2, f, i, t2, t2, i)),
    "unary_strided": (ew, (i, f, i, t2, f, i, t2, t2, i, float64, float64)),
    "unary_fast_strided": (ew, (i, f, i, t2, f, i, t2, t2, i, float64, float64)),
    "block_sum": (red, (f, f)),
    "matmul_shared": (mm, (m2, m2, m2)),
    "reduce_partial": (red, (i, f, i, t2, t2, nt.UniTuple(int64, 1), nt.UniTuple(int64, 1), i, i,
                             i, float64, f, int64[::1])),
}
# Where a run has a kernel cache filed by content (CI: MINITORCH_KERNEL_CACHE_BY_CONTENT, not
# a student's run), a kernel that compiled is noted under its stamp (kernel_cache: a hash of
# the code it is built from, the shared bodies included) and its signature, and is not
# compiled again: the course's edition checks compile the same solved tasks in many runs.
import hashlib, importlib.metadata
from pathlib import Path
from minitorch.backends import kernel_cache
shared = os.environ.get(kernel_cache.BY_CONTENT_ENV)
version = importlib.metadata.version("numba-cuda")
found = {}
wanted = set(sys.argv[1:]) or set(sigs)
for name, (module, sig) in sigs.items():
    if name not in wanted:
        continue
    py_func = getattr(module, name).py_func
    noted = None
    if shared:
        key = f"{kernel_cache.kernel_digest(py_func)} {name} {sig} sm_80 {version}"
        noted = Path(shared) / "ptx-compiled" / hashlib.sha256(key.encode()).hexdigest()
        if noted.is_file():
            found[name] = "ok"
            continue
    try:
        cuda.compile_ptx(py_func, sig, cc=(8, 0))
        found[name] = "ok"
    except Exception as e:
        found[name] = f"{type(e).__name__}: {str(e)[:400]}"
    else:
        if noted is not None:
            noted.parent.mkdir(parents=True, exist_ok=True)
            noted.touch()
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def ptx_compiles(request) -> Callable[[], dict | None]:
    """A function giving ``{kernel name: "ok" or the compiler's error}``, or None where
    NVIDIA's compiler library (NVVM) is not installed.

    The kernels are compiled in one process without the simulator, at the first call:
    after a task's kernel has run (a stub fails first and never waits for the compiler),
    and only those of the tasks whose compile tests this run selected (``course status``
    runs the started tasks' tests only).
    """
    tasks = {mark.args[0] for item in request.session.items
             if item.name.endswith("_compiles_for_a_real_gpu")
             for mark in item.iter_markers("task")}
    names = [name for task in sorted(tasks & set(_TASK_KERNELS))
             for name in [_TASK_KERNELS[task][0], *_TASK_KERNELS[task][1]]]
    done: list = []

    def compiled() -> dict | None:
        if not done:
            done.append(_compile(names))
        return done[0]
    return compiled


def _compile(names: list) -> dict | None:
    done = subprocess.run([sys.executable, "-c", _PTX, *names], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and lines, done.stderr[-2000:]
    found = json.loads(lines[-1])
    if "unavailable" in found:
        warnings.warn(f"the GPU kernels were checked on the simulator only: NVIDIA's NVVM is "
                      f"not installed ({found['unavailable'][:200]})")
        return None
    return found


_TASK_KERNELS = {"6.1": ("unary_contiguous", ["unary_fast_contiguous", "unary_int_contiguous"]),
                 "6.2": ("arith_contiguous", ["binary_contiguous", "compare_contiguous"]),
                 "6.3": ("arith_strided", ["binary_strided"]),
                 "6.4": ("unary_strided", ["unary_fast_strided"]),
                 "6.5": ("block_sum", []),
                 "6.6": ("matmul_shared", []),
                 "6.7": ("reduce_partial", [])}


def _compiles_for_a_gpu(task, ptx_compiles, run_once):
    # First the kernel must run (a stub fails here, with its own message) ...
    run_once()
    # ... then it, and the kernels derived from it, must compile for a real GPU (where the
    # compiler is installed: a student without it is not marked down for that).
    found = ptx_compiles()
    if found is None:
        return
    main, derived = _TASK_KERNELS[task]
    for name in [main] + derived:
        assert found[name] == "ok", f"{name} does not compile for a GPU: {found[name]}"


@pytest.mark.task("6.1")
def test_gpu_map_compiles_for_a_real_gpu(ptx_compiles):
    _compiles_for_a_gpu("6.1", ptx_compiles,
                        test_gpu_map_with_fewer_threads_than_elements_and_a_repeated_value)


@pytest.mark.task("6.2")
def test_gpu_zip_compiles_for_a_real_gpu(ptx_compiles):
    _compiles_for_a_gpu("6.2", ptx_compiles, test_gpu_zip_with_runs_and_a_repeated_value)


@pytest.mark.task("6.3")
def test_gpu_strided_zip_compiles_for_a_real_gpu(ptx_compiles):
    _compiles_for_a_gpu("6.3", ptx_compiles,
                        test_gpu_strided_zip_of_a_transpose_and_a_broadcast_row)


@pytest.mark.task("6.4")
def test_gpu_strided_map_compiles_for_a_real_gpu(ptx_compiles):
    _compiles_for_a_gpu("6.4", ptx_compiles, test_gpu_strided_map_of_a_transpose_with_an_offset)


@pytest.mark.task("6.5")
def test_block_sum_compiles_for_a_real_gpu(ptx_compiles):
    _compiles_for_a_gpu("6.5", ptx_compiles, test_block_sum_twice_sums_everything)


@pytest.mark.task("6.6")
def test_matmul_shared_compiles_for_a_real_gpu(ptx_compiles):
    _compiles_for_a_gpu("6.6", ptx_compiles, test_matmul_shared_of_non_square_operands)


@pytest.mark.task("6.7")
def test_reduce_partial_compiles_for_a_real_gpu(ptx_compiles):
    _compiles_for_a_gpu("6.7", ptx_compiles, test_reduce_partial_of_the_rows_of_a_matrix)

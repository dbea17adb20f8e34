"""Tests for the batched matmul kernel (minitorch/backends/cpu/matmul.py).

The oracle is ``np.matmul``.  Sizes are small (so the tests are fast) but
chosen to cross the kernel's tile sizes (MR x NR, the packing tiles, the
task split), and include 0 and 1.  Inputs come in every layout the kernel
must accept: contiguous, transposed views, non-contiguous slices, negative
strides and broadcast batches (stride 0 or batch size 1).
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.kernels      # the CPU backend's matmul kernel, called directly

try:
    from minitorch.backends.cpu import matmul as mm
except Exception:  # package __init__ missing or mid-edit: load the file directly
    # Register it under its real name: Numba's on-disk cache of a kernel
    # records the module name and re-imports it when loading the kernel.
    _name = "minitorch.backends.cpu.matmul"
    _path = (pathlib.Path(__file__).resolve().parents[1]
             / "minitorch" / "backends" / "cpu" / "matmul.py")
    _spec = importlib.util.spec_from_file_location(_name, _path)
    mm = importlib.util.module_from_spec(_spec)
    sys.modules[_name] = mm
    _spec.loader.exec_module(mm)

batched_matmul = mm.batched_matmul

DTYPES = [np.float32, np.float64, np.int64, np.int32]


def _rand(rng, shape, dtype):
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-9, 10, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _check(a, b, out=None):
    """Run the kernel on a and b (any views) and compare with np.matmul."""
    nb = max(a.shape[0], b.shape[0])
    if out is None:
        out = np.full((nb, a.shape[1], b.shape[2]), 7, dtype=a.dtype)  # garbage
    batched_matmul(a, b, out)
    if np.issubdtype(a.dtype, np.integer):
        expect = np.matmul(a, b)
        np.testing.assert_array_equal(out, expect)
    else:
        expect = np.matmul(a.astype(np.float64), b.astype(np.float64))
        k = a.shape[2]
        # Summation order differs from NumPy's: allow a few ulps per term,
        # scaled by the size of the terms (|a| @ |b|), not of the result.
        eps = np.finfo(a.dtype).eps
        scale = np.matmul(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
        tol = 4 * eps * (k + 1) * scale + np.finfo(a.dtype).tiny
        assert np.all(np.abs(out - expect) <= tol), float(np.max(np.abs(out - expect) - tol))
    return out


# Sizes around the tiles (MR x NR = 4 x 16, 4 x 32 with AVX-512; the
# ragged last sliver of A or B) plus 0 and 1.
dims = st.one_of(st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 15, 16, 17,
                                  23, 24, 25, 31, 33, 64, 65]),
                 st.integers(0, 70))
batches = st.sampled_from([1, 1, 2, 3, 5])
dtypes = st.sampled_from(DTYPES)


@settings(max_examples=60, deadline=None)
@given(nb=batches, m=dims, k=dims, n=dims, dtype=dtypes, seed=st.integers(0, 2**32 - 1))
def test_contiguous(nb, m, k, n, dtype, seed):
    rng = np.random.default_rng(seed)
    _check(_rand(rng, (nb, m, k), dtype), _rand(rng, (nb, k, n), dtype))


@settings(max_examples=60, deadline=None)
@given(nb=batches, m=dims, k=dims, n=dims, dtype=dtypes,
       ta=st.booleans(), tb=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_transposed_views(nb, m, k, n, dtype, ta, tb, seed):
    """a and/or b are transposes of contiguous arrays (like x @ W.T)."""
    rng = np.random.default_rng(seed)
    a = _rand(rng, (nb, k, m), dtype).transpose(0, 2, 1) if ta else _rand(rng, (nb, m, k), dtype)
    b = _rand(rng, (nb, n, k), dtype).transpose(0, 2, 1) if tb else _rand(rng, (nb, k, n), dtype)
    _check(a, b)


def _strided(rng, nb, rows, cols, steps, transpose, dtype):
    """A non-contiguous (nb, rows, cols) view: every steps[0]-th row and
    steps[1]-th column of a bigger array (negative steps reverse), built
    transposed (and then transposed back) when ``transpose``."""
    r, c = (cols, rows) if transpose else (rows, cols)
    base = _rand(rng, (nb, r * abs(steps[0]) + 1, c * abs(steps[1]) + 1), dtype)
    view = base[:, ::steps[0], ::steps[1]][:, :r, :c]
    return view.transpose(0, 2, 1) if transpose else view


steps = st.sampled_from([(1, 2), (2, 1), (2, 3), (-1, 1), (1, -1), (-2, -1)])


@settings(max_examples=60, deadline=None)
@given(nb=batches, m=dims, k=dims, n=dims, dtype=dtypes, sa=steps, sb=steps,
       ta=st.booleans(), tb=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_strided_views(nb, m, k, n, dtype, sa, sb, ta, tb, seed):
    """Non-contiguous inputs: every other row/column, reversed axes, and
    transposes of those."""
    rng = np.random.default_rng(seed)
    a = _strided(rng, nb, m, k, sa, ta, dtype)
    b = _strided(rng, nb, k, n, sb, tb, dtype)
    assert a.shape == (nb, m, k) and b.shape == (nb, k, n)
    _check(a, b)


@settings(max_examples=40, deadline=None)
@given(nb=st.sampled_from([2, 3, 6]), m=dims, k=dims, n=dims, dtype=dtypes,
       which=st.sampled_from(["a0", "b0", "a1", "b1", "both0"]), seed=st.integers(0, 2**32 - 1))
def test_broadcast_batch(nb, m, k, n, dtype, which, seed):
    """One operand shared by every batch item: stride 0 (np.broadcast_to) or
    a batch of size 1."""
    rng = np.random.default_rng(seed)
    a = _rand(rng, (nb, m, k), dtype)
    b = _rand(rng, (nb, k, n), dtype)
    if which in ("a0", "both0"):
        a = np.broadcast_to(a[:1], a.shape)
        assert a.strides[0] == 0
    if which in ("b0", "both0"):
        b = np.broadcast_to(b[:1], b.shape)
    if which == "a1":
        a = a[:1]
    if which == "b1":
        b = b[:1]
    _check(a, b)   # np.matmul broadcasts a batch of size 1 the same way


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 0, 5, 4), (1, 5, 0, 4), (1, 5, 4, 0), (0, 3, 4, 5),
                                   (2, 0, 0, 0), (1, 1, 1, 1), (3, 1, 70, 1), (1, 70, 1, 70)])
def test_empty_and_unit_dims(shape, dtype):
    nb, m, k, n = shape
    rng = np.random.default_rng(0)
    out = _check(_rand(rng, (nb, m, k), dtype), _rand(rng, (nb, k, n), dtype))
    if k == 0:
        assert np.all(out == 0)   # an empty sum is 0, even though out started as 7


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_many_small_matrices(dtype):
    rng = np.random.default_rng(1)
    _check(_rand(rng, (4096, 4, 4), dtype), _rand(rng, (4096, 4, 4), dtype))
    _check(_rand(rng, (257, 3, 5), dtype), _rand(rng, (257, 5, 2), dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["nn", "tn", "nt"])
def test_larger(dtype, layout):
    """Crosses several K blocks (KC) and cache blocks (MC, NC)."""
    rng = np.random.default_rng(2)
    m, k, n = 300, 1100, 250
    a = _rand(rng, (1, m, k), dtype) if layout[0] == "n" else _rand(rng, (1, k, m), dtype).transpose(0, 2, 1)
    b = _rand(rng, (1, k, n), dtype) if layout[1] == "n" else _rand(rng, (1, n, k), dtype).transpose(0, 2, 1)
    _check(a, b)
    _check(_rand(rng, (2, 300, 200), dtype), _rand(rng, (2, 200, 250), dtype))


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_thread_counts(threads):
    """The task split depends on the thread count; every split is correct."""
    threads = min(threads, numba.config.NUMBA_NUM_THREADS)
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        rng = np.random.default_rng(threads)
        _check(_rand(rng, (1, 131, 77), np.float32), _rand(rng, (1, 77, 259), np.float32))
        _check(_rand(rng, (3, 50, 40), np.float64), _rand(rng, (3, 40, 7), np.float64))
    finally:
        numba.set_num_threads(old)


def test_workspace_reuse_and_fresh_buffers(monkeypatch):
    """Packing buffers are reused between calls (stale contents must not
    leak into the next product) unless they would be too big."""
    rng = np.random.default_rng(5)
    for shape in [(2, 60, 70, 50), (1, 5, 3, 4), (3, 64, 33, 65)]:
        nb, m, k, n = shape
        _check(_rand(rng, (nb, m, k), np.float32), _rand(rng, (nb, k, n), np.float32))
    monkeypatch.setattr(mm, "_WORKSPACE_MAX_BYTES", 1024)
    _check(_rand(rng, (2, 60, 70), np.float64), _rand(rng, (2, 70, 50), np.float64))


def test_larger_int():
    rng = np.random.default_rng(3)
    _check(_rand(rng, (2, 130, 600), np.int64), _rand(rng, (2, 600, 90), np.int64))


def test_int_overflow_wraps_like_numpy():
    a = np.full((1, 2, 3), 2**40, np.int64)
    b = np.full((1, 3, 2), 2**30, np.int64)
    _check(a, b)
    a32 = np.full((1, 2, 40), 70000, np.int32)
    b32 = np.full((1, 40, 2), 70000, np.int32)
    _check(a32, b32)


def test_nan_and_inf_propagate():
    a = np.ones((1, 4, 20), np.float32)
    b = np.ones((1, 20, 10), np.float32)
    a[0, 1, 3] = np.nan
    b[0, 5, 2] = np.inf
    out = np.empty((1, 4, 10), np.float32)
    batched_matmul(a, b, out)
    expect = np.matmul(a, b)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expect))
    np.testing.assert_array_equal(np.isinf(out), np.isinf(expect))


def test_out_may_overlap_inputs():
    """A and B are packed before out is written, so out may alias them."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 20, 20))
    b = rng.standard_normal((2, 20, 20))
    expect = np.matmul(a, b)
    batched_matmul(a, b, a)
    np.testing.assert_allclose(a, expect, rtol=1e-12, atol=1e-12)


def test_rejects_bad_arguments():
    a = np.ones((1, 2, 3), np.float32)
    b = np.ones((1, 3, 4), np.float32)
    with pytest.raises(TypeError):
        batched_matmul(a, b.astype(np.float64), np.empty((1, 2, 4), np.float32))
    with pytest.raises(TypeError):
        batched_matmul(a.astype(np.float16), b.astype(np.float16), np.empty((1, 2, 4), np.float16))
    with pytest.raises(ValueError):
        batched_matmul(a, np.ones((1, 2, 4), np.float32), np.empty((1, 2, 4), np.float32))
    with pytest.raises(ValueError):
        batched_matmul(a, b, np.empty((1, 4, 2), np.float32).transpose(0, 2, 1))
    with pytest.raises(ValueError):
        batched_matmul(a[0], b[0], np.empty((2, 4), np.float32))


# The outer-product path (_gemm_small_k) takes short K or few rows with a
# wide, C-contiguous B: the shapes of im2col convolutions.
@settings(max_examples=40, deadline=None)
@given(nb=st.sampled_from([1, 2, 3]), m=st.sampled_from([1, 2, 6, 16, 17, 25, 40]),
       k=st.sampled_from([1, 2, 6, 25, 48, 49, 150]), n=st.sampled_from([64, 65, 511, 513, 1500]),
       dtype=dtypes, broadcast=st.sampled_from(["none", "a", "b"]),
       ta=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_short_k_and_few_rows(nb, m, k, n, dtype, broadcast, ta, seed):
    rng = np.random.default_rng(seed)
    a = _rand(rng, (1 if broadcast == "a" else nb, m, k), dtype)
    if ta:                                  # a transposed view (made contiguous inside)
        a = np.ascontiguousarray(a.transpose(0, 2, 1)).transpose(0, 2, 1)
    b = _rand(rng, (1 if broadcast == "b" else nb, k, n), dtype)
    _check(a, b)


def test_short_k_path_is_taken_and_falls_back_when_out_overlaps():
    rng = np.random.default_rng(0)
    a = _rand(rng, (1, 6, 25), np.float32)
    b = _rand(rng, (1, 25, 600), np.float32)
    calls = []
    original = mm._gemm_small_k
    try:
        mm._gemm_small_k = lambda *args: calls.append(1) or original(*args)
        _check(a, b)
        assert calls, "the short-K path was not used"
        calls.clear()
        big = _rand(rng, (1, 25, 600), np.float32)        # out overlaps b: packed path
        ones = np.ones((1, 25, 25), np.float32)
        expect = np.matmul(ones, big)
        batched_matmul(ones, big, big)
        assert not calls
        np.testing.assert_allclose(big, expect, rtol=1e-5, atol=1e-5)
    finally:
        mm._gemm_small_k = original


# The dot-product path (_gemm_long_k) takes long K with few outputs: the
# weight gradients of im2col convolutions, B often a transposed view.
@settings(max_examples=25, deadline=None)
@given(nb=st.sampled_from([1, 2]), m=st.sampled_from([1, 6, 16]),
       k=st.sampled_from([4096, 5000, 9001]), n=st.sampled_from([1, 25, 60]),
       dtype=dtypes, tb=st.booleans(), broadcast=st.sampled_from(["none", "a", "b"]),
       seed=st.integers(0, 2**32 - 1))
def test_long_k_few_outputs(nb, m, k, n, dtype, tb, broadcast, seed):
    rng = np.random.default_rng(seed)
    a = _rand(rng, (1 if broadcast == "a" else nb, m, k), dtype)
    nbb = 1 if broadcast == "b" else nb
    b = _rand(rng, (nbb, n, k), dtype).transpose(0, 2, 1) if tb else _rand(rng, (nbb, k, n), dtype)
    _check(a, b)


@pytest.mark.parametrize("threads", [1, 2])
def test_long_k_splits_k_across_threads(threads):
    rng = np.random.default_rng(1)
    a = _rand(rng, (1, 6, 20000), np.float64)
    b = _rand(rng, (1, 20000, 25), np.float64)
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        _check(a, b)
    finally:
        numba.set_num_threads(before)

# ---------------------------------------------------------------------------
# On every device (the ``device`` fixture: cpu, and cuda on Numba's simulator
# without a GPU; tensors stay tiny there).
# ---------------------------------------------------------------------------
from device_checks import check, on  # noqa: E402
import minitorch as torch  # noqa: E402


def test_matmul_on_every_device(device):
    r = np.random.default_rng(3)
    a = r.standard_normal((5, 7)).astype(np.float32)
    b = r.standard_normal((7, 6)).astype(np.float32)
    x, y = on(a, device), on(b, device)
    check(x @ y, a @ b, device, rtol=1e-5, atol=1e-5)
    check(y.t() @ x.t(), b.T @ a.T, device, rtol=1e-5, atol=1e-5)       # transposed operands
    check(x[::2, 1:] @ y[1:, ::3], a[::2, 1:] @ b[1:, ::3], device, rtol=1e-5, atol=1e-5)
    c = r.standard_normal((2, 3, 4)).astype(np.float64)
    d = r.standard_normal((4, 2)).astype(np.float64)
    check(on(c, device) @ on(d, device), c @ d, device, rtol=1e-12)      # broadcast batch
    check(torch.bmm(on(c, device), on(c, device).transpose(1, 2)), c @ c.transpose(0, 2, 1),
          device, rtol=1e-12)
    check(x[0] @ y[:, 0], a[0] @ b[:, 0], device, rtol=1e-5)
    e = r.standard_normal((20, 35)).astype(np.float32)    # several tiles and K steps
    f = r.standard_normal((18, 35)).astype(np.float32)
    check(on(e, device) @ on(f, device).t(), e @ f.T, device, rtol=1e-4, atol=1e-4)
    n = np.arange(12).reshape(3, 4)
    check(on(n, device) @ on(n.T, device), n @ n.T, device)
    check(x @ torch.zeros(7, 0, device=device), np.zeros((5, 0), np.float32), device)

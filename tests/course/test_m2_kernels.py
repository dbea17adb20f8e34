"""Course module 2, kernels: map, zip, the strided walk, reduce and matmul, as Numba kernels.

The tests call each kernel directly on NumPy arrays (no tensors), with NumPy
as the oracle.  Every output array has exactly the size the kernel must fill,
and is filled with a marker value first: course runs compile every kernel
built from a task's code with bounds checking, so a write past the end raises
``IndexError``, and an element left unwritten keeps the marker.
``minitorch course test 2.1`` runs the tests of one task.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from minitorch.backends import reduce_ops, scalar_ops
from minitorch.backends.cpu import elementwise, matmul, reference_kernels, reduce as reduce_kernels

pytestmark = pytest.mark.kernels

MARK = -7777.0          # what an element no kernel wrote still holds

floats = st.sampled_from([np.float32, np.float64])


def _values(n: int, dtype, seed: int, low=-3.0, high=3.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, n).astype(dtype)


# ---------------------------------------------------------------------------
# 2.1 map
# ---------------------------------------------------------------------------
UNARY = [(scalar_ops.EXP, np.exp), (scalar_ops.SIN, np.sin), (scalar_ops.NEG, np.negative),
         (scalar_ops.TANH, np.tanh), (scalar_ops.FLOOR, np.floor), (scalar_ops.ABS, np.abs)]


@pytest.mark.task("2.1")
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 40), st.sampled_from(range(len(UNARY))), floats)
def test_map_matches_numpy_on_exact_size_arrays(n, k, dtype):
    op, oracle = UNARY[k]
    a = _values(n, dtype, n)
    out = np.full(n, MARK, dtype=dtype)
    elementwise.unary_contiguous(op, a, out, 0.0, 0.0)
    np.testing.assert_allclose(out, oracle(a), rtol=1e-6)


@pytest.mark.task("2.1")
def test_map_passes_the_op_its_two_parameters():
    a = np.linspace(-2, 2, 11)
    out = np.full(11, MARK)
    elementwise.unary_contiguous(scalar_ops.CLAMP, a, out, -1.0, 0.5)
    np.testing.assert_allclose(out, np.clip(a, -1.0, 0.5))
    elementwise.unary_contiguous(scalar_ops.LEAKY_RELU, a, out, 0.25, 0.0)
    np.testing.assert_allclose(out, np.where(a > 0, a, 0.25 * a))


@pytest.mark.task("2.1")
def test_map_casts_through_the_store():
    a = np.array([0.5, 1.5, -2.0], dtype=np.float32)
    out = np.full(3, MARK, dtype=np.float64)
    elementwise.unary_contiguous(scalar_ops.SQUARE, a, out, 0.0, 0.0)
    np.testing.assert_allclose(out, a.astype(np.float64) ** 2)


# ---------------------------------------------------------------------------
# 2.2 zip
# ---------------------------------------------------------------------------
ARITH = [(scalar_ops.ADD, np.add), (scalar_ops.SUB, np.subtract), (scalar_ops.MUL, np.multiply),
         (scalar_ops.DIV, np.divide), (scalar_ops.RSUB, lambda x, y: y - x)]


@pytest.mark.task("2.2")
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.sampled_from(range(len(ARITH))), floats,
       st.sampled_from(["both", "a repeated", "b repeated"]))
def test_zip_matches_numpy_on_exact_size_arrays(n, k, dtype, layout):
    op, oracle = ARITH[k]
    a = _values(1 if layout == "a repeated" else n, dtype, 1, 0.5, 3.0)
    b = _values(1 if layout == "b repeated" else n, dtype, 2, 0.5, 3.0)
    out = np.full(n, MARK, dtype=dtype)
    elementwise.arith_contiguous(op, a, b, out)
    np.testing.assert_allclose(out, oracle(a, b), rtol=1e-6)


@pytest.mark.task("2.2")
def test_zip_of_two_runs_and_a_repeated_value_on_either_side():
    a, b = np.arange(6.0), np.arange(6.0) + 10
    out = np.full(6, MARK)
    elementwise.arith_contiguous(scalar_ops.MUL, a, b, out)
    np.testing.assert_allclose(out, a * b)
    out = np.full(5, MARK)
    elementwise.arith_contiguous(scalar_ops.SUB, np.arange(5.0), np.array([2.0]), out)
    np.testing.assert_allclose(out, np.arange(5.0) - 2.0)
    elementwise.arith_contiguous(scalar_ops.SUB, np.array([2.0]), np.arange(5.0), out)
    np.testing.assert_allclose(out, 2.0 - np.arange(5.0))
    one = np.full(1, MARK)
    elementwise.arith_contiguous(scalar_ops.DIV, np.array([3.0]), np.array([4.0]), one)
    assert one[0] == 0.75


# ---------------------------------------------------------------------------
# 2.3 the strided walk
# ---------------------------------------------------------------------------
def _pos(base: np.ndarray, view: np.ndarray) -> int:
    return (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) \
        // base.itemsize


def _strides(base: np.ndarray, view: np.ndarray) -> np.ndarray:
    return np.array([s // base.itemsize for s in view.strides], dtype=np.int64)


def _walk(a_arr, a_view, out_arr, out_view, start=0, stop=None):
    """Call copy_strided with the positions and strides of two NumPy views."""
    shape = np.array(out_view.shape, dtype=np.int64)
    stop = out_view.size if stop is None else stop
    elementwise.copy_strided(a_arr, _pos(a_arr, a_view), _strides(a_arr, a_view), out_arr,
                             _pos(out_arr, out_view), _strides(out_arr, out_view), shape,
                             start, stop)


@st.composite
def strided_views(draw, shape):
    """A view of ``shape`` into a fresh exact-size buffer: sliced (steps of any sign), maybe
    transposed, maybe with a broadcast (stride 0) dim; returns (buffer, view)."""
    steps = [draw(st.sampled_from([1, 2, -1])) for _ in shape]
    perm = draw(st.permutations(range(len(shape))))
    inner = [shape[p] for p in np.argsort(perm)] if shape else []
    full = [n * abs(s) for n, s in zip(inner, [steps[p] for p in np.argsort(perm)])]
    broadcast = [draw(st.booleans()) and n > 1 for n in inner]
    full = [1 if b else f for f, b in zip(full, broadcast)]
    buf = np.arange(int(np.prod(full)), dtype=np.float64)
    view = buf.reshape(full)
    sl = tuple(slice(None, None, s) if not b else slice(None)
               for s, b in zip([steps[p] for p in np.argsort(perm)], broadcast))
    view = view[sl] if sl else view
    view = np.broadcast_to(view, inner)
    view = view.transpose(perm) if len(shape) > 1 else view
    return buf, view


@pytest.mark.task("2.3")
@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple), st.data())
def test_strided_copy_between_any_two_views_matches_numpy(shape, data):
    a_buf, a_view = data.draw(strided_views(shape))
    out_buf, out_view = data.draw(strided_views(shape).filter(
        lambda bv: 0 not in bv[1].strides))          # an output never has stride 0
    out_buf[:] = MARK
    n = int(np.prod(shape))
    start = data.draw(st.integers(0, n - 1))
    stop = data.draw(st.integers(start + 1, n))
    _walk(a_buf, a_view, out_buf, out_view, start, stop)
    expect = np.full_like(out_buf, MARK)
    exp_view = np.lib.stride_tricks.as_strided(expect[_pos(out_buf, out_view):],
                                               out_view.shape, out_view.strides)
    idx = np.unravel_index(np.arange(start, stop), shape)
    exp_view[idx] = a_view[idx]
    np.testing.assert_array_equal(out_buf, expect)


@pytest.mark.task("2.3")
def test_strided_copy_of_a_transpose_and_a_slice():
    a = np.arange(24.0)
    view = a.reshape(4, 6).T[1:, ::2]                 # (5, 2), strides (1, 12), offset 1
    out = np.full(10, MARK)
    _walk(a, view, out, out.reshape(5, 2))
    np.testing.assert_array_equal(out.reshape(5, 2), view)


@pytest.mark.task("2.3")
def test_strided_copy_of_a_chunk_and_into_a_strided_output():
    a = np.arange(12.0)
    src = a.reshape(3, 4)
    out = np.full(24, MARK)
    dst = out.reshape(3, 8)[:, ::2]                   # every other element
    _walk(a, src, out, dst, start=2, stop=9)          # flat elements 2..8 only
    expect = np.full(24, MARK)
    expect.reshape(3, 8)[:, ::2].reshape(-1)[2:9] = src.reshape(-1)[2:9]
    np.testing.assert_array_equal(out, expect)


@pytest.mark.task("2.3")
def test_strided_copy_of_a_broadcast_value_and_with_a_cast():
    a = np.array([5.0])
    out = np.full(6, MARK, dtype=np.float32)
    shape = np.array([2, 3], dtype=np.int64)
    elementwise.copy_strided(a, 0, np.array([0, 0], dtype=np.int64), out, 0,
                             np.array([3, 1], dtype=np.int64), shape, 0, 6)
    np.testing.assert_array_equal(out, np.full(6, 5.0, dtype=np.float32))


# ---------------------------------------------------------------------------
# 2.6 the strided map, 2.7 the strided zip
# ---------------------------------------------------------------------------
def _views_of(data, shape, n_inputs):
    inputs = [data.draw(strided_views(shape)) for _ in range(n_inputs)]
    out_buf, out_view = data.draw(strided_views(shape).filter(lambda bv: 0 not in bv[1].strides))
    out_buf[:] = MARK
    n = int(np.prod(shape))
    start = data.draw(st.integers(0, n - 1))
    stop = data.draw(st.integers(start + 1, n))
    return inputs, (out_buf, out_view), start, stop


def _expected(out_buf, out_view, shape, start, stop, values):
    expect = np.full_like(out_buf, MARK)
    exp_view = np.lib.stride_tricks.as_strided(expect[_pos(out_buf, out_view):],
                                               out_view.shape, out_view.strides)
    idx = np.unravel_index(np.arange(start, stop), shape)
    exp_view[idx] = values[idx]
    return expect


UNARY_FAST = [(scalar_ops.NEG, np.negative), (scalar_ops.ABS, np.abs),
              (scalar_ops.SQUARE, np.square), (scalar_ops.RELU, lambda x: np.maximum(x, 0))]


@pytest.mark.task("2.6")
@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple), st.data())
def test_strided_map_between_any_two_views_matches_numpy(shape, data):
    (a,), (out_buf, out_view), start, stop = _views_of(data, shape, 1)
    a_buf, a_view = a
    a_buf -= a_buf.size / 2                               # negative values too
    op, oracle = UNARY_FAST[data.draw(st.integers(0, len(UNARY_FAST) - 1))]
    elementwise.unary_fast_strided(op, a_buf, _pos(a_buf, a_view), _strides(a_buf, a_view),
                                   out_buf, _pos(out_buf, out_view), _strides(out_buf, out_view),
                                   np.array(shape, dtype=np.int64), 0.0, 0.0, start, stop)
    np.testing.assert_array_equal(out_buf, _expected(out_buf, out_view, shape, start, stop,
                                                     oracle(a_view)))


@pytest.mark.task("2.6")
def test_strided_map_examples_with_parameters():
    a = np.array([1.0, -2.0, 3.0, -4.0])
    out = np.full(4, MARK)
    i64 = lambda *xs: np.array(xs, dtype=np.int64)     # noqa: E731
    elementwise.unary_fast_strided(scalar_ops.NEG, a, 0, i64(1, 2), out, 0, i64(2, 1),
                                   i64(2, 2), 0.0, 0.0, 0, 4)
    assert out.tolist() == [-1.0, -3.0, 2.0, 4.0]
    out = np.full(6, MARK)                              # CLAMP, a broadcast input, a chunk
    elementwise.unary_fast_strided(scalar_ops.CLAMP, np.array([-5.0, 0.2, 9.0]), 0, i64(0, 1),
                                   out, 0, i64(3, 1), i64(2, 3), -1.0, 1.0, 1, 5)
    assert out.tolist() == [MARK, 0.2, 1.0, -1.0, 0.2, MARK]


ARITH_STRIDED = [(scalar_ops.ADD, np.add), (scalar_ops.SUB, np.subtract),
                 (scalar_ops.MUL, np.multiply), (scalar_ops.RSUB, lambda x, y: y - x)]


@pytest.mark.task("2.7")
@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple), st.data())
def test_strided_zip_of_any_three_views_matches_numpy(shape, data):
    (a, b), (out_buf, out_view), start, stop = _views_of(data, shape, 2)
    (a_buf, a_view), (b_buf, b_view) = a, b
    b_buf *= 0.5
    op, oracle = ARITH_STRIDED[data.draw(st.integers(0, len(ARITH_STRIDED) - 1))]
    elementwise.arith_strided(op, a_buf, _pos(a_buf, a_view), _strides(a_buf, a_view),
                              b_buf, _pos(b_buf, b_view), _strides(b_buf, b_view),
                              out_buf, _pos(out_buf, out_view), _strides(out_buf, out_view),
                              np.array(shape, dtype=np.int64), start, stop)
    np.testing.assert_array_equal(out_buf, _expected(out_buf, out_view, shape, start, stop,
                                                     oracle(a_view, b_view)))


@pytest.mark.task("2.7")
def test_strided_zip_examples():
    i64 = lambda *xs: np.array(xs, dtype=np.int64)     # noqa: E731
    a = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    out = np.full(6, MARK)
    elementwise.arith_strided(scalar_ops.ADD, a, 0, i64(3, 1), np.array([10.0, 20.0, 30.0]), 0,
                              i64(0, 1), out, 0, i64(3, 1), i64(2, 3), 0, 6)
    assert out.tolist() == [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]
    out = np.full(6, MARK)                              # a repeated on the left, a chunk
    elementwise.arith_strided(scalar_ops.SUB, np.array([100.0]), 0, i64(0, 0), a, 0, i64(1, 2),
                              out, 0, i64(3, 1), i64(2, 3), 2, 6)
    assert out.tolist() == [MARK, MARK, 95.0, 98.0, 96.0, 94.0]
    out = np.full(6, MARK)                              # b repeated along the rows
    elementwise.arith_strided(scalar_ops.ADD, a, 0, i64(3, 1), np.array([10.0, 20.0]), 0,
                              i64(1, 0), out, 0, i64(3, 1), i64(2, 3), 0, 6)
    assert out.tolist() == [11.0, 12.0, 13.0, 24.0, 25.0, 26.0]
    out = np.full(6, MARK)                              # a repeated along the rows
    elementwise.arith_strided(scalar_ops.SUB, np.array([10.0, 20.0]), 0, i64(1, 0), a, 0,
                              i64(3, 1), out, 0, i64(3, 1), i64(2, 3), 0, 6)
    assert out.tolist() == [9.0, 8.0, 7.0, 16.0, 15.0, 14.0]


# ---------------------------------------------------------------------------
# 2.4 the reference matmul, and the tuned one checked against it
# ---------------------------------------------------------------------------
@st.composite
def matmul_cases(draw):
    nb = draw(st.integers(1, 3))
    M, K, N = (draw(st.integers(1, 6)) for _ in range(3))
    K = draw(st.sampled_from([K, 0])) if draw(st.integers(0, 9)) == 0 else K
    na = draw(st.sampled_from([1, nb]))
    nbb = draw(st.sampled_from([1, nb]))
    return (na, M, K), (nbb, K, N), (nb, M, N), draw(floats)


@pytest.mark.task("2.4")
@settings(max_examples=60, deadline=None)
@given(matmul_cases())
def test_reference_matmul_matches_numpy(case):
    sa, sb, so, dtype = case
    rng = np.random.default_rng(sum(sa) + sum(sb))
    a = rng.standard_normal(sa).astype(dtype)
    b = rng.standard_normal(sb).astype(dtype)
    out = np.full(so, MARK, dtype=dtype)
    reference_kernels.matmul_reference(a, b, out)
    want = np.broadcast_to(np.matmul(a, b), so)       # (both batches may be 1 while out's is not)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.task("2.4")
def test_reference_matmul_examples():
    out = np.full((1, 1, 1), MARK)
    reference_kernels.matmul_reference(np.array([[[1.0, 2.0]]]), np.array([[[3.0], [4.0]]]), out)
    assert out.tolist() == [[[11.0]]]
    out = np.full((2, 2, 2), MARK)
    eye = np.eye(2)[None]
    twice = np.stack([np.eye(2), 2 * np.eye(2)])
    reference_kernels.matmul_reference(eye, twice, out)            # a batch of one, broadcast
    np.testing.assert_array_equal(out, twice)
    out = np.full((1, 2, 3), MARK)
    reference_kernels.matmul_reference(np.ones((1, 2, 0)), np.ones((1, 0, 3)), out)
    np.testing.assert_array_equal(out, np.zeros((1, 2, 3)))        # K = 0


@pytest.mark.task("2.4")
@pytest.mark.parametrize("sa, sb", [((2, 5, 7), (2, 7, 300)),       # short K, wide: small-K path
                                    ((1, 17, 3), (3, 3, 80)),       # short K, a batch of one
                                    ((2, 33, 70), (1, 70, 19)),     # packed tiles
                                    ((1, 3, 600), (1, 600, 4))])    # long K
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_tuned_matmul_equals_the_reference(sa, sb, dtype):
    # The engine runs matmul.batched_matmul: it must compute what the reference does.
    rng = np.random.default_rng(0)
    a = rng.standard_normal(sa).astype(dtype)
    b = rng.standard_normal(sb).astype(dtype)
    so = (max(sa[0], sb[0]), sa[1], sb[2])
    ref = np.full(so, MARK, dtype=dtype)
    reference_kernels.matmul_reference(a, b, ref)
    tuned = np.full(so, MARK, dtype=dtype)
    matmul.batched_matmul(a, b, tuned)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(tuned, ref, rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# 2.5 the reference reduce, and the tuned one checked against it
# ---------------------------------------------------------------------------
SUMS = [(reduce_ops.SUM, np.sum), (reduce_ops.PROD, np.prod), (reduce_ops.NANSUM, np.nansum),
        (reduce_ops.ALL, np.all), (reduce_ops.ANY, np.any)]


@st.composite
def reduce_cases(draw):
    """A strided view of a buffer, the dims it is reduced over, and an op of the sum family."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    buf, view = draw(strided_views(shape))
    dims = sorted(draw(st.sets(st.integers(0, len(shape) - 1), min_size=1)))
    return buf, view, dims, draw(st.sampled_from(range(len(SUMS))))


def _reduce_args(buf, view, dims):
    st_ = _strides(buf, view)
    keep = [d for d in range(view.ndim) if d not in dims]
    as_arr = lambda xs: np.array(xs, dtype=np.int64)   # noqa: E731
    return (_pos(buf, view), as_arr([view.shape[d] for d in keep]), as_arr([st_[d] for d in keep]),
            as_arr([view.shape[d] for d in dims]), as_arr([st_[d] for d in dims]))


def _oracle(k, view, dims):
    op, fn = SUMS[k]
    want = fn(view, axis=tuple(dims))
    return op, np.asarray(want, dtype=np.float64).reshape(-1)


@pytest.mark.task("2.5")
@settings(max_examples=80, deadline=None)
@given(reduce_cases())
def test_reference_reduce_matches_numpy(case):
    buf, view, dims, k = case
    vals = np.random.default_rng(buf.size).uniform(0.5, 1.5, buf.size)
    if SUMS[k][0] in (reduce_ops.ALL, reduce_ops.ANY):
        vals = np.where(vals > 1.2, 0.0, vals)        # some zeros
    if SUMS[k][0] == reduce_ops.NANSUM:
        vals[::3] = np.nan
    buf[:] = vals
    op, want = _oracle(k, view, dims)
    pos, keep_shape, keep_st, red_shape, red_st = _reduce_args(buf, view, dims)
    out = np.full(want.size, MARK)
    acc0 = reduce_ops.identity(op, True)
    reference_kernels.reduce_reference(op, buf, pos, keep_shape, keep_st, red_shape, red_st,
                                       acc0, out)
    np.testing.assert_allclose(out, want, rtol=1e-12)


@pytest.mark.task("2.5")
def test_reference_reduce_examples_and_integers():
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    i64 = lambda *xs: np.array(xs, dtype=np.int64)     # noqa: E731
    out = np.full(2, MARK)
    reference_kernels.reduce_reference(reduce_ops.SUM, x, 0, i64(2), i64(3), i64(3), i64(1),
                                       np.float64(0.0), out)
    assert out.tolist() == [6.0, 15.0]
    out = np.full(3, MARK)                             # over dim 0: the columns
    reference_kernels.reduce_reference(reduce_ops.PROD, x, 0, i64(3), i64(1), i64(2), i64(3),
                                       np.float64(1.0), out)
    assert out.tolist() == [4.0, 10.0, 18.0]
    out = np.full(1, MARK)                             # everything, from an offset
    reference_kernels.reduce_reference(reduce_ops.SUM, x, 2, np.zeros(0, np.int64),
                                       np.zeros(0, np.int64), i64(2, 2), i64(2, 1),
                                       np.float64(0.0), out)
    assert out.tolist() == [3.0 + 4.0 + 5.0 + 6.0]
    xi = np.array([7, -2, 5, 1], dtype=np.int32)       # an int32 sum runs in int64
    outi = np.full(2, -1, dtype=np.int64)
    reference_kernels.reduce_reference(reduce_ops.SUM, xi, 0, i64(2), i64(2), i64(2), i64(1),
                                       np.int64(0), outi)
    assert outi.tolist() == [5, 6]


@pytest.mark.task("2.5")
@settings(max_examples=40, deadline=None)
@given(reduce_cases())
def test_the_tuned_reduce_equals_the_reference(case):
    # The engine runs reduce.sum_strided: it must compute what the reference does.
    buf, view, dims, k = case
    buf[:] = np.random.default_rng(buf.size).uniform(0.5, 1.5, buf.size)
    op = SUMS[k][0]
    pos, keep_shape, keep_st, red_shape, red_st = _reduce_args(buf, view, dims)
    n_out = int(np.prod(keep_shape)) if keep_shape.size else 1
    acc0 = reduce_ops.identity(op, True)
    ref = np.full(n_out, MARK)
    reference_kernels.reduce_reference(op, buf, pos, keep_shape, keep_st, red_shape, red_st,
                                       acc0, ref)
    tuned = np.full(n_out, MARK)
    reduce_kernels.sum_strided(op, buf, pos, keep_shape, keep_st, red_shape, red_st, 1, acc0,
                               tuned, 0, n_out)
    np.testing.assert_allclose(tuned, ref, rtol=1e-12)

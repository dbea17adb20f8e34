"""Course module 2, kernels: map, zip, the strided walk and matmul, as Numba kernels.

The tests call each kernel directly on NumPy arrays (no tensors), with NumPy
as the oracle.  ``minitorch course test 2.1`` runs the tests of one task.
"""

from __future__ import annotations

import numpy as np
import pytest

from minitorch.backends import scalar_ops
from minitorch.backends.cpu import elementwise, matmul

pytestmark = pytest.mark.kernels


@pytest.mark.task("2.1")
def test_map_applies_the_op_to_every_element():
    a = np.linspace(-2, 2, 11)
    out = np.empty_like(a)
    elementwise.unary_contiguous(scalar_ops.EXP, a, out, 0.0, 0.0)
    np.testing.assert_allclose(out, np.exp(a))
    elementwise.unary_contiguous(scalar_ops.CLAMP, a, out, -1.0, 0.5)
    np.testing.assert_allclose(out, np.clip(a, -1.0, 0.5))


@pytest.mark.task("2.1")
def test_map_casts_through_the_store():
    a = np.array([0.5, 1.5, -2.0], dtype=np.float32)
    out = np.empty(3, dtype=np.float64)
    elementwise.unary_contiguous(scalar_ops.SQUARE, a, out, 0.0, 0.0)
    np.testing.assert_allclose(out, a.astype(np.float64) ** 2)


@pytest.mark.task("2.2")
def test_zip_of_two_runs():
    a, b = np.arange(6.0), np.arange(6.0) + 10
    out = np.empty(6)
    elementwise.arith_contiguous(scalar_ops.MUL, a, b, out)
    np.testing.assert_allclose(out, a * b)


@pytest.mark.task("2.2")
def test_zip_with_a_repeated_value_on_either_side():
    a = np.arange(5.0)
    out = np.empty(5)
    elementwise.arith_contiguous(scalar_ops.SUB, a, np.array([2.0]), out)
    np.testing.assert_allclose(out, a - 2.0)
    elementwise.arith_contiguous(scalar_ops.SUB, np.array([2.0]), a, out)
    np.testing.assert_allclose(out, 2.0 - a)


def _walk(a_arr, a_view, out_arr, out_view, start=0, stop=None):
    """Call copy_strided with the positions and strides of two NumPy views."""
    shape = np.array(out_view.shape, dtype=np.int64)
    a_st = np.array([s // a_arr.itemsize for s in a_view.strides], dtype=np.int64)
    o_st = np.array([s // out_arr.itemsize for s in out_view.strides], dtype=np.int64)
    a_pos = (a_view.__array_interface__["data"][0] - a_arr.__array_interface__["data"][0]) \
        // a_arr.itemsize
    o_pos = (out_view.__array_interface__["data"][0] - out_arr.__array_interface__["data"][0]) \
        // out_arr.itemsize
    stop = out_view.size if stop is None else stop
    elementwise.copy_strided(a_arr, a_pos, a_st, out_arr, o_pos, o_st, shape, start, stop)


@pytest.mark.task("2.3")
def test_strided_copy_of_a_transpose_and_a_slice():
    a = np.arange(24.0)
    view = a.reshape(4, 6).T[1:, ::2]                 # (5, 2), strides (1, 12), offset 1
    out = np.zeros(10)
    _walk(a, view, out, out.reshape(5, 2))
    np.testing.assert_array_equal(out.reshape(5, 2), view)


@pytest.mark.task("2.3")
def test_strided_copy_of_a_chunk_and_into_a_strided_output():
    a = np.arange(12.0)
    src = a.reshape(3, 4)
    out = np.zeros(24)
    dst = out.reshape(3, 8)[:, ::2]                   # every other element
    _walk(a, src, out, dst, start=2, stop=9)          # flat elements 2..8 only
    expect = np.zeros(24)
    expect.reshape(3, 8)[:, ::2].reshape(-1)[2:9] = src.reshape(-1)[2:9]
    np.testing.assert_array_equal(out, expect)


@pytest.mark.task("2.4")
def test_small_k_matmul_matches_numpy():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 5, 7)).astype(np.float32)
    b = rng.standard_normal((2, 7, 300)).astype(np.float32)
    out = np.empty((2, 5, 300), dtype=np.float32)
    matmul._gemm_small_k(a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.task("2.4")
def test_small_k_matmul_broadcasts_a_batch_of_one():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((1, 17, 3))
    b = rng.standard_normal((3, 3, 20))
    out = np.empty((3, 17, 20))
    matmul._gemm_small_k(a, b, out)
    np.testing.assert_allclose(out, a @ b)

"""The arithmetic twins: ``+ - * /`` in zip kernels of their own (cpu/elementwise.py).

``arith_contiguous`` and ``arith_strided`` (course tasks 2.2 and 2.7) test the op
for every element, and LLVM leaves such loops scalar.  The backend runs ``+ - * /``
in twins of them with the op fixed (``ARITH_TWINS``, ``ARITH_TWINS_PARALLEL``),
whose loops LLVM vectorises.  Checked here: each twin gives bit for bit what the
family kernel gives (the same arithmetic), in every layout of the zip loops and on
more than one parallel chunk; the backend picks them; and the float32 loop is
vector code on x86-64.  Their speed is measured by ``minitorch bench --filter
elementwise``, not here.  Cost: about 25 kernels when nothing is cached (the
prebuilt archive holds them).
"""

import platform
import re

import numba
import numpy as np
import pytest

import minitorch as torch
from minitorch.backends import scalar_ops
from minitorch.backends.cpu import backend, elementwise

pytestmark = pytest.mark.kernels      # the CPU backend's kernels, called directly

OPS = {"add": scalar_ops.ADD, "sub": scalar_ops.SUB, "mul": scalar_ops.MUL,
       "div": scalar_ops.DIV}
I64 = np.int64


def _zip_inputs(layout: str, n: int, dtype) -> tuple:
    rng = np.random.default_rng(n)
    a = rng.uniform(0.5, 4.0, n).astype(dtype)
    b = rng.uniform(0.5, 4.0, n).astype(dtype)
    if layout == "a repeated":
        a = a[:1].copy()
    elif layout == "b repeated":
        b = b[:1].copy()
    return a, b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["both", "a repeated", "b repeated"])
@pytest.mark.parametrize("name", list(OPS))
def test_a_contiguous_twin_gives_what_the_family_kernel_gives(name, layout, dtype):
    op = OPS[name]
    a, b = _zip_inputs(layout, 37, dtype)
    want, got = np.full(37, -1.0, dtype), np.full(37, -1.0, dtype)
    elementwise.arith_contiguous(op, a, b, want)
    elementwise.ARITH_TWINS[op][0](op, a, b, got)
    np.testing.assert_array_equal(got, want)


def _strided_case(dtype, rows: int, cols: int) -> tuple:
    """A (rows, cols) matrix (a transposed view of a buffer) and a broadcast row."""
    rng = np.random.default_rng(rows)
    a = rng.uniform(0.5, 4.0, rows * cols).astype(dtype)       # read as its transpose
    b = rng.uniform(0.5, 4.0, cols).astype(dtype)
    args = (a, 0, np.array([1, rows], I64), b, 0, np.array([0, 1], I64))
    return args, np.array([cols, 1], I64), np.array([rows, cols], I64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(OPS))
def test_a_strided_twin_gives_what_the_family_kernel_gives(name, dtype):
    op = OPS[name]
    for rows, cols in ((3, 5), (4, 1), (2, 40)):
        args, o_st, shape = _strided_case(dtype, rows, cols)
        want = np.full(rows * cols, -1.0, dtype)
        got = want.copy()
        elementwise.arith_strided(op, *args, want, 0, o_st, shape, 1, rows * cols)
        elementwise.ARITH_TWINS[op][1](op, *args, got, 0, o_st, shape, 1, rows * cols)
        np.testing.assert_array_equal(got, want)
        assert got[0] == -1.0       # element 0 is before ``start``: not written


@pytest.mark.parametrize("name", list(OPS))
def test_the_parallel_twins_cover_every_chunk(name):
    op = OPS[name]
    n = 2 * elementwise.CHUNK + 7                           # three chunks, the last short
    a, b = _zip_inputs("both", n, np.float32)
    want, got = np.empty(n, np.float32), np.empty(n, np.float32)
    elementwise.arith_contiguous(op, a, b, want)
    elementwise.ARITH_TWINS_PARALLEL[op][0](op, a, b, got)
    np.testing.assert_array_equal(got, want)
    args, o_st, shape = _strided_case(np.float32, 3, n // 3)
    want, got = np.empty(3 * (n // 3), np.float32), np.empty(3 * (n // 3), np.float32)
    elementwise.arith_strided(op, *args, want, 0, o_st, shape, 0, want.size)
    elementwise.ARITH_TWINS_PARALLEL[op][1](op, *args, got, 0, o_st, shape)
    np.testing.assert_array_equal(got, want)


def test_the_backend_runs_the_twins_and_the_family_kernel_for_the_other_ops():
    for par, table in ((False, elementwise.ARITH_TWINS),
                       (True, elementwise.ARITH_TWINS_PARALLEL)):
        for op in OPS.values():
            assert backend._binary_kernels(op, backend.ARITH, par) == table[op]
    assert backend._binary_kernels(scalar_ops.RSUB, backend.ARITH, False) == (
        elementwise.arith_contiguous, elementwise.arith_strided)
    x = torch.arange(6.0).reshape(2, 3)
    assert (2 - x).tolist() == [[2.0, 1.0, 0.0], [-1.0, -2.0, -3.0]]      # RSUB
    assert (x / torch.tensor([1.0, 2.0, 4.0])).tolist() == [[0.0, 0.5, 0.5], [3.0, 2.0, 1.25]]


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 assembly")
def test_the_float32_add_loop_is_vector_code():
    """Packed float32 adds (``addps``/``vaddps``, 4 or 8 lanes) in the twin's machine code:
    LLVM vectorised its loop, which it does not do for ``arith_contiguous``'s."""
    a = np.ones(8, np.float32)
    # A fresh, uncached compile of the twin's code (Numba shows no assembly for code it
    # loaded from its cache), with the kernels' options.
    twin = numba.njit(error_model="numpy")(elementwise.ARITH_TWINS[scalar_ops.ADD][0].py_func)
    twin(scalar_ops.ADD, a, a, np.empty_like(a))
    assert re.search(r"\bv?addps\b", twin.inspect_asm(twin.signatures[0]))

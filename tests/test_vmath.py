"""The vectorised exp / sigmoid / tanh kernel (minitorch/backends/cpu/vmath.py).

Accuracy is measured in *ulps* (units in the last place: how many
representable floats lie between our result and the true value).  The true
value comes from a wider type: float64 for float32 results and, for float64
results, NumPy's ``longdouble`` (80-bit on x86 Linux; the float64 accuracy
test is skipped where ``longdouble`` is just float64).  Other tests compare
with NumPy itself, whose own float32 ``exp`` is off by up to 2 ulps.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import minitorch as torch
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.backends import scalar_ops as S
from minitorch.backends.cpu import vmath

pytestmark = pytest.mark.kernels

DTYPES = {"float32": (np.float32, torch.float32), "float64": (np.float64, torch.float64)}
OPS = {"exp": S.EXP, "sigmoid": S.SIGMOID, "tanh": S.TANH}
PUBLIC = {"exp": torch.exp, "sigmoid": torch.sigmoid, "tanh": torch.tanh}
# Largest error measured over the sweeps below (and every float32, once), in
# ulps, with a margin of one for machines without FMA or with another
# rounding of the reference: exp 1, sigmoid 2, tanh 2 (float64: 3, rarely).
MAX_ULP = {"exp": 2, "sigmoid": 3, "tanh": 4}
# Against NumPy, whose float32 exp is itself up to 2 ulps off.
MAX_ULP_VS_NUMPY = {"exp": 4, "sigmoid": 4, "tanh": 4}
WIDE = np.longdouble if np.finfo(np.longdouble).nmant > 52 else None


def kernel(op, x):
    """The kernel's result for a 1-D NumPy array, through the backend's entry point."""
    out = np.empty_like(x)
    vmath.unary_contiguous(OPS[op], x, out)
    return out


def reference(op, x, wide):
    """``op(x)`` computed in the wider type ``wide``, rounded to x's type."""
    w = x.astype(wide)
    with np.errstate(over="ignore", invalid="ignore"):
        if op == "exp":
            r = np.exp(w)
        elif op == "sigmoid":
            z = np.exp(-np.abs(w))
            r = np.where(w >= 0, 1, z) / (1 + z)
        else:
            r = np.tanh(w)
        return r.astype(x.dtype)


def numpy_op(op, x):
    """NumPy in x's own type (the stable two-sided sigmoid: NumPy has none)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if op == "exp":
            return np.exp(x)
        if op == "tanh":
            return np.tanh(x)
        z = np.exp(-np.abs(x))
        return (np.where(x >= 0, x.dtype.type(1), z) / (1 + z)).astype(x.dtype)


def assert_ulp(got, want, maxulp):
    """At most ``maxulp`` ulps apart; NaN exactly where ``want`` is NaN."""
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_max_ulp(got[~nan], want[~nan], maxulp=maxulp,
                                    dtype=got.dtype)


def sweep(dtype):
    """Dense sweep: the whole range (overflow, underflow, subnormal results),
    the interesting middle, tiny arguments, and random magnitudes."""
    rng = np.random.default_rng(0)
    big = 110.0 if dtype == np.float32 else 760.0
    min_exp = -149 if dtype == np.float32 else -1074
    parts = [
        np.linspace(-big, big, 400_001),
        np.linspace(-2, 2, 200_001),
        rng.standard_normal(200_000) * 10,
        rng.choice([-1, 1], 200_000) * np.exp2(rng.uniform(min_exp, 7, 200_000)),
    ]
    return np.concatenate(parts).astype(dtype)


# ---------------------------------------------------------------------------
# accuracy
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dense_sweep_is_within_a_few_ulps_of_the_true_value(op, dtype):
    ndt = DTYPES[dtype][0]
    wide = np.float64 if ndt == np.float32 else WIDE
    if wide is None:
        pytest.skip("no extended-precision longdouble for a float64 reference")
    x = sweep(ndt)
    assert_ulp(kernel(op, x), reference(op, x, wide), MAX_ULP[op])


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dense_sweep_is_close_to_numpy(op, dtype):
    x = sweep(DTYPES[dtype][0])
    assert_ulp(kernel(op, x), numpy_op(op, x), MAX_ULP_VS_NUMPY[op])


def test_a_dense_float32_grid_near_zero():
    """Near 0 is where cancellation would show in tanh: every 5th float32 of [0.25, 0.5)."""
    lo = np.float32(0.25).view(np.int32)
    hi = np.float32(0.5).view(np.int32)
    x = np.arange(lo, hi, 5, dtype=np.int32).view(np.float32)
    x = np.concatenate([x, -x, x / 1024, -x / 1024])
    for op in OPS:
        assert_ulp(kernel(op, x), reference(op, x, np.float64), MAX_ULP[op])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_arbitrary_values_match_numpy(dtype, data):
    ndt = DTYPES[dtype][0]
    x = data.draw(hnp.arrays(ndt, st.integers(0, 70), elements=st.floats(
        width=np.dtype(ndt).itemsize * 8, allow_nan=True, allow_infinity=True)))
    for op in OPS:
        assert_ulp(kernel(op, x), numpy_op(op, x), MAX_ULP_VS_NUMPY[op])


# ---------------------------------------------------------------------------
# edges
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_edge_values(dtype):
    ndt = DTYPES[dtype][0]
    fi = np.finfo(ndt)
    inf, nan = np.inf, np.nan
    x = np.array([0.0, -0.0, inf, -inf, nan, 1e4, -1e4, fi.max, -fi.max,
                  fi.tiny, -fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal], ndt)
    e = kernel("exp", x)
    np.testing.assert_array_equal(e, [1, 1, inf, 0, nan, inf, 0, inf, 0, 1, 1, 1, 1])
    s = kernel("sigmoid", x)
    np.testing.assert_array_equal(s, [0.5, 0.5, 1, 0, nan, 1, 0, 1, 0, 0.5, 0.5, 0.5, 0.5])
    t = kernel("tanh", x)
    np.testing.assert_array_equal(t, [0, -0.0, 1, -1, nan, 1, -1, 1, -1, fi.tiny, -fi.tiny,
                                      fi.smallest_subnormal, -fi.smallest_subnormal])
    assert np.signbit(t[1]) and not np.signbit(t[0])   # tanh(-0.0) is -0.0
    assert not np.signbit(s[6])                          # sigmoid(-big) is +0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_overflow_and_underflow_thresholds(dtype):
    """Around the largest finite and the subnormal results, exp agrees with the reference."""
    ndt = DTYPES[dtype][0]
    wide = np.float64 if ndt == np.float32 else WIDE
    if wide is None:
        pytest.skip("no extended-precision longdouble for a float64 reference")
    fi = np.finfo(ndt)
    top = np.log(fi.max.astype(np.float64))
    bottom = np.log(fi.smallest_subnormal.astype(np.float64))
    x = np.concatenate([np.linspace(top - 1, top + 1, 20001),
                        np.linspace(bottom - 2, np.log(fi.tiny.astype(np.float64)) + 1, 20001)])
    x = x.astype(ndt)
    got, want = kernel("exp", x), reference("exp", x, wide)
    assert_ulp(got, want, MAX_ULP["exp"])
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))   # inf exactly where due
    np.testing.assert_array_equal(got == 0, want == 0)             # 0 exactly where due
    assert (got[(x > bottom + 1) & (x < top - 1)] > 0).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sigmoid_keeps_tiny_results(dtype):
    """sigmoid(x) ~ exp(x) for very negative x, down into the subnormals (not 0)."""
    ndt = DTYPES[dtype][0]
    x = np.linspace(-100 if ndt == np.float32 else -740, -30, 1001).astype(ndt)
    got = kernel("sigmoid", x)
    assert (got > 0).all()
    assert_ulp(got, reference("sigmoid", x, np.float64 if ndt == np.float32 else ndt), 3)


# ---------------------------------------------------------------------------
# the public ops: dispatch, layouts, other dtypes, autograd
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_public_op_runs_this_kernel(op, dtype):
    """Bit for bit the kernel's result, so the backend dispatched to it."""
    ndt, tdt = DTYPES[dtype]
    x = np.random.default_rng(1).standard_normal((33, 65)).astype(ndt) * 4
    got = PUBLIC[op](torch.tensor(x, dtype=tdt))
    assert got.dtype is tdt
    np.testing.assert_array_equal(got.numpy(), kernel(op, x.reshape(-1)).reshape(x.shape))


def _layouts(x, tdt):
    """(name, tensor) pairs: the same values as ``x`` (2-D) in several layouts."""
    t = torch.tensor(np.ascontiguousarray(x.T), dtype=tdt).T
    big = np.zeros((x.shape[0], 2 * x.shape[1]), x.dtype)
    big[:, ::2] = x
    strided = torch.tensor(big, dtype=tdt)[:, ::2]
    flat = np.concatenate([np.zeros(5, x.dtype), x.reshape(-1)])
    offset = torch.tensor(flat, dtype=tdt)[5:].view(x.shape)
    return [("transposed", t), ("strided", strided), ("offset", offset)]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_non_contiguous_inputs_and_outputs(op, dtype):
    ndt, tdt = DTYPES[dtype]
    x = np.random.default_rng(2).standard_normal((7, 9)).astype(ndt) * 5
    want = kernel(op, x.reshape(-1)).reshape(x.shape)
    for name, t in _layouts(x, tdt):
        assert not t.is_contiguous() or name == "offset"
        np.testing.assert_array_equal(PUBLIC[op](t).numpy(), want, err_msg=name)
    # broadcast input (stride 0): one value repeated
    b = torch.tensor(x[:1, :1], dtype=tdt).expand(7, 9)
    np.testing.assert_array_equal(PUBLIC[op](b).numpy(), np.broadcast_to(want[0, 0], (7, 9)))
    # non-contiguous output (out=, in-place on a transposed view)
    out = torch.empty((9, 7), dtype=tdt).T
    PUBLIC[op](torch.tensor(x, dtype=tdt), out=out)
    np.testing.assert_array_equal(out.numpy(), want)
    inplace = torch.tensor(np.ascontiguousarray(x.T), dtype=tdt).T
    getattr(inplace, op + "_")()
    np.testing.assert_array_equal(inplace.numpy(), want)


@pytest.mark.parametrize("op", OPS)
def test_other_dtypes_still_work(op):
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
    want = reference(op, x, np.float64)
    half = PUBLIC[op](torch.tensor(x, dtype=torch.float16))
    assert half.dtype is torch.float16
    np.testing.assert_allclose(half.numpy().astype(np.float64), want, rtol=2e-3)
    ints = PUBLIC[op](torch.tensor([-2, 0, 2]))
    assert ints.dtype is torch.float32
    np.testing.assert_allclose(ints.numpy(), reference(op, np.array([-2.0, 0, 2]), np.float64),
                               rtol=1e-6)
    scalar = PUBLIC[op](torch.tensor(0.5, dtype=torch.float64))
    assert scalar.shape == () and scalar.item() == kernel(op, np.array([0.5]))[0]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("noncontig", [False, True])
def test_gradients_pass_gradcheck(op, noncontig):
    rng = np.random.default_rng(3)
    values = rng.uniform(-3, 3, (4, 6))
    if noncontig:
        x = torch.tensor(np.ascontiguousarray(values.T), dtype=torch.float64).T
        x.requires_grad_(True)
    else:
        x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    assert gradcheck(PUBLIC[op], (x,))
    assert gradgradcheck(PUBLIC[op], (x,))


def test_kernel_has_two_signatures_at_most():
    """One compiled kernel per float type (compile time and the disk cache stay small)."""
    for dtype in ("float32", "float64"):
        kernel("exp", np.ones(3, DTYPES[dtype][0]))
    assert len(vmath.vmath_contiguous.signatures) <= 2

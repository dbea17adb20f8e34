"""Elementwise ops against NumPy: every op, any layout, broadcasting, dtypes, out= and in-place.

Inputs are drawn by hypothesis with shapes of 0 to 3 dims (sides 0 to 4,
so 0-d and empty tensors are included) and one of several memory layouts
(contiguous, transposed, strided, broadcast with stride 0, offset into a
larger buffer).  References are computed by NumPy in float64.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import minitorch as torch
from minitorch.ops import elementwise as E

pytestmark = pytest.mark.ops


SETTINGS = settings(max_examples=12, deadline=None)
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
LAYOUTS = ["contiguous", "transposed", "strided", "broadcast", "offset"]
FLOAT_DTYPES = {"float32": (torch.float32, np.float32), "float64": (torch.float64, np.float64)}
TOL = {"float32": dict(rtol=2e-5, atol=1e-6), "float64": dict(rtol=1e-11, atol=1e-13)}

DOMAINS = {    # bounds exactly representable in float32
    "any": (-4.0, 4.0), "pos": (0.125, 4.0), "unit": (-0.9375, 0.9375), "gt1": (1.0, 4.0),
    "small": (-1.25, 1.25), "nonzero": (0.25, 4.0),
}


def laid_out(arr, layout, dtype):
    """A minitorch tensor holding ``arr``'s values in the given memory layout."""
    if layout == "transposed" and arr.ndim >= 2:
        return torch.tensor(np.ascontiguousarray(arr.T), dtype=dtype).T
    if layout == "strided" and arr.ndim >= 1:
        big = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1],), dtype=arr.dtype)
        big[..., ::2] = arr
        return torch.tensor(big, dtype=dtype)[..., ::2]
    if layout == "offset":
        flat = np.concatenate([np.zeros(3, dtype=arr.dtype), arr.reshape(-1)])
        return torch.tensor(flat, dtype=dtype)[3:].view(arr.shape)
    return torch.tensor(arr, dtype=dtype)


@st.composite
def operand(draw, domain="any", dtype_name="float64", shape=None):
    """(numpy values, minitorch tensor) in a random layout; 'broadcast' gives stride 0."""
    shape = draw(SHAPES) if shape is None else shape
    layout = draw(st.sampled_from(LAYOUTS))
    tdt, ndt = FLOAT_DTYPES[dtype_name]
    if layout == "broadcast" and any(s > 1 for s in shape):
        base_shape = tuple(1 if (i % 2 == 0 and s > 0) else s for i, s in enumerate(shape))
        base = draw(_arrays(base_shape, domain, ndt))
        return np.broadcast_to(base, shape), torch.tensor(base, dtype=tdt).expand(shape)
    arr = draw(_arrays(shape, domain, ndt))
    return arr, laid_out(arr, layout, tdt)


@st.composite
def _arrays(draw, shape, domain, np_dtype):
    lo, hi = DOMAINS[domain]
    # (subnormals excluded: see test_remainder_of_a_tiny_negative_number)
    elements = st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False,
                         width=32)
    arr = draw(hnp.arrays(np_dtype, shape, elements=elements))
    if domain == "nonzero":
        signs = draw(hnp.arrays(np.int8, shape, elements=st.sampled_from([-1, 1])))
        arr = (arr * signs).astype(np_dtype)
    return arr


def check(got, want, dtype_name, tdtype):
    assert got.dtype is tdtype
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.cpu().numpy().astype(np.float64), np.asarray(want, np.float64),
                               equal_nan=True, **TOL[dtype_name])


_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _np_round(x):
    return np.round(x)


def _gelu(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


UNARY = [
    ("neg", torch.neg, np.negative, "any"),
    ("abs", torch.abs, np.abs, "any"),
    ("exp", torch.exp, np.exp, "any"),
    ("exp2", torch.exp2, np.exp2, "any"),
    ("expm1", torch.expm1, np.expm1, "any"),
    ("log", torch.log, np.log, "pos"),
    ("log2", torch.log2, np.log2, "pos"),
    ("log10", torch.log10, np.log10, "pos"),
    ("log1p", torch.log1p, np.log1p, "pos"),
    ("sqrt", torch.sqrt, np.sqrt, "pos"),
    ("rsqrt", torch.rsqrt, lambda x: 1 / np.sqrt(x), "pos"),
    ("square", torch.square, np.square, "any"),
    ("reciprocal", torch.reciprocal, np.reciprocal, "nonzero"),
    ("sin", torch.sin, np.sin, "any"),
    ("cos", torch.cos, np.cos, "any"),
    ("tan", torch.tan, np.tan, "small"),
    ("tanh", torch.tanh, np.tanh, "any"),
    ("sigmoid", torch.sigmoid, lambda x: 1 / (1 + np.exp(-x)), "any"),
    ("asin", torch.asin, np.arcsin, "unit"),
    ("acos", torch.acos, np.arccos, "unit"),
    ("atan", torch.atan, np.arctan, "any"),
    ("sinh", torch.sinh, np.sinh, "any"),
    ("cosh", torch.cosh, np.cosh, "any"),
    ("asinh", torch.asinh, np.arcsinh, "any"),
    ("acosh", torch.acosh, np.arccosh, "gt1"),
    ("atanh", torch.atanh, np.arctanh, "unit"),
    ("erf", torch.erf, _erf, "any"),
    ("erfc", torch.erfc, _erfc, "any"),
    ("relu", torch.relu, lambda x: np.maximum(x, 0), "any"),
    ("floor", torch.floor, np.floor, "any"),
    ("ceil", torch.ceil, np.ceil, "any"),
    ("round", torch.round, _np_round, "any"),
    ("trunc", torch.trunc, np.trunc, "any"),
    ("frac", torch.frac, lambda x: x - np.trunc(x), "any"),
    ("sign", torch.sign, np.sign, "any"),
    ("silu", E.silu, lambda x: x / (1 + np.exp(-x)), "any"),
    ("gelu", E.gelu, _gelu, "any"),
    ("leaky_relu", lambda x: E.leaky_relu(x, 0.1), lambda x: np.where(x > 0, x, 0.1 * x), "any"),
    ("elu", lambda x: E.elu(x, 0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x)), "any"),
    ("softplus", E.softplus, lambda x: np.log1p(np.exp(x)), "any"),
    ("logsigmoid", E.logsigmoid, lambda x: -np.log1p(np.exp(-x)), "any"),
    ("clamp", lambda x: torch.clamp(x, -1.0, 0.5), lambda x: np.clip(x, -1.0, 0.5), "any"),
    ("clamp_min", lambda x: x.clamp(min=0.3), lambda x: np.maximum(x, 0.3), "any"),
    ("clamp_max", lambda x: torch.clamp_max(x, 0.3), lambda x: np.minimum(x, 0.3), "any"),
    ("pow_scalar", lambda x: x ** 3, lambda x: x ** 3, "any"),
    ("pow_half", lambda x: torch.pow(x, 0.5), np.sqrt, "pos"),
    ("pow_neg", lambda x: x ** -1.5, lambda x: x ** -1.5, "pos"),
    ("rpow", lambda x: 2.0 ** x, lambda x: 2.0 ** x, "any"),
    ("mul_scalar", lambda x: x * 2.5, lambda x: x * 2.5, "any"),
    ("rsub_scalar", lambda x: 1 - x, lambda x: 1 - x, "any"),
    ("rdiv_scalar", lambda x: 3 / x, lambda x: 3 / x, "nonzero"),
    ("nan_to_num", torch.nan_to_num, np.nan_to_num, "any"),
]


@pytest.mark.parametrize("name, fn, ref, domain", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@SETTINGS
@given(data=st.data())
def test_unary_ops_match_numpy(default_device, name, fn, ref, domain, dtype_name, data):
    arr, t = data.draw(operand(domain, dtype_name))
    got = fn(t)
    want = ref(arr.astype(np.float64))
    check(got, want, dtype_name, FLOAT_DTYPES[dtype_name][0])
    np.testing.assert_array_equal(t.cpu().numpy(), arr)        # input untouched


BINARY = [
    ("add", torch.add, np.add, "any", "any"),
    ("sub", torch.sub, np.subtract, "any", "any"),
    ("mul", torch.mul, np.multiply, "any", "any"),
    ("div", torch.div, np.divide, "any", "nonzero"),
    ("add_alpha", lambda a, b: torch.add(a, b, alpha=-2), lambda a, b: a - 2 * b, "any", "any"),
    ("pow", torch.pow, np.power, "pos", "any"),
    ("maximum", torch.maximum, np.maximum, "any", "any"),
    ("minimum", torch.minimum, np.minimum, "any", "any"),
    ("fmax", torch.fmax, np.fmax, "any", "any"),
    ("fmin", torch.fmin, np.fmin, "any", "any"),
    ("atan2", torch.atan2, np.arctan2, "any", "any"),
    ("hypot", torch.hypot, np.hypot, "any", "any"),
    ("fmod", torch.fmod, np.fmod, "any", "nonzero"),
    ("remainder", torch.remainder, np.remainder, "any", "nonzero"),
    ("floor_divide", torch.floor_divide, np.floor_divide, "any", "nonzero"),
    ("div_floor", lambda a, b: torch.div(a, b, rounding_mode="floor"), np.floor_divide, "any",
     "nonzero"),
    ("div_trunc", lambda a, b: torch.div(a, b, rounding_mode="trunc"),
     lambda a, b: np.trunc(a / b), "any", "nonzero"),
    ("copysign", torch.copysign, np.copysign, "any", "any"),
    ("xlogy", torch.xlogy, lambda a, b: a * np.log(b), "any", "pos"),
    ("lerp", lambda a, b: torch.lerp(a, b, 0.25), lambda a, b: a + 0.25 * (b - a), "any", "any"),
    ("addcmul", lambda a, b: torch.addcmul(a, a, b, value=2), lambda a, b: a + 2 * a * b, "any",
     "any"),
    ("where", lambda a, b: torch.where(a > b, a, b), lambda a, b: np.where(a > b, a, b), "any",
     "any"),
    ("clamp_tensor", lambda a, b: torch.clamp(a, min=b), lambda a, b: np.maximum(a, b), "any",
     "any"),
]


@pytest.mark.parametrize("name, fn, ref, da, db", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@SETTINGS
@given(data=st.data())
def test_binary_ops_broadcast_and_match_numpy(default_device, name, fn, ref, da, db, dtype_name, data):
    shape_a = data.draw(SHAPES)
    shape_b = data.draw(hnp.broadcastable_shapes(shape_a, min_dims=0, max_dims=3, min_side=0,
                                                  max_side=4))
    a, ta = data.draw(operand(da, dtype_name, shape_a))
    b, tb = data.draw(operand(db, dtype_name, shape_b))
    if data.draw(st.booleans()):
        a, b, ta, tb = b, a, tb, ta                           # either side may broadcast
        if db != da:                                         # keep each value in its domain
            a, b, ta, tb = b, a, tb, ta
    got = fn(ta, tb)
    want = ref(a.astype(np.float64), b.astype(np.float64))
    if name in ("floor_divide", "div_floor", "remainder", "fmod", "div_trunc") and \
            dtype_name == "float32":
        # quotients near an integer may round differently in float32
        want32 = ref(a, b)
        check(got, want32, dtype_name, FLOAT_DTYPES[dtype_name][0])
        return
    check(got, want, dtype_name, FLOAT_DTYPES[dtype_name][0])


@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "pow", "radd", "rsub", "rmul",
                                "rtruediv"])
@SETTINGS
@given(data=st.data())
def test_operators_with_python_scalars(default_device, op, data):
    arr, t = data.draw(operand("pos", "float32"))
    scalar = data.draw(st.sampled_from([2, 0.5, -1.5, True]))
    import operator
    if op in ("sub", "rsub") and scalar is True:
        # PyTorch refuses subtraction with a bool operand, a Python bool included.
        with pytest.raises(RuntimeError, match="Subtraction"):
            t - scalar if op == "sub" else scalar - t
        return
    if op.startswith("r"):
        f = getattr(operator, op[1:])
        got, want = f(scalar, t), f(float(scalar), arr.astype(np.float64))
    else:
        f = getattr(operator, op)
        got, want = f(t, scalar), f(arr.astype(np.float64), float(scalar))
    check(got, want, "float32", torch.float32)


COMPARE = [("eq", torch.eq, np.equal), ("ne", torch.ne, np.not_equal), ("lt", torch.lt, np.less),
           ("le", torch.le, np.less_equal), ("gt", torch.gt, np.greater),
           ("ge", torch.ge, np.greater_equal), ("logical_and", torch.logical_and, np.logical_and),
           ("logical_or", torch.logical_or, np.logical_or),
           ("logical_xor", torch.logical_xor, np.logical_xor)]


@pytest.mark.parametrize("name, fn, ref", COMPARE, ids=[c[0] for c in COMPARE])
@SETTINGS
@given(data=st.data())
def test_comparisons_and_logic_give_bool(default_device, name, fn, ref, data):
    shape_a = data.draw(SHAPES)
    shape_b = data.draw(hnp.broadcastable_shapes(shape_a, max_dims=3, max_side=4))
    ints = st.integers(-2, 2)
    a = data.draw(hnp.arrays(np.int64, shape_a, elements=ints)).astype(np.float32)
    b = data.draw(hnp.arrays(np.int64, shape_b, elements=ints))
    ta = laid_out(a, data.draw(st.sampled_from(LAYOUTS)), torch.float32)
    got = fn(ta, torch.tensor(b))                   # mixed float32 / int64 operands
    assert got.dtype is torch.bool
    np.testing.assert_array_equal(got.cpu().numpy(), ref(a, b))


def test_comparisons_with_nan_and_scalars(default_device):
    a = torch.tensor([1.0, float("nan")])
    assert (a == a).tolist() == [True, False] and (a != a).tolist() == [False, True]
    assert (a < 2).tolist() == [True, False] and (2 > a).tolist() == [True, False]
    assert (torch.tensor([1, 2]) == 1.0).tolist() == [True, False]
    assert torch.logical_not(torch.tensor([1.0, 0.0])).tolist() == [False, True]
    with pytest.raises(TypeError):
        torch.eq(torch.ones(2), "a")


def test_isnan_isinf_isfinite_nan_to_num(default_device):
    x = torch.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    assert x.isnan().tolist() == [False, True, False, False]
    assert x.isinf().tolist() == [False, False, True, True]
    assert x.isfinite().tolist() == [True, False, False, False]
    assert torch.tensor([1, 2]).isnan().tolist() == [False, False]
    assert torch.tensor([1, 2]).isfinite().tolist() == [True, True]
    big = float(np.finfo(np.float32).max)
    assert x.nan_to_num().tolist() == [1.0, 0.0, big, -big]
    assert x.nan_to_num(0.5, 5.0, -5.0).tolist() == [1.0, 0.5, 5.0, -5.0]


def test_where_variants(default_device):
    c = torch.tensor([True, False])
    assert torch.where(c, torch.tensor([1, 2]), torch.tensor([1.5, 2.5])).tolist() == [1.0, 2.5]
    assert torch.where(c, 1, 0).dtype is torch.int64
    assert torch.where(c, 1.0, 0).dtype is torch.float32
    inf_nan = torch.where(c, torch.tensor([1.0, float("inf")]),
                          torch.tensor([float("nan"), 2.0]))
    assert inf_nan.tolist() == [1.0, 2.0]                     # the unused branch never leaks
    assert torch.where(torch.tensor([[True], [False]]), torch.ones(3), torch.zeros(2, 1)) \
        .shape == (2, 3)
    assert torch.ones(2).where(c, 5.0).tolist() == [1.0, 5.0]
    with pytest.raises(RuntimeError, match="boolean tensor.*Long"):
        torch.where(torch.tensor([1, 0]), 1.0, 0.0)


def test_clamp_variants(default_device):
    x = torch.tensor([1.0, 5.0, float("nan")])
    assert x.clamp(2, 4)[:2].tolist() == [2.0, 4.0] and math.isnan(x.clamp(2, 4)[2].item())
    assert x.clamp(3, 2)[:2].tolist() == [2.0, 2.0]               # min > max: everything is max
    assert torch.tensor([1, 5]).clamp(2, 4).tolist() == [2, 4]
    assert torch.tensor([1, 5]).clamp(2, 4).dtype is torch.int64
    assert torch.tensor([1, 5]).clamp(min=2).dtype is torch.int64
    assert torch.tensor([1, 5]).clamp(0.5, 3).tolist() == [1.0, 3.0]
    assert torch.tensor([1, 5]).clamp(0.5, 3).dtype is torch.float32
    lo, hi = torch.tensor([2.0, 0.0, 0.0]), torch.tensor([3.0, 4.0, 1.0])
    assert torch.clamp(torch.tensor([1.0, 5.0, 0.5]), lo, hi).tolist() == [2.0, 4.0, 0.5]
    assert torch.clip(torch.tensor([1.0, 5.0]), 2, 3).tolist() == [2.0, 3.0]
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        torch.tensor([1.0]).clamp()


# ---------------------------------------------------------------------------
# integer and bool dtypes
# ---------------------------------------------------------------------------
INT_BINARY = [
    ("add", torch.add, np.add), ("sub", torch.sub, np.subtract), ("mul", torch.mul, np.multiply),
    ("floor_divide", torch.floor_divide, np.floor_divide),
    ("remainder", torch.remainder, np.remainder), ("fmod", torch.fmod, np.fmod),
    ("maximum", torch.maximum, np.maximum), ("minimum", torch.minimum, np.minimum),
    ("bitwise_and", torch.bitwise_and, np.bitwise_and), ("bitwise_or", torch.bitwise_or,
                                                         np.bitwise_or),
    ("bitwise_xor", torch.bitwise_xor, np.bitwise_xor),
    ("div_trunc", lambda a, b: torch.div(a, b, rounding_mode="trunc"),
     lambda a, b: np.trunc(a / b).astype(np.int64)),
]


@pytest.mark.parametrize("name, fn, ref", INT_BINARY, ids=[i[0] for i in INT_BINARY])
@SETTINGS
@given(data=st.data())
def test_int64_ops_are_exact(default_device, name, fn, ref, data):
    shape = data.draw(SHAPES)
    a = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(-50, 50)))
    b = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(1, 9) | st.integers(-9, -1)))
    got = fn(torch.tensor(a), torch.tensor(b))
    assert got.dtype is torch.int64
    np.testing.assert_array_equal(got.cpu().numpy(), ref(a, b))


def test_int64_ops_beyond_float_precision(default_device):
    big = 2 ** 53 + 1
    t = torch.tensor([big, -big])
    assert (t + 2).tolist() == [big + 2, -big + 2]
    assert (t * 1).tolist() == [big, -big]
    assert (t // 1).tolist() == [big, -big]
    assert t.abs().tolist() == [big, big]
    assert torch.maximum(t, torch.tensor([0, 0])).tolist() == [big, 0]


@pytest.mark.parametrize("expr, expected, dtype", [
    ("torch.tensor([-7, 7, -7, 7]) // torch.tensor([2, 2, -2, -2])", [-4, 3, 3, -4], "int64"),
    ("torch.tensor([-7, 7, -7, 7]) % torch.tensor([2, 2, -2, -2])", [1, 1, -1, -1], "int64"),
    ("torch.fmod(torch.tensor([-7, 7, -7, 7]), torch.tensor([2, 2, -2, -2]))", [-1, 1, -1, 1],
     "int64"),
    ("torch.tensor([-7, 7]).div(2, rounding_mode='trunc')", [-3, 3], "int64"),
    ("torch.tensor([-7, 7]).div(2, rounding_mode='floor')", [-4, 3], "int64"),
    ("torch.tensor([3, 4]) / 2", [1.5, 2.0], "float32"),
    ("torch.tensor([2, 3]) ** 2", [4, 9], "int64"),
    ("2 ** torch.tensor([2, 3])", [4, 8], "int64"),
    ("torch.tensor([2, 3]) ** 0.5", [2 ** 0.5, 3 ** 0.5], "float32"),
    ("torch.tensor([3, 2, 1, -1, -1]) ** torch.tensor([2, -1, -3, -3, -2])", [9, 0, 1, -1, 1],
     "int64"),
    ("torch.tensor([1, -2]).sign()", [1, -1], "int64"),
    ("torch.tensor([1, -2]).abs()", [1, 2], "int64"),
    ("torch.tensor([1, -2]).neg()", [-1, 2], "int64"),
    ("torch.tensor([1, -2]).relu()", [1, 0], "int64"),
    ("torch.tensor([1, -2]).square()", [1, 4], "int64"),
    ("torch.tensor([1, 2]).floor()", [1, 2], "int64"),
    ("torch.tensor([1, 2]).round()", [1, 2], "int64"),
    ("torch.tensor([4, 9]).sqrt()", [2.0, 3.0], "float32"),
    ("torch.tensor([0, 1]).exp()", [1.0, math.e], "float32"),
    ("~torch.tensor([1, 2])", [-2, -3], "int64"),
    ("~torch.tensor([True, False])", [False, True], "bool"),
    ("torch.tensor([6, 3]) & torch.tensor([3, 1])", [2, 1], "int64"),
    ("torch.tensor([6, 3]) | 1", [7, 3], "int64"),
    ("torch.tensor([True, False]) & torch.tensor([True, True])", [True, False], "bool"),
    ("torch.tensor([True, False]) + torch.tensor([True, True])", [True, True], "bool"),
    ("torch.tensor([True, False]) * torch.tensor([True, True])", [True, False], "bool"),
    ("torch.tensor([True, False]) + 1", [2, 1], "int64"),
    ("torch.tensor([True, False]) * 1.5", [1.5, 0.0], "float32"),
    ("torch.tensor([100], dtype=torch.int8) * 3", [44], "int8"),
    ("torch.tensor([250], dtype=torch.uint8) + 10", [4], "uint8"),
    ("torch.tensor([1, 2], dtype=torch.int32) * 2", [2, 4], "int32"),
    ("torch.tensor([1, 2], dtype=torch.int32) * 2.5", [2.5, 5.0], "float32"),
    ("torch.tensor([1, 2], dtype=torch.int16) / torch.tensor([2, 2], dtype=torch.int16)",
     [0.5, 1.0], "float32"),
    ("torch.tensor([1, 2], dtype=torch.int32) + torch.tensor([1, 2])", [2, 4], "int64"),
    ("torch.tensor([1, 2]).add(torch.tensor([1, 2]), alpha=2)", [3, 6], "int64"),
])
def test_integer_and_bool_semantics(default_device, expr, expected, dtype):
    got = eval(expr)
    assert got.dtype is getattr(torch, dtype)
    np.testing.assert_allclose(got.tolist(), expected, rtol=1e-6)


def test_uint8_subtraction_wraps_around(default_device):
    assert (torch.tensor([1, 2], dtype=torch.uint8) - 3).tolist() == [254, 255]


def test_sign_of_nan_and_negative_zero(default_device):
    assert torch.tensor([float("nan"), -0.0]).sign().tolist() == [0.0, 0.0]
    assert math.copysign(1.0, torch.tensor([-0.0]).sign().item()) == 1.0


def test_remainder_of_a_tiny_negative_number(default_device):
    assert torch.remainder(torch.tensor([-1e-45]), 2.0).item() == 2.0


@pytest.mark.parametrize("expr, exc, match", [
    ("torch.tensor([1, 2]) // 0", RuntimeError, "ZeroDivisionError"),
    ("torch.tensor([1, 2]) // torch.tensor([1, 0])", RuntimeError, "ZeroDivisionError"),
    ("torch.tensor([1, 2]) % torch.tensor([0, 1])", RuntimeError, "ZeroDivisionError"),
    ("torch.tensor([1, 2]).fmod(0)", RuntimeError, "ZeroDivisionError"),
    ("torch.tensor([2, 3]) ** -1", RuntimeError, "negative integer powers"),
    ("torch.tensor([True]) - torch.tensor([True])", RuntimeError, "two bool tensors"),
    ("-torch.tensor([True, False])", RuntimeError, "Negation"),
    ("torch.tensor([True]).abs()", NotImplementedError, "Bool"),
    ("torch.tensor([1.5]) & 1", NotImplementedError, "bitwise_and_cpu.*Float"),
    ("torch.bitwise_not(torch.tensor([1.5]))", NotImplementedError, "Float"),
    ("torch.tensor([1, 2]).frac()", NotImplementedError, "Long"),
    ("torch.tensor([1, 2]).add(torch.tensor([1, 2]), alpha=2.5)", RuntimeError, "alpha"),
    ("torch.tensor([1.0, 2.0]) + 'a'", TypeError, None),
    ("torch.tensor([1.0, 2.0]) + None", TypeError, None),
    ("torch.add(torch.ones(2), 'a')", TypeError, "must be Tensor"),
    ("torch.pow(2, 3)", TypeError, None),
])
def test_error_cases(default_device, expr, exc, match):
    with pytest.raises(exc, match=match):
        eval(expr)


def test_float_division_by_zero_follows_ieee(default_device):
    assert (torch.tensor([1.0, -2.0]) / 0).tolist() == [math.inf, -math.inf]
    assert math.isnan((torch.tensor([0.0]) / 0).item())
    assert (torch.tensor([1, 2]) / torch.tensor([0, 0])).tolist() == [math.inf, math.inf]
    assert math.isnan(torch.tensor([1.0]).fmod(0).item())
    assert torch.tensor([0.0]).log().item() == -math.inf
    assert math.isnan(torch.tensor([-1.0]).sqrt().item())
    assert torch.tensor([0.0]).pow(-1.0).item() == math.inf
    assert (torch.tensor([-1000.0, 1000.0]).sigmoid()).tolist() == [0.0, 1.0]
    assert torch.tensor([1e-10], dtype=torch.float64).log1p().item() == pytest.approx(1e-10)


# ---------------------------------------------------------------------------
# float16
# ---------------------------------------------------------------------------
def test_float16_ops_keep_dtype_and_round_like_numpy(default_device):
    a = np.array([0.1, 1.5, -2.25, 100.0], dtype=np.float16)
    b = np.array([0.2, 2.0, 3.0, 0.5], dtype=np.float16)
    ta, tb = torch.tensor(a), torch.tensor(b)
    with np.errstate(over="ignore"):
        expected_exp = np.exp(a.astype(np.float32)).astype(np.float16)
    for got, want in [(ta + tb, a + b), (ta * tb, a * b), (ta / tb, a / b), (ta - tb, a - b),
                      (ta.exp(), expected_exp),
                      (-ta, -a), (ta.abs(), np.abs(a)), (torch.maximum(ta, tb), np.maximum(a, b))]:
        assert got.dtype is torch.float16
        np.testing.assert_allclose(got.cpu().numpy().astype(np.float32), want.astype(np.float32),
                                   rtol=1e-3)
    assert (ta < tb).dtype is torch.bool
    assert (ta + 1.5).dtype is torch.float16
    assert (ta + torch.tensor([1.0])).dtype is torch.float32
    assert (torch.tensor([60000.0], dtype=torch.float16) * 2).item() == math.inf


# ---------------------------------------------------------------------------
# out= and in-place forms
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("fn, args", [
    (torch.add, (torch.ones(2, 3), torch.arange(3.0))), (torch.mul, (torch.ones(2, 3), 2.0)),
    (torch.sub, (torch.ones(2, 3), torch.ones(3))), (torch.div, (torch.ones(2, 3), 4.0)),
    (torch.exp, (torch.zeros(2, 3),)), (torch.sqrt, (torch.full((2, 3), 4.0),)),
    (torch.maximum, (torch.ones(2, 3), torch.zeros(3))), (torch.pow, (torch.ones(2, 3), 2.0)),
    (torch.eq, (torch.ones(2, 3), torch.ones(3))),
])
def test_out_argument_writes_in_place(default_device, fn, args):
    want = fn(*args)
    out = torch.empty(2, 3, dtype=want.dtype)
    ptr = out.data_ptr()
    assert fn(*args, out=out) is out
    assert out.data_ptr() == ptr and out.tolist() == want.tolist()


def test_out_argument_resizing_and_casting(default_device):
    out = torch.zeros(0)
    torch.add(torch.ones(2), 1, out=out)
    assert out.tolist() == [2.0, 2.0]
    out = torch.zeros(3)
    with pytest.warns(UserWarning, match="resized"):
        torch.add(torch.ones(2), 1, out=out)
    assert out.shape == (2,)
    out = torch.zeros(2)
    torch.add(torch.ones(2, dtype=torch.int64), 1, out=out)         # int result into float: ok
    assert out.tolist() == [2.0, 2.0]
    out64 = torch.zeros(2, dtype=torch.float64)
    torch.exp(torch.ones(2), out=out64)
    assert out64.dtype is torch.float64 and out64[0].item() == pytest.approx(math.e, rel=1e-6)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        torch.add(torch.ones(2), torch.ones(2), out=torch.zeros(2, dtype=torch.int64))
    view = torch.zeros(2, 4)[:, ::2]
    torch.mul(torch.ones(2, 2), 3.0, out=view)
    assert view._base is not None and view.tolist() == [[3.0, 3.0], [3.0, 3.0]]


@pytest.mark.parametrize("method, args, ref", [
    ("add_", (torch.arange(2.0),), lambda a: a + np.arange(2.0)),
    ("sub_", (1.5,), lambda a: a - 1.5), ("mul_", (torch.full((2, 1), 2.0),), lambda a: a * 2),
    ("div_", (4,), lambda a: a / 4), ("pow_", (2,), lambda a: a ** 2),
    ("exp_", (), np.exp), ("sqrt_", (), np.sqrt), ("neg_", (), np.negative),
    ("clamp_", (0.5, 1.5), lambda a: np.clip(a, 0.5, 1.5)), ("abs_", (), np.abs),
    ("sigmoid_", (), lambda a: 1 / (1 + np.exp(-a))), ("floor_", (), np.floor),
    ("fill_", (7,), lambda a: np.full_like(a, 7)), ("zero_", (), np.zeros_like),
])
def test_in_place_methods_through_views(default_device, method, args, ref):
    base = torch.arange(1.0, 13.0).view(3, 4)
    view = base[1:, ::2]                                  # strided view into base
    expected = base.cpu().numpy().copy()
    expected[1:, ::2] = ref(expected[1:, ::2].astype(np.float64))
    ptr, version = view.data_ptr(), view._version
    args = [a.to(default_device) if isinstance(a, torch.Tensor) else a for a in args]
    assert getattr(view, method)(*args) is view
    assert view.data_ptr() == ptr and view._version > version
    np.testing.assert_allclose(base.cpu().numpy(), expected, rtol=1e-6)


def test_in_place_operators_keep_identity(default_device):
    a = torch.ones(2, 3)
    b = a
    a += 1
    a *= torch.arange(3.0)
    a -= 0.5
    a /= 2
    assert a is b and a.tolist() == [[-0.25, 0.75, 1.75]] * 2
    i = torch.tensor([7, 8])
    i //= 2
    i %= 3
    assert i.tolist() == [0, 1]
    m = torch.tensor([True, False])
    m &= torch.tensor([True, True])
    m |= torch.tensor([False, True])
    assert m.tolist() == [True, True]


def test_in_place_errors(default_device):
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        torch.tensor([1, 2]).add_(1.5)
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.tensor([1, 2]).div_(2)
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.tensor([1, 2]).exp_()
    with pytest.raises(RuntimeError, match="Long can't be cast to the desired output type Bool"):
        torch.tensor([True]).add_(1)
    with pytest.raises(RuntimeError, match=r"output with shape \[2\] doesn't match the "
                                           r"broadcast shape \[2, 2\]"):
        torch.tensor([1.0, 2.0]).add_(torch.ones(2, 2))
    a = torch.tensor([1, 2], dtype=torch.int32)
    a.add_(torch.tensor([1, 2]))                         # int64 into int32 is allowed
    assert a.dtype is torch.int32 and a.tolist() == [2, 4]


# ---------------------------------------------------------------------------
# broadcasting errors
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("sa, sb, a, b, dim", [
    ((2, 3), (2, 4), 3, 4, 1), ((2, 3), (3, 2), 3, 2, 1), ((2, 3), (4,), 3, 4, 1),
    ((2, 5, 3), (4, 3), 5, 4, 1),
])
def test_broadcast_error_names_the_sizes(default_device, sa, sb, a, b, dim):
    with pytest.raises(RuntimeError, match=rf"size of tensor a \({a}\) must match the size of "
                                           rf"tensor b \({b}\) at non-singleton dimension {dim}"):
        torch.zeros(sa) + torch.zeros(sb)


def test_broadcast_shapes_function(default_device):
    assert tuple(torch.broadcast_shapes((2, 1), (3,))) == (2, 3)
    assert tuple(torch.broadcast_shapes((1,), (4, 1, 1), ())) == (4, 1, 1)
    with pytest.raises(RuntimeError):
        torch.broadcast_shapes((2, 1), (3, 3))


def test_binary_ops_do_not_warn(default_device):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (torch.ones(2, 3) * torch.arange(3.0) + 1).exp()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fmod_and_remainder_when_the_quotient_rounds_up(default_device, dtype):
    # float32(3) / float32(0.3) rounds to exactly 10.0, but 0.3 is slightly
    # more than 0.3: the true quotient is 9 and fmod is about 0.3, not -1e-7.
    x = np.array([3.0, -3.0, 7.5], dtype)
    y = np.array([0.3, 0.3, -0.1], dtype)
    x, y = x.astype(np.float32).astype(dtype), y.astype(np.float32).astype(dtype)
    np.testing.assert_allclose(torch.fmod(torch.tensor(x), torch.tensor(y)).cpu().numpy(),
                               np.fmod(x, y), rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(torch.remainder(torch.tensor(x), torch.tensor(y)).cpu().numpy(),
                               np.remainder(x, y), rtol=1e-6, atol=1e-12)

# ---------------------------------------------------------------------------
# On every device (the ``device`` fixture: cpu, and cuda on Numba's simulator
# without a GPU; tensors stay tiny there).
# ---------------------------------------------------------------------------
from device_checks import check as check_on_device  # noqa: E402
from device_checks import on  # noqa: E402
from minitorch.nn import functional as F  # noqa: E402


def test_elementwise_broadcasting_and_strides_on_every_device(device):
    r = np.random.default_rng(1)
    a = r.standard_normal((3, 4)).astype(np.float32)
    b = r.standard_normal(4).astype(np.float32)
    x, y = on(a, device), on(b, device)
    check_on_device(x + y, a + b, device)                          # broadcast row (stride 0)
    check_on_device(x.t() * 2 - 1, a.T * 2 - 1, device)            # transposed (strided kernel)
    check_on_device(x[:, ::2] / x[:, 1::2], a[:, ::2] / a[:, 1::2], device)
    check_on_device(x.t()[1:] + y[:3, None], a.T[1:] + b[:3, None], device)
    check_on_device(2 - y, 2 - b, device)                          # reversed op, scalar
    check_on_device(x.exp().sigmoid(), 1 / (1 + np.exp(-np.exp(a))), device, rtol=1e-5)
    check_on_device(x.t().tanh(), np.tanh(a.T), device, rtol=1e-5)
    check_on_device(x.abs() ** 0.5, np.abs(a) ** 0.5, device, rtol=1e-5)
    check_on_device(torch.maximum(x, y), np.maximum(a, b), device)
    check_on_device(x.clamp(-0.5, 0.5), np.clip(a, -0.5, 0.5), device)
    check_on_device(F.relu(x.t()), np.maximum(a.T, 0), device)
    check_on_device(torch.atan2(x, y), np.arctan2(a, b), device, rtol=1e-5)
    check_on_device(x > y, a > b, device)
    check_on_device((x > 0) & (y < 0), (a > 0) & (b < 0), device)
    check_on_device(torch.where(x > 0, x, y), np.where(a > 0, a, b), device)
    check_on_device(torch.where(x.t() > 0, 1.0, 0.0), np.where(a.T > 0, 1.0, 0.0).astype(np.float32),
          device)
    i = on(np.array([[7, -7, 9], [3, 4, -5]]), device)
    check_on_device(i // 2, np.array([[3, -4, 4], [1, 2, -3]]), device)
    check_on_device(i % 3, np.array([[7, -7, 9], [3, 4, -5]]) % 3, device)
    check_on_device(-i.t(), -np.array([[7, -7, 9], [3, 4, -5]]).T, device)
    check_on_device(i * 2.5, np.array([[7, -7, 9], [3, 4, -5]]) * np.float32(2.5), device)
    check_on_device(i.float() / 2, np.array([[3.5, -3.5, 4.5], [1.5, 2.0, -2.5]], np.float32), device)
    check_on_device(x.half().float(), a.astype(np.float16).astype(np.float32), device)
    check_on_device(x.to(torch.int32), a.astype(np.int32), device)
    check_on_device(x.bool(), a != 0, device)
    nan = on(np.array([np.nan, 1.0, -np.inf], np.float32), device)
    check_on_device(nan.isnan(), [True, False, False], device)
    check_on_device(torch.nan_to_num(nan), np.nan_to_num(np.array([np.nan, 1.0, -np.inf], np.float32)),
          device)

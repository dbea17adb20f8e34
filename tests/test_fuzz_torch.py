"""Differential fuzzing against PyTorch: random short programs must give PyTorch's answers.

PyTorch is minitorch's specification (see SPEC.md), so the strongest test of
"no silent wrong answers" is to run the *same* program on both libraries and
compare everything a user can observe.  Hypothesis writes the programs:

* 1 to 3 **input tensors**: dtype float32/float64/float16/int64/int32/bool,
  shape from 0-d scalars and empty tensors to 3-d, laid out contiguous,
  transposed, strided (a ``[..., ::2]`` view) or expanded (stride 0), with
  values mixed from ordinary numbers and special ones (NaN, +-inf, -0.0,
  magnitudes beyond int64's range); float inputs may require grad;
* 2 to 5 **steps**, each one op from the table :data:`OPS` applied to tensors
  made so far (inputs or earlier results), with parameters (dims, keepdim,
  scalars, indices) drawn for the shapes at hand, so most steps are valid
  and some are mistakes that must raise;
* a **backward** of ``sum()`` of the last result that requires grad.

After each step both results are compared (:func:`check_same`): shape, dtype,
values (NaN-aware, with a tolerance for the dtype), ``requires_grad`` and
``is_leaf``, and for view ops the strides and storage offset.  If PyTorch
raises, minitorch must raise an exception of the same type; if PyTorch does
not, minitorch must not.  At the end the gradients of the inputs are compared.

The example budget comes from the hypothesis profile (tests/conftest.py):
``ci`` (the default, derandomized) runs 250 programs, about 11 s on one
core; ``pytest -n0 --hypothesis-profile=long tests/test_fuzz_torch.py`` runs
5000.  A failing program prints as the list of steps hypothesis drew
(``note``), which reads as PyTorch code.

Deliberate differences (docs/differences.md) are left out of the comparison
where they would show; each exclusion says why.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, note, settings, strategies as st

import minitorch

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.ops,
              pytest.mark.cpu_only("random programs compared with PyTorch's CPU build")]

LIBS = (torch, minitorch)
DTYPES = ["float32", "float64", "float16", "int64", "int32", "bool"]
FLOATS = {"float32", "float64", "float16"}
SHAPES = [(), (0,), (1,), (3,), (4,), (2, 3), (3, 1), (1, 3), (3, 3), (2, 0), (2, 3, 2),
          (2, 1, 3)]
LAYOUTS = ["contiguous", "contiguous", "transposed", "strided", "expanded"]
SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.25, -100.0, 1e-3,
                  math.nan, math.inf, -math.inf, 1e20, -1e20, 3e19, 1e30]
SPECIAL_INTS = [0, 1, -1, 2, -3, 5, 7, 100, -100, 2 ** 31 - 1, -2 ** 31, 2 ** 40, 2 ** 62]
#: relative tolerance by dtype (values of a float dtype also get an absolute one, see close()).
RTOL = {"float16": 2e-2, "float32": 2e-5, "float64": 1e-10}


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------
def _values(draw, dtype: str, n: int) -> list:
    if dtype == "bool":
        return draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if dtype in FLOATS:
        ordinary = st.floats(-5, 5, allow_nan=False).map(lambda v: float(np.float16(v)))
        special = st.sampled_from(SPECIAL_FLOATS)
        return draw(st.lists(st.one_of(ordinary, ordinary, special), min_size=n, max_size=n))
    big = [v for v in SPECIAL_INTS if dtype == "int64" or -2 ** 31 <= v < 2 ** 31]
    return draw(st.lists(st.one_of(st.integers(-6, 6), st.sampled_from(big)),
                         min_size=n, max_size=n))


@st.composite
def input_spec(draw) -> dict:
    """What one input tensor is: dtype, shape, layout, values, requires_grad."""
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(st.sampled_from(SHAPES))
    layout = draw(st.sampled_from(LAYOUTS))
    if layout in ("transposed", "expanded") and len(shape) < 2 or layout == "strided" and not shape:
        layout = "contiguous"
    if layout == "expanded":
        base_shape = tuple(1 if i == 0 and s > 0 else s for i, s in enumerate(shape))
    elif layout == "transposed":
        base_shape = shape[::-1]
    elif layout == "strided":
        base_shape = shape[:-1] + (2 * shape[-1],)
    else:
        base_shape = shape
    values = _values(draw, dtype, int(np.prod(base_shape, dtype=np.int64)))
    grad = dtype in FLOATS and draw(st.booleans())
    return dict(dtype=dtype, shape=shape, layout=layout, base_shape=base_shape,
                values=values, requires_grad=grad)


def make_input(L, spec: dict):
    """The tensor ``spec`` describes, in library ``L``; returns (tensor, its leaf)."""
    dt = getattr(L, spec["dtype"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")    # 1e20 in float16 overflows to inf, as intended
        values = np.array(spec["values"], dtype=spec["dtype"]).reshape(spec["base_shape"])
    leaf = L.tensor(values, dtype=dt)
    if spec["requires_grad"]:
        leaf.requires_grad_(True)
    shape, layout = spec["shape"], spec["layout"]
    if layout == "expanded":
        x = leaf.expand(*shape)
    elif layout == "transposed":
        x = leaf.permute(*range(len(shape) - 1, -1, -1))
    elif layout == "strided":
        x = leaf[..., ::2]
    else:
        x = leaf
    return x, leaf


# ---------------------------------------------------------------------------
# The ops: each entry draws its parameters for the torch tensors it is given
# and returns (text, fn, is_view) where fn(L, *tensors) runs the op in library L.
# ---------------------------------------------------------------------------
UNARY = ["abs", "neg", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "floor",
         "ceil", "round", "trunc", "frac", "sign", "reciprocal", "rsqrt", "square", "log1p",
         "expm1", "erf", "atan", "exp2", "log2", "isnan", "isinf", "isfinite", "logical_not",
         "nan_to_num", "bitwise_not"]
BINARY_FUNCS = ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow",
                "maximum", "minimum", "fmax", "fmin", "atan2", "eq", "ne", "lt", "ge",
                "logical_and", "logical_xor", "copysign", "hypot", "xlogy", "bitwise_and"]
BINARY_OPERATORS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
                    "/": lambda a, b: a / b, "//": lambda a, b: a // b,
                    "%": lambda a, b: a % b, "**": lambda a, b: a ** b,
                    "r-": lambda a, b: b - a, "r/": lambda a, b: b / a,
                    "r**": lambda a, b: b ** a, "<": lambda a, b: a < b,
                    "==": lambda a, b: a == b, "&": lambda a, b: a & b}
REDUCTIONS = ["sum", "prod", "mean", "amax", "amin", "nansum", "logsumexp", "all", "any",
              "std", "var", "argmax", "max", "min", "count_nonzero"]
CASTS = ["float32", "float64", "float16", "int64", "int32", "bool"]


def _scalar(draw):
    return draw(st.one_of(st.integers(-3, 3), st.sampled_from([0.5, -1.5, 2.0, 0.0, -0.0,
                                                                math.inf, math.nan, 1e20]),
                          st.booleans()))


def _no_bool(value):
    """PyTorch's gradient of ``x ** False`` is NaN at x == 0 (a bool exponent escapes its
    ``exponent == 0`` test); minitorch treats False as 0.  Fuzzed as ints instead."""
    return int(value) if isinstance(value, bool) else value


def _dim(draw, t, allow_none=False, out_of_range=True):
    nd = t.dim()
    lo, hi = (-max(nd, 1), max(nd, 1) - 1)
    choices = st.integers(lo - out_of_range, hi + out_of_range)
    return draw(st.one_of(st.none(), choices)) if allow_none else draw(choices)


def op_unary(draw, t):
    name = draw(st.sampled_from(UNARY))
    return f"torch.{name}(x)", lambda L, x: getattr(L, name)(x), False


def op_binary(draw, t, u):
    use_scalar = draw(st.integers(0, 3)) == 0
    other = _scalar(draw) if use_scalar else None
    if draw(st.booleans()):
        name = draw(st.sampled_from(BINARY_FUNCS))
        if name == "pow":
            other = _no_bool(other)
        if use_scalar:
            return (f"torch.{name}(x, {other!r})", lambda L, x, y: getattr(L, name)(x, other),
                    False)
        return f"torch.{name}(x, y)", lambda L, x, y: getattr(L, name)(x, y), False
    sym = draw(st.sampled_from(sorted(BINARY_OPERATORS)))
    f = BINARY_OPERATORS[sym]
    if sym == "**":
        other = _no_bool(other)
    if use_scalar:
        return f"x {sym} {other!r}", lambda L, x, y: f(x, other), False
    return f"x {sym} y", lambda L, x, y: f(x, y), False


def op_clamp(draw, t):
    lo = draw(st.sampled_from([None, -1, 0.5, -math.inf, 0]))
    hi = draw(st.sampled_from([None, 2, 1.5, math.nan, -2]))
    return f"torch.clamp(x, {lo}, {hi})", lambda L, x: L.clamp(x, lo, hi), False


def op_where(draw, t, u):
    return "torch.where(x > 0, x, y)", lambda L, x, y: L.where(x > 0, x, y), False


def op_ternary(draw, t, u):
    name = draw(st.sampled_from(["addcmul", "addcdiv", "lerp"]))
    value = draw(st.sampled_from([1, 2, 0.5, -1]))
    if name == "lerp":
        return f"torch.lerp(x, y, {value})", lambda L, x, y: L.lerp(x, y, float(value)), False
    return (f"torch.{name}(x, y, x, value={value})",
            lambda L, x, y: getattr(L, name)(x, y, x, value=value), False)


def op_reduce(draw, t):
    name = draw(st.sampled_from(REDUCTIONS))
    dim = _dim(draw, t, allow_none=True)
    keepdim = draw(st.booleans())
    if name in ("max", "min") and dim is None:
        return f"x.{name}()", lambda L, x: getattr(x, name)(), False
    if name == "count_nonzero":
        return f"x.count_nonzero({dim})", lambda L, x: x.count_nonzero(dim), False
    if dim is None and name in ("logsumexp",):
        dim = 0
    if dim is None and name in ("amax", "amin"):
        dim = ()
    if name in ("sum", "prod") and draw(st.integers(0, 3)) == 0:
        dt = draw(st.sampled_from(["int64", "float64", "float32"]))
        if dim is None:
            return (f"x.{name}(dtype=torch.{dt})",
                    lambda L, x: getattr(x, name)(dtype=getattr(L, dt)), False)
        return (f"x.{name}({dim}, keepdim={keepdim}, dtype=torch.{dt})",
                lambda L, x: getattr(x, name)(dim, keepdim=keepdim, dtype=getattr(L, dt)), False)
    if dim is None and name in ("sum", "mean", "nansum", "std", "var", "all", "any", "argmax",
                                "prod"):
        return f"x.{name}()", lambda L, x: getattr(x, name)(), False
    return (f"x.{name}({dim!r}, keepdim={keepdim})",
            lambda L, x: getattr(x, name)(dim, keepdim=keepdim), False)


def op_scan(draw, t):
    name = draw(st.sampled_from(["cumsum", "cumprod", "softmax", "log_softmax"]))
    dim = _dim(draw, t)
    return f"torch.{name}(x, {dim})", lambda L, x: getattr(L, name)(x, dim), False


def op_norm(draw, t):
    p = draw(st.sampled_from([2, 1, math.inf, "fro", 3, 0]))
    dim = _dim(draw, t, allow_none=True, out_of_range=False)
    keepdim = draw(st.booleans())
    if p == "fro" and dim is not None:
        dim = None
    return (f"x.norm({p!r}, {dim}, keepdim={keepdim})",
            lambda L, x: x.norm(p, dim, keepdim=keepdim), False)


def op_matmul(draw, t, u):
    kind = draw(st.sampled_from(["x @ y", "x @ x.mT", "addmm", "mm"]))
    if kind == "x @ y":
        return kind, lambda L, x, y: x @ y, False
    if kind == "x @ x.mT":
        return kind, lambda L, x, y: x @ (x.mT if x.dim() >= 2 else x), False
    beta, alpha = draw(st.sampled_from([1, 0, 2, 0.5])), draw(st.sampled_from([1, 2, 0.5]))
    if kind == "mm":
        return "torch.mm(x, x.t())", lambda L, x, y: L.mm(x, x.t()), False
    return (f"torch.addmm(y, x, x.t(), beta={beta}, alpha={alpha})",
            lambda L, x, y: L.addmm(y, x, x.t(), beta=beta, alpha=alpha), False)


def op_view(draw, t):
    nd = t.dim()
    kind = draw(st.sampled_from(["transpose", "permute", "expand", "slice", "narrow",
                                 "unsqueeze", "squeeze", "view", "reshape", "t", "flatten",
                                 "select", "diagonal"]))
    if kind == "transpose":
        a, b = _dim(draw, t), _dim(draw, t)
        return f"x.transpose({a}, {b})", lambda L, x: x.transpose(a, b), True
    if kind == "permute":
        perm = draw(st.permutations(range(nd)))
        return f"x.permute({perm})", lambda L, x: x.permute(*perm), True
    if kind == "expand":
        shape = (2,) + tuple(s if s != 1 or not draw(st.booleans()) else 3 for s in t.shape)
        return f"x.expand({shape})", lambda L, x: x.expand(*shape), True
    if kind == "slice":
        if nd == 0:
            return "x[None]", lambda L, x: x[None], True
        start = draw(st.integers(-2, 2))
        step = draw(st.integers(1, 3))
        return f"x[..., {start}::{step}]", lambda L, x: x[..., start::step], True
    if kind == "narrow":
        d = _dim(draw, t, out_of_range=False)
        start, length = draw(st.integers(0, 2)), draw(st.integers(0, 2))
        return f"x.narrow({d}, {start}, {length})", lambda L, x: x.narrow(d, start, length), True
    if kind == "unsqueeze":
        d = draw(st.integers(-nd - 1, nd))
        return f"x.unsqueeze({d})", lambda L, x: x.unsqueeze(d), True
    if kind == "squeeze":
        d = _dim(draw, t, allow_none=True, out_of_range=False)
        if d is None:
            return "x.squeeze()", lambda L, x: x.squeeze(), True
        return f"x.squeeze({d})", lambda L, x: x.squeeze(d), True
    if kind == "view":
        return "x.view(-1)", lambda L, x: x.view(-1), True
    if kind == "reshape":
        return "x.reshape(-1, 1)", lambda L, x: x.reshape(-1, 1), False
    if kind == "t":
        return "x.t()", lambda L, x: x.t(), True
    if kind == "flatten":
        return "x.flatten()", lambda L, x: x.flatten(), False
    if kind == "select":
        d = _dim(draw, t, out_of_range=False)
        i = draw(st.integers(-1, 2))
        return f"x.select({d}, {i})", lambda L, x: x.select(d, i), True
    off = draw(st.integers(-1, 1))
    return f"x.diagonal({off})", lambda L, x: x.diagonal(off), True


INPLACE = ["add_", "mul_", "sub_", "div_", "clamp_", "zero_", "fill_", "relu_", "neg_",
           "floor_", "pow_", "masked_fill_", "copy_", "abs_", "exp_"]


def op_inplace(draw, t, u):
    """An in-place op on a view of x (or on x itself); the result is x, the base."""
    name = draw(st.sampled_from(INPLACE))
    where = draw(st.sampled_from(["x", "x[..., ::2]", "x[0]", "x.t()"]))
    value = _scalar(draw) if name != "pow_" else _no_bool(_scalar(draw))

    def view(x):
        if where == "x[..., ::2]":
            return x[..., ::2] if x.dim() else x
        if where == "x[0]":
            return x[0] if x.dim() else x
        if where == "x.t()":
            return x.t() if x.dim() <= 2 else x
        return x

    def run(L, x, y):
        # In-place ops would also change the inputs later steps use: work on a clone,
        # so that the leaf's requires_grad makes the clone a non-leaf (as in real code).
        x = x.clone()
        v = view(x)
        if name in ("zero_", "relu_", "neg_", "floor_", "abs_", "exp_"):
            getattr(v, name)()
        elif name == "clamp_":
            v.clamp_(min=-1)
        elif name == "masked_fill_":
            v.masked_fill_(v != v, value)
        elif name == "copy_":
            v.copy_(y)
        elif name in ("add_", "sub_"):
            getattr(v, name)(y)
        else:
            getattr(v, name)(value)
        return x
    return f"x = x.clone(); {where}.{name}(...)", run, False


def op_index(draw, t, u):
    nd = t.dim()
    kind = draw(st.sampled_from(["index_select", "index_add", "gather", "scatter_add",
                                 "getitem", "masked_select"]))
    d = _dim(draw, t, out_of_range=False)
    size = t.shape[d] if nd else 1
    idx = draw(st.lists(st.integers(-1 if size == 0 else 0, max(size - 1, 0) + (draw(st.integers(0, 9)) == 0)),
                        min_size=0, max_size=3))
    if kind == "index_select":
        return (f"x.index_select({d}, {idx})",
                lambda L, x, y: x.index_select(d, L.tensor(idx, dtype=L.int64)), False)
    if kind == "index_add":
        alpha = draw(st.sampled_from([1, 2]))
        return (f"x.index_add({d}, {idx}, x.index_select({d}, {idx}), alpha={alpha})",
                lambda L, x, y: x.index_add(d, L.tensor(idx, dtype=L.int64),
                                            x.index_select(d, L.tensor(idx, dtype=L.int64)),
                                            alpha=alpha), False)
    if kind == "getitem":
        return f"x[{idx}]", lambda L, x, y: x[L.tensor(idx, dtype=L.int64)], False
    if kind == "masked_select":
        return "x[x > 0]", lambda L, x, y: x[x > 0], False
    # gather / scatter_add: an index shaped like x (values drawn along dim d)
    shape = tuple(t.shape)
    n = int(np.prod(shape, dtype=np.int64))
    vals = draw(st.lists(st.integers(0, max(size - 1, 0)), min_size=n, max_size=n))
    index = np.array(vals, dtype=np.int64).reshape(shape).tolist() if shape else vals[0] if vals else 0

    def mk(L):
        return L.tensor(index, dtype=L.int64)
    if kind == "gather":
        return f"x.gather({d}, {index})", lambda L, x, y: x.gather(d, mk(L)), False
    return (f"x.scatter_add({d}, {index}, x)",
            lambda L, x, y: x.scatter_add(d, mk(L), x), False)


def op_cast(draw, t):
    dt = draw(st.sampled_from(CASTS))
    kind = draw(st.sampled_from(["to", "type", "method", "to_copy"]))
    if kind == "to":
        return f"x.to(torch.{dt})", lambda L, x: x.to(getattr(L, dt)), False
    if kind == "to_copy":
        return (f"x.to(torch.{dt}, copy=True)", lambda L, x: x.to(getattr(L, dt), copy=True),
                False)
    if kind == "type":
        return f"x.type(torch.{dt})", lambda L, x: x.type(getattr(L, dt)), False
    method = {"float32": "float", "float64": "double", "float16": "half", "int64": "long",
              "int32": "int", "bool": "bool"}[dt]
    return f"x.{method}()", lambda L, x: getattr(x, method)(), False


def op_functional(draw, t, u):
    kind = draw(st.sampled_from(["cross_entropy", "nll_loss", "cosine_similarity",
                                 "mse_loss", "relu", "softmax"]))
    if kind in ("cross_entropy", "nll_loss"):
        n_classes = t.shape[-1] if t.dim() else 1
        rows = t.shape[0] if t.dim() == 2 else None
        n = rows if rows is not None else 1
        target = draw(st.lists(st.integers(0, max(n_classes - 1, 0)), min_size=n, max_size=n))
        reduction = draw(st.sampled_from(["mean", "sum", "none"]))
        tgt = target if rows is not None else (target[0] if target else 0)
        if kind == "nll_loss":
            return (f"F.nll_loss(x.log_softmax(-1), {tgt}, reduction={reduction!r})",
                    lambda L, x, y: L.nn.functional.nll_loss(
                        x.log_softmax(-1), L.tensor(tgt, dtype=L.int64), reduction=reduction),
                    False)
        return (f"F.cross_entropy(x, {tgt}, reduction={reduction!r})",
                lambda L, x, y: L.nn.functional.cross_entropy(
                    x, L.tensor(tgt, dtype=L.int64), reduction=reduction), False)
    if kind == "cosine_similarity":
        d = _dim(draw, t, out_of_range=False) if t.dim() else 0
        return (f"F.cosine_similarity(x, y, dim={d})",
                lambda L, x, y: L.nn.functional.cosine_similarity(x, y, dim=d), False)
    if kind == "mse_loss":
        return "F.mse_loss(x, y)", lambda L, x, y: L.nn.functional.mse_loss(x, y), False
    if kind == "relu":
        return "F.relu(x)", lambda L, x, y: L.nn.functional.relu(x), False
    d = _dim(draw, t, out_of_range=False)
    return (f"F.softmax(x, {d})", lambda L, x, y: L.nn.functional.softmax(x, d), False)


#: (draw function, number of tensor arguments, weight)
OPS = [(op_unary, 1, 6), (op_binary, 2, 8), (op_clamp, 1, 1), (op_where, 2, 1),
       (op_ternary, 2, 2), (op_reduce, 1, 5), (op_scan, 1, 2), (op_norm, 1, 1),
       (op_matmul, 2, 2), (op_view, 1, 5), (op_inplace, 2, 3), (op_index, 2, 3),
       (op_cast, 1, 3), (op_functional, 2, 2)]
_WEIGHTED = [i for i, (_, _, w) in enumerate(OPS) for _ in range(w)]


# ---------------------------------------------------------------------------
# Comparing results
# ---------------------------------------------------------------------------
def builtin_type(e: BaseException) -> type:
    """The nearest builtin exception class (torch raises subclasses such as LinAlgError)."""
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins":
            return cls
    return type(e)


def to_numpy(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().cpu().numpy()
    return t.detach().numpy()


def close(expected: np.ndarray, got: np.ndarray, dtype: str, scale: float,
          overflow_ok: bool = False) -> bool:
    """NaN where NaN, inf where inf (same sign), else within tolerance.

    ``overflow_ok``: where PyTorch overflowed to inf, a finite value is accepted
    (minitorch's 2-norms accumulate in float64, docs/differences.md).
    """
    if expected.dtype.kind not in "fc":
        return np.array_equal(expected, got)
    e, g = expected.astype(np.float64), got.astype(np.float64)
    if overflow_ok:
        e = np.where(np.isinf(e) & np.isfinite(g), g, e)
    if not np.array_equal(np.isnan(e), np.isnan(g)):
        return False
    finite = np.isfinite(e)
    if not np.array_equal(e[~finite & ~np.isnan(e)], g[~finite & ~np.isnan(e)]):
        return False
    rtol = RTOL[dtype]
    # Sums accumulate in float64 here (docs/differences.md): allow the rounding
    # of the inputs' largest magnitude, not only of the result's.
    atol = rtol * max(scale, 1.0) * 4
    return bool(np.all(np.abs(e[finite] - g[finite]) <= atol + rtol * np.abs(e[finite])))


def magnitude(*ts) -> float:
    """The largest finite magnitude among torch tensors (for the absolute tolerance)."""
    m = 0.0
    for t in ts:
        if isinstance(t, torch.Tensor) and t.numel():
            a = t.detach().double().abs()
            a = a[torch.isfinite(a)]
            if a.numel():
                m = max(m, float(a.max()))
    return m


def check_same(expected, got, where: str, is_view: bool, scale: float) -> None:
    if isinstance(expected, torch.Tensor):
        assert isinstance(got, minitorch.Tensor), f"{where}: got {type(got)}, torch gives a Tensor"
        assert tuple(got.shape) == tuple(expected.shape), \
            f"{where}: shape {tuple(got.shape)}, torch {tuple(expected.shape)}"
        edt = str(expected.dtype).split(".")[-1]
        assert got.dtype.name == edt, f"{where}: dtype {got.dtype}, torch {expected.dtype}"
        assert got.requires_grad == expected.requires_grad, \
            f"{where}: requires_grad {got.requires_grad}, torch {expected.requires_grad}"
        assert got.is_leaf == expected.is_leaf, \
            f"{where}: is_leaf {got.is_leaf}, torch {expected.is_leaf}"
        if is_view and expected.numel():
            # (Strides and offsets of empty tensors are arbitrary: torch.tensor of an empty
            # NumPy array has stride (0,), narrow(0, 1, 0) keeps its offset 1.)
            # (The stride of a dim of size 1 is never used to address memory: not compared.)
            big = [i for i, n in enumerate(expected.shape) if n > 1]
            assert [got.stride()[i] for i in big] == [expected.stride()[i] for i in big], \
                f"{where}: stride {got.stride()}, torch {expected.stride()}"
            assert got.storage_offset() == expected.storage_offset(), \
                f"{where}: storage_offset {got.storage_offset()}, torch {expected.storage_offset()}"
        e, g = to_numpy(expected), to_numpy(got)
        assert close(e, g, edt, scale, overflow_ok=".norm(" in where), \
            f"{where}: values\n{g}\ntorch gives\n{e}"
    elif isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), \
            f"{where}: got {got!r}, torch gives {expected!r}"
        for i, (e, g) in enumerate(zip(expected, got)):
            check_same(e, g, f"{where}[{i}]", is_view, scale)
    else:
        assert type(got) is type(expected) or (
            isinstance(expected, (int, float)) and isinstance(got, (int, float))), \
            f"{where}: got {got!r}, torch gives {expected!r}"
        if isinstance(expected, float) and math.isnan(expected):
            assert math.isnan(got), f"{where}: got {got!r}, torch gives nan"
        else:
            assert got == expected, f"{where}: got {got!r}, torch gives {expected!r}"


def run_both(fn, t_args, m_args):
    """Run ``fn`` on both libraries: (torch result or exception, minitorch's)."""
    results = []
    for L, args in ((torch, t_args), (minitorch, m_args)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results.append((fn(L, *args), None))
        except Exception as e:      # noqa: BLE001  (the type is what is compared)
            results.append((None, e))
    return results


#: Deliberate differences (docs/differences.md): minitorch raises where PyTorch does not.
KNOWN_LIMITATIONS = (
    # In-place writes through a view whose base is not contiguous, with autograd recording.
    "in-place modification of a view whose base is not contiguous",
)


def check_exceptions(t_exc, m_exc, where: str, empty_result: bool = False) -> bool:
    """True if both raised (of the same type); fails if only one did or the types differ.

    Also True (skip the step) when minitorch raises for a documented limitation.
    """
    if t_exc is None and m_exc is None:
        return False
    if t_exc is None and any(k in str(m_exc) for k in KNOWN_LIMITATIONS):
        return True
    if t_exc is None and isinstance(m_exc, NotImplementedError) and empty_result:
        # A dtype without a kernel raises even for an empty tensor in minitorch;
        # PyTorch skips the kernel when there are no elements (docs/differences.md).
        return True
    assert m_exc is not None, f"{where}: torch raises {t_exc!r}, minitorch does not"
    assert t_exc is not None, f"{where}: minitorch raises {m_exc!r}, torch does not"
    assert builtin_type(m_exc) is builtin_type(t_exc), \
        f"{where}: minitorch raises {m_exc!r}, torch raises {t_exc!r}"
    return True


# ---------------------------------------------------------------------------
# The test
# ---------------------------------------------------------------------------
#: Programs per run: 250 in the default "ci" profile (about 11 s on one core with a warm
#: kernel cache), or the profile's own budget when it is larger ("long": 5000).
EXAMPLES = max(250, settings.default.max_examples)


@settings(max_examples=EXAMPLES)
@given(st.data())
def test_random_programs_match_pytorch(data):
    run_program(data.draw)


def run_program(draw) -> None:
    """Draw a program, run it on both libraries and compare each step (see the module doc)."""
    specs = draw(st.lists(input_spec(), min_size=1, max_size=3), label="inputs")
    t_env, m_env, t_leaves, m_leaves = [], [], [], []
    for s in specs:
        (tx, tl), (mx, ml) = make_input(torch, s), make_input(minitorch, s)
        t_env.append(tx)
        m_env.append(mx)
        t_leaves.append(tl)
        m_leaves.append(ml)
        note(f"input {len(t_env) - 1}: {s['dtype']} {s['shape']} {s['layout']} "
             f"requires_grad={s['requires_grad']} values={s['values']}")
    for i, (t, m) in enumerate(zip(t_env, m_env)):
        check_same(t, m, f"input {i}", True, magnitude(t))

    n_steps = draw(st.integers(2, 5), label="steps")
    last = None
    for step in range(n_steps):
        op_draw, arity, _ = OPS[draw(st.sampled_from(_WEIGHTED), label="op")]
        picks = [draw(st.integers(0, len(t_env) - 1)) for _ in range(arity)]
        t_args = [t_env[i] for i in picks]
        m_args = [m_env[i] for i in picks]
        text, fn, is_view = op_draw(draw, *t_args)
        where = f"step {step}: {text} with x, y = " + ", ".join(f"v{i}" for i in picks)
        note(where)
        (t_out, t_exc), (m_out, m_exc) = run_both(fn, t_args, m_args)
        empty = isinstance(t_out, torch.Tensor) and t_out.numel() == 0 or any(
            a.numel() == 0 for a in t_args)
        if check_exceptions(t_exc, m_exc, where, empty):
            continue
        check_same(t_out, m_out, where, is_view, magnitude(*t_args))
        if isinstance(t_out, torch.Tensor):
            t_env.append(t_out)
            m_env.append(m_out)
            last = len(t_env) - 1
            note(f"  -> v{last}")

    # Backward of the last result that requires grad, then the inputs' gradients.
    target = next((i for i in range(len(t_env) - 1, -1, -1) if t_env[i].requires_grad), None)
    if target is None:
        return
    where = f"v{target}.sum().backward()"
    note(where)
    (_, t_exc), (_, m_exc) = run_both(lambda L, v: v.sum().backward(), [t_env[target]],
                                      [m_env[target]])
    if m_exc is None and "INTERNAL ASSERT FAILED" in str(t_exc):
        return                                  # a bug in PyTorch itself
    if m_exc is None and "can't be cast to the desired output type" in str(t_exc):
        # PyTorch's backward of addcdiv/addcmul fails when `input` is an integer tensor and
        # tensor1 requires grad; minitorch returns the gradients (docs/differences.md).
        return
    if check_exceptions(t_exc, m_exc, where):
        return
    for i, (tl, ml) in enumerate(zip(t_leaves, m_leaves)):
        if tl.grad is None:
            assert ml.grad is None, f"input {i}: has a grad, torch gives None"
            continue
        assert ml.grad is not None, f"input {i}: grad is None, torch gives\n{tl.grad}"
        check_same(tl.grad, ml.grad, f"input {i}.grad", False,
                   magnitude(*t_env) * max(1, t_env[target].numel()))

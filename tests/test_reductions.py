"""Reductions, scans and softmax against NumPy: dims, keepdim, layouts, empty and 0-d, dtypes.

Inputs come from hypothesis: 0 to 3 dims with sides 0 to 4, laid out
contiguously, transposed, strided or broadcast (stride 0).  The reduced
dims are drawn too: one dim (possibly negative), several, or all.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import minitorch as torch

pytestmark = pytest.mark.ops


SETTINGS = settings(max_examples=15, deadline=None)
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
NONEMPTY = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)
TOL = {torch.float32: dict(rtol=2e-5, atol=2e-5), torch.float64: dict(rtol=1e-11, atol=1e-12)}


@st.composite
def case(draw, shapes=SHAPES, dtype=None, elements=None):
    """(numpy float64 values, minitorch tensor) in a random layout."""
    shape = draw(shapes)
    dtype = draw(st.sampled_from([torch.float32, torch.float64])) if dtype is None else dtype
    if elements is None:
        elements = st.floats(-3, 3, allow_nan=False, width=32)
    layout = draw(st.sampled_from(["contiguous", "transposed", "strided", "broadcast"]))
    if layout == "broadcast" and len(shape) >= 1 and shape[0] > 1:
        base = draw(hnp.arrays(np.float64, (1,) + shape[1:], elements=elements))
        return np.broadcast_to(base, shape), torch.tensor(base, dtype=dtype).expand(shape)
    arr = draw(hnp.arrays(np.float64, shape, elements=elements))
    if layout == "transposed" and arr.ndim >= 2:
        return arr, torch.tensor(np.ascontiguousarray(arr.T), dtype=dtype).T
    if layout == "strided" and arr.ndim >= 1:
        big = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1],))
        big[..., ::2] = arr
        return arr, torch.tensor(big, dtype=dtype)[..., ::2]
    return arr, torch.tensor(arr, dtype=dtype)


@st.composite
def dims_for(draw, ndim):
    """None, one dim (maybe negative), or a tuple of distinct dims."""
    if ndim == 0:
        return draw(st.sampled_from([None, 0, -1]))
    kind = draw(st.sampled_from(["none", "one", "tuple"]))
    if kind == "none":
        return None
    if kind == "one":
        return draw(st.integers(-ndim, ndim - 1))
    picked = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    return tuple(d - ndim if draw(st.booleans()) else d for d in picked)


def np_axis(dim, ndim):
    if dim is None or ndim == 0:
        return None
    return dim


def expected_cast(arr, t):
    """The float64 reference computed from what the tensor actually holds."""
    return t.cpu().numpy().astype(np.float64) if t.dtype is torch.float32 else arr


def close(got, want, dtype):
    np.testing.assert_allclose(np.asarray(got.cpu().numpy(), np.float64), want, equal_nan=True,
                               **TOL[dtype])


REDUCTIONS = [
    # name, minitorch(t, dim, keepdim), numpy(a, axis, keepdims), needs non-empty reduced dims
    ("sum", lambda t, d, k: t.sum(d, k) if d is not None else t.sum(),
     lambda a, d, k: np.sum(a, d, keepdims=k), False),
    ("mean", lambda t, d, k: t.mean(d, k) if d is not None else t.mean(),
     lambda a, d, k: np.mean(a, d, keepdims=k), True),
    ("prod", lambda t, d, k: torch.prod(t, d, k) if isinstance(d, int) else t.prod(),
     lambda a, d, k: np.prod(a, d, keepdims=k) if isinstance(d, int) else np.prod(a), False),
    ("amax", lambda t, d, k: t.amax(() if d is None else d, k),
     lambda a, d, k: np.amax(a, d, keepdims=k), True),
    ("amin", lambda t, d, k: torch.amin(t, () if d is None else d, k),
     lambda a, d, k: np.amin(a, d, keepdims=k), True),
    ("nansum", lambda t, d, k: torch.nansum(t, d, k),
     lambda a, d, k: np.nansum(a, d, keepdims=k), False),
    ("logsumexp", lambda t, d, k: torch.logsumexp(t, () if d is None else d, k),
     lambda a, d, k: np.log(np.sum(np.exp(a), d, keepdims=k)), False),
    ("var", lambda t, d, k: t.var(d, keepdim=k),
     lambda a, d, k: np.var(a, d, ddof=1, keepdims=k), True),
    ("var_biased", lambda t, d, k: torch.var(t, d, correction=0, keepdim=k),
     lambda a, d, k: np.var(a, d, ddof=0, keepdims=k), True),
    ("std", lambda t, d, k: t.std(d, keepdim=k),
     lambda a, d, k: np.std(a, d, ddof=1, keepdims=k), True),
    ("norm", lambda t, d, k: torch.norm(t, dim=d, keepdim=k),
     lambda a, d, k: np.sqrt(np.sum(a * a, d, keepdims=k)), False),
    ("norm_1", lambda t, d, k: torch.norm(t, 1, dim=d, keepdim=k),
     lambda a, d, k: np.sum(np.abs(a), d, keepdims=k), False),
    ("count_nonzero", lambda t, d, k: torch.count_nonzero(t, d),
     lambda a, d, k: np.count_nonzero(a, d), False),
]


@pytest.mark.parametrize("name, fn, ref, nonempty", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
@pytest.mark.filterwarnings("ignore:.*degrees of freedom is")
@pytest.mark.filterwarnings("ignore:Degrees of freedom <= 0:RuntimeWarning")
@SETTINGS
@given(data=st.data())
def test_reductions_match_numpy(default_device, name, fn, ref, nonempty, data):
    arr, t = data.draw(case(elements=st.integers(-3, 3).map(float) if name == "count_nonzero"
                            else None))
    dim = data.draw(dims_for(arr.ndim))
    keepdim = data.draw(st.booleans()) and dim is not None and name != "count_nonzero"
    if name == "prod" and not isinstance(dim, int):
        keepdim = False
    axis = np_axis(dim, arr.ndim)
    reduced = arr.shape if axis is None else [arr.shape[d] for d in np.atleast_1d(axis)]
    if nonempty and 0 in reduced:
        return                      # see test_empty_reductions
    ref_input = expected_cast(arr, t)
    with np.errstate(all="ignore"):
        want = ref(ref_input, axis, keepdim)
    got = fn(t, dim, keepdim)
    if name == "count_nonzero":
        assert got.dtype is torch.int64
        np.testing.assert_array_equal(got.cpu().numpy(), want)
        return
    assert got.dtype is t.dtype
    if arr.ndim == 0 or axis is None:
        want = np.asarray(want).reshape(got.shape) if keepdim else want
    assert got.shape == np.shape(want)
    close(got, want, t.dtype)


@pytest.mark.parametrize("kind", ["max", "min"])
@SETTINGS
@given(data=st.data())
def test_max_min_with_dim_give_values_and_first_index(default_device, kind, data):
    # integer-valued floats: ties are common, and the first index must win
    arr, t = data.draw(case(NONEMPTY, elements=st.integers(-2, 2).map(float)))
    dim = data.draw(st.integers(-max(arr.ndim, 1), max(arr.ndim, 1) - 1))
    keepdim = data.draw(st.booleans())
    values, indices = getattr(t, kind)(dim, keepdim)
    assert values.dtype is t.dtype and indices.dtype is torch.int64
    if arr.ndim == 0:
        assert values.item() == arr.item() and indices.item() == 0
        return
    npf = {"max": (np.max, np.argmax), "min": (np.min, np.argmin)}[kind]
    want_v = npf[0](arr, dim, keepdims=keepdim)
    want_i = npf[1](arr, dim, keepdims=keepdim)
    np.testing.assert_array_equal(values.cpu().numpy(), want_v)
    np.testing.assert_array_equal(indices.cpu().numpy(), want_i)
    arg = getattr(t, "arg" + kind)(dim, keepdim)
    np.testing.assert_array_equal(arg.cpu().numpy(), want_i)
    assert getattr(t, kind)(dim=dim, keepdim=keepdim).indices.tolist() == indices.tolist()


@SETTINGS
@given(data=st.data())
def test_full_max_min_argmax(default_device, data):
    arr, t = data.draw(case(NONEMPTY))
    assert t.max().item() == pytest.approx(float(t.cpu().numpy().max()))
    assert t.min().item() == pytest.approx(float(t.cpu().numpy().min()))
    assert t.argmax().item() == int(np.argmax(t.cpu().numpy()))
    assert t.argmin().item() == int(np.argmin(t.cpu().numpy()))
    assert t.max().shape == () and t.argmax(keepdim=True).shape == (1,) * t.dim()
    lo, hi = torch.aminmax(t)
    assert lo.item() == t.min().item() and hi.item() == t.max().item()


@pytest.mark.parametrize("name, fn, ref", [
    ("all", torch.all, np.all), ("any", torch.any, np.any),
])
@SETTINGS
@given(data=st.data())
def test_all_any(default_device, name, fn, ref, data):
    arr, t = data.draw(case(elements=st.sampled_from([0.0, 1.0, -2.0])))
    dim = data.draw(st.none() | st.integers(-max(arr.ndim, 1), max(arr.ndim, 1) - 1))
    keepdim = data.draw(st.booleans()) and dim is not None
    got = fn(t, dim, keepdim) if dim is not None else fn(t)
    assert got.dtype is torch.bool
    want = ref(arr, np_axis(dim, arr.ndim), keepdims=keepdim)
    np.testing.assert_array_equal(got.cpu().numpy(), np.asarray(want).reshape(got.shape))
    b = t.bool()
    assert fn(b).item() == bool(ref(arr))


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "cumsum", "cumprod"])
@SETTINGS
@given(data=st.data())
def test_softmax_and_scans_along_a_dim(default_device, name, data):
    arr, t = data.draw(case())
    dim = data.draw(st.integers(-max(arr.ndim, 1), max(arr.ndim, 1) - 1))
    got = getattr(t, name)(dim)
    a = expected_cast(arr, t)
    axis = dim if arr.ndim else None
    with np.errstate(all="ignore"):
        want = _np_along(name, a, axis)
    assert got.shape == t.shape and got.dtype is t.dtype
    close(got, want, t.dtype)
    if name == "softmax" and arr.size:
        close(got.sum(dim), np.ones(np.sum(a, axis).shape), t.dtype)


def _np_along(name, a, axis):
    if name in ("softmax", "log_softmax"):
        m = np.max(a, axis, keepdims=True) if a.size else 0
        e = np.exp(a - m)
        want = e / np.sum(e, axis, keepdims=True)
        if name == "log_softmax":
            want = (a - m) - np.log(np.sum(e, axis, keepdims=True))
    else:
        want = (np.cumsum if name == "cumsum" else np.cumprod)(a, axis)
        want = want.reshape(a.shape)
    return want


def test_softmax_is_stable_for_large_inputs(default_device):
    x = torch.tensor([[1000.0, 0.0], [-1000.0, 4.0]])
    np.testing.assert_allclose(x.softmax(1).cpu().numpy(), [[1.0, 0.0], [0.0, 1.0]], atol=1e-6)
    np.testing.assert_allclose(x.log_softmax(1).cpu().numpy(), [[0.0, -1000.0], [-1004.0, 0.0]],
                               rtol=1e-6)
    assert torch.logsumexp(torch.tensor([1000.0, 1000.0]), 0).item() == \
        pytest.approx(1000 + math.log(2))
    assert torch.logsumexp(torch.full((2,), -math.inf), 0).item() == -math.inf
    assert all(math.isnan(v) for v in torch.full((1, 2), -math.inf).softmax(1).view(-1).tolist())


# ---------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------
def test_integer_and_bool_reductions(default_device):
    i = torch.tensor([[1, 2], [3, 4]])
    assert i.sum().dtype is torch.int64 and i.sum().item() == 10
    assert i.sum(0).tolist() == [4, 6] and i.prod(1).tolist() == [2, 12]
    assert i.sum(dtype=torch.float32).dtype is torch.float32
    assert i.max().item() == 4 and i.max().dtype is torch.int64
    assert i.max(1).values.tolist() == [2, 4] and i.amin(0).tolist() == [1, 2]
    assert i.cumsum(0).tolist() == [[1, 2], [4, 6]] and i.cumsum(0).dtype is torch.int64
    assert i.cumsum(1, dtype=torch.float32).dtype is torch.float32
    assert i.cumprod(1).tolist() == [[1, 2], [3, 12]]
    assert i.mean(dtype=torch.float64).item() == 2.5
    b = torch.tensor([True, True, False])
    assert b.sum().item() == 2 and b.sum().dtype is torch.int64
    assert b.prod().dtype is torch.int64
    assert b.cumsum(0).tolist() == [1, 2, 2]
    assert b.max().item() is True and b.all().item() is False and b.any().item() is True
    assert torch.tensor([[1, 0], [3, 4]]).count_nonzero(0).tolist() == [2, 1]
    big = torch.tensor([2 ** 60, 2 ** 60, 1])
    assert big.sum().item() == 2 ** 61 + 1                        # exact int64 accumulation
    i32 = torch.tensor([1, 2], dtype=torch.int32)
    assert i32.sum().dtype is torch.int64 and i32.max().dtype is torch.int32


def test_float16_reductions(default_device):
    h = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float16)
    for r in (h.sum(), h.mean(0), h.max(), h.amax(1), h.softmax(0), h.cumsum(1), h.prod()):
        assert r.dtype is torch.float16
    assert h.sum().item() == 10.0 and h.mean(0).tolist() == [2.0, 3.0]
    # accumulation is wider than float16: 4096 ones sum exactly
    assert torch.ones(4096, dtype=torch.float16).sum().item() == 4096.0
    np.testing.assert_allclose(h.softmax(0).cpu().numpy().astype(np.float64),
                               [[0.1192, 0.1192], [0.8808, 0.8808]], rtol=2e-3)


@pytest.mark.cpu_only("the CPU's pairwise float32 sum (a GPU's thousands of threads each add a "
                      "short run; the simulator's 8 add long ones)")
def test_float32_sum_accumulates_accurately():
    x = torch.full((100_000,), 0.1)
    assert x.sum().item() == pytest.approx(10_000.0, rel=1e-6)
    assert x.mean().item() == pytest.approx(0.1, rel=1e-6)


# ---------------------------------------------------------------------------
# empty and 0-d tensors
# ---------------------------------------------------------------------------
def test_empty_reductions(default_device):
    e = torch.zeros(0, 3)
    assert e.sum().item() == 0 and e.prod().item() == 1
    assert math.isnan(e.mean().item())
    assert e.sum(0).tolist() == [0.0, 0.0, 0.0] and e.sum(1).shape == (0,)
    assert all(math.isnan(v) for v in e.mean(0).tolist())
    assert e.all().item() is True and e.any().item() is False
    assert e.logsumexp(0).tolist() == [-math.inf] * 3
    assert e.softmax(0).shape == (0, 3) and e.cumsum(0).shape == (0, 3)
    assert e.amax(1).shape == (0,) and e.max(1).values.shape == (0,)
    assert e.norm().item() == 0.0
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        e.max(0)
    with pytest.raises(IndexError):
        e.amax(0)
    with pytest.raises(IndexError):
        e.argmax(0)
    with pytest.raises(IndexError, match="Expected reduction dim to be specified"):
        e.argmax()
    with pytest.raises(RuntimeError):
        e.max()


def test_zero_dim_reductions(default_device):
    s = torch.tensor(5.0)
    for r in (s.sum(), s.sum(0), s.sum(-1), s.mean((0,)), s.prod(0), s.amax(0), s.logsumexp(0),
              s.cumsum(0), s.max(0).values, s.min(-1).values):
        assert r.shape == () and r.item() == 5.0
    assert s.argmax(0).item() == 0 and s.max(0).indices.item() == 0
    assert s.softmax(0).item() == 1.0
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert math.isnan(s.var().item())
    with pytest.raises(IndexError):
        s.sum(1)


def test_var_std_options(default_device):
    x = torch.tensor([[1.0, 2.0], [3.0, 5.0]], dtype=torch.float64)
    n = x.cpu().numpy()
    assert x.var(0, unbiased=False).tolist() == np.var(n, 0).tolist()
    assert x.var(False).item() == pytest.approx(np.var(n))
    assert x.std(1, correction=0, keepdim=True).shape == (2, 1)
    v, m = torch.var_mean(x, 1)
    np.testing.assert_allclose(v.cpu().numpy(), np.var(n, 1, ddof=1))
    np.testing.assert_allclose(m.cpu().numpy(), n.mean(1))
    s, m = torch.std_mean(x, 0, correction=0)
    np.testing.assert_allclose(s.cpu().numpy(), np.std(n, 0))
    with pytest.warns(UserWarning):
        assert torch.tensor([1.0, 2.0]).var(correction=2).item() == math.inf
    with pytest.raises(RuntimeError, match="floating point"):
        torch.tensor([1, 2]).var()


def test_norm_variants(default_device):
    x = torch.tensor([[1.0, -2.0], [3.0, 4.0]])
    n = x.cpu().numpy().astype(np.float64)
    assert x.norm().item() == pytest.approx(np.sqrt((n * n).sum()))
    assert x.norm(1).item() == pytest.approx(10.0)
    assert x.norm(float("inf")).item() == 4.0
    assert x.norm(-float("inf")).item() == 1.0
    assert x.norm(0).item() == 4.0
    assert x.norm(3, dim=1).tolist() == pytest.approx(list(np.sum(np.abs(n) ** 3, 1) ** (1 / 3)))
    with pytest.raises(RuntimeError, match="floating point"):
        torch.tensor([1, 2]).norm()


def test_nan_handling_in_reductions(default_device):
    x = torch.tensor([1.0, float("nan"), 3.0])
    assert math.isnan(x.sum().item()) and x.nansum().item() == 4.0
    assert math.isnan(x.max().item()) and math.isnan(x.amin().item())
    assert math.isnan(x.max(0).values.item()) and x.max(0).indices.item() == 1
    assert x.argmax().item() == 1


def test_return_types_are_named_tuples_that_print_like_pytorch(default_device):
    r = torch.tensor([[1.0, 2.0], [3.0, 4.0]]).max(1)
    values, indices = r
    assert r.values is values and r.indices is indices and r[0] is values
    where = "" if default_device == "cpu" else ", device='cuda:0'"     # as PyTorch prints it
    assert repr(r) == (f"minitorch.return_types.max(\nvalues=tensor([2., 4.]{where}),\n"
                       f"indices=tensor([1, 1]{where}))")
    mm = torch.aminmax(torch.tensor([1.0, 4.0]))
    assert mm.min.item() == 1.0 and mm.max.item() == 4.0
    assert repr(mm).startswith("minitorch.return_types.aminmax(\nmin=")


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("expr", [
    "x.sum(2)", "x.sum(-3)", "x.mean(5)", "x.max(2)", "x.argmax(-3)", "x.softmax(2)",
    "x.cumsum(2)", "x.amax((0, 2))", "x.var(2)", "x.logsumexp(3)", "x.all(2)", "x.prod(2)",
    "x.min(2)", "x.std(-5)",
])
def test_dim_out_of_range_raises_index_error(default_device, expr):
    x = torch.ones(2, 3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        eval(expr)


def test_repeated_dims_and_wrong_dtypes(default_device):
    x = torch.ones(2, 3)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        x.sum((0, 0))
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        torch.tensor([1, 2]).mean()
    with pytest.raises(NotImplementedError, match="Long"):
        torch.tensor([1, 2]).softmax(0)
    assert torch.tensor([1, 2]).softmax(0, dtype=torch.float64).dtype is torch.float64


def test_reductions_of_strided_views_leave_the_input_unchanged(default_device):
    base = torch.arange(24.0).view(2, 3, 4)
    v = base.permute(2, 0, 1)[1:, :, ::2]
    before = base.clone()
    n = v.cpu().numpy()
    np.testing.assert_allclose(v.sum((0, 2)).cpu().numpy(), n.sum((0, 2)))
    np.testing.assert_allclose(v.max(-1).values.cpu().numpy(), n.max(-1))
    assert (base == before).all()

# ---------------------------------------------------------------------------
# On every device (the ``device`` fixture: cpu, and cuda on Numba's simulator
# without a GPU; tensors stay tiny there).
# ---------------------------------------------------------------------------
from device_checks import check, on  # noqa: E402


def test_reductions_on_every_device(device):
    a = np.random.default_rng(2).standard_normal((3, 4, 5)).astype(np.float32)
    a[1, 2, 3] = a.max() + 1          # a unique maximum
    x = on(a, device)
    check(x.sum(), a.sum(), device, rtol=1e-5)
    check(x.sum((0, 2)), a.sum((0, 2)), device, rtol=1e-5)
    check(x.permute(2, 0, 1).mean(-1, keepdim=True),
          a.transpose(2, 0, 1).mean(-1, keepdims=True), device, rtol=1e-5)
    check(x.max(), a.max(), device)
    values, idx = x.max(1)
    check(values, a.max(1), device)
    check(idx, a.argmax(1), device)
    check(x.argmin(2), a.argmin(2), device)
    check(x.argmax(), a.argmax(), device)
    check(x.prod(0), a.prod(0), device, rtol=1e-5)
    check(x.var(1), a.var(1, ddof=1), device, rtol=1e-4)
    check(x.logsumexp(2), np.log(np.exp(a).sum(2)), device, rtol=1e-5)
    check((x > 0).all(1), (a > 0).all(1), device)
    check((x > 0).any(), (a > 0).any(), device)
    check(x.softmax(-1).sum(-1), np.ones((3, 4), np.float32), device, rtol=1e-5)
    i = on(np.arange(24).reshape(4, 6), device)
    check(i.sum(0), np.arange(24).reshape(4, 6).sum(0), device)
    check(i[:, ::2].t().max(1).values, np.arange(24).reshape(4, 6)[:, ::2].T.max(1), device)
    ties = on(np.array([1.0, 3.0, 3.0, 2.0, 3.0, np.nan, 0.0, np.nan, 3.0]), device)
    check(ties[:5].argmax(), 1, device)            # the first maximum wins
    check(ties.argmax(), 5, device)                # the first NaN wins
    check(ties.max(), np.nan, device)
    check(x.cumsum(1), a.cumsum(1), device, rtol=1e-5)
    check(x.transpose(0, 2).cumprod(0), np.cumprod(a.transpose(2, 1, 0), 0), device,
          rtol=1e-5)
    check(torch.zeros(0, 3, device=device).sum(0), np.zeros(3, np.float32), device)

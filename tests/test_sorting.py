"""Sorting ops against NumPy and a plain-Python stable sort (PyTorch where installed)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import minitorch as torch
from device_checks import matches_cpu_gradients

pytestmark = pytest.mark.ops


SETTINGS = settings(max_examples=30, deadline=None)
any_shape = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)
# few distinct values, so that ties (and NaN, +-inf) are common
values = st.sampled_from([-2.0, -1.0, 0.0, 1.0, 2.5, math.inf, -math.inf, math.nan])


def as_tensor(a: np.ndarray, contiguous: bool) -> torch.Tensor:
    if contiguous or a.ndim < 2:
        return torch.tensor(a)
    rev = tuple(range(a.ndim - 1, -1, -1))
    return torch.tensor(np.ascontiguousarray(a.transpose(rev))).permute(rev)


def py_argsort(row, descending):
    """Stable argsort with NaN as the largest value, written the obvious way."""
    def key(i):
        v = row[i]
        nan = isinstance(v, float) and v != v
        if descending:
            return (0 if nan else 1, -v if not nan else 0)
        return (1 if nan else 0, v if not nan else 0)
    return sorted(range(len(row)), key=key)


def reference_sort(x: np.ndarray, dim: int, descending: bool):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    moved = np.moveaxis(x, dim, -1)
    idx = np.zeros(moved.shape, np.int64)
    for pos in np.ndindex(moved.shape[:-1]):
        idx[pos] = py_argsort(list(moved[pos].tolist()), descending)
    vals = np.take_along_axis(moved, idx, -1)
    return np.moveaxis(vals, -1, dim), np.moveaxis(idx, -1, dim)


def gradcheck(fn, a, eps=1e-6):
    """Autograd's gradient of ``sum(fn(x) * w)`` against central differences
    (on ``cuda``: against the CPU's, see ``device_checks.matches_cpu_gradients``)."""
    x = torch.tensor(a, requires_grad=True)
    if x.device.type != "cpu":
        matches_cpu_gradients(fn, [x])
        return
    out = fn(x)
    w = np.cos(np.arange(out.numel()) + 0.5).reshape(tuple(out.shape))
    (out * torch.tensor(w)).sum().backward()
    numeric = np.zeros_like(a).reshape(-1)
    for i in range(a.size):
        p, m = a.copy().reshape(-1), a.copy().reshape(-1)
        p[i] += eps
        m[i] -= eps
        hi = (fn(torch.tensor(p.reshape(a.shape))) * torch.tensor(w)).sum().item()
        lo = (fn(torch.tensor(m.reshape(a.shape))) * torch.tensor(w)).sum().item()
        numeric[i] = (hi - lo) / (2 * eps)
    np.testing.assert_allclose(x.grad.cpu().numpy(), numeric.reshape(a.shape), atol=1e-6)


@st.composite
def array_and_dim(draw, dtype=np.float64, elements=values):
    a = draw(hnp.arrays(dtype, any_shape, elements=elements))
    dim = draw(st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1))
    return a, dim, draw(st.booleans())


# ---------------------------------------------------------------------------
# sort / argsort
# ---------------------------------------------------------------------------
@SETTINGS
@given(array_and_dim(), st.booleans())
def test_sort_matches_stable_reference(default_device, case, descending):
    a, dim, contiguous = case
    t = as_tensor(a, contiguous)
    vals, idx = torch.sort(t, dim, descending=descending, stable=True)
    ev, ei = reference_sort(a, dim % max(a.ndim, 1), descending)
    np.testing.assert_array_equal(vals.cpu().numpy(), ev)
    np.testing.assert_array_equal(idx.cpu().numpy(), ei)
    assert idx.dtype == torch.int64 and vals.dtype == t.dtype
    np.testing.assert_array_equal(t.argsort(dim, descending).cpu().numpy(), ei)
    np.testing.assert_array_equal(t.cpu().numpy(), a)


@SETTINGS
@given(array_and_dim(np.int64, st.integers(-3, 3)), st.booleans())
def test_sort_integers_matches_numpy(default_device, case, descending):
    a, dim, contiguous = case
    vals, idx = as_tensor(a, contiguous).sort(dim=dim, descending=descending)
    if a.ndim:
        key = -a if descending else a
        np.testing.assert_array_equal(idx.cpu().numpy(), np.argsort(key, axis=dim, kind="stable"))
        np.testing.assert_array_equal(vals.cpu().numpy(), np.take_along_axis(a, idx.cpu().numpy(), dim))


def test_sort_nan_inf_bool_and_scalars(default_device):
    x = torch.tensor([3.0, math.nan, 1.0, math.nan, math.inf])
    v, i = x.sort(descending=True)
    assert i.tolist() == [1, 3, 4, 0, 2]
    assert math.isnan(v[0].item()) and v[2].item() == math.inf
    assert x.sort().indices.tolist() == [2, 0, 4, 1, 3]
    b = torch.tensor([True, False, True])
    assert b.sort().values.tolist() == [False, True, True]
    assert b.sort().indices.tolist() == [1, 0, 2]
    s = torch.sort(torch.tensor(3.0))
    assert s.values.shape == () and s.indices.item() == 0
    e = torch.sort(torch.zeros(2, 0), 1)
    assert e.values.shape == (2, 0) and e.indices.dtype == torch.int64
    h = torch.tensor([2.0, -1.0, 0.5]).half()
    assert h.sort().values.tolist() == [-1.0, 0.5, 2.0] and h.sort().values.dtype == torch.float16
    assert torch.msort(torch.tensor([[2, 1], [0, 3]])).tolist() == [[0, 1], [2, 3]]
    big = np.random.RandomState(3).randint(0, 50, 1000)     # long rows: the merge passes
    np.testing.assert_array_equal(torch.tensor(big).argsort(stable=True).cpu().numpy(),
                                  np.argsort(big, kind="stable"))


# ---------------------------------------------------------------------------
# topk / kthvalue / median
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("largest", [True, False])
def test_topk_selection_equals_stable_sort_prefix(default_device, largest):
    # small k selects in one pass, large k sorts: both must give a stable sort's prefix
    rs = np.random.RandomState(5)
    a = rs.choice([0.0, 1.0, 2.0, np.nan, -np.inf], size=(3, 300))
    full_v, full_i = torch.tensor(a).sort(1, descending=largest, stable=True)
    for k in (1, 7, 64, 65, 299):
        v, i = torch.tensor(a).topk(k, 1, largest=largest)
        np.testing.assert_array_equal(i.cpu().numpy(), full_i.cpu().numpy()[:, :k])
        np.testing.assert_array_equal(v.cpu().numpy(), full_v.cpu().numpy()[:, :k])
    kv = torch.tensor(a).kthvalue(5, 1)
    np.testing.assert_array_equal(kv.indices.cpu().numpy(), torch.tensor(a).sort(1).indices[:, 4].cpu().numpy())


@SETTINGS
@given(array_and_dim(), st.booleans(), st.data())
def test_topk_and_kthvalue_match_reference(default_device, case, largest, data):
    a, dim, contiguous = case
    t = as_tensor(a, contiguous)
    d = dim % max(a.ndim, 1)
    n = a.shape[d] if a.ndim else 1
    k = data.draw(st.integers(0, n))
    vals, idx = t.topk(k, dim, largest=largest)
    ev, _ = reference_sort(a, d, largest)
    expected = np.take(ev, np.arange(k), axis=d) if a.ndim else ev
    np.testing.assert_array_equal(vals.cpu().numpy(), expected)
    if a.ndim:       # indices point at the values they name
        np.testing.assert_array_equal(np.take_along_axis(a, idx.cpu().numpy(), d), vals.cpu().numpy())
    if n and k:
        kv = t.kthvalue(k, dim, keepdim=True)
        asc, _ = reference_sort(a, d, False)
        want = np.take(asc, [k - 1], axis=d) if a.ndim else asc
        np.testing.assert_array_equal(kv.values.cpu().numpy(), want)
        if a.ndim:
            np.testing.assert_array_equal(np.take_along_axis(a, kv.indices.cpu().numpy(), d), want)


@SETTINGS
@given(array_and_dim(elements=st.floats(-4, 4) | st.just(math.nan)))
def test_median_is_lower_median_and_propagates_nan(default_device, case):
    a, dim, contiguous = case
    t = as_tensor(a, contiguous)
    flat = np.sort(a.reshape(-1))
    if flat.size == 0 or np.isnan(flat).any():
        assert math.isnan(t.median().item())
    else:
        assert t.median().item() == flat[(flat.size - 1) // 2]
    d = dim % max(a.ndim, 1)
    if a.ndim and a.shape[d] == 0:
        with pytest.raises(IndexError, match="Expected reduction dim"):
            t.median(dim)
        return
    vals, idx = t.median(dim)
    moved = np.moveaxis(a, d, -1) if a.ndim else a.reshape(1)
    srt = np.sort(moved, axis=-1)
    lower = srt[..., (moved.shape[-1] - 1) // 2]
    expected = np.where(np.isnan(moved).any(-1), np.nan, lower)
    np.testing.assert_array_equal(vals.cpu().numpy(), expected)
    if a.ndim:
        picked = np.take_along_axis(moved, np.expand_dims(idx.cpu().numpy(), -1), -1)[..., 0]
        np.testing.assert_array_equal(picked, expected)


def test_median_and_kthvalue_details(default_device):
    m = torch.tensor([[3, 1, 2, 4]]).median(1, keepdim=True)
    assert m.values.tolist() == [[2]] and m.indices.tolist() == [[2]]
    nan_row = torch.median(torch.tensor([1.0, math.nan, 0.0, math.nan]), 0)
    assert math.isnan(nan_row.values.item()) and nan_row.indices.item() == 1
    assert math.isnan(torch.zeros(0).median().item())
    assert torch.zeros(0, 2).median(1).values.shape == (0,)
    assert torch.tensor(3.0).median(0).indices.item() == 0
    kv = torch.tensor([3.0, math.nan, 1.0, math.nan, math.inf]).kthvalue(4)
    assert math.isnan(kv.values.item()) and kv.indices.item() == 1


# ---------------------------------------------------------------------------
# unique
# ---------------------------------------------------------------------------
@SETTINGS
@given(hnp.arrays(np.float64, any_shape, elements=values))
def test_unique_matches_numpy(default_device, a):
    t = torch.tensor(a)
    u, inv, cnt = torch.unique(t, return_inverse=True, return_counts=True)
    eu, einv, ecnt = np.unique(a, return_inverse=True, return_counts=True, equal_nan=False)
    np.testing.assert_array_equal(u.cpu().numpy(), eu)
    np.testing.assert_array_equal(cnt.cpu().numpy(), ecnt)
    assert inv.shape == a.shape
    np.testing.assert_array_equal(u.cpu().numpy()[inv.cpu().numpy()], a)      # result[inverse] == input
    nan_groups = inv.cpu().numpy()[np.isnan(a)]
    assert len(set(nan_groups.tolist())) == nan_groups.size        # every NaN is distinct
    finite = ~np.isnan(a)
    np.testing.assert_array_equal(inv.cpu().numpy()[finite], einv.reshape(a.shape)[finite])


def test_unique_forms_and_dim(default_device):
    x = torch.tensor([[3, 1], [1, 2]])
    assert x.unique().tolist() == [1, 2, 3]
    u, c = x.unique(return_counts=True)
    assert c.tolist() == [2, 1, 1]
    u, i = x.unique(sorted=False, return_inverse=True)
    assert i.tolist() == [[2, 0], [0, 1]]
    rows = torch.tensor([[3, 1], [1, 2], [3, 1]])
    u, i, c = torch.unique(rows, dim=0, return_inverse=True, return_counts=True)
    assert u.tolist() == [[1, 2], [3, 1]] and i.tolist() == [1, 0, 1] and c.tolist() == [1, 2]
    cols = torch.unique(torch.tensor([[3, 1, 3], [1, 2, 1]]), dim=1)
    assert cols.tolist() == [[1, 3], [2, 1]]
    e = torch.unique(torch.zeros(0), return_inverse=True, return_counts=True)
    assert [t.shape for t in e] == [(0,), (0,), (0,)]
    assert torch.unique(torch.tensor([True, False, True])).tolist() == [False, True]


# ---------------------------------------------------------------------------
# gradients, graph nodes and errors
# ---------------------------------------------------------------------------
A = np.random.RandomState(0).permutation(24).reshape(2, 3, 4) / 7.0     # no ties


@pytest.mark.parametrize("fn", [
    lambda x: x.sort(1).values,
    lambda x: x.sort(0, descending=True).values,
    lambda x: x.topk(2, -1).values,
    lambda x: x.topk(2, 1, largest=False).values,
    lambda x: x.kthvalue(2, 2).values,
    lambda x: x.median(1, keepdim=True).values,
    lambda x: x.median().reshape(1),
    lambda x: x.msort(),
])
def test_gradients_match_finite_differences(default_device, fn):
    gradcheck(fn, A)


def test_median_gradient_is_shared_between_ties(default_device):
    x = torch.tensor([1.0, 2.0, 2.0, 3.0], requires_grad=True)
    x.median().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5, 0.0]


def test_double_backward_through_sort(default_device):
    x = torch.tensor(A[0], requires_grad=True)
    y = (x.sort(1).values ** 2 * torch.arange(4.0)).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    g.sum().backward()
    rank = np.argsort(np.argsort(A[0], 1), 1)
    np.testing.assert_allclose(x.grad.cpu().numpy(), 2.0 * rank)


def test_grad_fn_names_and_non_differentiable_indices(default_device):
    x = torch.tensor(A, requires_grad=True)
    assert x.sort().values.grad_fn.name() == "SortBackward0"
    assert x.sort(stable=True).values.grad_fn.name() == "SortBackward1"
    assert x.topk(1).values.grad_fn.name() == "TopkBackward0"
    assert x.kthvalue(1).values.grad_fn.name() == "KthvalueBackward0"
    assert x.median().grad_fn.name() == "MedianBackward0"
    assert x.median(0).values.grad_fn.name() == "MedianBackward1"
    assert x.unique().grad_fn.name() == "Unique2Backward0"
    idx = x.sort().indices
    assert idx.grad_fn is None and not idx.requires_grad
    assert x.argsort().requires_grad is False


def test_bad_arguments_raise_like_pytorch(default_device):
    x = torch.zeros(2, 3)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(4)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(-1)
    with pytest.raises(RuntimeError, match="selected number k out of range"):
        x.kthvalue(0)
    with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
        torch.zeros(2, 0).kthvalue(1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sort(2)
    with pytest.raises(TypeError):
        torch.sort(x, True)
    y = torch.tensor([2.0, 1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="not implemented"):
        y.unique().sum().backward()


def test_matches_pytorch(default_device):
    torch_ = pytest.importorskip("torch")
    a = np.array([[3.0, np.nan, 1.0, 1.0, -np.inf], [0.0, 2.0, 2.0, np.nan, 5.0]])
    for fn in [lambda m, t: m.sort(t, 1, descending=True, stable=True) if m is torch else
               m.sort(t, dim=1, descending=True, stable=True),
               lambda m, t: t.topk(2, 1), lambda m, t: t.kthvalue(4, 1),
               lambda m, t: t.median(1), lambda m, t: t.argsort(dim=1, stable=True)]:
        ours, theirs = fn(torch, torch.tensor(a)), fn(torch_, torch_.tensor(a))
        ours = ours if isinstance(ours, tuple) else (ours,)
        theirs = theirs if isinstance(theirs, tuple) else (theirs,)
        for o, t in zip(ours, theirs):
            np.testing.assert_array_equal(o.cpu().numpy(), t.cpu().numpy())
    u = torch.unique(torch.tensor(a), return_inverse=True, return_counts=True)
    v = torch_.unique(torch_.tensor(a), return_inverse=True, return_counts=True)
    for o, t in zip(u, v):
        np.testing.assert_array_equal(o.cpu().numpy(), t.cpu().numpy())

# ---------------------------------------------------------------------------
# On every device (the ``device`` fixture: cpu, and cuda on Numba's simulator
# without a GPU; tensors stay tiny there).
# ---------------------------------------------------------------------------
from device_checks import check, on  # noqa: E402


def test_sorting_on_every_device(device):
    a = np.random.default_rng(4).integers(0, 6, size=(2, 40)).astype(np.float32)   # ties; rows > one run
    a[0, 5] = np.nan
    x = on(a, device)
    values, indices = x.sort(1)
    check(indices, np.argsort(a, 1, kind="stable"), device)
    check(values, np.sort(a, 1), device)
    values, indices = x.sort(1, descending=True)
    check(values[1], -np.sort(-a[1]), device)
    top = x[1].topk(3)
    check(top.values, -np.sort(-a[1])[:3], device)
    u, inv, counts = torch.unique(x[1], return_inverse=True, return_counts=True)
    eu, einv, ecounts = np.unique(a[1], return_inverse=True, return_counts=True)
    check(u, eu, device)
    check(inv, einv, device)
    check(counts, ecounts, device)

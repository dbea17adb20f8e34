"""Index ops and advanced indexing, against NumPy (and PyTorch where installed).

NumPy is the oracle for values and shapes (hypothesis draws shapes, including
0-d and empty ones, and non-contiguous inputs); a small finite-difference
helper checks gradients in float64; PyTorch, when importable, checks the
exception types and messages and the few places where PyTorch's indexing
rules differ from NumPy's.
"""

import warnings

import numpy as np
import pytest
from hypothesis import assume, example, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import minitorch as torch
from device_checks import matches_cpu_gradients

pytestmark = pytest.mark.ops


SETTINGS = settings(max_examples=30, deadline=None)
shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def as_tensor(a: np.ndarray, contiguous: bool = True) -> torch.Tensor:
    """A minitorch tensor with ``a``'s values; with ``contiguous=False`` its strides are not."""
    if contiguous or a.ndim == 0:
        return torch.tensor(a)
    if a.ndim == 1:
        return torch.tensor(np.repeat(a, 2))[::2]
    rev = tuple(range(a.ndim - 1, -1, -1))
    return torch.tensor(np.ascontiguousarray(a.transpose(rev))).permute(rev)


def np_gather(x: np.ndarray, dim: int, idx: np.ndarray) -> np.ndarray:
    grids = list(np.indices(idx.shape, sparse=False)) if idx.ndim else []
    if not grids:
        return x[()] if x.ndim == 0 else x[idx]
    grids[dim] = idx
    return x[tuple(grids)]


def gradcheck(fn, *arrays, eps=1e-6, atol=1e-6, rtol=1e-4) -> None:
    """Compare autograd's gradient of ``sum(fn(*inputs) * w)`` with central differences
    (on ``cuda``: with the CPU's, see ``device_checks.matches_cpu_gradients``)."""
    inputs = [torch.tensor(np.asarray(a, np.float64), requires_grad=True) for a in arrays]
    if inputs[0].device.type != "cpu":
        matches_cpu_gradients(fn, inputs)
        return
    out = fn(*inputs)
    w = np.cos(np.arange(out.numel()) + 0.5).reshape(tuple(out.shape))

    def loss(*xs):
        return float((fn(*xs) * torch.tensor(w)).sum().item())

    (out * torch.tensor(w)).sum().backward()
    for k, a in enumerate(arrays):
        a = np.asarray(a, np.float64)
        numeric = np.zeros_like(a)
        flat = numeric.reshape(-1)
        for i in range(a.size):
            plus, minus = a.copy().reshape(-1), a.copy().reshape(-1)
            plus[i] += eps
            minus[i] -= eps
            args = [torch.tensor(np.asarray(b, np.float64)) for b in arrays]
            args[k] = torch.tensor(plus.reshape(a.shape))
            hi = loss(*args)
            args[k] = torch.tensor(minus.reshape(a.shape))
            flat[i] = (hi - loss(*args)) / (2 * eps)
        got = inputs[k].grad
        got = np.zeros_like(a) if got is None else got.cpu().numpy()
        np.testing.assert_allclose(got, numeric, atol=atol, rtol=rtol)


@st.composite
def gather_case(draw):
    shape = draw(shapes)
    dim = draw(st.integers(0, len(shape) - 1))
    idx_shape = tuple(draw(st.integers(0, s)) if d != dim else draw(st.integers(0, 4))
                      for d, s in enumerate(shape))
    if shape[dim] == 0:
        idx_shape = tuple(0 if d == dim else s for d, s in enumerate(idx_shape))
    x = draw(hnp.arrays(np.float64, shape, elements=st.floats(-5, 5)))
    idx = draw(hnp.arrays(np.int64, idx_shape, elements=st.integers(0, max(shape[dim] - 1, 0))))
    return x, dim, idx, draw(st.booleans())


# ---------------------------------------------------------------------------
# gather / scatter / scatter_add
# ---------------------------------------------------------------------------
@SETTINGS
@given(gather_case())
def test_gather_matches_numpy(default_device, case):
    x, dim, idx, contiguous = case
    out = as_tensor(x, contiguous).gather(dim, as_tensor(idx, contiguous))
    assert out.shape == idx.shape
    np.testing.assert_array_equal(out.cpu().numpy(), np_gather(x, dim, idx))


@SETTINGS
@given(gather_case())
def test_scatter_and_scatter_add_match_numpy(default_device, case):
    x, dim, idx, contiguous = case
    src = np.arange(1.0, idx.size + 1).reshape(idx.shape) if idx.size else np.zeros(idx.shape)
    grids = list(np.indices(idx.shape))
    grids[dim] = idx
    target = tuple(g.reshape(-1) for g in grids)
    expected = x.copy()
    for pos, v in zip(zip(*target), src.reshape(-1)):   # row-major order: last write wins
        expected[pos] = v
    t = as_tensor(x, contiguous)
    got = t.scatter(dim, as_tensor(idx, contiguous), as_tensor(src, contiguous))
    np.testing.assert_array_equal(got.cpu().numpy(), expected)
    added = x.copy()
    np.add.at(added, target, src.reshape(-1))
    np.testing.assert_allclose(t.scatter_add(dim, torch.tensor(idx), torch.tensor(src)).cpu().numpy(),
                               added)
    filled = x.copy()
    filled[target] = 7.0
    np.testing.assert_array_equal(t.scatter(dim, torch.tensor(idx), 7.0).cpu().numpy(), filled)
    np.testing.assert_array_equal(t.cpu().numpy(), x)     # out-of-place ops leave the input alone


def test_scatter_inplace_forms_and_reduce(default_device):
    x = torch.zeros(2, 3)
    idx = torch.tensor([[0, 1, 2], [2, 2, 0]])
    assert x.scatter_(1, idx, torch.ones(2, 3)) is x
    assert x.tolist() == [[1, 1, 1], [1, 0, 1]]
    x.scatter_add_(1, idx, torch.ones(2, 3))
    assert x.tolist() == [[2, 2, 2], [2, 0, 3]]
    x.scatter_(1, idx, 2.0, reduce="multiply")
    assert x.tolist() == [[4, 4, 4], [4, 0, 12]]
    with pytest.warns(UserWarning, match="deprecated"):
        y = x.scatter(1, idx, torch.ones(2, 3), reduce="add")
    assert y.tolist() == [[5, 5, 5], [5, 0, 14]]
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        x.scatter(1, idx, 1.0, reduce="max")
    v = torch.zeros(3, 4)[1:, ::2]      # writes go through a strided view into its base
    v.scatter_(0, torch.tensor([[1, 0]]), 5.0)
    assert v.tolist() == [[0, 5], [5, 0]]


def test_gather_and_scatter_zero_dim_and_int_dtypes(default_device):
    s = torch.tensor(3.0)
    assert s.gather(0, torch.tensor(0)).item() == 3.0
    assert s.gather(0, torch.tensor([0, 0])).tolist() == [3.0, 3.0]
    assert torch.tensor(1.0).scatter(0, torch.tensor(0), 5.0).item() == 5.0
    xi = torch.tensor([[1, 2], [3, 4]])
    assert xi.gather(1, torch.tensor([[1], [0]], dtype=torch.int32)).tolist() == [[2], [3]]
    assert xi.scatter(0, torch.tensor([[1, 0]]), 1.7).tolist() == [[1, 1], [1, 4]]
    b = torch.tensor([True, False, False])
    assert b.scatter(0, torch.tensor([2]), True).tolist() == [True, False, True]
    h = torch.tensor([1.0, 2.0, 3.0]).half()
    assert h.gather(0, torch.tensor([2, 0])).tolist() == [3.0, 1.0]
    assert h.scatter_add(0, torch.tensor([0, 0]), torch.ones(2).half()).tolist() == [3, 2, 3]


# ---------------------------------------------------------------------------
# index_select / index_add / index_copy / index_fill / take / embedding
# ---------------------------------------------------------------------------
@st.composite
def select_case(draw):
    shape = draw(shapes)
    dim = draw(st.integers(0, len(shape) - 1))
    n = draw(st.integers(0, 5)) if shape[dim] else 0
    idx = np.array(draw(st.lists(st.integers(0, max(shape[dim] - 1, 0)), min_size=n,
                                 max_size=n)), np.int64)
    x = draw(hnp.arrays(np.float64, shape, elements=st.floats(-5, 5)))
    return x, dim, idx, draw(st.booleans())


@SETTINGS
@given(select_case())
def test_index_select_and_index_add_match_numpy(default_device, case):
    x, dim, idx, contiguous = case
    t = as_tensor(x, contiguous)
    sel = t.index_select(dim, torch.tensor(idx))
    np.testing.assert_array_equal(sel.cpu().numpy(), np.take(x, idx, axis=dim))
    src = np.take(x, idx, axis=dim) * 2 + 1
    expected = x.copy()
    np.add.at(np.moveaxis(expected, dim, 0), idx, np.moveaxis(src, dim, 0))
    got = t.index_add(dim, torch.tensor(idx), as_tensor(src, contiguous), alpha=1)
    np.testing.assert_allclose(got.cpu().numpy(), expected)
    u = np.unique(idx)
    src_u = np.take(x, u, axis=dim) - 3
    copied = x.copy()
    np.moveaxis(copied, dim, 0)[u] = np.moveaxis(src_u, dim, 0)
    np.testing.assert_array_equal(t.index_copy(dim, torch.tensor(u), torch.tensor(src_u)).cpu().numpy(),
                                  copied)
    filled = x.copy()
    np.moveaxis(filled, dim, 0)[idx] = -9.0
    np.testing.assert_array_equal(t.index_fill(dim, torch.tensor(idx), -9.0).cpu().numpy(), filled)


def test_index_ops_inplace_alpha_and_scalars(default_device):
    x = torch.zeros(3, 2)
    x.index_add_(0, torch.tensor([0, 0, 2]), torch.ones(3, 2), alpha=2)
    assert x.tolist() == [[4, 4], [0, 0], [2, 2]]
    x.index_copy_(0, torch.tensor([1]), torch.full((1, 2), 7.0))
    x.index_fill_(1, torch.tensor([-1]), torch.tensor(-1.0))
    assert x.tolist() == [[4, -1], [7, -1], [2, -1]]
    assert torch.tensor(5.0).index_select(0, torch.tensor([0])).shape == ()
    assert torch.arange(3.0).index_select(0, torch.tensor(2)).tolist() == [2.0]
    assert torch.tensor(5.0).index_add(0, torch.tensor(0), torch.tensor(1.0)).item() == 6.0
    rows = torch.arange(6).reshape(3, 2)   # int data, int32 index
    assert rows.index_select(0, torch.tensor([2, 0], dtype=torch.int32)).tolist() == [[4, 5],
                                                                                     [0, 1]]


@SETTINGS
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                  elements=st.floats(-5, 5)), st.data())
def test_take_and_embedding_match_numpy(default_device, x, data):
    n = x.size
    idx = data.draw(hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
                               elements=st.integers(-n, n - 1))) if n else np.zeros(0, np.int64)
    contiguous = data.draw(st.booleans())
    got = as_tensor(x, contiguous).take(torch.tensor(idx))
    np.testing.assert_array_equal(got.cpu().numpy(), x.reshape(-1)[idx])
    if x.ndim == 2 and x.shape[0]:
        rows = data.draw(hnp.arrays(np.int64, (2, 3), elements=st.integers(0, x.shape[0] - 1)))
        emb = torch.embedding(as_tensor(x, contiguous), torch.tensor(rows))
        np.testing.assert_array_equal(emb.cpu().numpy(), x[rows])


def test_take_along_dim(default_device):
    x = np.random.RandomState(1).rand(3, 4)
    order = np.argsort(x, axis=1)
    t = torch.tensor(x)
    got = torch.take_along_dim(t, torch.tensor(order), dim=1)
    np.testing.assert_array_equal(got.cpu().numpy(), np.take_along_axis(x, order, 1))
    got = torch.take_along_dim(t, torch.tensor([[0, -1]]), dim=1)      # broadcasts rows
    np.testing.assert_array_equal(got.cpu().numpy(), x[:, [0, 3]])
    assert torch.take_along_dim(t, torch.tensor([5, 0])).tolist() == [x.flat[5], x.flat[0]]


# ---------------------------------------------------------------------------
# masks and nonzero
# ---------------------------------------------------------------------------
@SETTINGS
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                  elements=st.floats(-5, 5)), st.data())
def test_masked_ops_match_numpy(default_device, x, data):
    mshape = data.draw(hnp.broadcastable_shapes(x.shape, max_dims=3, max_side=4))
    mask = data.draw(hnp.arrays(np.bool_, mshape))
    contiguous = data.draw(st.booleans())
    t, m = as_tensor(x, contiguous), as_tensor(mask, contiguous)
    xb, mb = np.broadcast_arrays(x, mask)
    np.testing.assert_array_equal(t.masked_fill(m, -1.0).cpu().numpy(), np.where(mb, -1.0, xb))
    np.testing.assert_array_equal(t.masked_select(m).cpu().numpy(), xb[mb])
    src = np.arange(100.0, 100.0 + xb.size)
    expected = xb.copy()
    expected[mb] = src[:mb.sum()]
    np.testing.assert_array_equal(t.masked_scatter(m, torch.tensor(src)).cpu().numpy(), expected)
    np.testing.assert_array_equal(torch.nonzero(t).cpu().numpy(), np.argwhere(x))
    np.testing.assert_array_equal(torch.argwhere(m).cpu().numpy(), np.argwhere(mask))
    if x.ndim:
        for got, want in zip(t.nonzero(as_tuple=True), np.nonzero(x)):
            np.testing.assert_array_equal(got.cpu().numpy(), want)


def test_masked_inplace_and_value_dtypes(default_device):
    x = torch.arange(6).reshape(2, 3)
    x.masked_fill_(torch.tensor([True, False, True]), 1.7)     # int tensor: value truncated
    assert x.tolist() == [[1, 1, 1], [1, 4, 1]]
    y = torch.zeros(2, 3)
    y.masked_fill_(y == 0, torch.tensor(2.5, dtype=torch.float64))
    assert y.tolist() == [[2.5] * 3] * 2
    y.masked_scatter_(torch.tensor([[True, False, False], [False, False, True]]),
                      torch.tensor([7.0, 8.0, 9.0]))
    assert y.tolist() == [[7, 2.5, 2.5], [2.5, 2.5, 8]]
    assert torch.nonzero(torch.tensor(3.0)).shape == (1, 0)
    assert torch.nonzero(torch.tensor(0.0)).shape == (0, 0)
    assert torch.nonzero(torch.zeros(0, 3)).shape == (0, 2)


# ---------------------------------------------------------------------------
# advanced indexing
# ---------------------------------------------------------------------------
@st.composite
def advanced_key(draw):
    """A shape and a key of slices, int arrays, bool masks, None and ... (no plain ints:
    NumPy treats those as advanced, PyTorch as basic; see test_int_and_array_like_pytorch)."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4))
    key, d = [], 0
    used_ellipsis = False
    while d < len(shape):
        kind = draw(st.sampled_from(["slice", "array", "array", "mask", "none", "ellipsis"]))
        if kind == "slice":
            start = draw(st.integers(-shape[d], shape[d]))
            key.append(slice(start, None, draw(st.integers(1, 2))))
            d += 1
        elif kind == "array":
            ishape = draw(st.sampled_from([(2,), (1,), (2, 1), (0,), (1, 2)]))
            key.append(draw(hnp.arrays(np.int64, ishape,
                                       elements=st.integers(-shape[d], shape[d] - 1))))
            d += 1
        elif kind == "mask":
            k = draw(st.integers(1, len(shape) - d))
            key.append(draw(hnp.arrays(np.bool_, shape[d:d + k])))
            d += k
        elif kind == "none":
            key.append(None)
        elif not used_ellipsis:
            used_ellipsis = True
            key.append(Ellipsis)
            d = len(shape) - draw(st.integers(0, len(shape) - d))
    return shape, tuple(key)


def _numpy_key(key, ndim):
    """``key`` with ``...`` spelled out as full slices.

    NumPy decides whether advanced indices are "next to each other" by their
    places in the key, so an ``...`` standing for no dims separates them;
    PyTorch looks at the dims they index.  Without ``...`` both agree.
    """
    used = sum(k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else
               (0 if k is None or k is Ellipsis else 1) for k in key)
    out = []
    for k in key:
        out.extend([slice(None)] * (ndim - used) if k is Ellipsis else [k])
    return tuple(out)


def _to_minitorch_key(key, as_list):
    out = []
    for k in key:
        if isinstance(k, np.ndarray):
            out.append(k.tolist() if as_list and k.dtype != np.bool_ and k.size else
                       torch.tensor(k))
        else:
            out.append(k)
    return tuple(out)


# an ``...`` for no dims between two index arrays: NumPy and PyTorch place B differently
_ELLIPSIS_KEY = ((1, 1, 1, 1), (None, np.array([0, 0]), Ellipsis, np.array([0, 0]),
                                slice(0, None), slice(1, None)))


@settings(max_examples=60, deadline=None)
@given(advanced_key(), st.booleans(), st.booleans())
@example(_ELLIPSIS_KEY, False, False)
def test_advanced_getitem_matches_numpy(default_device, shape_key, as_list, contiguous):
    shape, key = shape_key
    x = np.arange(float(np.prod(shape))).reshape(shape)
    try:
        expected = x[_numpy_key(key, x.ndim)]
    except IndexError:          # e.g. index arrays that do not broadcast together
        with pytest.raises(IndexError):
            as_tensor(x, contiguous)[_to_minitorch_key(key, as_list)]
        return
    got = as_tensor(x, contiguous)[_to_minitorch_key(key, as_list)]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.cpu().numpy(), expected)


@settings(max_examples=40, deadline=None)
@given(advanced_key(), st.booleans())
@example(_ELLIPSIS_KEY, False)
def test_advanced_setitem_matches_numpy(default_device, shape_key, scalar):
    shape, key = shape_key
    x = np.arange(float(np.prod(shape))).reshape(shape)
    np_key = _numpy_key(key, x.ndim)
    try:
        region = x[np_key]
    except IndexError:
        return
    # unique positions only: with repeats, which write wins is up to the implementation
    positions = np.arange(x.size).reshape(shape)[np_key]
    assume(len(np.unique(positions)) == positions.size)
    value = -1.0 if scalar else -np.arange(1.0, region.size + 1).reshape(region.shape)
    expected = x.copy()
    expected[np_key] = value
    base = torch.tensor(np.zeros((2,) + shape))
    t = base[1]                                   # write through a view into base
    t[...] = torch.tensor(x)
    t[_to_minitorch_key(key, False)] = value if scalar else torch.tensor(value)
    np.testing.assert_array_equal(t.cpu().numpy(), expected)
    np.testing.assert_array_equal(base[0].cpu().numpy(), np.zeros(shape))


def test_advanced_indexing_special_keys(default_device):
    x = torch.arange(24.0).reshape(2, 3, 4)
    assert x[True].shape == (1, 2, 3, 4)
    assert x[False].shape == (0, 2, 3, 4)
    assert x[torch.tensor(1)].shape == (3, 4)
    view = x[torch.tensor(1)]                          # a 0-d int tensor is an int: a view
    assert view._base is x._base and view.data_ptr() == x[1].data_ptr()
    assert x[[]].shape == (0, 3, 4)
    assert x[np.array([1, 0])][0].tolist() == x[1].tolist()
    assert x[[True, False]].shape == (1, 3, 4)
    with pytest.warns(UserWarning):
        assert x[[[0, 1], [1, 2]]].tolist() == [x[0, 1].tolist(), x[1, 2].tolist()]
    with pytest.warns(UserWarning, match="uint8"):
        assert x[torch.tensor([1, 0], dtype=torch.uint8)].shape == (1, 3, 4)
    y = x[[0, 1]]
    assert y.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()   # a copy
    assert torch.tensor(5.0)[None, True].shape == (1, 1)


def test_int_and_array_like_pytorch(default_device):
    # PyTorch applies ints as basic indices first; NumPy would broadcast them.
    x = torch.zeros(2, 3, 4)
    assert x[0, :, [0, 1]].shape == (3, 2)          # NumPy: (2, 3)
    assert x[[0, 1], :, [1, 2]].shape == (2, 3)
    assert x[:, [0, 1], [1, 2]].shape == (2, 2)
    assert x[[0], None, [0]].shape == (1, 1, 4)


def test_setitem_broadcast_accumulate_and_dtype(default_device):
    x = torch.zeros(3, 4)
    x[[0, 2]] = torch.tensor([1.0, 2.0, 3.0, 4.0])
    x[:, [1]] = torch.tensor([[[7.0], [8.0], [9.0]]])       # leading 1s are dropped
    assert x.tolist() == [[1, 7, 3, 4], [0, 8, 0, 0], [1, 9, 3, 4]]
    x[x > 5] = torch.tensor(0.5, dtype=torch.float64)        # one value through a mask: cast
    assert x[:, 1].tolist() == [0.5, 0.5, 0.5]
    a = torch.zeros(3)
    a.index_put_((torch.tensor([0, 0, 2]),), torch.tensor([1.0, 2.0, 3.0]), accumulate=True)
    assert a.tolist() == [3.0, 0.0, 3.0]
    b = torch.index_put(a, (torch.tensor([1]),), torch.tensor(5.0))
    assert b.tolist() == [3.0, 5.0, 3.0] and a.tolist() == [3.0, 0.0, 3.0]
    i = torch.zeros(2, 2, dtype=torch.long)
    i[[0, 1], [1, 0]] = 2.9
    assert i.tolist() == [[0, 2], [2, 0]]
    with pytest.raises(RuntimeError, match="dtypes match"):
        x[[0]] = torch.ones(4, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="shape mismatch"):
        x[[0, 1]] = torch.ones(3)


# ---------------------------------------------------------------------------
# gradients (float64 finite differences) and graph nodes
# ---------------------------------------------------------------------------
X = np.random.RandomState(0).randn(2, 3, 4)
IDX = torch.tensor([[[2, 0], [1, 1], [0, 0]], [[1, 2], [2, 1], [0, 2]]])


@pytest.mark.parametrize("name,fn,arrays", [
    ("gather", lambda x: x.gather(1, torch.tensor([[[2, 0, 1, 1]], [[0, 0, 1, 2]]])), [X]),
    ("scatter", lambda x, s: x.scatter(1, torch.tensor([[[2, 0, 1, 1]]]), s), [X, X[:1, :2]]),
    ("scatter_value", lambda x: x.scatter(2, torch.tensor([[[3]]]), 2.0), [X]),
    ("scatter_add", lambda x, s: x.scatter_add(2, IDX.to(x.device), s), [X, X[:, :, :2]]),
    ("index_select", lambda x: x.index_select(2, torch.tensor([3, 0, 3])), [X]),
    ("index_add", lambda x, s: x.index_add(1, torch.tensor([2, 2]), s, alpha=3),
     [X, X[:, :2]]),
    ("index_copy", lambda x, s: x.index_copy(0, torch.tensor([1]), s), [X, X[:1]]),
    ("index_fill", lambda x, v: x.index_fill(1, torch.tensor([0, 0]), v), [X, np.array(0.3)]),
    ("masked_fill", lambda x, v: x.masked_fill(torch.tensor(X[0] > 0), v),
     [X, np.array(0.3)]),
    ("masked_select", lambda x: x.masked_select(torch.tensor(X > 0)), [X[0]]),
    ("masked_scatter", lambda x, s: x.masked_scatter(torch.tensor(X > 0), s), [X, X + 1]),
    ("take", lambda x: x.take(torch.tensor([[0, -1], [5, 5]])), [X]),
    ("take_along_dim", lambda x: torch.take_along_dim(x, torch.tensor([[[1], [0], [1]]]), 2),
     [X]),
    ("embedding", lambda w: torch.embedding(w, torch.tensor([[0, 2], [2, 2]])), [X[0]]),
    ("getitem", lambda x: x[[1, 0, 1], :, [3, 0, 3]], [X]),
    ("getitem_mask", lambda x: x[torch.tensor(X[:, :, 0] > 0)], [X]),
    ("index_put", lambda x, v: x.index_put((torch.tensor([0, 0]), torch.tensor([1, 1])), v,
                                           accumulate=True), [X, X[0, :2]]),
])
def test_gradients_match_finite_differences(default_device, name, fn, arrays):
    gradcheck(fn, *arrays)


def test_setitem_gradient_flows_to_base_and_value(default_device):
    def fn(x, v):
        y = x * 1
        y[1][[0, 2], 1:] = v          # through a basic view, into y
        y[[0, 1], [1, 0]] = v[:1]     # one value broadcast to two places
        return y
    gradcheck(fn, X, X[0, 0, 1:])


def test_double_backward_through_gather(default_device):
    x = torch.tensor(X, requires_grad=True)
    idx = torch.tensor([[[0, 0, 1, 2]]] * 2)
    y = (x.gather(1, idx) ** 2).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    g.sum().backward()
    expected = np.zeros_like(X)
    np.add.at(expected, (np.arange(2)[:, None, None], idx.cpu().numpy(), np.arange(4)), 2.0)
    np.testing.assert_allclose(x.grad.cpu().numpy(), expected)


def test_grad_fn_names(default_device):
    x = torch.zeros(2, 3, requires_grad=True)
    i = torch.tensor([[1]])
    names = {
        "GatherBackward0": x.gather(1, i), "ScatterBackward0": x.scatter(1, i, x[:1, :1]),
        "ScatterBackward1": x.scatter(1, i, 1.0), "ScatterAddBackward0": x.scatter_add(1, i, x),
        "IndexSelectBackward0": x.index_select(1, i[0]),
        "IndexAddBackward0": x.index_add(1, i[0], x[:, :1]),
        "IndexFillBackward0": x.index_fill(1, i[0], 1.0),
        "IndexCopyBackward0": x.index_copy(1, i[0], x[:, :1]),
        "MaskedFillBackward0": x.masked_fill(x > 0, 1.0),
        "MaskedFillBackward1": x.masked_fill(x > 0, torch.tensor(1.0)),
        "MaskedSelectBackward0": x.masked_select(x > 0),
        "MaskedScatterBackward0": x.masked_scatter(x > 0, x),
        "TakeBackward0": x.take(i), "IndexBackward0": x[[0, 1]],
        "IndexPutBackward0": x.index_put((i[0],), x[0]),
        "EmbeddingBackward0": torch.embedding(x, i),
    }
    for name, t in names.items():
        assert t.grad_fn.name() == name
    y = x * 1
    y[[0]] = 2.0
    assert y.grad_fn is not None and x.grad_fn is None


def test_inplace_on_leaf_requiring_grad_raises_but_no_grad_writes(default_device):
    x = torch.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.scatter_(0, torch.tensor([0]), 1.0)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x[[0]] = 1.0
    with torch.no_grad():
        x.index_fill_(0, torch.tensor([1]), 2.0)
        x[[2]] = 3.0
    assert x.tolist() == [0.0, 2.0, 3.0]


# ---------------------------------------------------------------------------
# bad input: PyTorch's exception types, and memory left untouched
# ---------------------------------------------------------------------------
def _bad_calls():
    x = torch.arange(6.0).reshape(2, 3)
    i5 = torch.tensor([[5]])
    return [
        (RuntimeError, "index 5 is out of bounds for dimension 1 with size 3",
         lambda: x.gather(1, i5)),
        (RuntimeError, "index -1 is out of bounds", lambda: x.gather(1, torch.tensor([[-1]]))),
        (RuntimeError, "Expected dtype int32/int64 for index",
         lambda: x.gather(1, torch.tensor([[1.0]]))),
        (RuntimeError, "same number of dimensions", lambda: x.gather(1, torch.tensor([1]))),
        (RuntimeError, "index 5 is out of bounds", lambda: x.scatter(1, i5, 1.0)),
        (RuntimeError, "index 5 is out of bounds", lambda: x.scatter_(1, i5, 1.0)),
        (RuntimeError, "index 5 is out of bounds",
         lambda: x.scatter_add_(1, i5, torch.ones(1, 1))),
        (RuntimeError, "self.dtype to be equal to src.dtype",
         lambda: x.scatter(1, torch.tensor([[1]]), torch.ones(1, 1, dtype=torch.float64))),
        (RuntimeError, "no larger than self",
         lambda: x.scatter(1, torch.tensor([[1, 1, 1, 1]]), torch.ones(1, 1))),
        (RuntimeError, "no larger size than src",       # a 0-d src holds one value
         lambda: torch.zeros(3).scatter_add(0, torch.tensor([1, 1]), torch.tensor(5.0))),
        (IndexError, "index out of range in self", lambda: x.index_select(1, torch.tensor([5]))),
        (IndexError, "index out of range in self",
         lambda: x.index_select(1, torch.tensor([-1]))),
        (IndexError, "supposed to be a vector",
         lambda: x.index_select(1, torch.tensor([[1]]))),
        (RuntimeError, "Expected dtype int32 or int64",
         lambda: x.index_select(1, torch.tensor([1.0]))),
        (RuntimeError, "index 5 is out of bounds",
         lambda: x.index_add_(1, torch.tensor([5]), torch.ones(2, 1))),
        (RuntimeError, "Number of indices",
         lambda: x.index_add(1, torch.tensor([1]), torch.ones(2, 2))),
        (RuntimeError, "same scalar type",
         lambda: x.index_add(1, torch.tensor([1]), torch.ones(2, 1, dtype=torch.float64))),
        (IndexError, "index_copy_\\(\\): index 5 is out of bounds",
         lambda: x.index_copy_(1, torch.tensor([5]), torch.ones(2, 1))),
        (RuntimeError, "Expected a long tensor",
         lambda: x.index_copy(1, torch.tensor([1], dtype=torch.int32), torch.ones(2, 1))),
        (IndexError, "index -4 is out of bounds",
         lambda: x.index_fill_(1, torch.tensor([-4]), 1.0)),
        (IndexError, "Expected dtype int64 for index",
         lambda: x.index_fill(1, torch.tensor([1], dtype=torch.int32), 1.0)),
        (RuntimeError, "0-dimensional value tensor",
         lambda: x.index_fill(1, torch.tensor([1]), torch.tensor([1.0]))),
        (RuntimeError, "only supports boolean masks",
         lambda: x.masked_fill(torch.tensor([1, 0, 1]), 1.0)),
        (RuntimeError, "0-dimensional value tensor",
         lambda: x.masked_fill(torch.tensor([True, False, True]), torch.tensor([1.0]))),
        (RuntimeError, "doesn't match the broadcast shape",
         lambda: torch.zeros(3).masked_fill_(torch.ones(2, 3, dtype=torch.bool), 1.0)),
        (RuntimeError, "expected BoolTensor", lambda: x.masked_select(torch.tensor([1, 0, 1]))),
        (RuntimeError, "Number of elements of source",
         lambda: x.masked_scatter(x > -1, torch.ones(5))),
        (IndexError, "tried to access index 10 on a tensor of 6 elements",
         lambda: x.take(torch.tensor([10]))),
        (IndexError, "tried to access index -7", lambda: x.take(torch.tensor([-7]))),
        (RuntimeError, "Expected a long tensor", lambda: x.take(torch.tensor([1.0]))),
        (IndexError, "tried to take from an empty tensor",
         lambda: torch.zeros(0).take(torch.tensor([0]))),
        (RuntimeError, "index 5 is out of bounds",
         lambda: torch.take_along_dim(x, torch.tensor([[5]]), 1)),
        (IndexError, "index out of range in self", lambda: torch.embedding(x, torch.tensor([2]))),
        (IndexError, "index out of range in self",
         lambda: torch.embedding(x, torch.tensor([-1]))),
        (RuntimeError, "'indices' to have one of the following scalar types",
         lambda: torch.embedding(x, torch.tensor([1.0]))),
        (RuntimeError, "'weight' must be 2-D", lambda: torch.embedding(torch.zeros(3),
                                                                        torch.tensor([1]))),
        (IndexError, "index 5 is out of bounds for dimension 0 with size 2", lambda: x[[5]]),
        (IndexError, "index -3 is out of bounds for dimension 0 with size 2", lambda: x[[-3]]),
        (IndexError, "index 5 is out of bounds for dimension 1 with size 3",
         lambda: x[:, [5]]),
        (IndexError, "index 5 is out of bounds for dimension 0 with size 3",
         lambda: x[0, [5]]),
        (IndexError, "must be long, int, byte or bool", lambda: x[torch.tensor([1.0])]),
        (IndexError, "must be long, int, byte or bool", lambda: x[[1.0]]),
        (IndexError, "The shape of the mask", lambda: x[torch.tensor([True, False, True])]),
        (IndexError, "could not be broadcast together",
         lambda: x[torch.tensor([0, 1]), torch.tensor([0, 1, 2])]),
        (IndexError, "too many indices", lambda: x[[0], [0], [0]]),
        (IndexError, "dimension with size 0", lambda: torch.zeros(2, 0)[:, [0]]),
        (TypeError, "expected Tensor as element 1",
         lambda: x.index_put((torch.tensor([0]), None), torch.tensor(1.0))),
        (RuntimeError, "dtypes match",
         lambda: x.index_put((torch.tensor([0]),), torch.tensor(1.0, dtype=torch.float64))),
        (RuntimeError, "more than one element of the written-to tensor",
         lambda: torch.zeros(3).expand(2, 3).index_fill_(0, torch.tensor([0]), 1.0)),
    ]


def test_bad_input_raises_pytorch_exceptions(default_device):
    for exc, pattern, call in _bad_calls():
        with pytest.raises(exc, match=pattern):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                call()


def test_bad_input_matches_pytorch_exception_types(default_device):
    torch_ = pytest.importorskip("torch")
    x = torch_.arange(6.0).reshape(2, 3)
    same_calls = [
        lambda m, x: x.gather(1, m.tensor([[5]])),
        lambda m, x: x.gather(1, m.tensor([[1.0]])),
        lambda m, x: x.scatter_(1, m.tensor([[-1]]), 1.0),
        lambda m, x: x.index_select(0, m.tensor([5])),
        lambda m, x: x.index_add(1, m.tensor([5]), m.ones(2, 1)),
        lambda m, x: x.index_copy(1, m.tensor([5]), m.ones(2, 1)),
        lambda m, x: x.index_fill(1, m.tensor([5]), 1.0),
        lambda m, x: x.masked_fill(m.tensor([1, 0, 1]), 1.0),
        lambda m, x: x.take(m.tensor([10])),
        lambda m, x: m.embedding(x, m.tensor([7])),
        lambda m, x: x[[5]],
        lambda m, x: x[m.tensor([1.0])],
        lambda m, x: x[m.tensor([True, False, True])],
        lambda m, x: x[[0, 1], [0, 1, 2]],
    ]
    for call in same_calls:
        with pytest.raises(Exception) as theirs:
            call(torch_, x)
        with pytest.raises(type(theirs.value)):
            call(torch, torch.arange(6.0).reshape(2, 3))


def test_out_of_range_index_never_touches_memory(default_device):
    base = torch.arange(10.0)
    view = base[2:5]                    # its neighbours in memory belong to base
    before = base.tolist()
    attempts = [
        lambda: view.index_fill_(0, torch.tensor([3]), -1.0),
        lambda: view.scatter_(0, torch.tensor([0, 3]), torch.tensor([-1.0, -1.0])),
        lambda: view.scatter_add_(0, torch.tensor([-1]), torch.tensor([-1.0])),
        lambda: view.index_add_(0, torch.tensor([1, 3]), torch.ones(2)),
        lambda: view.index_copy_(0, torch.tensor([4]), torch.ones(1)),
        lambda: view.index_put_((torch.tensor([1, 3]),), torch.tensor(-1.0)),
        lambda: view.__setitem__([3], -1.0),
        lambda: view.__setitem__([-4], -1.0),
    ]
    for attempt in attempts:
        with pytest.raises((IndexError, RuntimeError)):
            attempt()
        assert base.tolist() == before
    reads = [lambda: view.gather(0, torch.tensor([3])), lambda: view[[3]],
             lambda: view.index_select(0, torch.tensor([3])), lambda: view.take(torch.tensor([3])),
             lambda: torch.embedding(view.reshape(3, 1), torch.tensor([3]))]
    for read in reads:
        with pytest.raises((IndexError, RuntimeError)):
            read()


def test_matches_pytorch_on_mixed_keys(default_device):
    torch_ = pytest.importorskip("torch")
    a = np.arange(60.0).reshape(3, 4, 5)
    keys = [
        lambda m: (0, slice(None), [0, 1]),
        lambda m: ([[0], [2]], slice(1, None), m.tensor([1, 4])),
        lambda m: (None, [1, 0, 2], None, m.tensor([True, False, True, True])),
        lambda m: (Ellipsis, [4, 0], None),
        lambda m: (m.tensor(2), [0, 3]),
        lambda m: ([1], 2, [3]),
    ]
    for key in keys:
        theirs = torch_.tensor(a)[key(torch_)]
        ours = torch.tensor(a)[key(torch)]
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.cpu().numpy(), theirs.cpu().numpy())


def test_scatter_kernels_split_by_index_range_without_races(default_device):
    # Call the kernels with more value buckets than this machine may have cores:
    # every bucket count must give the sequential answer (repeats add up in order).
    from minitorch.backends.cpu import index as ix
    rs = np.random.RandomState(7)
    idx = rs.randint(0, 9, 200).astype(np.int64)
    src = rs.rand(200)
    expected = np.zeros(9)
    np.add.at(expected, idx, src)
    last = np.zeros(9)
    for i, v in zip(idx, src):
        last[i] = v
    for nb in (1, 2, 3, 9):
        out = np.zeros(9)
        ix.scatter_rows(ix.ADD, out, 0, 0, 1, idx, src, 1, 200, 1, np.int64(0), np.int64(9),
                        np.int64(nb))
        np.testing.assert_allclose(out, expected)
        out = np.zeros(9)
        one = np.ones(1, np.int64)
        ix.scatter_strided(ix.SET, out, 0, np.zeros(1, np.int64), idx, 0, one, np.int64(1), src,
                           0, one, np.array([200], np.int64), np.int64(0), np.int64(9),
                           np.int64(nb))
        np.testing.assert_array_equal(out, last)

# ---------------------------------------------------------------------------
# On every device (the ``device`` fixture: cpu, and cuda on Numba's simulator
# without a GPU; tensors stay tiny there).
# ---------------------------------------------------------------------------
from device_checks import check, on  # noqa: E402
from minitorch.nn import functional as F  # noqa: E402


def test_indexing_gather_scatter_on_every_device(device):
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    x = on(a, device)
    idx = np.array([[0, 2, 1], [3, 3, 0]])
    check(torch.gather(x, 1, on(idx[:, :3], device)), np.take_along_axis(a[:2], idx, 1),
          device)
    check(x[[0, 2, -1]], a[[0, 2, -1]], device)
    check(x[on(np.array([1, 1]), device), 1:3], a[[1, 1], 1:3], device)
    check(x[:, [4, 0]], a[:, [4, 0]], device)
    check(x[x > 10], a[a > 10], device)
    check(x.index_select(1, on(np.array([3, 1, 3]), device)), a[:, [3, 1, 3]], device)
    check(x.t().index_select(0, on(np.array([2]), device)), a.T[[2]], device)
    check(x.take(on(np.array([19, 0, 7]), device)), a.reshape(-1)[[19, 0, 7]], device)
    check(x.nonzero(), np.argwhere(a), device)
    check(x.masked_select(x < 3), a[a < 3], device)
    check(x.masked_fill(x > 15, -1.0), np.where(a > 15, -1, a), device)
    check(x.t().masked_fill(x.t() > 15, -1.0), np.where(a.T > 15, -1, a.T), device)

    z = torch.zeros(3, 4, device=device)
    src = torch.arange(1.0, 9.0, device=device).reshape(2, 4)
    index = on(np.array([[0, 1, 2, 0], [0, 0, 0, 1]]), device)
    expected = np.zeros((3, 4), np.float32)
    np.add.at(expected, (np.array([[0, 1, 2, 0], [0, 0, 0, 1]]), np.arange(4)),
              np.arange(1.0, 9.0).reshape(2, 4))
    check(z.scatter_add(0, index, src), expected, device)        # repeated indices add up
    check(z.scatter(0, index[:1], src[:1]), [[1, 0, 0, 4], [0, 2, 0, 0], [0, 0, 3, 0]],
          device)
    with pytest.warns(UserWarning, match="reduce argument of torch.scatter"):
        product = torch.ones(3, device=device).scatter(
            0, on(np.array([0, 0, 2]), device), torch.tensor([5.0, 6.0, 7.0], device=device),
            reduce="multiply")
    check(product, [30.0, 1.0, 7.0], device)
    check(torch.zeros(4, device=device).index_add(0, on(np.array([1, 3, 1]), device),
                                                  torch.ones(3, device=device)),
          [0.0, 2.0, 0.0, 1.0], device)
    check(torch.zeros(2, 3, device=device).index_copy(1, on(np.array([2, 0]), device),
                                                      torch.ones(2, 2, device=device)),
          [[1, 0, 1], [1, 0, 1]], device)
    x2 = x.clone()
    x2[on(np.array([0, 3]), device)] = torch.tensor(-1.0, device=device)
    x2[[1, 1], [0, 0]] += 100.0
    e2 = a.copy()
    e2[[0, 3]] = -1
    e2[1, 0] += 100
    check(x2, e2, device)
    h = torch.tensor([1.0, 2.0], dtype=torch.float16, device=device)
    check(torch.zeros(3, dtype=torch.float16, device=device).index_add(
        0, on(np.array([2, 2]), device), h), np.array([0, 0, 3], np.float16), device)
    check(h[on(np.array([1, 1, 0]), device)], np.array([2, 2, 1], np.float16), device)


def test_index_errors_before_any_kernel_on_every_device(device):
    x = torch.arange(6.0, device=device).reshape(2, 3)
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 1"):
        torch.gather(x, 1, on(np.array([[0, 3]]), device))
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
        x[on(np.array([0, 5]), device)]
    with pytest.raises(IndexError):
        x[on(np.array([-3]), device)]
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(on(np.array([4]), device), x)
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.scatter_add_(1, on(np.array([[9]]), device), x[:, :1])
    with pytest.raises(IndexError):
        x.index_select(0, on(np.array([2]), device))
    check(x, np.arange(6.0).reshape(2, 3), device)        # nothing was written

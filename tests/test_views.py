"""Views: which reshapes share storage, and every view op, against NumPy (and PyTorch if present).

A view is a new header (shape, stride, offset) over the same storage.  The
rule for ``view`` is PyTorch's: it succeeds exactly when the requested shape
can be expressed with strides over the existing memory.  NumPy has the same
rule for ``reshape(..., copy=False)``, so the property tests below need no
PyTorch; with PyTorch installed they also compare against it directly.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import minitorch as torch

pytestmark = pytest.mark.tensor


SETTINGS = settings(max_examples=60, deadline=None)


def shares_storage(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


# ---------------------------------------------------------------------------
# strategies: an arbitrary strided tensor, and a shape with the same numel
# ---------------------------------------------------------------------------
@st.composite
def strided_case(draw):
    """(numpy array, minitorch tensor) over the same memory, permuted, sliced, unsqueezed."""
    shape = draw(st.lists(st.integers(0 if draw(st.booleans()) else 1, 4), min_size=1,
                          max_size=4))
    base = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    arr, t = base, torch.from_numpy(base)
    perm = draw(st.permutations(range(len(shape))))
    arr, t = arr.transpose(perm), t.permute(*perm)
    key = []
    for size in arr.shape:
        if draw(st.booleans()):
            start = draw(st.integers(0, size))
            stop = draw(st.integers(start, size))
            key.append(slice(start, stop, draw(st.integers(1, 3))))
        else:
            key.append(slice(None))
    arr, t = arr[tuple(key)], t[tuple(key)]
    if draw(st.booleans()):
        d = draw(st.integers(0, arr.ndim))
        arr, t = np.expand_dims(arr, d), t.unsqueeze(d)
    return arr, t


@st.composite
def same_numel_shape(draw, n):
    """A shape with ``n`` elements (factors of n in random order, some 1s, maybe a -1)."""
    if n == 0:
        dims = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
        dims[draw(st.integers(0, len(dims) - 1))] = 0
        return tuple(dims)
    dims, rest = [], n
    for _ in range(draw(st.integers(0, 3))):
        divisors = [k for k in range(1, rest + 1) if rest % k == 0]
        k = draw(st.sampled_from(divisors))
        dims.append(k)
        rest //= k
    dims.append(rest)
    dims += [1] * draw(st.integers(0, 2))
    dims = draw(st.permutations(dims))
    if draw(st.booleans()):
        dims = list(dims)
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    return tuple(dims)


def _np_view(arr, shape):
    try:
        return np.reshape(arr, shape, copy=False)
    except ValueError:
        return None


def _mt_view(t, shape):
    try:
        return t.view(shape)
    except RuntimeError:
        return None


@SETTINGS
@given(strided_case(), st.data())
def test_view_succeeds_exactly_when_numpy_can_reshape_without_copy(default_device, case, data):
    arr, t = case
    assert t.shape == arr.shape
    np.testing.assert_array_equal(t.cpu().numpy(), arr)
    shape = data.draw(same_numel_shape(arr.size))
    nv, tv = _np_view(arr, shape), _mt_view(t, shape)
    assert (nv is None) == (tv is None), (arr.shape, arr.strides, shape)
    if tv is not None:
        assert tv.shape == nv.shape
        np.testing.assert_array_equal(tv.cpu().numpy(), nv)
        if arr.size:
            assert tv.stride() == tuple(s // 8 for s in nv.strides) or 1 in nv.shape
            assert shares_storage(tv, t)
            assert tv.data_ptr() == nv.__array_interface__["data"][0]


@SETTINGS
@given(strided_case(), st.data())
def test_view_rule_matches_pytorch(default_device, case, data):
    real = pytest.importorskip("torch")
    arr, t = case
    shape = data.draw(same_numel_shape(arr.size))
    r = real.from_numpy(arr.base if arr.base is not None else arr)
    r = real.as_strided(r.reshape(-1), arr.shape, [s // 8 for s in arr.strides],
                        (arr.__array_interface__["data"][0] -
                         (arr.base if arr.base is not None else arr)
                         .__array_interface__["data"][0]) // 8) if arr.size else \
        real.from_numpy(np.ascontiguousarray(arr))
    try:
        rv = r.view(shape)
    except RuntimeError:
        rv = None
    tv = _mt_view(t, shape)
    assert (rv is None) == (tv is None), (arr.shape, t.stride(), shape)
    if tv is not None and arr.size:
        assert tuple(tv.shape) == tuple(rv.shape)
        # (the stride of a size-1 dim is arbitrary)
        assert [s for s, n in zip(tv.stride(), tv.shape) if n > 1] == \
            [s for s, n in zip(rv.stride(), rv.shape) if n > 1]
        assert tv.tolist() == rv.tolist()


@SETTINGS
@given(strided_case(), st.data())
def test_reshape_is_a_view_when_possible_else_a_copy(default_device, case, data):
    arr, t = case
    assume(arr.size > 0)
    shape = data.draw(same_numel_shape(arr.size))
    r = t.reshape(shape)
    np.testing.assert_array_equal(r.cpu().numpy(), arr.reshape(shape))
    if _np_view(arr, shape) is not None:
        assert shares_storage(r, t)
    else:
        assert not shares_storage(r, t) and r.is_contiguous()


def test_view_errors_and_inference(default_device):
    a = torch.arange(6)
    assert a.view(2, -1).shape == (2, 3)
    assert a.view((3, 2)).shape == (3, 2) and a.view([1, 6]).shape == (1, 6)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        a.view(-1, -1)
    with pytest.raises(RuntimeError, match=r"shape '\[4, -1\]' is invalid for input of size 6"):
        a.view(4, -1)
    with pytest.raises(RuntimeError):
        a.view(0, -1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        a.view(2, 3).t().view(6)
    with pytest.raises(RuntimeError):
        torch.arange(0).view(2, 0, -1)          # -1 is ambiguous with 0 elements
    assert torch.arange(0).view(2, 0, 3).shape == (2, 0, 3)


def test_seed_transpose_view_error_and_contiguous_fix(default_device):
    a = torch.arange(1, 13).view(4, 3)
    at = a.t()
    assert a.is_contiguous() and not at.is_contiguous()
    assert a.stride() == (3, 1) and at.stride() == (1, 3)
    with pytest.raises(RuntimeError):
        at.view(-1)
    c = at.contiguous()
    assert c.stride() == (4, 1) and not shares_storage(c, a)
    assert c.view(-1).tolist() == [1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12]
    # splitting one dim of a non-contiguous tensor is still a view
    assert shares_storage(at.view(3, 2, 2), a)


def test_contiguous_returns_self_when_already_contiguous(default_device):
    a = torch.arange(6).view(2, 3)
    assert a.contiguous() is a
    assert torch.zeros(3, 1).t().contiguous().is_contiguous()


# ---------------------------------------------------------------------------
# the permuting and size-1 views
# ---------------------------------------------------------------------------
def test_transpose_permute_movedim_strides(default_device):
    a = torch.arange(24).view(2, 3, 4)
    n = np.arange(24).reshape(2, 3, 4)
    assert a.transpose(0, 2).stride() == (1, 4, 12)
    assert a.transpose(-1, -2).shape == (2, 4, 3)
    np.testing.assert_array_equal(a.permute(2, 0, 1).cpu().numpy(), n.transpose(2, 0, 1))
    assert a.permute((2, 0, 1)).stride() == (1, 12, 4)
    np.testing.assert_array_equal(a.movedim(0, 2).cpu().numpy(), np.moveaxis(n, 0, 2))
    np.testing.assert_array_equal(a.movedim((0, 1), (2, 0)).cpu().numpy(),
                                  np.moveaxis(n, (0, 1), (2, 0)))
    np.testing.assert_array_equal(torch.moveaxis(a, -1, 0).cpu().numpy(), np.moveaxis(n, -1, 0))
    np.testing.assert_array_equal(a.swapaxes(0, 1).cpu().numpy(), n.swapaxes(0, 1))
    for v in (a.transpose(0, 2), a.permute(2, 0, 1), a.movedim(0, 2), a.mT, a.T):
        assert shares_storage(v, a)
    assert a.T.shape == (4, 3, 2) and a.mT.shape == (2, 4, 3)


def test_permute_and_transpose_errors(default_device):
    a = torch.zeros(2, 3)
    with pytest.raises(RuntimeError):
        a.permute(0)
    with pytest.raises(RuntimeError):
        a.permute(1, 1)
    with pytest.raises(IndexError):
        a.permute(2, 0)
    with pytest.raises(IndexError):
        a.transpose(0, 2)
    with pytest.raises(RuntimeError, match="expects a tensor with <= 2 dimensions"):
        torch.zeros(2, 3, 4).t()
    assert torch.zeros(3).t().shape == (3,) and torch.tensor(1.0).t().shape == ()


def test_squeeze_and_unsqueeze(default_device):
    a = torch.zeros(2, 1, 3, 1)
    assert a.squeeze().shape == (2, 3)
    assert a.squeeze(1).shape == (2, 3, 1)
    assert a.squeeze(0).shape == (2, 1, 3, 1)         # not size 1: unchanged
    assert a.squeeze((1, 3)).shape == (2, 3)
    assert a.squeeze(-1).shape == (2, 1, 3)
    with pytest.raises(IndexError):
        a.squeeze(4)
    assert torch.tensor(1.0).squeeze(0).shape == ()
    b = torch.zeros(2, 3)
    assert b.unsqueeze(0).shape == (1, 2, 3) and b.unsqueeze(-1).shape == (2, 3, 1)
    assert b.unsqueeze(2).stride() == (3, 1, 1)
    assert b.unsqueeze(1).stride() == (3, 3, 1)
    with pytest.raises(IndexError):
        b.unsqueeze(3)
    with pytest.raises(IndexError):
        b.unsqueeze(-4)
    assert shares_storage(a.squeeze(), a) and shares_storage(b.unsqueeze(0), b)


def test_expand_uses_stride_zero(default_device):
    a = torch.tensor([[1.0], [2.0], [3.0]])
    e = a.expand(3, 4)
    assert e.stride() == (1, 0) and shares_storage(e, a)
    assert e.tolist() == [[1.0] * 4, [2.0] * 4, [3.0] * 4]
    assert a.expand(2, 3, 4).stride() == (0, 1, 0)
    assert a.expand(-1, 2).shape == (3, 2)
    assert torch.zeros(3).expand(2, 3).shape == (2, 3)
    assert torch.broadcast_to(torch.zeros(3), (2, 3)).stride() == (0, 1)
    assert a.expand_as(torch.zeros(3, 5)).shape == (3, 5)
    with pytest.raises(RuntimeError, match=r"expanded size of the tensor \(4\) must match the "
                                           r"existing size \(3\)"):
        a.expand(4, 4)
    with pytest.raises(RuntimeError, match="number of sizes provided"):
        a.expand(4)


def test_flatten_and_unflatten(default_device):
    a = torch.arange(24).view(2, 3, 4)
    assert a.flatten().shape == (24,)
    assert a.flatten(1).shape == (2, 12)
    assert a.flatten(0, 1).shape == (6, 4)
    assert a.flatten(-2, -1).shape == (2, 12)
    assert torch.tensor(5).flatten().shape == (1,)
    assert shares_storage(a.flatten(), a)
    f = a.transpose(0, 2).flatten()
    assert not shares_storage(f, a)
    np.testing.assert_array_equal(f.cpu().numpy(), np.arange(24).reshape(2, 3, 4).transpose(2, 1, 0)
                                  .reshape(-1))
    with pytest.raises(RuntimeError):
        a.flatten(2, 1)
    assert torch.zeros(2, 12).unflatten(1, (3, 4)).shape == (2, 3, 4)
    assert torch.zeros(2, 12).unflatten(1, (-1, 4)).shape == (2, 3, 4)
    assert torch.zeros(2, 12).unflatten(-1, (2, 2, 3)).shape == (2, 2, 2, 3)
    with pytest.raises(RuntimeError):
        torch.zeros(2, 12).unflatten(1, (5, 4))


# ---------------------------------------------------------------------------
# slicing views: narrow, select, split, chunk, unbind, diagonal, as_strided
# ---------------------------------------------------------------------------
def test_narrow(default_device):
    a = torch.arange(10)
    assert a.narrow(0, 2, 3).tolist() == [2, 3, 4]
    assert a.narrow(0, -3, 2).tolist() == [7, 8]
    assert a.narrow(0, 10, 0).shape == (0,)
    assert a.narrow(0, 2, 3).storage_offset() == 2 and shares_storage(a.narrow(0, 2, 3), a)
    with pytest.raises(RuntimeError):
        a.narrow(0, 8, 3)
    with pytest.raises(IndexError):
        a.narrow(0, 11, 0)
    b = torch.arange(12).view(3, 4)
    np.testing.assert_array_equal(b.narrow(1, 1, 2).cpu().numpy(), np.arange(12).reshape(3, 4)[:, 1:3])


def test_select(default_device):
    b = torch.arange(12).view(3, 4)
    assert b.select(1, -1).tolist() == [3, 7, 11]
    assert b.select(0, 1).storage_offset() == 4 and b.select(1, 2).stride() == (4,)
    with pytest.raises(IndexError):
        b.select(1, 4)
    with pytest.raises(IndexError):
        b.select(2, 0)
    with pytest.raises(IndexError):
        torch.tensor(1).select(0, 0)


@pytest.mark.parametrize("size, split, expected", [
    (10, 3, [3, 3, 3, 1]), (10, [2, 8], [2, 8]), (6, 6, [6]), (6, 10, [6]),
    (5, [0, 5, 0], [0, 5, 0]),
])
def test_split_sizes(default_device, size, split, expected):
    parts = torch.arange(size).split(split)
    assert [len(p) for p in parts] == expected
    assert torch.cat(parts).tolist() == list(range(size))
    assert all(shares_storage(p, parts[0]) for p in parts)


def test_split_errors(default_device):
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum"):
        torch.arange(10).split([2, 7])


@pytest.mark.parametrize("size, chunks, expected", [
    (10, 3, [4, 4, 2]), (10, 4, [3, 3, 3, 1]), (6, 4, [2, 2, 2]), (5, 4, [2, 2, 1]),
    (2, 5, [1, 1]), (0, 2, [0, 0]),
])
def test_chunk_sizes_like_pytorch(default_device, size, chunks, expected):
    parts = torch.arange(size).chunk(chunks)
    assert [p.shape[0] for p in parts] == expected


def test_chunk_dim_and_error(default_device):
    parts = torch.arange(12).view(3, 4).chunk(2, dim=1)
    assert [p.shape for p in parts] == [(3, 2), (3, 2)]
    with pytest.raises(RuntimeError, match="chunk expects `chunks` to be greater than 0"):
        torch.arange(3).chunk(0)


def test_unbind_and_iteration(default_device):
    a = torch.arange(6).view(2, 3)
    assert [p.tolist() for p in a.unbind(1)] == [[0, 3], [1, 4], [2, 5]]
    assert [p.tolist() for p in torch.unbind(a)] == [[0, 1, 2], [3, 4, 5]]
    assert all(shares_storage(p, a) for p in a.unbind(1))
    assert [p.tolist() for p in a] == [[0, 1, 2], [3, 4, 5]]


def test_tensor_split(default_device):
    assert [p.tolist() for p in torch.arange(7).tensor_split(3)] == [[0, 1, 2], [3, 4], [5, 6]]
    assert [p.tolist() for p in torch.arange(7).tensor_split([1, 5])] == \
        [[0], [1, 2, 3, 4], [5, 6]]


def test_diagonal(default_device):
    n = np.arange(12).reshape(3, 4)
    a = torch.arange(12).view(3, 4)
    for k in (-2, -1, 0, 1, 3, 5):
        np.testing.assert_array_equal(a.diagonal(k).cpu().numpy(), np.diagonal(n, k))
    assert shares_storage(a.diagonal(), a) and a.diagonal().stride() == (5,)
    b = torch.arange(24).view(2, 3, 4)
    np.testing.assert_array_equal(b.diagonal(0, 1, 2).cpu().numpy(),
                                  np.diagonal(np.arange(24).reshape(2, 3, 4), 0, 1, 2))


def test_as_strided(default_device):
    a = torch.arange(10)
    assert a.as_strided((3, 3), (1, 1)).tolist() == [[0, 1, 2], [1, 2, 3], [2, 3, 4]]
    assert a.as_strided((3,), (2,), 1).tolist() == [1, 3, 5]
    assert a[2:].as_strided((2,), (1,)).tolist() == [2, 3]       # offset defaults to x's
    assert a[2:].as_strided((2,), (1,), 0).tolist() == [0, 1]    # offset is absolute
    assert shares_storage(a.as_strided((2,), (3,)), a)
    with pytest.raises(RuntimeError):
        a.as_strided((30,), (1,))


# ---------------------------------------------------------------------------
# basic indexing
# ---------------------------------------------------------------------------
INDEX_KEYS = [
    (slice(None, None, 3),), (slice(-3, None),), (slice(-3, -1),), (slice(8, 2),),
    (slice(20, None),), (slice(-20, 2),), (1,), (-1,), (Ellipsis, 1), (None, Ellipsis, None),
    (slice(None), None), (1, None), (slice(1, 3), slice(None, None, 2)), (Ellipsis,),
    (None,), (0, 2), (slice(None, None, 2), -1), (np.int64(1),),
]


@pytest.mark.parametrize("key", INDEX_KEYS, ids=[str(k) for k in INDEX_KEYS])
def test_basic_indexing_matches_numpy_and_is_a_view(default_device, key):
    n = np.arange(24).reshape(4, 6)
    a = torch.arange(24).view(4, 6)
    got, want = a[key], n[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.cpu().numpy(), want)
    assert shares_storage(got, a)
    if isinstance(want, np.ndarray) and want.base is not None and want.size:
        assert got.data_ptr() == a.data_ptr() + (want.__array_interface__["data"][0] -
                                                 n.__array_interface__["data"][0])
        assert got.stride() == tuple(s // 8 for s in want.strides) or 1 in want.shape


@SETTINGS
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data())
def test_random_slices_match_numpy(default_device, shape, data):
    n = np.arange(int(np.prod(shape))).reshape(shape)
    a = torch.from_numpy(n)
    key = []
    for size in shape:
        kind = data.draw(st.sampled_from(["int", "slice", "full", "none"]))
        if kind == "int":
            key.append(data.draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            key.append(slice(data.draw(st.none() | st.integers(-size - 2, size + 2)),
                             data.draw(st.none() | st.integers(-size - 2, size + 2)),
                             data.draw(st.none() | st.integers(1, 3))))
        elif kind == "none":
            key.append(None)
            key.append(slice(None))
        else:
            key.append(slice(None))
    got = a[tuple(key)]
    np.testing.assert_array_equal(got.cpu().numpy(), n[tuple(key)])
    assert shares_storage(got, a)


def test_indexing_errors(default_device):
    a = torch.arange(10)
    with pytest.raises(IndexError):
        a[10]
    with pytest.raises(IndexError):
        a[-11]
    with pytest.raises(ValueError):
        a[::-1]
    with pytest.raises(ValueError):
        a[::0]
    with pytest.raises(IndexError):
        torch.arange(6).view(2, 3)[1, 2, 3]
    with pytest.raises(IndexError):
        torch.tensor(5)[0]
    assert torch.tensor(5)[None].shape == (1,) and torch.tensor(5)[...].shape == ()


def test_seed_slicing_offsets_and_strides(default_device):
    a = torch.arange(0, 6).float()
    b = a.view(2, 3)
    c = a[2:]
    assert c.storage_offset() == 2 and c.data_ptr() == a[2].data_ptr()
    e = b[::2, ::2]
    assert shares_storage(e, b) and b.stride() == (3, 1) and e.stride() == (6, 2)
    assert not e.is_contiguous()
    f = e.contiguous()
    assert not shares_storage(f, e) and f.contiguous() is f


# ---------------------------------------------------------------------------
# writing through views
# ---------------------------------------------------------------------------
def test_setitem_writes_through_views_with_broadcasting(default_device):
    a = torch.zeros(3, 4)
    n = np.zeros((3, 4), dtype=np.float32)
    a[1:, ::2] = torch.tensor([1.0, 2.0])
    n[1:, ::2] = [1.0, 2.0]
    a[0] = 5
    n[0] = 5
    a[..., -1] = torch.arange(3).float()
    n[..., -1] = np.arange(3)
    v = a[:, 1]
    v[:] = 7
    n[:, 1] = 7
    a.t()[0] = -1
    n.T[0] = -1
    np.testing.assert_array_equal(a.cpu().numpy(), n)


def test_setitem_casts_to_the_target_dtype(default_device):
    c = torch.zeros(2, dtype=torch.int64)
    c[0] = 2.7
    assert c.tolist() == [2, 0]
    d = torch.zeros(3)
    d[1] = True
    assert d.tolist() == [0.0, 1.0, 0.0]
    e = torch.zeros(2, 2)
    e[0, 0] = torch.tensor(3)
    assert e.tolist() == [[3.0, 0.0], [0.0, 0.0]]


def test_setitem_shape_mismatch_raises(default_device):
    b = torch.zeros(2, 3)
    with pytest.raises(RuntimeError):
        b[0] = torch.ones(4)
    with pytest.raises(RuntimeError):
        b[0] = torch.ones(2, 3)


def test_setitem_value_with_leading_ones_is_accepted(default_device):
    b = torch.zeros(2, 3)
    b[0] = torch.ones(1, 3)
    assert b.tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]


def test_writes_through_a_view_are_seen_by_the_base_and_vice_versa(default_device):
    g = torch.arange(6).view(2, 3)
    x = g.view(6)
    x[4] = 100
    assert g.tolist() == [[0, 1, 2], [3, 100, 5]]
    g[0, 0] = -1
    assert x[0].item() == -1
    a = torch.arange(0, 6)
    b = a.view(2, 3)
    a[1] = 10
    assert b.tolist() == [[0, 10, 2], [3, 4, 5]]


def test_in_place_ops_through_a_strided_view(default_device):
    a = torch.zeros(4, 4)
    a[::2, 1::2].add_(1)
    n = np.zeros((4, 4), dtype=np.float32)
    n[::2, 1::2] += 1
    np.testing.assert_array_equal(a.cpu().numpy(), n)
    a.t()[1].mul_(3).sub_(1)
    n.T[1] = n.T[1] * 3 - 1
    np.testing.assert_array_equal(a.cpu().numpy(), n)


# ---------------------------------------------------------------------------
# copying shape ops: cat, stack, flip, repeat, roll
# ---------------------------------------------------------------------------
def test_cat(default_device):
    a, b = torch.zeros(2, 3), torch.ones(1, 3)
    c = torch.cat([a, b])
    assert c.shape == (3, 3) and not shares_storage(c, a)
    assert torch.cat([a, torch.ones(2, 1)], 1).shape == (2, 4)
    assert torch.cat((a, a), -1).shape == (2, 6)
    assert torch.cat([a, torch.zeros(0)]).shape == (2, 3)          # legacy empty 1-d is skipped
    assert torch.cat([a, torch.ones(2, 3, dtype=torch.int64)]).dtype == torch.float32
    assert torch.cat([torch.zeros(2, dtype=torch.int32), torch.ones(2, dtype=torch.int64)]) \
        .dtype == torch.int64
    np.testing.assert_array_equal(torch.cat([a.t(), a.t()], 1).cpu().numpy(), np.zeros((3, 4)))
    out = torch.empty(3, 3)
    assert torch.cat([a, b], out=out) is out and out.tolist()[2] == [1.0, 1.0, 1.0]


def test_cat_errors(default_device):
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        torch.cat([torch.zeros(2, 3), torch.ones(2, 1)])
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        torch.cat([torch.zeros(2, 3), torch.ones(3)])
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        torch.cat([torch.tensor(1.0), torch.tensor(2.0)])
    with pytest.raises(ValueError, match="non-empty list"):
        torch.cat([])
    with pytest.raises(IndexError):
        torch.cat([torch.zeros(2)], 1)


def test_stack(default_device):
    a, b = torch.zeros(2, 3), torch.ones(2, 3)
    assert torch.stack([a, b]).shape == (2, 2, 3)
    assert torch.stack([a, b], 2).shape == (2, 3, 2)
    assert torch.stack([a, b], -1).shape == (2, 3, 2)
    assert torch.stack([torch.tensor(1.0), torch.tensor(2.0)]).tolist() == [1.0, 2.0]
    np.testing.assert_array_equal(torch.stack([a, b], 1).cpu().numpy(),
                                  np.stack([np.zeros((2, 3)), np.ones((2, 3))], 1))
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        torch.stack([a, torch.zeros(3, 2)])
    with pytest.raises(IndexError):
        torch.stack([a, b], 3)


def test_hstack_vstack(default_device):
    assert torch.hstack([torch.arange(3), torch.arange(2)]).tolist() == [0, 1, 2, 0, 1]
    assert torch.vstack([torch.arange(3), torch.arange(3)]).shape == (2, 3)


def test_flip(default_device):
    a = torch.arange(6).view(2, 3)
    n = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(a.flip(0).cpu().numpy(), n[::-1])
    np.testing.assert_array_equal(a.flip(0, 1).cpu().numpy(), n[::-1, ::-1])
    np.testing.assert_array_equal(a.flip((0, 1)).cpu().numpy(), n[::-1, ::-1])
    np.testing.assert_array_equal(torch.flip(a, [-1]).cpu().numpy(), n[:, ::-1])
    np.testing.assert_array_equal(a.t().flip(0).cpu().numpy(), n.T[::-1])
    assert not shares_storage(a.flip(0), a)
    with pytest.raises(IndexError):
        a.flip(2)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        a.flip(0, 0)


def test_repeat_and_tile(default_device):
    a = torch.arange(6).view(2, 3)
    n = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(a.repeat(2, 1).cpu().numpy(), np.tile(n, (2, 1)))
    np.testing.assert_array_equal(a.repeat(2, 2, 3).cpu().numpy(), np.tile(n, (2, 2, 3)))
    assert torch.arange(3).repeat(2, 0).shape == (2, 0)
    np.testing.assert_array_equal(a.tile(2).cpu().numpy(), np.tile(n, 2))
    np.testing.assert_array_equal(torch.tile(a, (2, 1, 1)).cpu().numpy(), np.tile(n, (2, 1, 1)))
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims"):
        a.repeat(2)


def test_roll(default_device):
    a = torch.arange(6).view(2, 3)
    n = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(torch.arange(10).roll(3).cpu().numpy(), np.roll(np.arange(10), 3))
    np.testing.assert_array_equal(a.roll(1, 1).cpu().numpy(), np.roll(n, 1, 1))
    np.testing.assert_array_equal(a.roll(-1, 0).cpu().numpy(), np.roll(n, -1, 0))
    np.testing.assert_array_equal(a.roll((1, 1), (0, 1)).cpu().numpy(), np.roll(n, (1, 1), (0, 1)))
    np.testing.assert_array_equal(a.roll(4).cpu().numpy(), np.roll(n, 4))


# ---------------------------------------------------------------------------
# resize_, view(dtype)
# ---------------------------------------------------------------------------
def test_resize_grows_and_shrinks_in_place(default_device):
    a = torch.arange(5)
    assert a.resize_(2, 2) is a and a.tolist() == [[0, 1], [2, 3]]
    a.resize_(3, 3)
    assert a.shape == (3, 3) and a.reshape(-1)[:4].tolist() == [0, 1, 2, 3]
    assert a.untyped_storage().nbytes() >= 9 * 8
    a.resize_(0)
    assert a.shape == (0,)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        torch.ones(2, requires_grad=True).resize_(3)


def test_resize_to_the_same_shape_keeps_strides(default_device):
    assert torch.zeros(2, 3).t().resize_(3, 2).stride() == (1, 3)


def test_view_as_other_dtype_of_the_same_size(default_device):
    a = torch.tensor([1.0, 2.0])
    b = a.view(torch.int32)
    assert b.dtype == torch.int32 and shares_storage(a, b)
    assert b.tolist() == np.array([1.0, 2.0], dtype=np.float32).view(np.int32).tolist()


def test_view_as_dtype_of_another_size(default_device):
    a = torch.arange(3)
    b = a.view(torch.int32)
    assert b.shape == (6,) and shares_storage(a, b)
    assert b.tolist() == np.arange(3).view(np.int32).tolist()
    c = torch.zeros(2, 4, dtype=torch.float16).view(torch.float32)
    assert c.shape == (2, 2) and c.stride() == (2, 1)
    with pytest.raises(RuntimeError, match="stride"):
        torch.zeros(4, 2).t().view(torch.float16)
    with pytest.raises(RuntimeError, match="divisible"):
        torch.zeros(3, dtype=torch.float16).view(torch.float32)

# ---------------------------------------------------------------------------
# On every device (the ``device`` fixture: cpu, and cuda on Numba's simulator
# without a GPU; tensors stay tiny there).
# ---------------------------------------------------------------------------
from device_checks import check  # noqa: E402


def test_in_place_ops_and_views_on_every_device(device):
    x = torch.zeros(3, 4, device=device)
    x[1] = 5.0
    x[:, 2] += torch.tensor([1.0, 2.0, 3.0], device=device)
    x.t()[0].fill_(-1.0)
    x.view(-1)[11] = 9.0
    expected = np.zeros((3, 4), np.float32)
    expected[1] = 5
    expected[:, 2] += [1, 2, 3]
    expected[:, 0] = -1
    expected[2, 3] = 9
    check(x, expected, device)
    y = torch.ones(2, 3, device=device).t().contiguous()
    assert y.is_contiguous() and y.shape == (3, 2)
    check(torch.stack([y, y * 2]).sum(0), np.full((3, 2), 3.0, np.float32), device)
    check(torch.cat([y, y.flip(0)], 1), np.ones((3, 4), np.float32), device)
    z = torch.arange(6.0, device=device).reshape(2, 3)
    z.resize_(3, 3)                          # grows the storage, keeps the elements
    z[2] = 7.0
    check(z, [[0, 1, 2], [3, 4, 5], [7, 7, 7]], device)

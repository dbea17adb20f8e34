"""The wider torch.* / Tensor API: triangles, diagonals, scans, counts, rearrangements, aliases.

Values against NumPy; against PyTorch too where it is installed; gradients
by finite differences in float64 where PyTorch has them.
"""

import math

import numpy as np
import pytest

import minitorch as torch
from device_checks import gradcheck

pytestmark = pytest.mark.ops

RNG = np.random.default_rng(0)


def _t(a, requires_grad=False):
    return torch.tensor(np.asarray(a), requires_grad=requires_grad)


def _close(got, expected, **kw):
    np.testing.assert_allclose(got.cpu().numpy() if hasattr(got, "numpy") else got, expected, **kw)


# ---------------------------------------------------------------------------
# matrices built from tensors
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("k", [-1, 0, 2])
def test_tril_triu(default_device, k):
    a = RNG.standard_normal((2, 3, 4))
    _close(torch.tril(_t(a), k), np.tril(a, k))
    _close(_t(a).triu(k), np.triu(a, k))
    x = _t(a.copy())
    x.tril_(k)
    _close(x, np.tril(a, k))
    assert gradcheck(lambda t: torch.triu(t, k), (_t(a, True),))
    _close(torch.tril_indices(3, 4, k), np.stack(np.tril_indices(3, k, 4)))
    _close(torch.triu_indices(3, 4, k), np.stack(np.triu_indices(3, k, 4)))


def test_diagonal_builders(default_device):
    v = RNG.standard_normal(3)
    for k in (-1, 0, 2):
        _close(torch.diag(_t(v), k), np.diag(v, k))
        _close(torch.diagflat(_t(v), k), np.diagflat(v, k))
    m = RNG.standard_normal((3, 4))
    _close(torch.diag(_t(m), 1), np.diag(m, 1))
    b = RNG.standard_normal((2, 3))
    emb = torch.diag_embed(_t(b))
    assert emb.shape == (2, 3, 3)
    _close(emb[1], np.diag(b[1]))
    _close(torch.diag_embed(_t(b), 1, 0, 2)[:, 1], np.diag(b[1], 1))
    _close(torch.diag_embed(_t(b), -1, 2, 0)[:, 1], np.diag(b[1], -1).T)
    assert gradcheck(lambda t: torch.diag_embed(t, -1), (_t(b, True),))
    blocks = [RNG.standard_normal((2, 2)), RNG.standard_normal((1, 3))]
    got = torch.block_diag(*[_t(x) for x in blocks])
    expected = np.zeros((3, 5))
    expected[:2, :2], expected[2:, 2:] = blocks
    _close(got, expected)
    a, c = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 2))
    _close(torch.kron(_t(a), _t(c)), np.kron(a, c))
    x = np.array([1.0, 2.0, 3.0])
    _close(torch.vander(_t(x)), np.vander(x))
    _close(torch.vander(_t(x), N=2, increasing=True), np.vander(x, 2, increasing=True))
    _close(torch.cartesian_prod(_t([1, 2]), _t([3, 4, 5])),
           np.array([[i, j] for i in (1, 2) for j in (3, 4, 5)]))


# ---------------------------------------------------------------------------
# scatter_reduce, index_reduce, put
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_values_and_gradients(default_device, reduce, include_self):
    x = RNG.standard_normal((3, 4))
    src = RNG.standard_normal((5, 4))
    idx = RNG.integers(0, 3, (5, 4))
    expected = x.copy()
    touched = np.zeros_like(x, bool)
    groups = {}
    for i in range(5):
        for j in range(4):
            groups.setdefault((idx[i, j], j), []).append(src[i, j])
    fn = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce]
    for (r, c), vals in groups.items():
        expected[r, c] = fn(vals + ([x[r, c]] if include_self else []))
        touched[r, c] = True
    got = torch.scatter_reduce(_t(x), 0, _t(idx), _t(src), reduce, include_self=include_self)
    _close(got, expected, rtol=1e-12)
    assert gradcheck(lambda a, s: torch.scatter_reduce(a, 0, _t(idx), s, reduce,
                                                       include_self=include_self),
                     (_t(x, True), _t(src, True)))


def test_scatter_reduce_matches_torch_gradient_with_ties(default_device):
    real = pytest.importorskip("torch")
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    src = np.array([[1.0, 5.0], [1.0, 0.0]])
    idx = np.array([[0, 0], [0, 1]])
    for reduce in ("amax", "prod"):
        for inc in (True, False):
            ours = [_t(x, True), _t(src, True)]
            theirs = [real.tensor(x, requires_grad=True), real.tensor(src, requires_grad=True)]
            torch.scatter_reduce(ours[0], 0, _t(idx), ours[1], reduce,
                                 include_self=inc).sum().backward()
            real.scatter_reduce(theirs[0], 0, real.tensor(idx), theirs[1], reduce,
                                include_self=inc).sum().backward()
            for a, b in zip(ours, theirs):
                _close(a.grad, b.grad.cpu().numpy())


def test_index_reduce_and_put(default_device):
    x = torch.arange(6.0).reshape(2, 3)
    got = x.index_reduce(0, _t([0, 0]), torch.full((2, 3), 10.0), "amax")
    _close(got, [[10, 10, 10], [3, 4, 5]])
    _close(x.put(_t([0, -1]), torch.tensor([10.0, 20.0])), [[10, 1, 2], [3, 4, 20]])
    y = x.clone()
    y.put_(_t([1, 1]), torch.tensor([1.0, 2.0]), accumulate=True)
    _close(y, [[0, 4, 2], [3, 4, 5]])
    with pytest.raises(IndexError):
        x.put(_t([6]), torch.tensor([1.0]))


# ---------------------------------------------------------------------------
# scans and counts
# ---------------------------------------------------------------------------
def test_cummax_cummin_logcumsumexp(default_device):
    x = np.array([1.0, 3.0, 3.0, 2.0, math.nan, 5.0])
    values, indices = torch.cummax(_t(x), 0)
    _close(values, [1, 3, 3, 3, math.nan, math.nan])
    assert indices.tolist() == [0, 1, 2, 2, 4, 4]
    values, indices = torch.cummin(_t([3, 1, 1, 2]), 0)
    assert values.tolist() == [3, 1, 1, 1] and indices.tolist() == [0, 1, 2, 2]
    a = RNG.standard_normal((3, 5))
    _close(torch.cummax(_t(a), 1).values, np.maximum.accumulate(a, 1))
    _close(_t(a).cummin(0).values, np.minimum.accumulate(a, 0))
    _close(torch.logcumsumexp(_t(a), 1), np.log(np.cumsum(np.exp(a), 1)), rtol=1e-12)
    big = np.array([1000.0, 1000.0])
    _close(torch.logcumsumexp(_t(big), 0), [1000, 1000 + math.log(2)])
    assert gradcheck(lambda t: torch.logcumsumexp(t, 1), (_t(a, True),))
    assert gradcheck(lambda t: torch.cummax(t, 1).values, (_t(a, True),))


def test_histc_bincount_searchsorted_bucketize(default_device):
    x = RNG.standard_normal(50)
    _close(torch.histc(_t(x), bins=5, min=-1, max=1), np.histogram(x, 5, (-1, 1))[0])
    _close(torch.histc(_t(x), bins=4), np.histogram(x, 4)[0])
    ints = np.array([0, 1, 1, 3])
    assert torch.bincount(_t(ints)).tolist() == [1, 2, 0, 1]
    assert torch.bincount(_t(ints), minlength=6).shape == (6,)
    w = np.array([0.5, 1.0, 1.0, 2.0])
    _close(torch.bincount(_t(ints), weights=_t(w)), np.bincount(ints, w))
    seq = np.array([1, 3, 5, 7])
    vals = np.array([[3, 6, 9], [0, 7, 1]])
    for side in ("left", "right"):
        _close(torch.searchsorted(_t(seq), _t(vals), side=side), np.searchsorted(seq, vals, side))
    rows = np.array([[1, 3, 5], [2, 4, 6]])
    _close(torch.searchsorted(_t(rows), _t([[3], [3]]), right=True), [[2], [1]])
    _close(torch.bucketize(_t(vals), _t(seq)), np.searchsorted(seq, vals, "left"))
    assert torch.searchsorted(_t(seq), _t(vals), out_int32=True).dtype is torch.int32


def test_unique_consecutive(default_device):
    x = _t([1, 1, 2, 2, 3, 1, 1, 2])
    out, inverse, counts = torch.unique_consecutive(x, return_inverse=True, return_counts=True)
    assert out.tolist() == [1, 2, 3, 1, 2]
    assert inverse.tolist() == [0, 0, 1, 1, 2, 3, 3, 4]
    assert counts.tolist() == [2, 2, 1, 2, 1]
    m = _t([[1, 1, 2], [1, 1, 2]])
    assert torch.unique_consecutive(m, dim=1).tolist() == [[1, 2], [1, 2]]


# ---------------------------------------------------------------------------
# rearranging
# ---------------------------------------------------------------------------
def test_rearranging_matches_numpy(default_device):
    a = RNG.standard_normal((2, 3, 4))
    for k in range(-1, 4):
        _close(torch.rot90(_t(a), k, (1, 2)), np.rot90(a, k, (1, 2)))
    _close(torch.fliplr(_t(a)), np.fliplr(a))
    _close(torch.flipud(_t(a)), np.flipud(a))
    b = RNG.standard_normal((4, 3, 5))
    _close(torch.tensordot(_t(a), _t(b), ([1, 2], [1, 0])),
           np.tensordot(a, b, ([1, 2], [1, 0])))
    _close(torch.tensordot(_t(a), _t(a), 3), np.tensordot(a, a, 3))
    x, y = torch.meshgrid(_t([1, 2, 3]), _t([4, 5]), indexing="xy")
    nx, ny = np.meshgrid([1, 2, 3], [4, 5], indexing="xy")
    _close(x, nx)
    _close(y, ny)
    p, q = torch.broadcast_tensors(_t(np.ones((3, 1))), _t(np.ones(4)))
    assert p.shape == q.shape == (3, 4)
    assert torch.atleast_3d(_t(1.0)).shape == (1, 1, 1)
    assert torch.atleast_3d(_t([1.0, 2.0])).shape == (1, 2, 1)
    assert [t.shape for t in torch.atleast_2d(_t(1.0), _t([1.0]))] == [(1, 1), (1, 1)]
    _close(torch.repeat_interleave(_t([1, 2]), 2), [1, 1, 2, 2])
    _close(torch.repeat_interleave(_t([[1, 2], [3, 4]]), _t([1, 2]), dim=0),
           [[1, 2], [3, 4], [3, 4]])
    _close(torch.repeat_interleave(_t([2, 1])), [0, 0, 1])
    _close(torch.combinations(_t([1, 2, 3])), [[1, 2], [1, 3], [2, 3]])
    _close(torch.combinations(_t([1, 2]), with_replacement=True), [[1, 1], [1, 2], [2, 2]])
    _close(_t(a).ravel(), a.ravel())
    assert gradcheck(lambda t: torch.rot90(t, 1, (0, 1)).cumsum(0), (_t(a[0], True),))


# ---------------------------------------------------------------------------
# math built from ops, and aliases
# ---------------------------------------------------------------------------
def test_composite_math_matches_numpy(default_device):
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    _close(torch.logaddexp(_t(a), _t(b)), np.logaddexp(a, b))
    _close(torch.logaddexp2(_t(a), _t(b)), np.logaddexp2(a, b))
    _close(torch.deg2rad(_t(a)), np.deg2rad(a))
    _close(torch.sinc(_t(np.array([0.0, 0.5, 1.0]))), np.sinc([0.0, 0.5, 1.0]), atol=1e-15)
    _close(torch.heaviside(_t(np.array([-1.0, 0.0, 2.0])), _t(np.array([0.5]))),
           np.heaviside([-1.0, 0.0, 2.0], 0.5))
    assert torch.signbit(_t(np.array([-0.0, 0.0, -1.0]))).tolist() == [True, False, True]
    _close(torch.diff(_t(a), 2, 1), np.diff(a, 2, 1))
    _close(torch.cdist(_t(a), _t(b)), np.linalg.norm(a[:, None] - b[None], axis=-1))
    _close(torch.cov(_t(a)), np.cov(a))
    _close(torch.corrcoef(_t(a)), np.corrcoef(a))
    _close(torch.nanmean(_t(np.array([1.0, math.nan, 3.0]))), 2.0)
    assert torch.gcd(_t([12, 18, 0]), _t([8, 27, 5])).tolist() == [4, 9, 5]
    assert torch.lcm(_t([4, 6]), _t([6, 4])).tolist() == [12, 12]
    r = torch.renorm(_t(a), 2, 0, 1.0)
    assert (torch.linalg.vector_norm(r, dim=1) <= 1.0 + 1e-6).all()
    assert gradcheck(lambda x, y: torch.logaddexp(x, y), (_t(a, True), _t(b, True)))
    assert gradcheck(lambda x: torch.cdist(x, _t(b)), (_t(a, True),))


def test_aliases_and_inplace_variants(default_device):
    x = _t(np.array([0.5, 2.0]))
    _close(x.arccosh() if False else torch.arcsinh(x), np.arcsinh([0.5, 2.0]))
    y = x.clone()
    y.greater_(1.0)
    assert y.tolist() == [0.0, 1.0]
    y = _t(np.array([0.5, 0.25]))
    y.arctanh_()
    _close(y, np.arctanh([0.5, 0.25]))
    assert _t([1.5, -1.5]).fix().tolist() == [1.0, -1.0]
    assert torch.positive(x) is x


def test_matches_torch_where_installed(default_device):
    real = pytest.importorskip("torch")
    a = RNG.standard_normal((3, 4))
    for name, args in [("tril", (1,)), ("triu", (-1,)), ("rot90", (3,)), ("logcumsumexp", (0,)),
                       ("fliplr", ()), ("kron", ()), ("cov", ()), ("diag_embed", ())]:
        extra = (real.tensor(a),) if name == "kron" else ()
        ours_extra = (_t(a),) if name == "kron" else ()
        ours = getattr(torch, name)(_t(a), *ours_extra, *args)
        theirs = getattr(real, name)(real.tensor(a), *extra, *args)
        _close(ours, theirs.cpu().numpy(), rtol=1e-12, err_msg=name)
    v, i = torch.cummax(_t(a), 1)
    rv, ri = real.cummax(real.tensor(a), 1)
    _close(v, rv.cpu().numpy())
    _close(i, ri.cpu().numpy())
    h = torch.histc(_t(a), bins=7)
    _close(h, real.histc(real.tensor(a), bins=7).cpu().numpy())
    assert h.dtype is torch.float64


# ---------------------------------------------------------------------------
# tensor_extras: views, *_scatter, quantiles, torch-level helpers
# ---------------------------------------------------------------------------
def test_unfold_is_a_view_of_windows(default_device):
    x = torch.arange(10.0)
    w = x.unfold(0, 4, 3)
    _close(w, np.lib.stride_tricks.sliding_window_view(np.arange(10.0), 4)[::3])
    x[3] = -1.0
    assert w[0, 3].item() == -1.0 and w[1, 0].item() == -1.0
    assert gradcheck(lambda t: t.unfold(1, 2, 1), (_t(RNG.standard_normal((2, 4)), True),))


def test_inplace_view_methods_change_the_header(default_device):
    x = torch.arange(6.0).reshape(2, 3)
    assert x.t_() is x and x.shape == (3, 2) and x[0, 1].item() == 3.0
    x.unsqueeze_(0).squeeze_(0)
    assert x.shape == (3, 2)
    w = torch.ones(2, 3, requires_grad=True)
    y = w * 2
    y.transpose_(0, 1)
    assert y.shape == (3, 2)
    y.sum().backward()
    assert w.grad.tolist() == [[2.0] * 3] * 2


def test_scatter_views_and_fill_diagonal(default_device):
    a = RNG.standard_normal((3, 4))
    expected = a.copy()
    expected[1] = 0
    _close(torch.select_scatter(_t(a), torch.zeros(4, dtype=torch.float64), 0, 1), expected)
    expected = a.copy()
    expected[:, 1:4:2] = 1
    _close(torch.slice_scatter(_t(a), torch.ones(3, 2, dtype=torch.float64), 1, 1, 4, 2),
           expected)
    expected = a.copy()
    np.fill_diagonal(expected, 7)
    _close(torch.diagonal_scatter(_t(a), torch.full((3,), 7.0, dtype=torch.float64)), expected)
    tall = np.zeros((7, 3))
    np.fill_diagonal(tall, 5, wrap=True)
    got = torch.zeros(7, 3, dtype=torch.float64)
    got.fill_diagonal_(5, wrap=True)
    _close(got, tall)
    assert gradcheck(lambda x, s: torch.select_scatter(x, s, 1, 2),
                     (_t(a, True), _t(RNG.standard_normal(3), True)))


def test_quantiles_and_nan_aware_reductions(default_device):
    a = RNG.standard_normal((3, 6))
    for method in ("linear", "lower", "higher", "midpoint", "nearest"):
        _close(torch.quantile(_t(a), torch.tensor([0.25, 0.5], dtype=torch.float64), dim=1,
                              interpolation=method),
               np.quantile(a, [0.25, 0.5], axis=1, method=method))
    a[0, 2] = math.nan
    _close(torch.nanquantile(_t(a), 0.3, dim=1), np.nanquantile(a, 0.3, axis=1))
    assert math.isnan(torch.quantile(_t(a), 0.3, dim=1)[0].item())
    _close(torch.nanmean(_t(a), 1), np.nanmean(a, 1))
    values, indices = torch.nanmedian(_t(a), 1)
    assert values.shape == indices.shape == (3,)
    _close(values, [np.sort(r[~np.isnan(r)])[(np.sum(~np.isnan(r)) - 1) // 2] for r in a])


def test_torch_level_helpers(default_device):
    a = RNG.standard_normal((3, 5))
    hist, edges = torch.histogram(_t(a), 4)
    nh, ne = np.histogram(a, 4)
    _close(hist, nh)
    _close(edges, ne)
    _close(torch.trapezoid(_t(a)), np.trapezoid(a) if hasattr(np, "trapezoid") else np.trapz(a))
    assert torch.isin(_t([1, 2, 3, 4]), _t([2, 4])).tolist() == [False, True, False, True]
    _close(torch.pdist(_t(a)), [np.linalg.norm(a[i] - a[j]) for i in range(3)
                                for j in range(i + 1, 3)])
    rows, cols = torch.unravel_index(_t([4, 7, 11]), (3, 4))
    assert rows.tolist() == [1, 1, 2] and cols.tolist() == [0, 3, 3]
    _close(torch.hann_window(8, periodic=False), np.hanning(8), atol=1e-6)
    _close(torch.bartlett_window(8, periodic=False), np.bartlett(8), atol=1e-6)
    _close(torch.bitwise_left_shift(_t([1, -3]), 2), [4, -12])
    _close(torch.bitwise_right_shift(_t([-5, 5]), 1), [-3, 2])


def test_matrix_exp(default_device):
    a = RNG.standard_normal((2, 3, 3))
    # exp of a matrix with known answer: a rotation generator.
    theta = 0.7
    gen = np.array([[0.0, -theta], [theta, 0.0]])
    _close(torch.linalg.matrix_exp(_t(gen)),
           [[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]], atol=1e-14)
    # exp(A) exp(-A) = I, batched; a large norm goes through squaring.
    e = torch.matrix_exp(_t(a * 3))
    _close(e @ torch.matrix_exp(_t(-a * 3)), np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-8)
    assert gradcheck(torch.linalg.matrix_exp, (_t(a, True),))


def test_random_fills_follow_their_distributions(default_device):
    torch.manual_seed(0)
    t = torch.empty(4000, dtype=torch.float64)
    assert abs(t.cauchy_(2.0).median().item() - 2.0) < 0.15
    assert abs(t.log_normal_(0.5, 0.5).log().mean().item() - 0.5) < 0.05
    g = t.geometric_(0.25)
    assert g.min().item() >= 1 and abs(g.mean().item() - 4.0) < 0.3


def test_mode_picks_smallest_most_frequent_and_its_last_index(default_device):
    values, indices = torch.mode(_t([[3, 1, 3, 1, 2], [5, 5, 0, 0, 0]]), 1)
    assert values.tolist() == [1, 0] and indices.tolist() == [3, 4]
    x = _t(np.array([[2.0, 2.0, 1.0], [4.0, 3.0, 4.0]]), True)
    x.mode(1).values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def test_small_torch_level_factories(default_device):
    with pytest.warns(UserWarning, match="deprecated"):
        assert torch.range(1, 4).tolist() == [1.0, 2.0, 3.0, 4.0]
    assert torch.empty_permuted((2, 3, 4), (0, 2, 1)).stride() == (12, 1, 3)
    assert torch.fill(torch.zeros(2), 3.0).tolist() == [3.0, 3.0]
    buf = bytearray(8)
    t = torch.frombuffer(buf, dtype=torch.int32)
    t[0] = 5
    assert buf[0] == 5 and torch.get_device(t) == -1
    x = torch.zeros(7, 3)
    x.fill_diagonal_(1.0, wrap=True)
    assert x.sum().item() == 6.0

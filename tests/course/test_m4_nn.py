"""Course module 4, neural networks: a linear layer's backward, convolution (im2col, col2im,
forward and backward), max pooling (forward and backward), dropout, batch norm and a loss.

``minitorch course test 4.1`` runs the tests of one task.

NumPy is the oracle: loops written out, or the formula in NumPy.  Kernel tasks
are called directly on NumPy arrays of exact size (a write past the end is an
IndexError under the course's bounds checks), with their outputs filled with
garbage first (a kernel must write every element it owns).  The tests of the
convolution tasks 4.7 and 4.8 put NumPy's im2col/col2im in place of the
kernels (tasks 4.2 and 4.3), and those of 4.11 NumPy's reduction in place of
4.10's, so that each task is graded on its own code.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch as torch
import minitorch.nn.functional as F
from minitorch.backends.cpu import conv
from minitorch.ops import conv as conv_ops
from minitorch.ops import kernels as kernel_ops
from minitorch.ops import loss as loss_ops

pytestmark = pytest.mark.nn

SOME = settings(max_examples=30, deadline=None)
#: For tests whose fixture patches a module for the whole test (the same for every example).
PATCHED = settings(max_examples=30, deadline=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture])


def _leaf(*shape, seed=0, dtype=torch.float64):
    rng = np.random.default_rng(seed)
    return torch.tensor(rng.standard_normal(shape), dtype=dtype, requires_grad=True)


def _np(t):
    return t.detach().numpy()


# ---------------------------------------------------------------------------
# 4.1 Linear.backward
# ---------------------------------------------------------------------------
@pytest.mark.task("4.1")
@SOME
@given(rows=st.integers(1, 4), fin=st.integers(1, 4), fout=st.integers(1, 3),
       bias=st.booleans(), lead=st.sampled_from([(), (2,)]), seed=st.integers(0, 9))
def test_linear_backward_matches_numpy(rows, fin, fout, bias, lead, seed):
    x = _leaf(*lead, rows, fin, seed=seed)
    w = _leaf(fout, fin, seed=seed + 1)
    b = _leaf(fout, seed=seed + 2) if bias else None
    g = np.random.default_rng(seed + 3).standard_normal(lead + (rows, fout))
    F.linear(x, w, b).backward(torch.tensor(g))
    g2, x2 = g.reshape(-1, fout), _np(x).reshape(-1, fin)
    np.testing.assert_allclose(_np(x.grad), (g2 @ _np(w)).reshape(x.shape), rtol=1e-10)
    np.testing.assert_allclose(_np(w.grad), g2.T @ x2, rtol=1e-10, atol=1e-12)
    if bias:
        np.testing.assert_allclose(_np(b.grad), g2.sum(0), rtol=1e-10, atol=1e-12)


@pytest.mark.task("4.1")
def test_linear_backward_only_what_is_needed():
    x = torch.tensor(np.ones((3, 2)))                   # no gradient wanted for x
    w, b = _leaf(4, 2), _leaf(4, seed=1)
    F.linear(x, w, b).sum().backward()
    np.testing.assert_allclose(_np(w.grad), np.full((4, 2), 3.0))
    np.testing.assert_allclose(_np(b.grad), np.full(4, 3.0))
    x = _leaf(3, 2)
    w = torch.tensor(np.ones((4, 2)))                   # none for w
    F.linear(x, w).sum().backward()
    np.testing.assert_allclose(_np(x.grad), np.full((3, 2), 4.0))


@pytest.mark.task("4.1")
def test_linear_backward_with_create_graph_is_differentiable():
    x, w, b = _leaf(3, 2), _leaf(4, 2, seed=1), _leaf(4, seed=2)
    y = F.linear(x, w, b)
    (gx,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    yn, wn, xn = _np(y), _np(w), _np(x)
    np.testing.assert_allclose(_np(gx), 2 * yn @ wn, rtol=1e-10)
    gx.sum().backward()
    # d/dW of sum(2 y W) = 2 (s[o] * sum_r x[r, i] + sum_r y[r, o]),  s = W's row sums.
    s = wn.sum(1)
    expected = 2 * (s[:, None] * xn.sum(0)[None, :] + yn.sum(0)[:, None])
    np.testing.assert_allclose(_np(w.grad), expected, rtol=1e-10)
    np.testing.assert_allclose(_np(b.grad), 2 * s * xn.shape[0], rtol=1e-10)


# ---------------------------------------------------------------------------
# Convolution geometry and NumPy's im2col / col2im (the oracles)
# ---------------------------------------------------------------------------
def _geometry(h, w, k=(3, 3), stride=(1, 1), pad=(0, 0), dil=(1, 1)):
    """(kh, kw, sh, sw, ph, pw, dh, dw, oh, ow) as the conv kernels take it."""
    oh = (h + 2 * pad[0] - dil[0] * (k[0] - 1) - 1) // stride[0] + 1
    ow = (w + 2 * pad[1] - dil[1] * (k[1] - 1) - 1) // stride[1] + 1
    return (*k, *stride, *pad, *dil, oh, ow)


def _columns_oracle(x, geo):
    """cols[(c, i, j), (b, y, xo)] = x[b, c, y*sh - ph + i*dh, xo*sw - pw + j*dw] (0 outside)."""
    kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = geo
    n, c, h, w = x.shape
    cols = np.zeros((c * kh * kw, n * oh * ow), x.dtype)
    for ch in range(c):
        for i in range(kh):
            for j in range(kw):
                for b in range(n):
                    for y in range(oh):
                        for xo in range(ow):
                            iy, ix = y * sh - ph + i * dh, xo * sw - pw + j * dw
                            if 0 <= iy < h and 0 <= ix < w:
                                cols[(ch * kh + i) * kw + j, (b * oh + y) * ow + xo] = \
                                    x[b, ch, iy, ix]
    return cols


def _image_oracle(cols, geo, shape):
    """col2im: the adjoint of _columns_oracle (each entry added back into its pixel)."""
    kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = geo
    n, c, h, w = shape
    x = np.zeros(shape, cols.dtype)
    for ch in range(c):
        for i in range(kh):
            for j in range(kw):
                for b in range(n):
                    for y in range(oh):
                        for xo in range(ow):
                            iy, ix = y * sh - ph + i * dh, xo * sw - pw + j * dw
                            if 0 <= iy < h and 0 <= ix < w:
                                x[b, ch, iy, ix] += cols[(ch * kh + i) * kw + j,
                                                         (b * oh + y) * ow + xo]
    return x


@st.composite
def geometries(draw):
    """A small (N, C, H, W) input and a valid geometry for it."""
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dil = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pad = (draw(st.integers(0, (k[0] - 1) * dil[0] // 2 + 1)),
           draw(st.integers(0, (k[1] - 1) * dil[1] // 2 + 1)))
    h = draw(st.integers(max(1, dil[0] * (k[0] - 1) + 1 - 2 * pad[0]), 5))
    w = draw(st.integers(max(1, dil[1] * (k[1] - 1) + 1 - 2 * pad[1]), 5))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), h, w)
    return shape, _geometry(h, w, k, stride, pad, dil)


_GEOMETRIES = [dict(), dict(stride=(2, 1)), dict(pad=(1, 2)),
               dict(k=(2, 3), dil=(2, 1), pad=(1, 0))]


# ---------------------------------------------------------------------------
# 4.2 im2col_batch
# ---------------------------------------------------------------------------
@pytest.mark.task("4.2")
@pytest.mark.parametrize("options", _GEOMETRIES)
def test_im2col_copies_each_receptive_field_into_a_column(options):
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 5))
    geo = _geometry(6, 5, **options)
    kh, kw, *_, oh, ow = geo
    cols = np.full((3 * kh * kw, 2 * oh * ow), np.nan)      # every entry must be written
    conv.im2col_batch(x, *geo, cols, 0, cols.shape[0])
    np.testing.assert_array_equal(cols, _columns_oracle(x, geo))


@pytest.mark.task("4.2")
@SOME
@given(case=geometries(), seed=st.integers(0, 9), data=st.data())
def test_im2col_fills_exactly_its_rows_for_any_geometry(case, seed, data):
    shape, geo = case
    x = np.random.default_rng(seed).standard_normal(shape)
    kh, kw, *_, oh, ow = geo
    rows = shape[1] * kh * kw
    t0 = data.draw(st.integers(0, rows - 1))
    t1 = data.draw(st.integers(t0 + 1, rows))
    cols = np.full((rows, shape[0] * oh * ow), np.nan)
    conv.im2col_batch(x, *geo, cols, t0, t1)
    expected = np.full_like(cols, np.nan)
    expected[t0:t1] = _columns_oracle(x, geo)[t0:t1]
    np.testing.assert_array_equal(cols, expected)


# ---------------------------------------------------------------------------
# 4.3 col2im_batch
# ---------------------------------------------------------------------------
@pytest.mark.task("4.3")
@pytest.mark.parametrize("options", _GEOMETRIES)
def test_col2im_adds_every_column_entry_back_into_its_pixel(options):
    rng = np.random.default_rng(2)
    geo = _geometry(6, 5, **options)
    kh, kw, *_, oh, ow = geo
    cols = rng.standard_normal((3 * kh * kw, 2 * oh * ow))
    x = np.full((2, 3, 6, 5), np.nan)                          # its old contents are garbage
    conv.col2im_batch(cols, *geo, x, 0, 2 * 3)
    # col2im is the transpose of im2col: <im2col(v), cols> == <v, col2im(cols)> for every v.
    for _ in range(3):
        v = rng.standard_normal((2, 3, 6, 5))
        np.testing.assert_allclose(np.sum(_columns_oracle(v, geo) * cols), np.sum(v * x),
                                   rtol=1e-10)


@pytest.mark.task("4.3")
def test_col2im_counts_overlapping_windows():
    geo = _geometry(4, 4)                                     # 3x3 windows, stride 1: 2x2 of them
    x = np.full((1, 1, 4, 4), 99.0)
    conv.col2im_batch(np.ones((9, 4)), *geo, x, 0, 1)
    np.testing.assert_array_equal(x[0, 0], [[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2], [1, 2, 2, 1]])


@pytest.mark.task("4.3")
@SOME
@given(case=geometries(), seed=st.integers(0, 9), data=st.data())
def test_col2im_computes_exactly_its_planes_for_any_geometry(case, seed, data):
    shape, geo = case
    kh, kw, *_, oh, ow = geo
    cols = np.random.default_rng(seed).standard_normal((shape[1] * kh * kw,
                                                         shape[0] * oh * ow))
    planes = shape[0] * shape[1]
    t0 = data.draw(st.integers(0, planes - 1))
    t1 = data.draw(st.integers(t0 + 1, planes))
    x = np.full(shape, np.nan)
    conv.col2im_batch(cols, *geo, x, t0, t1)
    expected = _image_oracle(cols, geo, shape).reshape(planes, -1)
    got = x.reshape(planes, -1)
    np.testing.assert_allclose(got[t0:t1], expected[t0:t1], rtol=1e-12, atol=1e-12)
    assert np.isnan(got[:t0]).all() and np.isnan(got[t1:]).all()


# ---------------------------------------------------------------------------
# 4.4 window_max (through the max_pool2d kernel that calls it)
# ---------------------------------------------------------------------------
def _pool_oracle(x, geo):
    """Max pooling with PyTorch's rules, from NumPy's im2col (_columns_oracle): each window is
    a column; padding is -inf; the first maximum wins; a NaN wins, the one of the last window
    row that has one, first in that row."""
    kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = geo
    n, c, h, w = x.shape
    flat_index = np.arange(h * w, dtype=np.float64).reshape(1, 1, h, w) + 1.0
    out, idx = np.empty((n, c, oh, ow)), np.empty((n, c, oh, ow), np.int64)
    for ch in range(c):
        one = x[:, ch:ch + 1]
        # Padding: a mask column built by the same im2col of ones (0 where padded).
        inside = _columns_oracle(np.ones_like(one), geo) > 0              # (kh*kw, n*L)
        vals = np.where(inside, _columns_oracle(one, geo), -np.inf)
        where = _columns_oracle(np.broadcast_to(flat_index, one.shape).copy(), geo) - 1
        taps = vals.reshape(kh, kw, -1)
        nan = np.isnan(taps)
        best = np.argmax(np.where(np.isnan(vals), -np.inf, vals), axis=0)   # first maximum
        rows_with_nan = nan.any(axis=1)                                   # (kh, n*L)
        last_row = kh - 1 - np.argmax(rows_with_nan[::-1], axis=0)
        first_in_row = np.argmax(nan[last_row, :, np.arange(nan.shape[2])], axis=1)
        pick = np.where(rows_with_nan.any(axis=0), last_row * kw + first_in_row, best)
        cols = np.arange(vals.shape[1])
        out[:, ch] = vals[pick, cols].reshape(n, oh, ow)
        idx[:, ch] = where[pick, cols].reshape(n, oh, ow)
    return out, idx


@pytest.mark.task("4.4")
def test_max_pool_window_value_and_winner():
    x = np.array([[[[1.0, 5.0, 2.0, 0.0],
                    [3.0, 4.0, 9.0, 1.0],
                    [7.0, 0.0, 2.0, 8.0],
                    [6.0, 1.0, 3.0, 2.0]]]])
    geo = _geometry(4, 4, k=(2, 2), stride=(2, 2))
    out, idx = np.empty((1, 1, 2, 2)), np.empty((1, 1, 2, 2), np.int64)
    conv.max_pool2d(x, *geo, out, idx, 0, 1)
    np.testing.assert_array_equal(out[0, 0], [[5.0, 9.0], [7.0, 8.0]])
    np.testing.assert_array_equal(idx[0, 0], [[1, 6], [8, 11]])      # flat y * W + x


@pytest.mark.task("4.4")
def test_max_pool_padding_never_wins_ties_go_first_and_nan_wins():
    x = -np.arange(1.0, 10.0).reshape(1, 1, 3, 3)              # all negative: padding (0) would win
    x[0, 0, 2, 2] = np.nan
    geo = _geometry(3, 3, k=(2, 2), stride=(2, 2), pad=(1, 1))
    out, idx = np.empty((1, 1, 2, 2)), np.empty((1, 1, 2, 2), np.int64)
    conv.max_pool2d(x, *geo, out, idx, 0, 1)
    np.testing.assert_array_equal(out[0, 0, 0], [-1.0, -2.0])
    assert out[0, 0, 1, 0] == -4.0 and np.isnan(out[0, 0, 1, 1]) and idx[0, 0, 1, 1] == 8
    ties = np.zeros((1, 1, 2, 2))
    conv.max_pool2d(ties, *_geometry(2, 2, k=(2, 2)), out[:, :, :1, :1], idx[:, :, :1, :1], 0, 1)
    assert idx[0, 0, 0, 0] == 0                               # the first of equal values


@pytest.mark.task("4.4")
@SOME
@given(case=geometries(), seed=st.integers(0, 9), nans=st.booleans())
def test_max_pool_matches_the_rules_for_any_geometry(case, seed, nans):
    shape, geo = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 3, shape).astype(np.float64)          # small integers: many ties
    if nans:
        x[rng.random(shape) < 0.2] = np.nan
    kh, kw, *_, oh, ow = geo
    out = np.full(shape[:2] + (oh, ow), 123.0)
    idx = np.full(shape[:2] + (oh, ow), -5, np.int64)
    conv.max_pool2d(x, *geo, out, idx, 0, shape[0] * shape[1])
    expected, expected_idx = _pool_oracle(x, geo)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(idx, expected_idx)


# ---------------------------------------------------------------------------
# 4.5 dropout
# ---------------------------------------------------------------------------
@pytest.mark.task("4.5")
def test_dropout_in_training_zeroes_and_scales():
    torch.manual_seed(0)
    x = torch.ones(10000)
    y = F.dropout(x, p=0.25, training=True)
    kept = y != 0
    assert abs(kept.float().mean().item() - 0.75) < 0.03
    np.testing.assert_allclose(np.unique(y.numpy()), [0.0, 1 / 0.75], rtol=1e-6)
    assert y.dtype == torch.float32 and y.shape == x.shape
    a = torch.ones(2000)
    b = F.dropout(torch.ones(2000), 0.5)
    assert (F.dropout(a, 0.5) != b).any()                      # a fresh mask every call


@pytest.mark.task("4.5")
def test_dropout_in_eval_is_the_identity_and_gradients_follow_the_mask():
    x = torch.ones(50, requires_grad=True)
    assert F.dropout(x, p=0.5, training=False) is x
    torch.manual_seed(1)
    y = F.dropout(x, p=0.5, training=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())
    model = torch.nn.Dropout(0.5)
    model.eval()
    assert model(x) is x


@pytest.mark.task("4.5")
def test_dropout_edge_probabilities_values_and_inplace():
    x = torch.tensor(np.arange(1.0, 7.0).reshape(2, 3))
    np.testing.assert_array_equal(F.dropout(x, 0.0).numpy(), x.numpy())
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), np.zeros((2, 3)))
    torch.manual_seed(3)
    y = F.dropout(x, 0.5)
    kept = y.numpy() != 0
    np.testing.assert_allclose(y.numpy()[kept], 2 * x.numpy()[kept])
    z = x.clone()
    torch.manual_seed(3)
    assert F.dropout(z, 0.5, inplace=True) is z
    np.testing.assert_array_equal(z.numpy(), y.numpy())


# ---------------------------------------------------------------------------
# 4.6 batch_norm
# ---------------------------------------------------------------------------
@pytest.mark.task("4.6")
def test_batch_norm_training_normalises_and_updates_running_stats():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((8, 3)) * 2 + 5
    x = torch.tensor(data)
    mean, var = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    out = F.batch_norm(x, mean, var, training=True, momentum=0.1, eps=1e-5)
    expected = (data - data.mean(0)) / np.sqrt(data.var(0) + 1e-5)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(mean.numpy(), 0.1 * data.mean(0))
    np.testing.assert_allclose(var.numpy(), 0.9 + 0.1 * data.var(0, ddof=1))


@pytest.mark.task("4.6")
def test_batch_norm_eval_uses_running_stats_and_module_switches():
    x = torch.tensor([[1.0, 2.0], [3.0, 6.0]])
    mean, var = torch.tensor([1.0, 2.0]), torch.tensor([4.0, 16.0])
    out = F.batch_norm(x, mean, var, training=False, eps=0.0)
    np.testing.assert_allclose(out.numpy(), [[0.0, 0.0], [1.0, 1.0]])
    bn = torch.nn.BatchNorm1d(2)
    bn(torch.tensor([[0.0, 0.0], [2.0, 4.0]]))
    assert bn.running_mean.tolist() == pytest.approx([0.1, 0.2])
    bn.eval()
    before = bn.running_mean.tolist()
    bn(torch.tensor([[10.0, 10.0], [20.0, 40.0]]))
    assert bn.running_mean.tolist() == before


@pytest.mark.task("4.6")
@SOME
@given(shape=st.sampled_from([(3, 2), (2, 3, 4), (2, 2, 2, 3)]), affine=st.booleans(),
       training=st.booleans(), seed=st.integers(0, 9))
def test_batch_norm_matches_numpy_for_images_and_affine(shape, affine, training, seed):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape) * 3 + 1
    c = shape[1]
    dims = (0,) + tuple(range(2, len(shape)))
    bshape = (1, c) + (1,) * (len(shape) - 2)
    rm, rv = rng.standard_normal(c), rng.random(c) + 0.5
    wt, bs = rng.standard_normal(c), rng.standard_normal(c)
    mean, var = torch.tensor(rm.copy()), torch.tensor(rv.copy())
    out = F.batch_norm(torch.tensor(data), mean, var,
                       torch.tensor(wt) if affine else None, torch.tensor(bs) if affine else None,
                       training=training, momentum=0.3, eps=1e-3)
    mu, v = (data.mean(dims), data.var(dims)) if training else (rm, rv)
    expected = (data - mu.reshape(bshape)) / np.sqrt(v.reshape(bshape) + 1e-3)
    if affine:
        expected = expected * wt.reshape(bshape) + bs.reshape(bshape)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-9, atol=1e-12)
    n = data.size // c
    np.testing.assert_allclose(mean.numpy(), 0.7 * rm + 0.3 * data.mean(dims) if training
                               else rm, rtol=1e-12)
    np.testing.assert_allclose(var.numpy(), 0.7 * rv + 0.3 * data.var(dims) * n / (n - 1)
                               if training else rv, rtol=1e-12)


@pytest.mark.task("4.6")
def test_batch_norm_gradients_match_numpy_and_refuses_one_value_per_channel():
    rng = np.random.default_rng(5)
    data, wt = rng.standard_normal((4, 3)), rng.standard_normal(3)
    x, w = torch.tensor(data, requires_grad=True), torch.tensor(wt, requires_grad=True)
    g = rng.standard_normal((4, 3))
    F.batch_norm(x, None, None, w, None, training=True, eps=1e-5).backward(torch.tensor(g))
    xhat = (data - data.mean(0)) / np.sqrt(data.var(0) + 1e-5)
    gy = g * wt
    gx = (gy - gy.mean(0) - xhat * (gy * xhat).mean(0)) / np.sqrt(data.var(0) + 1e-5)
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(w.grad.numpy(), (g * xhat).sum(0), rtol=1e-8)
    with pytest.raises(ValueError):
        F.batch_norm(torch.ones(1, 3), None, None, training=True)


# ---------------------------------------------------------------------------
# 4.7 conv2d forward, 4.8 conv2d backward (NumPy's im2col/col2im in place of 4.2/4.3)
# ---------------------------------------------------------------------------
@pytest.fixture
def numpy_im2col(monkeypatch):
    """Replace the im2col/col2im kernels (tasks 4.2/4.3) by NumPy, and keep conv2d on the
    im2col path (the CPU's direct kernel would take large convolutions)."""
    def im2col(x, geo, cols, device, batched=False):
        c = _columns_oracle(np.asarray(x), geo)
        if batched:
            cols[...] = c
        else:
            n = x.shape[0]
            cols[...] = c.reshape(c.shape[0], n, -1).transpose(1, 0, 2)

    def col2im(cols, geo, x, device, batched=False):
        c = np.asarray(cols)
        if not batched:
            c = c.transpose(1, 0, 2).reshape(c.shape[1], -1)
        x[...] = _image_oracle(c, geo, x.shape)

    monkeypatch.setattr(kernel_ops, "im2col", im2col)
    monkeypatch.setattr(kernel_ops, "col2im", col2im)
    monkeypatch.setattr(conv_ops, "_use_direct", lambda *args: False)


def _conv_oracle(x, w, b, stride, pad, dil, groups):
    """conv2d in NumPy: the sum over each window, per group."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    geo = _geometry(h, wd, (kh, kw), stride, pad, dil)
    oh, ow = geo[-2:]
    og = o // groups
    out = np.zeros((n, o, oh, ow))
    for gi in range(groups):
        xs = x[:, gi * cg:(gi + 1) * cg]
        cols = _columns_oracle(xs, geo)                          # (cg*kh*kw, n*oh*ow)
        res = w[gi * og:(gi + 1) * og].reshape(og, -1) @ cols
        out[:, gi * og:(gi + 1) * og] = res.reshape(og, n, oh, ow).transpose(1, 0, 2, 3)
    if b is not None:
        out += b.reshape(1, o, 1, 1)
    return out, geo


@st.composite
def convolutions(draw):
    groups = draw(st.sampled_from([1, 1, 2]))
    cg, og = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 2)))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pad = (draw(st.integers(0, 1)), draw(st.integers(0, 1)))
    dil = (draw(st.integers(1, 2)), 1)
    h = draw(st.integers(max(1, dil[0] * (k[0] - 1) + 1 - 2 * pad[0]), 5))
    w = draw(st.integers(max(1, k[1] - 2 * pad[1]), 4))
    n = draw(st.integers(1, 2))
    return (n, cg * groups, h, w), (og * groups, cg, *k), stride, pad, dil, groups, \
        draw(st.booleans())


@pytest.mark.task("4.7")
@PATCHED
@given(case=convolutions(), seed=st.integers(0, 9))
def test_conv2d_forward_matches_numpy(numpy_im2col, case, seed):
    xs, ws, stride, pad, dil, groups, bias = case
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    b = rng.standard_normal(ws[0]) if bias else None
    out = F.conv2d(torch.tensor(x), torch.tensor(w), None if b is None else torch.tensor(b),
                   stride, pad, dil, groups)
    expected, _ = _conv_oracle(x, w, b, stride, pad, dil, groups)
    assert tuple(out.shape) == expected.shape and out.is_contiguous()
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.task("4.7")
def test_conv2d_forward_is_recorded_for_every_gradient(numpy_im2col):
    rng = np.random.default_rng(1)
    x, w = _leaf(2, 2, 4, 3, seed=1), _leaf(4, 1, 2, 2, seed=2)
    b = _leaf(4, seed=3)
    out = F.conv2d(x, w, b, padding=1, groups=2)
    g = rng.standard_normal(tuple(out.shape))
    out.backward(torch.tensor(g))
    # Gradients through NumPy's own im2col formulation.
    geo = _geometry(4, 3, (2, 2), (1, 1), (1, 1))
    cols = [_columns_oracle(_np(x)[:, k:k + 1], geo) for k in range(2)]
    gmat = g.transpose(1, 0, 2, 3).reshape(4, -1)
    gw = np.concatenate([gmat[2 * k:2 * k + 2] @ cols[k].T for k in range(2)])
    np.testing.assert_allclose(_np(w.grad), gw.reshape(4, 1, 2, 2), rtol=1e-10)
    np.testing.assert_allclose(_np(b.grad), g.sum((0, 2, 3)), rtol=1e-10)
    wn = _np(w).reshape(4, 4)
    gx = np.concatenate([_image_oracle(wn[2 * k:2 * k + 2].T @ gmat[2 * k:2 * k + 2], geo,
                                       (2, 1, 4, 3)) for k in range(2)], axis=1)
    np.testing.assert_allclose(_np(x.grad), gx, rtol=1e-10)


@pytest.mark.task("4.8")
@PATCHED
@given(case=convolutions(), seed=st.integers(0, 9), needs=st.tuples(st.booleans(),
       st.booleans(), st.booleans()))
def test_conv2d_backward_matches_numpy(numpy_im2col, case, seed, needs):
    xs, ws, stride, pad, dil, groups, _ = case
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    _, geo = _conv_oracle(x, w, None, stride, pad, dil, groups)
    g = rng.standard_normal((xs[0], ws[0], geo[-2], geo[-1]))
    gx, gw, gb = conv_ops.conv2d_backward(torch.tensor(x), torch.tensor(w), torch.tensor(g),
                                          geo, groups, needs)
    # The oracle: <conv(x, w), g> is linear in x and in w; its gradients, group by group.
    o, cg = ws[0], ws[1]
    og = o // groups
    gmat = g.transpose(1, 0, 2, 3).reshape(o, -1)
    ex_x, ex_w = np.zeros(xs), np.zeros(ws)
    for k in range(groups):
        cols = _columns_oracle(x[:, k * cg:(k + 1) * cg], geo)
        gk = gmat[k * og:(k + 1) * og]
        ex_w[k * og:(k + 1) * og] = (gk @ cols.T).reshape((og,) + ws[1:])
        wk = w[k * og:(k + 1) * og].reshape(og, -1)
        ex_x[:, k * cg:(k + 1) * cg] = _image_oracle(wk.T @ gk, geo, (xs[0], cg) + xs[2:])
    for got, want, needed in ((gx, ex_x, needs[0]), (gw, ex_w, needs[1]),
                              (gb, g.sum((0, 2, 3)), needs[2])):
        if not needed:
            assert got is None
        else:
            assert tuple(got.shape) == want.shape
            np.testing.assert_allclose(_np(got), want, rtol=1e-10, atol=1e-12)


@pytest.mark.task("4.8")
def test_conv2d_backward_is_differentiable_for_double_backward(numpy_im2col):
    rng = np.random.default_rng(4)
    x, w = _leaf(1, 1, 3, 3, seed=4), _leaf(2, 1, 2, 2, seed=5)
    g = torch.tensor(rng.standard_normal((1, 2, 2, 2)), requires_grad=True)
    geo = _geometry(3, 3, (2, 2))
    with torch.enable_grad():
        gx, gw, gb = conv_ops.conv2d_backward(x, w, g, geo, 1, (True, True, True))
    assert gx.requires_grad and gw.requires_grad and gb.requires_grad
    # sum(gx) = sum over windows of g * sum(w): its gradient with respect to g.
    (gg,) = torch.autograd.grad(gx.sum() + gb.sum(), g)
    expected = np.broadcast_to(_np(w).reshape(2, -1).sum(1).reshape(1, 2, 1, 1) + 1,
                               (1, 2, 2, 2))
    np.testing.assert_allclose(_np(gg), expected, rtol=1e-12)
    (gwx,) = torch.autograd.grad(gw.sum(), x)                  # gw is linear in x
    ones_cols = _image_oracle(np.ones((4, 4)) * _np(g).reshape(2, 4).sum(0), geo, (1, 1, 3, 3))
    np.testing.assert_allclose(_np(gwx), ones_cols, rtol=1e-12)


# ---------------------------------------------------------------------------
# 4.9 max pooling's backward
# ---------------------------------------------------------------------------
@pytest.mark.task("4.9")
def test_max_pool_backward_routes_each_gradient_to_its_winner():
    grad = np.array([[[[5.0]]]])
    idx = np.array([[[[2]]]])
    out = np.full((1, 1, 2, 2), np.nan)                        # garbage: must be overwritten
    conv.max_pool2d_backward(grad, idx, out, 0, 1)
    np.testing.assert_array_equal(out[0, 0], [[0.0, 0.0], [5.0, 0.0]])


@pytest.mark.task("4.9")
@SOME
@given(n=st.integers(1, 2), c=st.integers(1, 3), h=st.integers(1, 4), w=st.integers(1, 4),
       oh=st.integers(1, 3), ow=st.integers(1, 3), seed=st.integers(0, 9), data=st.data())
def test_max_pool_backward_sums_the_windows_each_pixel_won(n, c, h, w, oh, ow, seed, data):
    rng = np.random.default_rng(seed)
    grad = rng.standard_normal((n, c, oh, ow))
    idx = rng.integers(0, h * w, (n, c, oh, ow))              # any winners: repeats overlap
    planes = n * c
    t0 = data.draw(st.integers(0, planes - 1))
    t1 = data.draw(st.integers(t0 + 1, planes))
    out = np.full((n, c, h, w), np.nan)
    conv.max_pool2d_backward(grad, idx, out, t0, t1)
    expected = np.zeros((planes, h * w))
    for p in range(planes):
        np.add.at(expected[p], idx.reshape(planes, -1)[p], grad.reshape(planes, -1)[p])
    got = out.reshape(planes, -1)
    np.testing.assert_allclose(got[t0:t1], expected[t0:t1], rtol=1e-12)
    assert np.isnan(got[:t0]).all() and np.isnan(got[t1:]).all()


# ---------------------------------------------------------------------------
# 4.10 the nll loss's reduction (forward), 4.11 its backward
# ---------------------------------------------------------------------------
@st.composite
def nll_cases(draw):
    rows, classes = draw(st.integers(1, 5)), draw(st.integers(2, 4))
    target = draw(st.lists(st.integers(0, classes - 1), min_size=rows, max_size=rows))
    ignore = draw(st.booleans())
    if ignore:
        target[draw(st.integers(0, rows - 1))] = -100
    weighted = draw(st.booleans())
    reduction = draw(st.sampled_from(["none", "sum", "mean"]))
    return rows, classes, np.array(target), weighted, reduction


def _nll_oracle(logp, target, weight, reduction):
    rows = logp.shape[0]
    w = np.ones(logp.shape[1]) if weight is None else weight
    keep = target != -100
    safe = np.where(keep, target, 0)
    per = np.where(keep, -w[safe] * logp[np.arange(rows), safe], 0.0)
    wts = np.where(keep, w[safe], 0.0)
    if reduction == "none":
        return per, wts
    if reduction == "sum":
        return per.sum(), wts
    return per.sum() / wts.sum(), wts


@pytest.mark.task("4.10")
@SOME
@given(case=nll_cases(), seed=st.integers(0, 9))
def test_nll_loss_reductions_match_numpy(case, seed):
    rows, classes, target, weighted, reduction = case
    rng = np.random.default_rng(seed)
    logp = rng.standard_normal((rows, classes))
    weight = rng.random(classes) + 0.5 if weighted else None
    if reduction == "mean" and (target == -100).all():
        return
    got = F.nll_loss(torch.tensor(logp), torch.tensor(target),
                     None if weight is None else torch.tensor(weight), reduction=reduction)
    expected, _ = _nll_oracle(logp, target, weight, reduction)
    assert got.shape == np.shape(expected)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)


@pytest.mark.task("4.10")
def test_nll_loss_mean_divides_by_the_total_weight_and_cross_entropy_uses_it():
    logp = torch.tensor([[-1.0, -2.0], [-3.0, -4.0], [-5.0, -6.0]])
    target = torch.tensor([0, -100, 1])
    weight = torch.tensor([1.0, 2.0])
    assert F.nll_loss(logp, target, weight).item() == pytest.approx((1 + 12) / 3)
    assert F.nll_loss(logp, target, weight, reduction="sum").item() == pytest.approx(13)
    x = torch.tensor([[0.0, 0.0]])
    assert F.cross_entropy(x, torch.tensor([1])).item() == pytest.approx(np.log(2))


@pytest.fixture
def numpy_nll_reduce(monkeypatch):
    """Task 4.10's reduction done by the test with NumPy (so that 4.11 is graded on its own
    code); it leaves the total weight in ``ctx.total`` as the reference does."""
    def reduce(ctx, losses, weights):
        per, wts = losses.numpy(), weights.numpy()
        ctx.total = torch.tensor(wts.sum(), dtype=losses.dtype)
        with np.errstate(invalid="ignore", divide="ignore"):       # (every row ignored)
            value = {"none": per, "sum": per.sum(), "mean": per.sum() / wts.sum()}[ctx.reduction]
        return torch.tensor(value, dtype=losses.dtype)

    monkeypatch.setattr(loss_ops.NllLoss, "reduce", staticmethod(reduce))


@pytest.mark.task("4.11")
@PATCHED
@given(case=nll_cases(), seed=st.integers(0, 9))
def test_nll_loss_gradient_matches_numpy(numpy_nll_reduce, case, seed):
    rows, classes, target, weighted, reduction = case
    if reduction == "mean" and (target == -100).all():
        return
    rng = np.random.default_rng(seed)
    logp = torch.tensor(rng.standard_normal((rows, classes)), requires_grad=True)
    weight = rng.random(classes) + 0.5 if weighted else None
    loss = F.nll_loss(logp, torch.tensor(target),
                      None if weight is None else torch.tensor(weight), reduction=reduction)
    g = rng.standard_normal(rows) if reduction == "none" else np.array(rng.standard_normal())
    loss.backward(torch.tensor(g))
    w = np.ones(classes) if weight is None else weight
    expected = np.zeros((rows, classes))
    scale = g if reduction == "none" else np.full(rows, float(g))
    _, wts = _nll_oracle(_np(logp), target, weight, reduction)
    if reduction == "mean":
        scale = scale / wts.sum()
    for r, t in enumerate(target):
        if t != -100:
            expected[r, t] = -w[t] * scale[r]
    np.testing.assert_allclose(_np(logp.grad), expected, rtol=1e-12)


@pytest.mark.task("4.11")
def test_nll_loss_gradient_with_create_graph_and_float32(numpy_nll_reduce):
    logp = torch.tensor([[-1.0, -2.0], [-3.0, -4.0]], requires_grad=True)
    g = torch.tensor(2.0, requires_grad=True)
    loss = F.nll_loss(logp, torch.tensor([1, 0]), reduction="mean")
    (gl,) = torch.autograd.grad(loss, logp, g, create_graph=True)
    assert gl.dtype == torch.float32 and gl.requires_grad
    np.testing.assert_allclose(gl.detach().numpy(), [[0.0, -1.0], [-1.0, 0.0]])
    (gg,) = torch.autograd.grad(gl.sum(), g)                   # d/dg of sum(-1/2 * g) twice
    assert gg.item() == pytest.approx(-1.0)
    logp = torch.tensor([[-1.0, -2.0], [-3.0, -4.0]], requires_grad=True)
    F.nll_loss(logp, torch.tensor([1, 1]), reduction="none").backward(torch.tensor([3.0, 5.0]))
    np.testing.assert_allclose(logp.grad.numpy(), [[0.0, -3.0], [0.0, -5.0]])

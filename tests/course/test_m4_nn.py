"""Course module 4, neural networks: linear layers, convolution, pooling, losses, dropout, batch norm.

``minitorch course test 4.1`` runs the tests of one task.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as torch
import minitorch.nn.functional as F
from minitorch.backends.cpu import conv

pytestmark = pytest.mark.nn


def _backward(out, g):
    """Run ``out``'s node's backward on ``g`` alone (PyTorch: ``out.grad_fn(g)``)."""
    grads = out.grad_fn.apply(g if isinstance(g, torch.Tensor) else torch.tensor(g))
    return tuple(None if t is None else t.detach() for t in grads)


def _leaf(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return torch.tensor(rng.standard_normal(shape), dtype=torch.float64, requires_grad=True)


# ``out.grad_fn.apply(g)`` runs one node's backward (PyTorch: ``out.grad_fn(g)``).
@pytest.mark.task("4.1")
def test_linear_backward_values():
    x, w, b = _leaf(4, 3), _leaf(2, 3, seed=1), _leaf(2, seed=2)
    g = np.arange(8.0).reshape(4, 2)
    gx, gw, gb = _backward(F.linear(x, w, b), g)
    np.testing.assert_allclose(gx.numpy(), g @ w.detach().numpy())
    np.testing.assert_allclose(gw.numpy(), g.T @ x.detach().numpy())
    np.testing.assert_allclose(gb.numpy(), g.sum(0))


@pytest.mark.task("4.1")
def test_linear_backward_without_bias_and_recorded_for_second_order():
    x, w = _leaf(3, 4), _leaf(2, 4, seed=1)
    g = torch.ones(3, 2, dtype=torch.float64)
    gx, gw = _backward(F.linear(x, w), g)[:2]
    np.testing.assert_allclose(gx.numpy(), np.ones((3, 2)) @ w.detach().numpy())
    with torch.enable_grad():
        gx2 = F.linear(x, w).grad_fn.apply(g.requires_grad_())[0]
    assert gx2.requires_grad              # create_graph: the backward is itself recorded


@pytest.mark.task("4.5")
def test_dropout_in_training_zeroes_and_scales():
    torch.manual_seed(0)
    x = torch.ones(10000)
    y = F.dropout(x, p=0.25, training=True)
    kept = y != 0
    assert abs(kept.float().mean().item() - 0.75) < 0.03
    np.testing.assert_allclose(np.unique(y.numpy()), [0.0, 1 / 0.75], rtol=1e-6)


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


# ---------------------------------------------------------------------------
# Convolution through im2col/col2im, and pooling: the kernels are called on
# NumPy arrays, with loops written out as the oracle.
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


_GEOMETRIES = [dict(), dict(stride=(2, 1)), dict(pad=(1, 2)),
               dict(k=(2, 3), dil=(2, 1), pad=(1, 0))]


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
def test_conv2d_is_im2col_then_one_matrix_product():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 3, 7, 7)), rng.standard_normal((4, 3, 3, 3))
    out = F.conv2d(torch.tensor(x), torch.tensor(w), stride=2, padding=1)
    geo = _geometry(7, 7, stride=(2, 2), pad=(1, 1))
    expected = (w.reshape(4, -1) @ _columns_oracle(x, geo)).reshape(4, 2, 4, 4)
    np.testing.assert_allclose(out.numpy(), expected.transpose(1, 0, 2, 3), rtol=1e-12)


@pytest.mark.task("4.3")
@pytest.mark.parametrize("options", _GEOMETRIES)
def test_col2im_adds_every_column_entry_back_into_its_pixel(options):
    rng = np.random.default_rng(2)
    geo = _geometry(6, 5, **options)
    kh, kw, *_, oh, ow = geo
    cols = rng.standard_normal((3 * kh * kw, 2 * oh * ow))
    x = np.full((2, 3, 6, 5), np.nan)                          # col2im must zero it first
    conv.col2im_batch(cols, *geo, x, 0, 2 * 3)
    # col2im is the transpose of im2col: <im2col(v), cols> == <v, col2im(cols)> for every v.
    for k in range(5):
        v = rng.standard_normal((2, 3, 6, 5))
        np.testing.assert_allclose(np.sum(_columns_oracle(v, geo) * cols), np.sum(v * x),
                                   rtol=1e-10)


@pytest.mark.task("4.3")
def test_col2im_counts_overlapping_windows():
    geo = _geometry(4, 4)                                     # 3x3 windows, stride 1: 2x2 of them
    x = np.empty((1, 1, 4, 4))
    conv.col2im_batch(np.ones((9, 4)), *geo, x, 0, 1)
    np.testing.assert_array_equal(x[0, 0], [[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2], [1, 2, 2, 1]])


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
def test_max_pool_padding_never_wins_and_nan_wins():
    x = -np.arange(1.0, 10.0).reshape(1, 1, 3, 3)              # all negative: padding (0) would win
    x[0, 0, 2, 2] = np.nan
    geo = _geometry(3, 3, k=(2, 2), stride=(2, 2), pad=(1, 1))
    out, idx = np.empty((1, 1, 2, 2)), np.empty((1, 1, 2, 2), np.int64)
    conv.max_pool2d(x, *geo, out, idx, 0, 1)
    np.testing.assert_array_equal(out[0, 0, 0], [-1.0, -2.0])
    assert out[0, 0, 1, 0] == -4.0 and np.isnan(out[0, 0, 1, 1]) and idx[0, 0, 1, 1] == 8


@pytest.mark.task("4.4")
def test_max_pool2d_module_forward_and_gradient_to_the_winner():
    x = torch.tensor([[[[1.0, 2.0], [4.0, 3.0]]]], requires_grad=True)
    out = torch.nn.MaxPool2d(2)(x)
    assert out.tolist() == [[[[4.0]]]]
    out.sum().backward()
    assert x.grad.tolist() == [[[[0.0, 0.0], [1.0, 0.0]]]]

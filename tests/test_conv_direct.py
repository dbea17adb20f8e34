"""The CPU's specialised convolution and pooling paths, against NumPy and the general path.

``conv2d`` takes the direct stride-1 kernels (backends/cpu/conv_direct.py)
and ``max_pool2d`` the tiling-window kernels only above a minimum size; these
tests lower the thresholds to 0 so that small shapes (cheap gradchecks, odd
geometries) go through them, and compare with the im2col / window_max path.
"""

import numpy as np
import pytest

import minitorch as torch
from minitorch.backends.cpu import backend as cpu_backend
from minitorch.backends.cpu import conv as conv_kernels
from minitorch.nn import functional as F
from minitorch.ops import conv as conv_ops

pytestmark = [pytest.mark.nn,
              pytest.mark.cpu_only("the CPU's direct convolution kernels: the GPU has none")]


@pytest.fixture
def direct(monkeypatch):
    """Every stride-1 convolution and tiling max-pool takes the specialised path."""
    monkeypatch.setattr(conv_ops, "DIRECT_MIN_MACS", 0)
    monkeypatch.setattr(cpu_backend, "POOL_TILES_MIN", 0)


@pytest.fixture
def general(monkeypatch):
    """Nothing takes the specialised paths."""
    monkeypatch.setattr(conv_ops, "DIRECT_MIN_MACS", float("inf"))
    monkeypatch.setattr(cpu_backend, "POOL_TILES_MIN", float("inf"))


def conv2d_ref(x, w, b, padding, dilation, groups):
    """Stride-1 convolution by loops over the taps (NumPy)."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    (ph, pw), (dh, dw) = padding, dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh, ow = h + 2 * ph - dh * (kh - 1), wd + 2 * pw - dw * (kw - 1)
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, i * dh:i * dh + oh, j * dw:j * dw + ow]
                out[:, oc] += np.einsum("nchw,c->nhw", patch, w[oc, :, i, j])
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


# (n, c, h, w, o, groups, kh, kw, padding, dilation, bias)
SHAPES = [
    (2, 3, 7, 6, 4, 1, 3, 3, (1, 1), (1, 1), True),
    (1, 4, 5, 8, 6, 2, 3, 2, (1, 0), (2, 1), False),
    (2, 2, 4, 4, 3, 1, 1, 1, (0, 0), (1, 1), True),        # 1x1
    (1, 2, 6, 9, 2, 2, 2, 4, (3, 3), (2, 1), True),        # padding wider than the kernel
    (3, 1, 9, 9, 5, 1, 5, 5, (2, 2), (1, 1), True),        # LeNet's first layer, small
    (2, 6, 8, 8, 9, 3, 3, 3, (0, 1), (1, 1), True),        # groups, o not a multiple of 4
]


@pytest.mark.parametrize("shape", SHAPES)
def test_direct_conv2d_matches_numpy_and_takes_the_direct_path(direct, shape):
    n, c, h, wd, o, groups, kh, kw, padding, dilation, bias = shape
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, wd))
    w = rng.standard_normal((o, c // groups, kh, kw))
    b = rng.standard_normal(o) if bias else None
    out = F.conv2d(torch.tensor(x, requires_grad=True), torch.tensor(w),
                   None if b is None else torch.tensor(b), 1, padding, dilation, groups)
    assert out.grad_fn.name() == "ConvolutionBackward0"
    np.testing.assert_allclose(out.detach().numpy(),
                               conv2d_ref(x, w, b, padding, dilation, groups),
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("shape", SHAPES[:4] + SHAPES[5:])
def test_direct_conv2d_gradcheck(direct, shape):
    n, c, h, wd, o, groups, kh, kw, padding, dilation, bias = shape
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal((n, c, h, wd)), requires_grad=True)
    w = torch.tensor(rng.standard_normal((o, c // groups, kh, kw)), requires_grad=True)
    b = torch.tensor(rng.standard_normal(o), requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda x, w, b: F.conv2d(x, w, b if bias else None, 1, padding, dilation, groups),
        (x, w, b))


def test_direct_conv2d_double_backward(direct):
    rng = np.random.default_rng(2)
    x = torch.tensor(rng.standard_normal((2, 4, 5, 4)), requires_grad=True)
    w = torch.tensor(rng.standard_normal((4, 2, 3, 2)), requires_grad=True)
    b = torch.tensor(rng.standard_normal(4), requires_grad=True)
    assert torch.autograd.gradgradcheck(
        lambda x, w, b: F.conv2d(x, w, b, padding=1, dilation=(1, 2), groups=2), (x, w, b))


def test_direct_and_im2col_paths_agree_in_float32(monkeypatch):
    """A LeNet-sized layer, forward and backward, through both paths."""
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((4, 6, 14, 14),
                                                                 (16, 6, 5, 5), (16,))]
    g = rng.standard_normal((4, 16, 12, 12)).astype(np.float32)
    results = []
    for threshold in (0, float("inf")):
        monkeypatch.setattr(conv_ops, "DIRECT_MIN_MACS", threshold)
        x, w, b = (torch.tensor(a, requires_grad=True) for a in arrays)
        out = F.conv2d(x, w, b, padding=1)
        out.backward(torch.tensor(g))
        results.append([t.detach().numpy() for t in (out, x.grad, w.grad, b.grad)])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-4)


def test_lenet_layers_take_the_direct_path_by_default():
    x = torch.zeros(2, 1, 28, 28)
    assert F.conv2d(x, torch.zeros(6, 1, 5, 5, requires_grad=True),
                    padding=2).grad_fn.name() == "ConvolutionBackward0"
    # Strided convolutions keep the im2col path.
    assert F.conv2d(x, torch.zeros(6, 1, 5, 5, requires_grad=True), stride=2,
                    padding=2).grad_fn.name() != "ConvolutionBackward0"


def test_direct_conv2d_unbatched_input_and_only_some_gradients(direct):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 6, 5))
    w = torch.tensor(rng.standard_normal((2, 3, 3, 3)), requires_grad=True)
    out = F.conv2d(torch.tensor(x), w, padding=1)
    np.testing.assert_allclose(out.detach().numpy(),
                               conv2d_ref(x[None], w.detach().numpy(), None, (1, 1), (1, 1),
                                          1)[0], rtol=1e-10, atol=1e-10)
    out.sum().backward()
    assert w.grad is not None and w.grad.shape == (2, 3, 3, 3)


# ---------------------------------------------------------------------------
# max pooling with windows that tile the input
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("kernel,h,w", [(2, 8, 8), (2, 7, 9), ((3, 2), 9, 6), (1, 3, 3)])
def test_tiling_max_pool_matches_the_general_kernel(kernel, h, w):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, h, w))
    x[0, 0, 0, :2] = 7.0                      # a tie: the first maximum wins
    x[1, 2, 1, 1] = np.nan                    # a NaN wins
    x[1, 2, 2, 0] = np.nan
    kh, kw = (kernel, kernel) if isinstance(kernel, int) else kernel
    oh, ow = h // kh, w // kw
    geo = (kh, kw, kh, kw, 0, 0, 1, 1, oh, ow)
    want = np.empty((2, 3, oh, ow)), np.empty((2, 3, oh, ow), np.int64)
    conv_kernels.max_pool2d(x, *geo, *want, 0, 6)
    got = np.empty((2, 3, oh, ow)), np.empty((2, 3, oh, ow), np.int64)
    conv_kernels.max_pool2d_tiles(x, kh, kw, oh, ow, *got, 0, 6)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    g = rng.standard_normal((2, 3, oh, ow))
    back_want, back_got = np.full(x.shape, np.nan), np.full(x.shape, np.nan)
    conv_kernels.max_pool2d_backward(g, want[1], back_want, 0, 6)
    conv_kernels.max_pool2d_tiles_backward(g, got[1], kh, kw, back_got, 0, 6)
    np.testing.assert_array_equal(back_got, back_want)


def test_tiling_max_pool_through_the_op(direct):
    rng = np.random.default_rng(6)
    x = torch.tensor(rng.standard_normal((2, 3, 6, 7)), requires_grad=True)
    out = F.max_pool2d(x, 2)
    np.testing.assert_array_equal(
        out.detach().numpy(), x.detach().numpy()[:, :, :6, :6].reshape(2, 3, 3, 2, 3, 2)
        .max(axis=(3, 5)))
    assert torch.autograd.gradcheck(lambda t: F.max_pool2d(t, 2), (x,))
    assert torch.autograd.gradgradcheck(lambda t: F.max_pool2d(t, (2, 3)), (x,))

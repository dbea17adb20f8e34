"""Convolution and pooling against direct NumPy references, with gradient checks."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitorch as torch
from device_checks import check, cuda_usable, gradcheck, gradgradcheck, host, on
from minitorch.nn import functional as F

pytestmark = pytest.mark.nn


def conv2d_ref(x, w, b, stride, padding, dilation, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    sh, sw = stride
    ph, pw = padding
    dh, dw = dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, i * dh: i * dh + sh * (oh - 1) + 1: sh,
                           j * dw: j * dw + sw * (ow - 1) + 1: sw]
                out[:, oc] += np.einsum("nchw,c->nhw", patch, w[oc, :, i, j])
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 2), st.sampled_from([1, 2]), st.integers(1, 3), st.integers(1, 3),
       st.integers(0, 2), st.integers(1, 2), st.integers(1, 2), st.booleans(), st.data())
def test_conv2d_matches_reference(default_device, n, groups, cg, og, pad, stride, dil, bias, data):
    kh = data.draw(st.integers(1, 3))
    kw = data.draw(st.integers(1, 3))
    h = data.draw(st.integers(dil * (kh - 1) + 1, 7))
    w = data.draw(st.integers(dil * (kw - 1) + 1, 7))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, cg * groups, h, w))
    wt = rng.standard_normal((og * groups, cg, kh, kw))
    b = rng.standard_normal(og * groups) if bias else None
    out = F.conv2d(torch.tensor(x), torch.tensor(wt), None if b is None else torch.tensor(b),
                   stride, pad, dil, groups)
    np.testing.assert_allclose(out.cpu().numpy(), conv2d_ref(x, wt, b, (stride, stride), (pad, pad),
                                                      (dil, dil), groups), rtol=1e-10,
                               atol=1e-10)


def test_conv_gradcheck_and_double_backward(default_device):
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal((2, 2, 5, 4)), requires_grad=True)
    w = torch.tensor(rng.standard_normal((3, 2, 3, 2)), requires_grad=True)
    b = torch.tensor(rng.standard_normal(3), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, 2, 1), (x, w, b))
    assert gradgradcheck(lambda x, w: F.conv2d(x, w, padding=1), (x, w))


def test_pooling_against_numpy_and_gradients(default_device):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 6, 6))
    out = F.max_pool2d(torch.tensor(x), 2).cpu().numpy()
    np.testing.assert_allclose(out, x.reshape(2, 3, 3, 2, 3, 2).max(axis=(3, 5)))
    avg = F.avg_pool2d(torch.tensor(x), 3).cpu().numpy()
    np.testing.assert_allclose(avg, x.reshape(2, 3, 2, 3, 2, 3).mean(axis=(3, 5)))
    ad = F.adaptive_avg_pool2d(torch.tensor(x), (1, 1)).cpu().numpy()
    np.testing.assert_allclose(ad[..., 0, 0], x.mean(axis=(2, 3)))
    t = torch.tensor(x, requires_grad=True)
    assert gradcheck(lambda t: F.max_pool2d(t, 3, 2, 1), (t,))
    assert gradcheck(lambda t: F.avg_pool2d(t, 2, 1, 1,
                                                           count_include_pad=False), (t,))


def test_unfold_fold_are_adjoint(device):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 5, 5))
    cols = rng.standard_normal((1, 2 * 9, 9))
    u = host(F.unfold(on(x, device), 3, padding=1, stride=2))
    f = host(F.fold(on(cols, device), (5, 5), 3, padding=1, stride=2))
    # <unfold(x), cols> == <x, fold(cols)>: fold is the transpose of unfold.
    assert np.sum(u * cols) == pytest.approx(np.sum(x * f))
    # fold(unfold(x)) counts each pixel once per window that covers it.
    x = torch.arange(32.0, device=device).reshape(1, 2, 4, 4)
    cols = F.unfold(x, 3, padding=1, stride=2)
    assert cols.shape == (1, 18, 4)
    back = F.fold(cols, (4, 4), 3, padding=1, stride=2)
    ones = F.fold(F.unfold(torch.ones_like(x), 3, padding=1, stride=2), (4, 4), 3, padding=1,
                  stride=2)
    check(back, host(x) * host(ones), device)


def _conv_step(lib, device, arrays):
    """A grouped, strided, dilated convolution, then both poolings, forward and backward."""
    x, w, b = (lib.tensor(a, device=device, requires_grad=True) for a in arrays)
    y = lib.nn.functional.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
    pooled = (lib.nn.functional.max_pool2d(lib.nn.functional.relu(y), 2, stride=1)
              + lib.nn.functional.avg_pool2d(y, 2, stride=1))
    (pooled * pooled).sum().backward()
    return [t.detach().cpu().numpy() for t in (y, x.grad, w.grad, b.grad)]


def test_conv_and_pooling_forward_and_backward_match_pytorch(device):
    pt = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(shape).astype(np.float32)
              for shape in ((2, 2, 6, 5), (4, 1, 3, 2), (4,))]
    for got, want in zip(_conv_step(torch, device, arrays), _conv_step(pt, "cpu", arrays)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_conv_errors(default_device):
    with pytest.raises(RuntimeError, match="channels"):
        F.conv2d(torch.zeros(1, 3, 5, 5), torch.zeros(2, 2, 3, 3))
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.conv2d(torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 3, 3))
    with pytest.raises(RuntimeError, match="Expected 3D"):
        F.conv2d(torch.zeros(5, 5), torch.zeros(1, 1, 3, 3))


@pytest.mark.cuda
@pytest.mark.parametrize("geometry", [(2, 2, 5, 4, 3, 2, 2, 1, 1, 0, 1, 2),
                                      (2, 3, 3, 5, 3, 3, 1, 2, 2, 1, 2, 1)])
def test_gpu_columns_are_the_cpu_columns_bit_for_bit(default_device, geometry):
    # The GPU's im2col/col2im run the course's CPU im2col (task 4.2) once, on an image of
    # pixel numbers, and gather by that map; col2im adds in the CPU's order.  (~3 s.)
    if not cuda_usable():
        pytest.skip("no CUDA device and no CUDA simulator (set NUMBA_ENABLE_CUDASIM=1)")
    # Imported here: only a run with a GPU (or the simulator) loads the CUDA backend.
    from numba import cuda
    from minitorch.backends.cpu import backend as cpu
    from minitorch.backends.cuda import backend as gpu
    n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw = geometry
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    g = (kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    for name, shape in (("im2col", (n, c * kh * kw, oh * ow)),
                        ("im2col_batch", (c * kh * kw, n * oh * ow))):
        want = np.empty(shape, np.float32)
        getattr(cpu, name)(x, g, want)
        got = cuda.device_array(shape, np.float32)
        getattr(gpu, name)(cuda.to_device(x), g, got)
        np.testing.assert_array_equal(got.copy_to_host(), want)
        cols = rng.standard_normal(shape).astype(np.float32)
        back = name.replace("im2col", "col2im")
        want = np.empty(x.shape, np.float32)
        getattr(cpu, back)(cols, g, want)
        got = cuda.device_array(x.shape, np.float32)
        getattr(gpu, back)(cuda.to_device(cols), g, got)
        np.testing.assert_array_equal(got.copy_to_host(), want)

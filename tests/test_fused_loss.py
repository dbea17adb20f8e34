"""softmax, log_softmax and nll_loss as fused row kernels (backends/*/softmax.py, ops/loss.py).

NumPy is the oracle for values; gradients are checked by finite differences
in float64, and second derivatives (``create_graph``) too, since the fused
backward switches to the differentiable formula there.  The tests that take the
``device`` fixture run on ``cpu`` and on ``cuda`` (the simulator without a GPU);
on ``cuda`` a gradient is compared with the CPU's.  (A bad target on ``cuda`` is
tested in tests/test_cuda_sync.py: it is reported at the next read.)
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch as torch
from device_checks import host
from device_checks import gradcheck, gradgradcheck
from minitorch.nn import functional as F

pytestmark = pytest.mark.nn


def _np_log_softmax(a: np.ndarray, dim: int) -> np.ndarray:
    m = a.max(axis=dim, keepdims=True)
    s = a - m
    return s - np.log(np.exp(s).sum(axis=dim, keepdims=True))


@settings(max_examples=30, deadline=None)
@given(shape=st.sampled_from([(1,), (5,), (3, 7), (4, 1), (2, 3, 5), (2, 3, 4, 2)]),
       data=st.data(), dtype=st.sampled_from([torch.float32, torch.float64]))
def test_softmax_and_log_softmax_match_numpy(default_device, shape, data, dtype):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = np.random.default_rng(data.draw(st.integers(0, 99))).standard_normal(shape) * 5
    x = torch.tensor(a, dtype=dtype)
    want = _np_log_softmax(a, dim)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype is torch.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(torch.log_softmax(x, dim).cpu().numpy(), want, **tol)
    np.testing.assert_allclose(torch.softmax(x, dim).cpu().numpy(), np.exp(want), **tol)
    assert torch.softmax(x, dim).is_contiguous()


@pytest.mark.parametrize("shape, dim", [((3, 7), 1), ((3, 7), 0), ((2, 3, 4), 1), ((5,), 0)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_softmax_and_log_softmax_on_every_device(device, shape, dim, dtype):
    a = np.random.default_rng(7).standard_normal(shape) * 5
    x = torch.tensor(a, dtype=dtype, device=device)
    want = _np_log_softmax(a, dim)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype is torch.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(host(torch.log_softmax(x, dim)), want, **tol)
    np.testing.assert_allclose(host(torch.softmax(x, dim)), np.exp(want), **tol)
    assert torch.softmax(x, dim).device.type == device


def test_infinities_and_nan_as_in_pytorch(device):
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([[1.0, inf, 2.0], [-inf, 0.0, 1.0], [nan, 1.0, 2.0], [-inf, -inf, 1.0],
                      [-inf, -inf, -inf]], device=device)
    p = torch.softmax(x, 1).tolist()
    assert all(np.isnan(p[0])) and all(np.isnan(p[2])) and all(np.isnan(p[4]))
    np.testing.assert_allclose(p[1], [0.0, 0.26894142, 0.73105858], rtol=1e-6)
    assert p[3] == [0.0, 0.0, 1.0]
    lp = torch.log_softmax(x, 1).tolist()
    assert lp[1][0] == -inf and lp[3] == [-inf, -inf, 0.0] and all(np.isnan(lp[4]))


@pytest.mark.parametrize("fn", [torch.softmax, torch.log_softmax])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_gradients(default_device, fn, dim):
    x = torch.randn(3, 4, 2, dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda t: fn(t, dim), (x,))
    assert gradgradcheck(lambda t: fn(t, dim), (x,))
    assert fn(x, dim).grad_fn.name() == ("SoftmaxBackward0" if fn is torch.softmax
                                         else "LogSoftmaxBackward0")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_values_and_gradients(device, reduction, weighted):
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((6, 5))
    target = np.array([0, 4, 2, -100, 2, 1])
    weight = rng.random(5) + 0.5 if weighted else np.ones(5)
    logp = _np_log_softmax(logits, 1)
    keep = target != -100
    safe = np.where(keep, target, 0)
    per = -logp[np.arange(6), safe] * weight[safe] * keep
    want = {"none": per, "sum": per.sum(), "mean": per.sum() / (weight[safe] * keep).sum()}
    x = torch.tensor(logits, requires_grad=True, device=device)
    w = torch.tensor(weight, device=device) if weighted else None
    loss = F.cross_entropy(x, torch.tensor(target, device=device), weight=w,
                           reduction=reduction)
    np.testing.assert_allclose(host(loss), want[reduction], rtol=1e-12)
    assert loss.grad_fn.name() == "NllLossBackward0"
    if device == "cpu":
        f = lambda t: F.cross_entropy(t, torch.tensor(target), weight=w, reduction=reduction)
        assert gradcheck(f, (x,)) and gradgradcheck(f, (x,))
    else:       # the CPU's gradient (checked above by finite differences)
        xc = torch.tensor(logits, requires_grad=True)
        wc = torch.tensor(weight) if weighted else None
        grad = torch.ones(6) if reduction == "none" else torch.tensor(1.0)
        F.cross_entropy(xc, torch.tensor(target), weight=wc, reduction=reduction).backward(grad)
        loss.backward(grad.to(device))
        np.testing.assert_allclose(host(x.grad), xc.grad.cpu().numpy(), rtol=1e-12, atol=1e-15)


def test_nll_loss_on_image_shaped_input(default_device):
    x = torch.randn(2, 4, 3, 5, dtype=torch.float64, requires_grad=True)
    t = torch.randint(0, 4, (2, 3, 5))
    loss = F.cross_entropy(x, t)
    assert loss.grad_fn.name() == "NllLoss2DBackward0"
    per = F.cross_entropy(x, t, reduction="none")
    assert per.shape == (2, 3, 5)
    want = -_np_log_softmax(x.detach().cpu().numpy(), 1)[
        np.arange(2)[:, None, None], t.cpu().numpy(), np.arange(3)[None, :, None],
        np.arange(5)[None, None, :]]
    np.testing.assert_allclose(per.detach().cpu().numpy(), want, rtol=1e-12)
    assert gradcheck(lambda a: F.cross_entropy(a, t.to(a.device)), (x,))


@pytest.mark.cpu_only("the CPU raises at the call; on cuda at the next wait (test_cuda_sync.py)")
def test_bad_targets_raise_before_any_read():
    x = torch.randn(3, 4)
    for bad in (4, -1, 10**12):
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
            F.cross_entropy(x, torch.tensor([0, bad, 1]))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 4"):
        F.cross_entropy(x, torch.tensor([0, 1, 2]), weight=torch.ones(3))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.nll_loss(x, torch.tensor([0, 1, 2]), reduction="avg")
    # every target ignored: the mean divides 0 by a total weight of 0
    assert np.isnan(F.nll_loss(x, torch.tensor([-100, -100, -100])).item())

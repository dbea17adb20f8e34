"""``minitorch.utils.checkpoint``: recompute in backward, same gradients as without it."""

import warnings

import numpy as np
import pytest

import minitorch as torch
from minitorch.utils.checkpoint import checkpoint, checkpoint_sequential

pytestmark = pytest.mark.autograd


def _net():
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(3, 6), torch.nn.Dropout(0.5), torch.nn.Tanh(),
                               torch.nn.Linear(6, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))


def _grads(net, run, x):
    net.zero_grad()
    torch.manual_seed(7)                     # the same dropout masks in every variant
    out = run(x)
    out.sum().backward()
    return out.detach().cpu().numpy(), [p.grad.cpu().numpy().copy() for p in net.parameters()]


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_gradients_equal_plain_backward_with_dropout(default_device, use_reentrant):
    net = _net()
    x = torch.randn(5, 3, requires_grad=True)
    out0, g0 = _grads(net, net, x)
    gx0 = x.grad.cpu().numpy().copy()
    x.grad = None
    out1, g1 = _grads(net, lambda v: checkpoint(net, v, use_reentrant=use_reentrant), x)
    np.testing.assert_allclose(out1, out0)
    for a, b in zip(g0, g1):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(x.grad.cpu().numpy(), gx0, rtol=1e-6)


def test_checkpoint_sequential_matches(default_device):
    net = _net()
    x = torch.randn(4, 3)
    _, g0 = _grads(net, net, x)
    _, g1 = _grads(net, lambda v: checkpoint_sequential(net, 3, v, use_reentrant=False), x)
    for a, b in zip(g0, g1):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_forward_keeps_no_graph_inside(default_device):
    seen = []

    def block(v):
        h = v.exp()
        seen.append(h)
        return h * 2

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = checkpoint(block, x, use_reentrant=False)
    assert seen[0].grad_fn is None                    # nothing recorded in forward
    assert y.grad_fn.name() == "CheckpointFunctionBackward"
    y.sum().backward()
    assert len(seen) == 2                             # block ran again in backward
    np.testing.assert_allclose(x.grad.cpu().numpy(), 2 * np.exp([1.0, 2.0]), rtol=1e-6)


def test_non_reentrant_reaches_parameters_when_no_input_requires_grad(default_device):
    lin = torch.nn.Linear(2, 1)
    checkpoint(lin, torch.ones(1, 2), use_reentrant=False).sum().backward()
    assert lin.weight.grad.tolist() == [[1.0, 1.0]]


def test_arguments_and_warnings(default_device):
    x = torch.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        checkpoint(lambda v: v * 2, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments"):
        checkpoint(lambda v, scale: v * scale, x, use_reentrant=True, scale=2)
    y = checkpoint(lambda v, scale: v * scale, x, use_reentrant=False, scale=3)
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not checkpoint(lambda v: v * 2, x, use_reentrant=False).requires_grad

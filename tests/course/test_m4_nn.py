"""Course module 4, neural networks: linear layers, convolution, pooling, losses, dropout, batch norm.

``minitorch course test 4.1`` runs the tests of one task.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as torch
import minitorch.nn.functional as F

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

"""Course module 3, autograd: topological order, accumulation, no_grad, backward formulas.

Gradients are checked against NumPy and by finite differences in float64
(``gradcheck``).  ``minitorch course test 3.4`` runs the tests of one task.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as torch
from minitorch.autograd.engine import _discover
from minitorch.autograd.graph import accumulate_into_leaf
from minitorch.ops.views import sum_to_shape

pytestmark = pytest.mark.autograd


def _numeric_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d(sum of f(x) * weights)/dx by central differences (f maps an array to an array)."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[i] += eps
        lo[i] -= eps
        grad[i] = (f(hi) - f(lo)).sum() / (2 * eps)
    return grad


def _backward(out, g):
    """Run ``out``'s node's backward on ``g`` alone (PyTorch: ``out.grad_fn(g)``)."""
    grads = out.grad_fn.apply(g if isinstance(g, torch.Tensor) else torch.tensor(g))
    return tuple(None if t is None else t.detach() for t in grads)


def _leaf(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return torch.tensor(rng.standard_normal(shape), dtype=torch.float64, requires_grad=True)


class _Node:
    """A stand-in graph node: only ``next_functions`` matters to the dependency count."""

    def __init__(self, *children):
        self.next_functions = tuple((c, 0) for c in children)


@pytest.mark.task("3.1")
def test_discover_counts_edges_into_each_node():
    leaf = _Node()
    left, right = _Node(leaf), _Node(leaf)
    root = _Node(left, right, None)
    deps = _discover([root])
    assert deps[leaf] == 2 and deps[left] == 1 and deps[right] == 1
    assert root not in deps            # nothing points at the root


@pytest.mark.task("3.1")
def test_discover_on_a_real_graph():
    a = _leaf(3)
    y = (a * a + a).sum()
    deps = _discover([y.grad_fn])
    acc = a.grad_fn if a.grad_fn is not None else None
    assert acc is None
    # ``a`` is used three times: its AccumulateGrad node receives three edges.
    assert max(deps.values()) == 3
    assert y.grad_fn not in deps or deps[y.grad_fn] == 0      # nothing points at the root


@pytest.mark.task("3.2")
def test_accumulate_into_leaf_stores_then_adds():
    x = torch.zeros(3, requires_grad=True)
    g = torch.tensor([1.0, 2.0, 3.0])
    accumulate_into_leaf(x, g, create_graph=False)
    assert x.grad.tolist() == [1.0, 2.0, 3.0]
    assert x.grad is not g and not x.grad.requires_grad
    accumulate_into_leaf(x, g, create_graph=False)
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    assert g.tolist() == [1.0, 2.0, 3.0]          # the incoming gradient is not modified


@pytest.mark.task("3.2")
def test_accumulate_into_leaf_runs_the_leafs_hooks_first():
    x = torch.ones(2, requires_grad=True)
    x.register_hook(lambda grad: grad * 10)
    accumulate_into_leaf(x, torch.tensor([3.0, 3.0]), create_graph=False)
    assert x.grad.tolist() == [30.0, 30.0]
    accumulate_into_leaf(x, torch.tensor([1.0, 1.0]), create_graph=False)
    assert x.grad.tolist() == [40.0, 40.0]


@pytest.mark.task("3.3")
def test_no_grad_stops_recording_and_restores():
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        y = x * 2
        assert not torch.is_grad_enabled()
        with torch.enable_grad():
            z = x * 2
            assert torch.is_grad_enabled()
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad


@pytest.mark.task("3.3")
def test_no_grad_as_a_decorator():
    @torch.no_grad()
    def double(t):
        return t * 2

    x = torch.ones(2, requires_grad=True)
    assert not double(x).requires_grad
    assert torch.is_grad_enabled()


# A node's ``apply(g)`` runs its backward directly (PyTorch: ``y.grad_fn(g)``), without
# the engine: these tests check one formula at a time.
@pytest.mark.task("3.4")
def test_mul_backward_values():
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
    ga, gb = _backward(a * b, torch.ones(3))
    assert ga.tolist() == [4.0, 5.0, 6.0]
    assert gb.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.task("3.4")
def test_mul_backward_numbers_match_finite_differences():
    a, b = _leaf(2, 3), _leaf(2, 3, seed=1)
    g = np.arange(6.0).reshape(2, 3)
    ga, gb = _backward(a * b, torch.tensor(g))
    an, bn = a.detach().numpy(), b.detach().numpy()
    np.testing.assert_allclose(ga.numpy(), _numeric_grad(lambda v: v * bn * g, an), rtol=1e-6)
    np.testing.assert_allclose(gb.numpy(), _numeric_grad(lambda v: an * v * g, bn), rtol=1e-6)
    gx = _backward(torch.tensor([1.0, -2.0], requires_grad=True) * 3.0, torch.ones(2))[0]
    assert gx.tolist() == [3.0, 3.0]


@pytest.mark.task("3.5")
def test_sum_to_shape_undoes_broadcasting():
    g = torch.tensor(np.arange(24.0).reshape(2, 3, 4))
    np.testing.assert_allclose(sum_to_shape(g, (3, 1)).numpy(),
                               np.arange(24.0).reshape(2, 3, 4).sum(axis=(0, 2))[:, None])
    np.testing.assert_allclose(sum_to_shape(g, (4,)).numpy(),
                               np.arange(24.0).reshape(2, 3, 4).sum(axis=(0, 1)))
    assert sum_to_shape(g, (2, 3, 4)) is g
    assert sum_to_shape(g, ()).item() == float(np.arange(24.0).sum())


@pytest.mark.task("3.5")
def test_gradients_of_broadcast_adds_have_the_inputs_shapes():
    a, b = _leaf(4, 1), _leaf(1, 3, seed=1)
    ga, gb = _backward(a + b, torch.ones(4, 3, dtype=torch.float64))
    assert ga.shape == (4, 1) and gb.shape == (1, 3)
    assert ga.tolist() == [[3.0]] * 4 and gb.tolist() == [[4.0, 4.0, 4.0]]


@pytest.mark.task("3.6")
def test_matmul_backward_values():
    a, b = _leaf(2, 3), _leaf(3, 4, seed=1)
    g = np.arange(8.0).reshape(2, 4)
    ga, gb = _backward(a @ b, torch.tensor(g))
    np.testing.assert_allclose(ga.numpy(), g @ b.detach().numpy().T)
    np.testing.assert_allclose(gb.numpy(), a.detach().numpy().T @ g)


@pytest.mark.task("3.6")
def test_batched_matmul_backward_matches_finite_differences():
    a, b = _leaf(2, 2, 3), _leaf(2, 3, 2, seed=1)
    g = np.arange(8.0).reshape(2, 2, 2)
    ga, gb = _backward(a @ b, torch.tensor(g))
    an, bn = a.detach().numpy(), b.detach().numpy()
    assert ga.shape == (2, 2, 3) and gb.shape == (2, 3, 2)
    np.testing.assert_allclose(ga.numpy(), _numeric_grad(lambda v: (v @ bn) * g, an), rtol=1e-6)
    np.testing.assert_allclose(gb.numpy(), _numeric_grad(lambda v: (an @ v) * g, bn), rtol=1e-6)

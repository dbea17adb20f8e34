"""Core ops against NumPy, and autograd rules.

The tests that take the ``device`` fixture (tests/conftest.py) run on ``cpu`` and on
``cuda`` (Numba's simulator without a GPU: tiny shapes); ``host`` copies a result back.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import minitorch as torch
from device_checks import host

pytestmark = pytest.mark.ops

shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
floats = st.floats(-10, 10, allow_nan=False, width=32)


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float32, shapes, elements=floats), st.data())
def test_binary_broadcast_matches_numpy(default_device, a, data):
    bshape = data.draw(hnp.broadcastable_shapes(a.shape, max_dims=3, max_side=4))
    b = data.draw(hnp.arrays(np.float32, bshape, elements=floats))
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    np.testing.assert_allclose((ta + tb).cpu().numpy(), a + b, rtol=1e-6)
    np.testing.assert_allclose((ta * tb).cpu().numpy(), a * b, rtol=1e-6)
    np.testing.assert_allclose((ta - 2.5).cpu().numpy(), a - 2.5, rtol=1e-6)
    np.testing.assert_array_equal((ta < tb).cpu().numpy(), a < b)


@pytest.mark.parametrize("a_shape, b_shape", [((), (3,)), ((2, 1, 3), (4, 1)), ((0, 3), (1,)),
                                              ((2, 3), (2, 3))])
def test_binary_broadcast_on_every_device(device, a_shape, b_shape):
    rng = np.random.default_rng(5)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    ta, tb = torch.tensor(a, device=device), torch.tensor(b, device=device)
    np.testing.assert_allclose(host(ta + tb), a + b, rtol=1e-6)
    np.testing.assert_allclose(host(ta * tb), a * b, rtol=1e-6)
    np.testing.assert_allclose(host(ta - 2.5), a - 2.5, rtol=1e-6)
    np.testing.assert_array_equal(host(ta < tb), a < b)
    assert (ta + tb).device.type == device


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                  elements=st.floats(-5, 5)), st.data())
def test_reductions_match_numpy(default_device, a, data):
    t = torch.from_numpy(a)
    dim = data.draw(st.integers(0, a.ndim - 1))
    np.testing.assert_allclose(t.sum(dim).cpu().numpy(), a.sum(dim), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(t.sum().item(), a.sum(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(t.sum(dim, keepdim=True).cpu().numpy(), a.sum(dim, keepdims=True),
                               rtol=1e-10, atol=1e-12)
    if a.shape[dim] > 0:
        np.testing.assert_allclose(t.max(dim).values.cpu().numpy(), a.max(dim))
        np.testing.assert_array_equal(t.argmax(dim).cpu().numpy(), a.argmax(dim))
        np.testing.assert_allclose(t.mean(dim).cpu().numpy(), a.mean(dim), rtol=1e-10, atol=1e-12)


def test_transposed_operands(device):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = torch.tensor(a, device=device)
    np.testing.assert_allclose(host(t.t() * 2 + t.t()), a.T * 3)
    np.testing.assert_allclose(host(t.t().exp()), np.exp(a.T), rtol=1e-6)


def test_type_promotion(device):
    i = torch.tensor([1, 2], device=device)
    assert (i + 1.5).dtype == torch.float32
    assert (i / 2).dtype == torch.float32
    assert (i / 2).tolist() == [0.5, 1.0]
    assert (i + torch.tensor(1.0, dtype=torch.float64, device=device)).dtype == torch.float64
    f = torch.tensor([1.0], device=device)
    assert (f + torch.tensor(1.0, dtype=torch.float64, device=device)).dtype == torch.float32
    assert (f + torch.tensor([1.0], dtype=torch.float64, device=device)).dtype == torch.float64
    assert (i + True).dtype == torch.int64


def test_broadcast_error_names_shapes(device):
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of "
                                           r"tensor b \(4\)"):
        torch.zeros(2, 3, device=device) + torch.zeros(2, 4, device=device)


def test_dim_out_of_range(device):
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.zeros(2, 3, device=device).sum(2)


def test_matmul_and_grad(device):
    a = np.random.rand(3, 4)
    b = np.random.rand(4, 5)
    ta = torch.tensor(a, requires_grad=True, device=device)
    tb = torch.tensor(b, requires_grad=True, device=device)
    c = ta @ tb
    np.testing.assert_allclose(host(c), a @ b)
    c.sum().backward()
    assert ta.grad.device.type == device
    np.testing.assert_allclose(host(ta.grad), np.ones((3, 5)) @ b.T)
    np.testing.assert_allclose(host(tb.grad), a.T @ np.ones((3, 5)))


def test_softmax_is_stable(device):
    x = torch.tensor([1000.0, 1000.0, -1000.0], device=device)
    s = x.softmax(0)
    np.testing.assert_allclose(host(s), [0.5, 0.5, 0.0])
    ls = x.log_softmax(0)
    assert np.isfinite(host(ls)[:2]).all()


def test_backward_twice_raises(device):
    x = torch.ones(3, requires_grad=True, device=device)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward(device):
    x = torch.ones(3, requires_grad=True, device=device)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]


def test_inplace_on_saved_tensor_raises(device):
    x = torch.ones(3, requires_grad=True, device=device)
    y = x.exp()
    z = y * y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_inplace_on_leaf_raises(device):
    x = torch.ones(3, requires_grad=True, device=device)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.add_(1)


def test_non_scalar_backward_needs_gradient(device):
    x = torch.ones(3, requires_grad=True, device=device)
    y = x * 2
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        y.backward()
    y.backward(torch.ones(3, device=device))
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.cpu_only("the autograd engine's depth (a 100,000-node graph), not a kernel")
def test_long_chain_no_recursion_limit():
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(20000):
        y = y + 1
    y.backward()
    assert x.grad.item() == 1.0


def test_second_derivative(device):
    x = torch.tensor([2.0], requires_grad=True, device=device)
    y = x ** 3
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (g2,) = torch.autograd.grad(g, x)
    assert g.item() == pytest.approx(12.0)
    assert g2.item() == pytest.approx(12.0)


def test_setitem_through_view_and_grad_of_slice(device):
    x = torch.zeros(3, 4, device=device)
    x[1, ::2] = 5
    assert x.tolist()[1] == [5, 0, 5, 0]
    w = torch.ones(3, 4, requires_grad=True, device=device)
    w[1:, :2].sum().backward()
    assert w.grad.tolist() == [[0, 0, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0]]

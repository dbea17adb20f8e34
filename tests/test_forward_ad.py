"""Forward-mode AD (``minitorch.autograd.forward_ad``): dual tensors and their tangents.

Tangents are checked against finite differences in float64 (and against
PyTorch's forward AD when it is installed).
"""

import numpy as np
import pytest

import minitorch as torch
import minitorch.autograd.forward_ad as fwAD
from minitorch.autograd import Function, once_differentiable

pytestmark = pytest.mark.autograd

X = [0.3, -1.2, 2.0, 0.7]
V = [1.0, 0.5, -2.0, 0.25]

# name -> function of one float64 tensor of shape (4,)
FUNCTIONS = {
    "arith": lambda a: (a * 3 - a / (a * a + 1)) + 2 ** a,
    "math": lambda a: a.sin() * a.exp() + a.tanh().sigmoid() + (a * a + 1).log(),
    "pow": lambda a: (a * a + 1) ** 1.5,
    "relu": lambda a: a.relu() * a,
    "sum_mean": lambda a: a.sum() * a.mean(),
    "softmax": lambda a: a.softmax(0),
    "log_softmax": lambda a: a.reshape(2, 2).log_softmax(1),
    "views": lambda a: a.view(2, 2).t().reshape(4) * a.unsqueeze(0).squeeze(0),
    "index": lambda a: a[1:3] * a[torch.tensor([0, 3])],
    "matmul": lambda a: a.reshape(2, 2) @ a.reshape(2, 2).exp(),
    "cat_stack": lambda a: torch.cat([a, a * a]) * torch.stack([a, a]).reshape(8),
    "where_max": lambda a: torch.where(a > 0, a, a * a) + a.max(),
    "var_norm": lambda a: a.var() + a.norm(),
    "expand": lambda a: a[:, None].expand(4, 3).sum(1),
}


def _finite_difference(f, x, v, eps=1e-6):
    xp = torch.tensor(X, dtype=torch.float64) + eps * v
    xm = torch.tensor(X, dtype=torch.float64) - eps * v
    return (f(xp).detach().cpu().numpy() - f(xm).detach().cpu().numpy()) / (2 * eps)


def _tangent_of(f):
    x = torch.tensor(X, dtype=torch.float64)
    v = torch.tensor(V, dtype=torch.float64)
    with fwAD.dual_level():
        out = f(fwAD.make_dual(x, v))
        primal, tangent = fwAD.unpack_dual(out)
    return primal, tangent


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_tangent_matches_finite_differences(default_device, name):
    f = FUNCTIONS[name]
    primal, tangent = _tangent_of(f)
    assert tangent is not None
    np.testing.assert_allclose(primal.cpu().numpy(), f(torch.tensor(X, dtype=torch.float64)).cpu().numpy())
    expected = _finite_difference(f, None, torch.tensor(V, dtype=torch.float64))
    np.testing.assert_allclose(tangent.cpu().numpy(), expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["math", "softmax", "matmul", "where_max"])
def test_tangent_matches_pytorch(default_device, name):
    real = pytest.importorskip("torch")
    import torch.autograd.forward_ad as real_fw
    f = FUNCTIONS[name]
    if name == "where_max":
        f_real = lambda a: real.where(a > 0, a, a * a) + a.max()  # noqa: E731
    else:
        f_real = f
    _, tangent = _tangent_of(f)
    with real_fw.dual_level():
        d = real_fw.make_dual(real.tensor(X, dtype=real.float64), real.tensor(V, dtype=real.float64))
        expected = real_fw.unpack_dual(f_real(d)).tangent
    np.testing.assert_allclose(tangent.cpu().numpy(), expected.cpu().numpy(), rtol=1e-10)


def test_tangents_do_not_touch_requires_grad_and_vanish_after_the_level(default_device):
    x = torch.tensor([1.0, 2.0])
    with fwAD.dual_level():
        y = fwAD.make_dual(x, torch.ones(2)).sin()
        assert not y.requires_grad and y.grad_fn is None
        assert fwAD.unpack_dual(y).tangent is not None
        assert fwAD.unpack_dual(y.detach()).tangent is None        # detach drops it
        assert fwAD.unpack_dual(torch.ones(2)).tangent is None      # a plain tensor
    primal, tangent = fwAD.unpack_dual(y)
    assert tangent is None and primal is y


def test_dual_is_a_view_and_reverse_mode_still_works(default_device):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, torch.tensor([1.0, 0.0]))
        assert d._base is x
        y = (d * d).sum()
        assert fwAD.unpack_dual(y).tangent.item() == 2.0
        y.backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_in_place_ops_update_the_tangent(default_device):
    with fwAD.dual_level():
        d = fwAD.make_dual(torch.tensor([1.0, 2.0]), torch.tensor([1.0, -1.0])).clone()
        d.mul_(3).add_(1)
        assert fwAD.unpack_dual(d).tangent.tolist() == [3.0, -3.0]


def test_zero_derivative_ops_give_zero_tangents(default_device):
    with fwAD.dual_level():
        d = fwAD.make_dual(torch.tensor([1.5, -2.5]), torch.ones(2))
        assert fwAD.unpack_dual(d.floor()).tangent.tolist() == [0.0, 0.0]


def test_errors_match_pytorch(default_device):
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(torch.ones(2), torch.ones(2))
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(torch.ones(2), torch.ones(3))
        with pytest.raises(ValueError, match="floating point"):
            fwAD.make_dual(torch.ones(2, dtype=torch.int64), torch.ones(2))
    with pytest.raises(RuntimeError, match="not the last one"):
        fwAD.exit_dual_level(level=3)


def test_custom_function_needs_its_own_jvp(default_device):
    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            raise AssertionError("not used in forward mode")

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 2 * x * t

    with fwAD.dual_level():
        d = fwAD.make_dual(torch.tensor([3.0]), torch.tensor([1.0]))
        with pytest.raises(NotImplementedError, match="jvp function"):
            Double.apply(d)
        assert fwAD.unpack_dual(Square.apply(d)).tangent.tolist() == [6.0]


def test_once_differentiable_backward_has_no_jvp(default_device):
    class Opaque(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            return g * 2

    Opaque.__module__ = "minitorch.ops.example"      # pretend it is a built-in op
    with fwAD.dual_level():
        d = fwAD.make_dual(torch.tensor([3.0]), torch.tensor([1.0]))
        with pytest.raises(NotImplementedError, match="OpaqueBackward"):
            Opaque.apply(d)


def test_agrees_with_functional_jvp(default_device):
    f = FUNCTIONS["math"]
    _, tangent = _tangent_of(f)
    _, expected = torch.autograd.functional.jvp(f, torch.tensor(X, dtype=torch.float64),
                                                torch.tensor(V, dtype=torch.float64))
    np.testing.assert_allclose(tangent.cpu().numpy(), expected.cpu().numpy(), rtol=1e-12)

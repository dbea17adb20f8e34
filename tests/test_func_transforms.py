"""``autograd.functional`` and ``minitorch.func``: derivatives of whole functions.

Values are checked against closed forms (in float64) and, where installed,
against PyTorch's own transforms.
"""

import numpy as np
import pytest

import minitorch as torch
from minitorch.autograd import functional as AF
from minitorch.func import (functional_call, grad, grad_and_value, hessian, jacfwd, jacrev,
                            jvp, stack_module_state, vjp, vmap)

pytestmark = pytest.mark.autograd


def t(values):
    return torch.tensor(values, dtype=torch.float64)


def cubic(a):
    return (a ** 3).sum()


X = [1.0, -2.0, 0.5]


# ---------------------------------------------------------------------------
# autograd.functional
# ---------------------------------------------------------------------------
def test_functional_jacobian_and_hessian_closed_form(default_device):
    x = t(X)
    jac = AF.jacobian(lambda a: a.exp(), x)
    np.testing.assert_allclose(jac.cpu().numpy(), np.diag(np.exp(X)))
    assert not jac.requires_grad
    hess = AF.hessian(cubic, x)
    np.testing.assert_allclose(hess.cpu().numpy(), np.diag(6 * np.array(X)))
    fwd = AF.jacobian(lambda a: a.exp(), x, strategy="forward-mode", vectorize=True)
    np.testing.assert_allclose(fwd.cpu().numpy(), jac.cpu().numpy())


def test_functional_structures_follow_pytorch(default_device):
    a, b = t([1.0, 2.0]), t([3.0, 4.0, 5.0])
    jac = AF.jacobian(lambda x, y: (x.sum() * y, x * 2), (a, b))
    assert isinstance(jac, tuple) and len(jac) == 2 and len(jac[0]) == 2
    assert [tuple(j.shape) for j in jac[0]] == [(3, 2), (3, 3)]
    assert [tuple(j.shape) for j in jac[1]] == [(2, 2), (2, 3)]
    np.testing.assert_allclose(jac[1][1].cpu().numpy(), np.zeros((2, 3)))     # unused input: zeros
    hess = AF.hessian(lambda x, y: (x * x).sum() * y.sum(), (a, b))
    assert [[tuple(h.shape) for h in row] for row in hess] == [[(2, 2), (2, 3)], [(3, 2), (3, 3)]]


def test_functional_products(default_device):
    x, v = t(X), t([1.0, 0.0, 2.0])
    out, vjp_ = AF.vjp(lambda a: a * a, x, v)
    np.testing.assert_allclose(vjp_.cpu().numpy(), 2 * np.array(X) * v.cpu().numpy())
    out, jvp_ = AF.jvp(lambda a: a.sin(), x, v)
    np.testing.assert_allclose(jvp_.cpu().numpy(), np.cos(X) * v.cpu().numpy())
    _, hvp_ = AF.hvp(cubic, x, v)
    _, vhp_ = AF.vhp(cubic, x, v)
    np.testing.assert_allclose(hvp_.cpu().numpy(), 6 * np.array(X) * v.cpu().numpy())
    np.testing.assert_allclose(vhp_.cpu().numpy(), hvp_.cpu().numpy())


def test_functional_create_graph_and_strict(default_device):
    x = t(X).requires_grad_()
    _, g = AF.vjp(cubic, x, create_graph=True)
    assert g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), 6 * np.array(X))
    with pytest.raises(RuntimeError, match="independent of input 1"):
        AF.jacobian(lambda a, b: a * 2, (t([1.0]), t([2.0])), strict=True)
    with pytest.raises(RuntimeError, match="v can only be None"):
        AF.vjp(lambda a: a * 2, t(X))
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        AF.jacobian(lambda a: a, [1.0])


def test_functional_matches_pytorch(default_device):
    real = pytest.importorskip("torch")

    def f(a, b):
        return (a.sin() * b).sum() + (a @ b) ** 2

    a, b = [0.3, -1.0, 2.0], [1.5, 0.5, -0.25]
    mine = AF.hessian(f, (t(a), t(b)))
    theirs = real.autograd.functional.hessian(
        f, (real.tensor(a, dtype=real.float64), real.tensor(b, dtype=real.float64)))
    for r1, r2 in zip(mine, theirs):
        for m, e in zip(r1, r2):
            np.testing.assert_allclose(m.cpu().numpy(), e.cpu().numpy(), rtol=1e-10)


# ---------------------------------------------------------------------------
# func: grad, vjp, jvp, jacobians
# ---------------------------------------------------------------------------
def test_grad_argnums_aux_and_nesting(default_device):
    x, y = t(X), t([2.0, 2.0, 2.0])
    np.testing.assert_allclose(grad(cubic)(x).cpu().numpy(), 3 * np.array(X) ** 2)
    gx, gy = grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx.cpu().numpy(), y.cpu().numpy())
    np.testing.assert_allclose(gy.cpu().numpy(), x.cpu().numpy())
    g, aux = grad(lambda a: (cubic(a), a.sum()), has_aux=True)(x)
    assert aux.item() == sum(X)
    g, value = grad_and_value(cubic)(x)
    assert value.item() == pytest.approx(sum(v ** 3 for v in X))
    # second derivative of sin at 1: -sin(1)
    assert grad(grad(lambda a: a.sin()))(t(1.0)).item() == pytest.approx(-np.sin(1.0))
    # a dict of tensors in, a dict of gradients out
    d = grad(lambda p: (p["w"] * p["b"]).sum())({"w": t([1.0, 2.0]), "b": t([3.0, 4.0])})
    assert d["w"].tolist() == [3.0, 4.0] and d["b"].tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="scalar Tensor"):
        grad(lambda a: a * 2)(x)


def test_vjp_and_jvp(default_device):
    x, v = t(X), t([1.0, -1.0, 0.5])
    out, fn = vjp(lambda a: a.exp(), x)
    (g,) = fn(v)
    np.testing.assert_allclose(g.cpu().numpy(), np.exp(X) * v.cpu().numpy())
    (g2,) = fn(v)                                   # vjp_fn can be called again
    np.testing.assert_allclose(g2.cpu().numpy(), g.cpu().numpy())
    value, tangent = jvp(lambda a: a.exp(), (x,), (v,))
    np.testing.assert_allclose(tangent.cpu().numpy(), np.exp(X) * v.cpu().numpy())
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        jvp(lambda a: a, x, (v,))


def test_jacrev_jacfwd_hessian_agree(default_device):
    def f(a):
        return a.sin() * a.sum()

    x = t(X)
    jr, jf = jacrev(f)(x), jacfwd(f)(x)
    np.testing.assert_allclose(jr.cpu().numpy(), jf.cpu().numpy(), rtol=1e-12)
    expected = np.diag(np.cos(X) * sum(X)) + np.sin(X)[:, None]
    np.testing.assert_allclose(jr.cpu().numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(hessian(cubic)(x).cpu().numpy(), np.diag(6 * np.array(X)))
    j0, j1 = jacrev(lambda a, b: a * b, argnums=(0, 1))(x, t([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(j0.cpu().numpy(), np.diag([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(j1.cpu().numpy(), np.diag(X))


def test_hessian_matches_pytorch(default_device):
    real = pytest.importorskip("torch")
    from torch.func import hessian as real_hessian

    def f(a):
        return (a.exp() * a.sin()).sum() + (a * a).sum() ** 2

    mine = hessian(f)(t(X))
    theirs = real_hessian(f)(real.tensor(X, dtype=real.float64))
    np.testing.assert_allclose(mine.cpu().numpy(), theirs.cpu().numpy(), rtol=1e-10)


# ---------------------------------------------------------------------------
# vmap
# ---------------------------------------------------------------------------
def test_vmap_in_dims_out_dims_and_nesting(default_device):
    a = torch.arange(6.0).reshape(2, 3)
    b = torch.arange(3.0)
    out = vmap(lambda x, y: x * y, in_dims=(0, None))(a, b)
    np.testing.assert_allclose(out.cpu().numpy(), a.cpu().numpy() * b.cpu().numpy())
    out = vmap(lambda x: x.sum(), in_dims=1)(a)
    np.testing.assert_allclose(out.cpu().numpy(), a.cpu().numpy().sum(0))
    out = vmap(lambda x: x * 2, out_dims=1)(a)
    assert tuple(out.shape) == (3, 2)
    out, shared = vmap(lambda x: (x + 1, b), out_dims=(0, None))(a)
    assert shared is b and tuple(out.shape) == (2, 3)
    out = vmap(vmap(lambda x: x * x))(a)
    np.testing.assert_allclose(out.cpu().numpy(), a.cpu().numpy() ** 2)
    batched_dot = vmap(lambda x, y: (x * y).sum())
    np.testing.assert_allclose(batched_dot(a, a).cpu().numpy(), (a.cpu().numpy() ** 2).sum(1))


def test_vmap_of_grad_and_gradients_through_vmap(default_device):
    xs = t([[1.0, 2.0], [3.0, 4.0]])
    g = vmap(grad(lambda x: (x ** 2).sum()))(xs)
    np.testing.assert_allclose(g.cpu().numpy(), 2 * xs.cpu().numpy())
    w = t([1.0, -1.0]).requires_grad_()
    vmap(lambda x: (x * w).sum())(xs).sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), xs.cpu().numpy().sum(0))


def test_vmap_errors_and_randomness(default_device):
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        vmap(lambda x, y: x + y)(torch.ones(2, 3), torch.ones(3, 3))
    with pytest.raises(ValueError, match="at least one input must be mapped"):
        vmap(lambda x: x, in_dims=(None,))(torch.ones(2))
    with pytest.raises(ValueError, match="must only return Tensors"):
        vmap(lambda x: 1)(torch.ones(2))
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda x: x + torch.rand(1))(torch.ones(2))
    same = vmap(lambda x: x + torch.rand(()), randomness="same")(torch.zeros(3))
    assert len(set(same.tolist())) == 1
    different = vmap(lambda x: x + torch.rand(()), randomness="different")(torch.zeros(3))
    assert len(set(different.tolist())) == 3


# ---------------------------------------------------------------------------
# functional_call, stack_module_state
# ---------------------------------------------------------------------------
def test_functional_call_swaps_and_restores(default_device):
    model = torch.nn.Linear(3, 2)
    original = model.weight
    params = {"weight": torch.ones(2, 3), "bias": torch.zeros(2)}
    out = functional_call(model, params, (torch.ones(1, 3),))
    assert out.tolist() == [[3.0, 3.0]]
    assert model.weight is original
    with pytest.raises(RuntimeError, match="Missing key"):
        functional_call(model, {"weight": torch.ones(2, 3)}, torch.ones(3), strict=True)


def test_grad_of_functional_call_and_an_ensemble(default_device):
    model = torch.nn.Linear(2, 1)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = torch.tensor([[1.0, 2.0]])
    g = grad(lambda p: functional_call(model, p, (x,)).sum())(params)
    assert g["weight"].tolist() == [[1.0, 2.0]] and g["bias"].tolist() == [1.0]
    models = [torch.nn.Linear(2, 1) for _ in range(3)]
    stacked, buffers = stack_module_state(models)
    assert tuple(stacked["weight"].shape) == (3, 1, 2) and buffers == {}
    out = vmap(lambda p: functional_call(models[0], p, (x,)))(stacked)
    expected = [m(x).tolist() for m in models]
    np.testing.assert_allclose(out.detach().cpu().numpy(), np.array(expected), rtol=1e-6)


def test_compile_wraps_models_and_functions_and_checks_its_arguments(default_device):
    """(The compiler itself is tested in test_compile.py.)"""
    model = torch.nn.Linear(2, 2)
    compiled = torch.compile(model, fullgraph=True, dynamic=False, backend="inductor",
                             mode="max-autotune")
    assert compiled._orig_mod is model
    x = torch.randn(3, 2)
    assert torch.allclose(compiled(x), model(x))
    decorated = torch.compile(mode="default")(cubic)
    assert decorated.__wrapped__ is cubic
    with pytest.raises(RuntimeError, match="Either mode or options"):
        torch.compile(model, mode="default", options={})

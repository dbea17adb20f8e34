"""Course module 3, autograd: the graph, the engine, backward formulas and a whole Function.

Gradients are checked against NumPy and by finite differences in float64.
Each test reaches only its own task: a backward is run on its own node
(``out.grad_fn.apply(g)``, PyTorch's ``out.grad_fn(g)``), never through the
engine (tasks 3.1-3.3); where a backward needs another task's function
(``sum_to_shape``, task 3.5, or ``LogSumExp.forward``, task 3.8) the test puts
a NumPy stand-in in its place.  Second derivatives (``create_graph``) are
followed by :func:`_grad_by_paths`, a test-only walk of the graph.
``minitorch course test 3.4`` runs the tests of one task.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import minitorch as torch
from minitorch.autograd.engine import _discover
from minitorch.autograd.graph import AccumulateGrad, accumulate_into_leaf
from minitorch.ops import elementwise as elementwise_ops, linalg as linalg_ops
from minitorch.ops.reduction import LogSumExp
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


# ---------------------------------------------------------------------------
# Oracles and stand-ins shared by the tasks below
# ---------------------------------------------------------------------------
#: The stand-in fixtures below patch a module attribute, the same for every example.
FIXTURE_OK = [HealthCheck.function_scoped_fixture]


def _np_sum_to_shape(g: np.ndarray, shape: tuple) -> np.ndarray:
    """The oracle of 3.5, by its definition: summing back is the adjoint of broadcasting,
    so element ``i`` of the result is ``sum(broadcast_to(e_i, g.shape) * g)``."""
    out = np.zeros(shape, dtype=g.dtype)
    for idx in np.ndindex(*shape):
        e = np.zeros(shape, dtype=g.dtype)
        e[idx] = 1
        out[idx] = (np.broadcast_to(e, g.shape) * g).sum()
    return out


def _numpy_sum_to_shape(g, shape):
    """A stand-in for task 3.5 (not differentiable), so that 3.4, 3.6 and 3.7 do not need it."""
    if g._shape == tuple(shape):
        return g
    return torch.tensor(_np_sum_to_shape(g.detach().numpy(), tuple(shape)), dtype=g.dtype)


@pytest.fixture
def numpy_sum_to_shape(monkeypatch):
    monkeypatch.setattr(elementwise_ops, "sum_to_shape", _numpy_sum_to_shape)
    monkeypatch.setattr(linalg_ops, "sum_to_shape", _numpy_sum_to_shape)


def _grad_by_paths(y, x, g=None):
    """d(sum(y * g))/dx following every path of y's graph back to the leaf x.

    A test-only walk (the engine is tasks 3.1-3.3): each node's backward is run
    once per path (exponential in general, fine for the small graphs here) and
    the gradients that reach x's AccumulateGrad node are added up.  None if no
    path reaches x.
    """
    g = torch.ones_like(y) if g is None else g
    found = []

    def walk(node, grad):
        for (nxt, _), gi in zip(node.next_functions, node.apply(grad)):
            if nxt is None or gi is None:
                continue
            if isinstance(nxt, AccumulateGrad):
                if nxt.variable is x:
                    found.append(gi.detach())
                continue
            walk(nxt, gi)

    if y.grad_fn is None:
        return None
    walk(y.grad_fn, g)
    if not found:
        return None
    total = found[0]
    for f in found[1:]:
        total = total + f
    return total


@st.composite
def broadcast_pairs(draw, max_dims=3):
    """Two shapes that broadcast together (size-1 dims stretched, missing leading dims)."""
    full = draw(st.lists(st.integers(1, 3), min_size=0, max_size=max_dims))
    shapes = []
    for _ in range(2):
        lead = draw(st.integers(0, len(full)))
        shapes.append(tuple(1 if draw(st.booleans()) else n for n in full[lead:]))
    return tuple(shapes)


def _rand(shape, seed, dtype=torch.float64, requires_grad=True, low=0.5, high=2.0):
    rng = np.random.default_rng(seed)
    signs = rng.choice([-1.0, 1.0], size=shape)
    return torch.tensor(signs * rng.uniform(low, high, size=shape), dtype=dtype,
                        requires_grad=requires_grad)


# ---------------------------------------------------------------------------
# 3.1 - 3.3: more cases
# ---------------------------------------------------------------------------
@pytest.mark.task("3.1")
def test_discover_counts_each_edge_once_in_a_deep_diamond():
    # e <- a <- {b, c} <- d: a is reached twice but its own edge into e counts once.
    e = _Node()
    a = _Node(e)
    b, c = _Node(a), _Node(a)
    d = _Node(b, c)
    deps = _discover([d])
    assert deps == {e: 1, a: 2, b: 1, c: 1}
    # Two roots sharing a node; an edge used twice by one node counts twice.
    x = _Node()
    r1, r2 = _Node(x, x), _Node(x)
    assert _discover([r1, r2, None]) == {x: 3}


@pytest.mark.task("3.1")
def test_discover_a_chain_deeper_than_the_recursion_limit():
    node = _Node()
    first = node
    for _ in range(20_000):
        node = _Node(node)
    deps = _discover([node])
    assert len(deps) == 20_000 and deps[first] == 1


@pytest.mark.task("3.2")
def test_accumulate_into_leaf_with_create_graph_keeps_the_graph():
    x = torch.zeros(2, requires_grad=True)
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    g = w * 3
    accumulate_into_leaf(x, g, create_graph=True)
    assert x.grad.requires_grad and x.grad.tolist() == [3.0, 6.0]
    accumulate_into_leaf(x, w * 1, create_graph=True)
    assert x.grad.requires_grad and x.grad.tolist() == [4.0, 8.0]


@pytest.mark.task("3.2")
def test_accumulate_into_leaf_a_hook_may_drop_or_replace_the_gradient():
    x = torch.ones(2, requires_grad=True)
    seen = []
    x.register_hook(lambda grad: seen.append(grad.tolist()))          # returns None: unchanged
    accumulate_into_leaf(x, torch.tensor([1.0, 2.0]), create_graph=False)
    assert seen == [[1.0, 2.0]] and x.grad.tolist() == [1.0, 2.0]


@pytest.mark.task("3.3")
def test_grad_mode_switches_nest_and_restore_after_an_exception():
    assert torch.is_grad_enabled()
    with pytest.raises(ZeroDivisionError):
        with torch.no_grad():
            1 / 0
    assert torch.is_grad_enabled()
    with torch.no_grad():
        with torch.no_grad():
            assert not torch.is_grad_enabled()
        assert not torch.is_grad_enabled()
        with torch.enable_grad():
            with torch.enable_grad():
                assert torch.is_grad_enabled()
            assert torch.is_grad_enabled()
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()


# ---------------------------------------------------------------------------
# 3.4 Mul.backward, 3.7 Div.backward: broadcasting, numbers, dtypes, create_graph
# ---------------------------------------------------------------------------
@pytest.mark.task("3.4")
@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURE_OK)
@given(broadcast_pairs())
def test_mul_backward_broadcast_matches_numpy(numpy_sum_to_shape, shapes):
    sa, sb = shapes
    a, b = _rand(sa, 1), _rand(sb, 2)
    out = a * b
    g = np.random.default_rng(3).standard_normal(out.shape)
    ga, gb = _backward(out, torch.tensor(g))
    an, bn = a.detach().numpy(), b.detach().numpy()
    assert ga.shape == sa and gb.shape == sb
    np.testing.assert_allclose(ga.numpy(), _np_sum_to_shape(g * bn, sa), rtol=1e-12)
    np.testing.assert_allclose(gb.numpy(), _np_sum_to_shape(g * an, sb), rtol=1e-12)


@pytest.mark.task("3.4")
def test_mul_backward_numbers_dtypes_and_inputs_without_grad(numpy_sum_to_shape):
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    assert _backward(x * 3.0, torch.ones(2))[0].tolist() == [3.0, 3.0]
    assert _backward(2.5 * x, torch.ones(2))[0].tolist() == [2.5, 2.5]
    # A float32 input gets a float32 gradient, even from a float64 product.
    a32 = torch.tensor([[1.0, 2.0]], dtype=torch.float32, requires_grad=True)
    b64 = torch.tensor([[3.0], [4.0]], dtype=torch.float64, requires_grad=True)
    ga, gb = _backward(a32 * b64, torch.ones(2, 2, dtype=torch.float64))
    assert ga.dtype == torch.float32 and ga.shape == (1, 2) and ga.tolist() == [[7.0, 7.0]]
    assert gb.dtype == torch.float64 and gb.shape == (2, 1) and gb.tolist() == [[3.0], [3.0]]
    # An input that wants no gradient gets None.
    c = torch.tensor([5.0, 6.0])
    ga, gc = _backward(x * c, torch.ones(2))
    assert ga.tolist() == [5.0, 6.0] and gc is None


@pytest.mark.task("3.4")
def test_mul_backward_can_be_differentiated_again():
    # create_graph: the gradient for a is a function of b (and of g), recorded in a graph.
    a, b = _leaf(3), _leaf(3, seed=1)
    g = _leaf(3, seed=2)
    ga, gb = out_grads = _backward_graph(a * b, g)
    assert ga.requires_grad and gb.requires_grad
    # d(sum(ga * v))/db = g * v  and  d(sum(gb * v))/da = g * v
    v = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    np.testing.assert_allclose(_grad_by_paths(ga, b, v).numpy(), (g * v).detach().numpy())
    np.testing.assert_allclose(_grad_by_paths(gb, a, v).numpy(), (g * v).detach().numpy())
    np.testing.assert_allclose(_grad_by_paths(ga, g, v).numpy(), (b * v).detach().numpy())
    assert out_grads


def _backward_graph(out, g):
    """Like :func:`_backward`, but the gradients keep their graph (create_graph)."""
    return out.grad_fn.apply(g)


@pytest.mark.task("3.7")
def test_div_backward_values():
    a = torch.tensor([3.0, 1.0], requires_grad=True)
    b = torch.tensor([2.0, -4.0], requires_grad=True)
    ga, gb = _backward(a / b, torch.ones(2))
    np.testing.assert_allclose(ga.numpy(), [0.5, -0.25])
    np.testing.assert_allclose(gb.numpy(), [-0.75, -1.0 / 16.0])


@pytest.mark.task("3.7")
@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURE_OK)
@given(broadcast_pairs())
def test_div_backward_broadcast_matches_finite_differences(numpy_sum_to_shape, shapes):
    sa, sb = shapes
    a, b = _rand(sa, 1), _rand(sb, 2)
    out = a / b
    g = np.random.default_rng(3).standard_normal(out.shape)
    ga, gb = _backward(out, torch.tensor(g))
    an, bn = a.detach().numpy(), b.detach().numpy()
    assert ga.shape == sa and gb.shape == sb
    np.testing.assert_allclose(ga.numpy(), _numeric_grad(lambda v: v / bn * g, an), rtol=1e-6,
                               atol=1e-9)
    np.testing.assert_allclose(gb.numpy(), _numeric_grad(lambda v: an / v * g, bn), rtol=1e-6,
                               atol=1e-9)


@pytest.mark.task("3.7")
def test_div_backward_numbers_and_dtypes(numpy_sum_to_shape):
    x = torch.tensor([2.0, -4.0], requires_grad=True)
    np.testing.assert_allclose(_backward(x / 4.0, torch.ones(2))[0].numpy(), [0.25, 0.25])
    a32 = torch.tensor([[1.0, 2.0]], dtype=torch.float32, requires_grad=True)
    b64 = torch.tensor([[2.0], [4.0]], dtype=torch.float64, requires_grad=True)
    ga, gb = _backward(a32 / b64, torch.ones(2, 2, dtype=torch.float64))
    assert ga.dtype == torch.float32 and ga.shape == (1, 2)
    np.testing.assert_allclose(ga.numpy(), [[0.75, 0.75]])
    assert gb.dtype == torch.float64 and gb.shape == (2, 1)
    np.testing.assert_allclose(gb.numpy(), [[-0.75], [-3.0 / 16.0]])
    ga, gc = _backward(x / torch.tensor([1.0, 2.0]), torch.ones(2))
    assert gc is None


@pytest.mark.task("3.7")
def test_div_backward_can_be_differentiated_again():
    # create_graph: the gradients are recorded, as functions of a and b.  (Their own
    # derivatives would run Mul's backward, task 3.4: here only the graph is checked.)
    a, b = _leaf(3), _rand(3, 5)
    g = torch.ones(3, dtype=torch.float64)
    ga, gb = _backward_graph(a / b, g)
    assert ga.requires_grad and gb.requires_grad
    assert _depends_on(ga, b) and not _depends_on(ga, a)
    assert _depends_on(gb, a) and _depends_on(gb, b)
    np.testing.assert_allclose(gb.detach().numpy(),
                               -a.detach().numpy() / b.detach().numpy() ** 2, rtol=1e-12)


def _depends_on(y, x) -> bool:
    """Does y's graph reach the leaf x?  (Follows next_functions only: runs no backward.)"""
    stack, seen = [y.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        if isinstance(fn, AccumulateGrad) and fn.variable is x:
            return True
        stack.extend(nxt for nxt, _ in fn.next_functions)
    return False


# ---------------------------------------------------------------------------
# 3.5 sum_to_shape on random shapes
# ---------------------------------------------------------------------------
@st.composite
def broadcasts(draw):
    """(shape, the larger shape it is broadcast to)."""
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=3)))
    stretched = tuple(draw(st.integers(1, 3)) if n == 1 else n for n in shape)
    lead = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    return shape, lead + stretched


@pytest.mark.task("3.5")
@settings(max_examples=80, deadline=None)
@given(broadcasts())
def test_sum_to_shape_matches_the_adjoint_of_broadcasting(case):
    shape, big = case
    g = np.random.default_rng(len(big)).standard_normal(big)
    out = sum_to_shape(torch.tensor(g), shape)
    assert out.shape == shape
    np.testing.assert_allclose(out.numpy(), _np_sum_to_shape(g, shape), rtol=1e-12, atol=1e-12)


@pytest.mark.task("3.5")
def test_sum_to_shape_keeps_size_one_dims_that_were_not_stretched():
    assert sum_to_shape(torch.ones(1, 4), (1, 1)).tolist() == [[4.0]]
    assert sum_to_shape(torch.ones(1, 4), (4,)).tolist() == [1.0, 1.0, 1.0, 1.0]
    assert sum_to_shape(torch.ones(3, 1, 4), (1, 1, 1)).tolist() == [[[12.0]]]
    assert sum_to_shape(torch.ones(2, 1, 3), (1, 3)).tolist() == [[2.0, 2.0, 2.0]]
    assert sum_to_shape(torch.ones(2, 3, 1), (3, 1)).tolist() == [[2.0], [2.0], [2.0]]


@pytest.mark.task("3.5")
def test_sum_to_shape_can_be_differentiated_again():
    g = _leaf(2, 3, 4)
    out = sum_to_shape(g, (3, 1))
    assert out.requires_grad
    v = torch.tensor([[1.0], [2.0], [3.0]], dtype=torch.float64)
    np.testing.assert_allclose(_grad_by_paths(out, g, v).numpy(),
                               np.broadcast_to(v.numpy(), (2, 3, 4)))


# ---------------------------------------------------------------------------
# 3.6 MatMul.backward: broadcast batches, create_graph
# ---------------------------------------------------------------------------
@st.composite
def matmul_shapes(draw):
    n, k, m = (draw(st.integers(1, 3)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    ba = tuple(1 if draw(st.booleans()) else s for s in batch)[draw(st.integers(0, len(batch))):]
    bb = tuple(1 if draw(st.booleans()) else s for s in batch)[draw(st.integers(0, len(batch))):]
    if ba and not bb:
        bb = (1,)     # (batch, n, k) @ (k, m) is folded into one 2-D product and a view
    return ba + (n, k), bb + (k, m)


@pytest.mark.task("3.6")
@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURE_OK)
@given(matmul_shapes())
def test_matmul_backward_with_broadcast_batches_matches_numpy(numpy_sum_to_shape, shapes):
    sa, sb = shapes
    a, b = _rand(sa, 1), _rand(sb, 2)
    out = a @ b
    g = np.random.default_rng(3).standard_normal(out.shape)
    ga, gb = _backward(out, torch.tensor(g))
    an, bn = a.detach().numpy(), b.detach().numpy()
    assert ga.shape == sa and gb.shape == sb
    np.testing.assert_allclose(ga.numpy(), _numeric_grad(lambda v: (v @ bn) * g, an),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb.numpy(), _numeric_grad(lambda v: (an @ v) * g, bn),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.task("3.6")
def test_matmul_backward_inputs_without_grad_and_create_graph():
    a = _leaf(2, 3)
    b = torch.tensor(np.arange(12.0).reshape(3, 4))
    ga, gb = _backward(a @ b, torch.ones(2, 4, dtype=torch.float64))
    assert gb is None and ga.shape == (2, 3)
    a, b = _leaf(2, 3), _leaf(3, 4, seed=1)
    g = _leaf(2, 4, seed=2)
    ga, gb = _backward_graph(a @ b, g)
    assert ga.requires_grad and gb.requires_grad
    # d(sum(ga))/db[j, m] = sum_i g[i, m]  (ga = g @ b^T)
    want = np.broadcast_to(g.detach().numpy().sum(axis=0), (3, 4))
    np.testing.assert_allclose(_grad_by_paths(ga, b).numpy(), want, rtol=1e-12)


# ---------------------------------------------------------------------------
# 3.8, 3.9 LogSumExp, a whole Function
# ---------------------------------------------------------------------------
def _np_logsumexp(x: np.ndarray, dims: tuple, keepdim: bool) -> np.ndarray:
    """The oracle: NumPy's pairwise logaddexp over the reduced dims, moved last."""
    rest = [d for d in range(x.ndim) if d not in dims]
    moved = np.transpose(x, rest + list(dims)).reshape([x.shape[d] for d in rest] + [-1])
    out = np.logaddexp.reduce(moved, axis=-1)
    if keepdim:
        out = out.reshape([1 if d in dims else x.shape[d] for d in range(x.ndim)])
    return np.asarray(out)


@st.composite
def reductions(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    dims = tuple(sorted(draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
    return shape, dims, draw(st.booleans())


@pytest.mark.task("3.8")
@settings(max_examples=40, deadline=None)
@given(reductions(), st.sampled_from([1.0, 50.0, 800.0]))
def test_logsumexp_forward_matches_numpy(case, scale):
    shape, dims, keepdim = case
    xn = np.random.default_rng(len(shape)).standard_normal(shape) * scale
    x = torch.tensor(xn, requires_grad=True)
    y = torch.logsumexp(x, dims, keepdim=keepdim)
    want = _np_logsumexp(xn, dims, keepdim)
    assert y.shape == want.shape
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-12)
    # The contract with backward: the node keeps (x, y), dims and keepdim.
    node = y.grad_fn
    sx, sy = node.saved_tensors
    assert sx is x or np.array_equal(sx.detach().numpy(), xn)
    np.testing.assert_array_equal(sy.detach().numpy(), y.detach().numpy())
    assert tuple(node.dims) == dims and node.keepdim == keepdim


@pytest.mark.task("3.8")
def test_logsumexp_forward_never_overflows_and_handles_infinities():
    x = torch.tensor([[1000.0, 1000.0], [-1000.0, -1000.0], [-np.inf, -np.inf], [0.0, -np.inf]],
                     dtype=torch.float64)
    y = torch.logsumexp(x, 1)
    np.testing.assert_allclose(y.numpy()[:2], [1000 + np.log(2), -1000 + np.log(2)])
    assert y.numpy()[2] == -np.inf and y.numpy()[3] == 0.0
    x32 = torch.tensor([100.0, 100.0], dtype=torch.float32)
    y32 = torch.logsumexp(x32, 0)
    assert y32.dtype == torch.float32 and abs(y32.item() - (100 + np.log(2))) < 1e-4


def _numpy_logsumexp_forward(ctx, x, dims, keepdim):
    """A stand-in for task 3.8 that keeps what its contract says, so 3.9 does not need it."""
    y = torch.tensor(_np_logsumexp(x.detach().numpy(), dims, keepdim), dtype=x.dtype)
    ctx.save_for_backward(x, y)
    for name, value in (("dims", dims), ("keepdim", keepdim)):
        setattr(ctx, name, value)
    return y


@pytest.fixture
def numpy_logsumexp_forward(monkeypatch):
    monkeypatch.setattr(LogSumExp, "forward", staticmethod(_numpy_logsumexp_forward))


@pytest.mark.task("3.9")
@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURE_OK)
@given(reductions())
def test_logsumexp_backward_matches_finite_differences(numpy_logsumexp_forward, case):
    shape, dims, keepdim = case
    xn = np.random.default_rng(len(shape)).standard_normal(shape)
    x = torch.tensor(xn, requires_grad=True)
    y = torch.logsumexp(x, dims, keepdim=keepdim)
    g = np.random.default_rng(7).standard_normal(y.shape)
    (gx,) = _backward(y, torch.tensor(g))
    assert gx.shape == shape
    np.testing.assert_allclose(gx.numpy(),
                               _numeric_grad(lambda v: _np_logsumexp(v, dims, keepdim) * g, xn),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.task("3.9")
def test_logsumexp_backward_examples_and_create_graph(numpy_logsumexp_forward):
    x = torch.tensor([0.0, 0.0], dtype=torch.float64, requires_grad=True)
    (gx,) = _backward(torch.logsumexp(x, 0), torch.tensor(1.0, dtype=torch.float64))
    assert gx.tolist() == [0.5, 0.5]
    x = torch.tensor([[1000.0, 1000.0]], dtype=torch.float64, requires_grad=True)
    (gx,) = _backward(torch.logsumexp(x, 1), torch.tensor([2.0], dtype=torch.float64))
    np.testing.assert_allclose(gx.numpy(), [[1.0, 1.0]], rtol=1e-12)
    # create_graph: the gradient (softmax weights) is recorded as a function of x and of
    # the incoming gradient.  (Its own derivative would run Mul's backward, task 3.4: here
    # only the graph is checked.)
    x = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    g = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    (gx,) = _backward_graph(torch.logsumexp(x, 0), g)
    assert gx.requires_grad and _depends_on(gx, x) and _depends_on(gx, g)

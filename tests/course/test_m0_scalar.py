"""Course module 0, the warm-up: autodiff on single numbers (``minitorch/scalar.py``).

The oracle for derivatives is the *complex step*: for a function that is
analytic, ``f'(x) == Im(f(x + ih)) / h`` to machine precision for a tiny
``h`` (no subtraction, so no cancellation).  Values are compared with
Python's ``math``.  Each test reaches only its own task's function (the
graph tests build graphs with the ops that are given, and hand
``backpropagate`` an order made here), so that it fails with that task's
message in a student edition.  ``minitorch course test 0.2`` runs one task.
"""

from __future__ import annotations

import cmath
import math

import pytest
from hypothesis import given, settings, strategies as st

from minitorch import scalar
from minitorch.scalar import Context, Scalar

pytestmark = pytest.mark.autograd

H = 1e-30


def _complex_step(f, *vals, arg=0):
    """d f / d vals[arg] by the complex step (f written for complex numbers)."""
    z = [complex(v) for v in vals]
    z[arg] += complex(0.0, H)
    return f(*z).imag / H


def _grads(out: Scalar, d: float) -> tuple:
    """Run the backward of the function that made ``out`` on ``d`` (no engine involved)."""
    h = out.history
    g = h.last_fn.backward(h.ctx, d)
    return g if isinstance(g, tuple) else (g,)


def _close(got, want, rel=1e-9, abs_=1e-12):
    assert got == pytest.approx(want, rel=rel, abs=abs_), (got, want)


moderate = st.floats(-5.0, 5.0, allow_nan=False)
nonzero = moderate.filter(lambda v: abs(v) > 0.1)
positive = st.floats(0.1, 5.0)
d_outputs = st.sampled_from([1.0, -2.5, 0.5])


# ---------------------------------------------------------------------------
# 0.1 central_difference
# ---------------------------------------------------------------------------
@pytest.mark.task("0.1")
@settings(max_examples=40)
@given(positive, positive)
def test_central_difference_is_second_order_accurate(x, y):
    # A one-sided step is off by about epsilon * f''/2 (1e-6 here): too far.
    f = lambda a, b: a ** 3 * b + b ** 3      # noqa: E731
    _close(scalar.central_difference(f, x, y, arg=0), 3 * x ** 2 * y, rel=1e-7, abs_=1e-7)
    _close(scalar.central_difference(f, x, y, arg=1), x ** 3 + 3 * y ** 2, rel=1e-7, abs_=1e-7)


@pytest.mark.task("0.1")
def test_central_difference_uses_the_step_it_is_given():
    # With a big step the estimate of x**3 is exactly 3x**2 + epsilon**2 (the central rule).
    cube = lambda a: a ** 3      # noqa: E731
    assert scalar.central_difference(cube, 2.0, epsilon=0.5) == pytest.approx(12.25)
    assert scalar.central_difference(cube, 2.0, epsilon=1.0) == pytest.approx(13.0)
    # The default step is small: the estimate is close to the derivative.
    assert scalar.central_difference(cube, 2.0) == pytest.approx(12.0, abs=1e-6)


@pytest.mark.task("0.1")
def test_central_difference_moves_only_its_argument():
    f = lambda a, b, c: a * b * c      # noqa: E731
    assert scalar.central_difference(f, 2.0, 3.0, 5.0, arg=2) == pytest.approx(6.0)
    assert scalar.central_difference(f, 2.0, 3.0, 5.0, arg=1) == pytest.approx(10.0)
    assert scalar.central_difference(math.sin, 0.0) == pytest.approx(1.0)


# ---------------------------------------------------------------------------
# 0.2 - 0.4 the backward of Mul, Div, Pow
# ---------------------------------------------------------------------------
@pytest.mark.task("0.2")
@settings(max_examples=40)
@given(moderate, moderate, d_outputs)
def test_mul_backward_matches_the_complex_step(a, b, d):
    out = Scalar(a, requires_grad=True) * Scalar(b, requires_grad=True)
    ga, gb = _grads(out, d)
    _close(ga, d * _complex_step(lambda x, y: x * y, a, b, arg=0))
    _close(gb, d * _complex_step(lambda x, y: x * y, a, b, arg=1))


@pytest.mark.task("0.2")
def test_mul_backward_examples():
    out = Scalar(2.0, requires_grad=True) * Scalar(3.0, requires_grad=True)
    assert _grads(out, 1.0) == pytest.approx((3.0, 2.0))
    assert _grads(out, -2.0) == pytest.approx((-6.0, -4.0))
    out = Scalar(4.0, requires_grad=True) * 5.0           # a constant on the right
    assert _grads(out, 1.0)[0] == pytest.approx(5.0)


@pytest.mark.task("0.3")
@settings(max_examples=40)
@given(moderate, nonzero, d_outputs)
def test_div_backward_matches_the_complex_step(a, b, d):
    out = Scalar(a, requires_grad=True) / Scalar(b, requires_grad=True)
    ga, gb = _grads(out, d)
    _close(ga, d * _complex_step(lambda x, y: x / y, a, b, arg=0))
    _close(gb, d * _complex_step(lambda x, y: x / y, a, b, arg=1))


@pytest.mark.task("0.3")
def test_div_backward_examples():
    out = Scalar(3.0, requires_grad=True) / Scalar(2.0, requires_grad=True)
    assert _grads(out, 1.0) == pytest.approx((0.5, -0.75))
    assert _grads(out, 2.0) == pytest.approx((1.0, -1.5))
    out = 1.0 / Scalar(4.0, requires_grad=True)           # a constant on the left
    assert _grads(out, 1.0)[1] == pytest.approx(-1.0 / 16.0)


@pytest.mark.task("0.4")
@settings(max_examples=40)
@given(positive, st.one_of(st.integers(-3, 4).map(float), st.floats(-2.5, 2.5)), d_outputs)
def test_pow_backward_matches_the_complex_step(a, c, d):
    out = Scalar(a, requires_grad=True) ** c
    ga, gc = _grads(out, d)
    _close(ga, d * _complex_step(lambda x: x ** c, a))
    assert gc == 0.0


@pytest.mark.task("0.4")
def test_pow_backward_examples():
    assert _grads(Scalar(3.0, requires_grad=True) ** 2, 1.0) == pytest.approx((6.0, 0.0))
    assert _grads(Scalar(2.0, requires_grad=True) ** 3, 0.5) == pytest.approx((6.0, 0.0))
    assert _grads(Scalar(4.0, requires_grad=True) ** 0.5, 1.0) == pytest.approx((0.25, 0.0))
    assert _grads(Scalar(2.0, requires_grad=True) ** -1, 1.0) == pytest.approx((-0.25, 0.0))
    # x ** 0 is the constant 1, even at x = 0 and x < 0.
    assert _grads(Scalar(0.0, requires_grad=True) ** 0, 1.0) == pytest.approx((0.0, 0.0))
    assert _grads(Scalar(-3.0, requires_grad=True) ** 2, 1.0) == pytest.approx((-6.0, 0.0))
    assert _grads(Scalar(-2.0, requires_grad=True) ** 3, 1.0) == pytest.approx((12.0, 0.0))


# ---------------------------------------------------------------------------
# 0.5, 0.6 Sigmoid
# ---------------------------------------------------------------------------
def _sigmoid(a: float) -> float:
    """The oracle: tanh never overflows (exact to about 1e-16 absolute)."""
    return 0.5 * (1.0 + math.tanh(0.5 * a))


@pytest.mark.task("0.5")
@settings(max_examples=60)
@given(st.floats(-700.0, 700.0))
def test_sigmoid_forward_matches_math(a):
    ctx = Context((True,))
    out = scalar.Sigmoid.forward(ctx, a)
    _close(out, _sigmoid(a), rel=1e-9, abs_=1e-15)
    assert ctx.saved_values == (out,)


@pytest.mark.task("0.5")
@pytest.mark.parametrize("a, want", [(0.0, 0.5), (-1000.0, 0.0), (-745.5, 0.0), (1000.0, 1.0),
                                     (800.0, 1.0), (-30.0, 9.357622968840175e-14),
                                     (2.0, 0.8807970779778823)])
def test_sigmoid_forward_never_overflows(a, want):
    ctx = Context((True,))
    out = scalar.Sigmoid.forward(ctx, a)
    assert out == pytest.approx(want, rel=1e-12, abs=0.0)
    assert ctx.saved_values == (out,)
    assert Scalar(a).sigmoid().data == pytest.approx(want, rel=1e-12, abs=0.0)


@pytest.mark.task("0.6")
@settings(max_examples=60)
@given(st.floats(-30.0, 30.0), d_outputs)
def test_sigmoid_backward_matches_the_complex_step(a, d):
    # forward's contract: ctx.saved_values == (sigmoid(a),); built here by hand.
    ctx = Context((True,))
    ctx.save_for_backward(_sigmoid(a))
    g = scalar.Sigmoid.backward(ctx, d)
    want = d * _complex_step(lambda z: 1.0 / (1.0 + cmath.exp(-z)), a)
    _close(g, want, rel=1e-7, abs_=1e-15)


@pytest.mark.task("0.6")
def test_sigmoid_backward_examples():
    ctx = Context((True,))
    ctx.save_for_backward(0.5)
    assert scalar.Sigmoid.backward(ctx, 1.0) == pytest.approx(0.25)
    assert scalar.Sigmoid.backward(ctx, -4.0) == pytest.approx(-1.0)
    ctx.save_for_backward(_sigmoid(2.0))
    assert scalar.Sigmoid.backward(ctx, 1.0) == pytest.approx(0.10499358540350662)


# ---------------------------------------------------------------------------
# Graphs made of the given ops (Add, Neg, Exp, Log; Mul's forward in 0.7 only), for 0.7, 0.8
# ---------------------------------------------------------------------------
def _reachable(root: Scalar) -> dict:
    """``{unique_id: value}`` of root and everything it depends on that requires a grad."""
    found = {}
    stack = [root] if root.requires_grad else []
    while stack:
        v = stack.pop()
        if v.unique_id in found:
            continue
        found[v.unique_id] = v
        stack.extend(p for p in v.parents if p.requires_grad)
    return found


def _creation_order(root: Scalar) -> list:
    """A topological order made without sorting the graph: the newest value first
    (a value is always made after the values it is computed from)."""
    return sorted(_reachable(root).values(), key=lambda v: v.unique_id, reverse=True)


@st.composite
def graphs(draw, mul: bool = True):
    """A random graph: leaves (some constants), then ops on earlier values; its output last.

    ``mul=False`` leaves out Mul (whose backward is task 0.2), for the tests of 0.8.
    """
    kinds = ["add", "mul", "neg", "exp_log", "const"] if mul else ["add", "neg", "exp_log", "const"]
    n_leaves = draw(st.integers(1, 4))
    values = [Scalar(draw(st.floats(0.5, 1.5)), requires_grad=draw(st.booleans()) or i == 0)
              for i in range(n_leaves)]
    leaves = list(values)
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(kinds))
        a = values[draw(st.integers(0, len(values) - 1))]
        b = values[draw(st.integers(0, len(values) - 1))]
        if kind == "add":
            v = a + b
        elif kind == "mul":
            v = a * b
        elif kind == "neg":
            v = -a
        elif kind == "exp_log" and abs(a.data) < 20:
            v = a.exp().log()               # == a, through two more nodes
        else:
            v = a + 0.5
        values.append(v)
    # The output uses the first leaf, so that it requires a gradient.
    return values[-1] + values[0], leaves


@pytest.mark.task("0.7")
@settings(max_examples=60)
@given(graphs())
def test_topological_sort_puts_every_value_before_its_parents(graph):
    root, _ = graph
    order = scalar.topological_sort(root)
    ids = [v.unique_id for v in order]
    assert len(ids) == len(set(ids)), "a value appears twice"
    assert set(ids) == set(_reachable(root)), "not exactly the values that require a grad"
    assert order[0] is root
    where = {i: k for k, i in enumerate(ids)}
    for v in order:
        for p in v.parents:
            if p.requires_grad:
                assert where[p.unique_id] > where[v.unique_id], "a parent before its child"


@pytest.mark.task("0.7")
def test_topological_sort_examples():
    x = Scalar(2.0, requires_grad=True)
    y = x * x
    z = y + x
    assert scalar.topological_sort(z) == [z, y, x]
    c = Scalar(3.0)                        # a constant: no gradient, not in the order
    w = z * c + c.exp()
    assert [v.unique_id for v in scalar.topological_sort(w)][-3:] == [z.unique_id, y.unique_id,
                                                                      x.unique_id]
    assert c not in scalar.topological_sort(w)
    assert scalar.topological_sort(Scalar(1.0)) == []      # nothing requires a grad
    # A diamond with one long side: x must come after both of its children.
    a = x.exp()
    b = -(-(-(a)))
    top = a + b + x
    order = scalar.topological_sort(top)
    assert order.index(x) == len(order) - 1 and order.index(a) > order.index(b)


@pytest.mark.task("0.7")
def test_topological_sort_of_a_deep_chain_does_not_recurse():
    x = Scalar(0.0, requires_grad=True)
    v = x
    for _ in range(20_000):             # 20 times Python's recursion limit
        v = v + 1.0
    order = scalar.topological_sort(v)
    assert len(order) == 20_001 and order[0] is v and order[-1] is x


def _grad_by_complex_step(f, vals, arg):
    return _complex_step(lambda *z: f(*z, exp=cmath.exp, log=cmath.log), *vals, arg=arg)


def _scalar_exp(v):
    return v.exp()


def _scalar_log(v):
    return v.log()


# Functions written once for Scalars and for complex numbers (the oracle).
# Only ops whose backward is given (no Mul, Div, Pow, Sigmoid: those are tasks 0.2-0.6).
FUNCTIONS = [
    lambda x, y, exp, log: x + x,                                     # a value used twice
    lambda x, y, exp, log: exp(x) + exp(y) - y,
    lambda x, y, exp, log: log(exp(x) + exp(y) + 3.0) + exp(-y) - x,
    lambda x, y, exp, log: exp(x + y) + log(x + y) - x,               # a diamond
    lambda x, y, exp, log: log(exp(log(exp(x + y)) - 0.5) + 2.0) - x,
]


@pytest.mark.task("0.8")
@settings(max_examples=30)
@given(st.sampled_from(range(len(FUNCTIONS))), st.floats(0.2, 2.0), st.floats(0.2, 2.0),
       d_outputs)
def test_backpropagate_matches_the_complex_step(k, xv, yv, d):
    f = FUNCTIONS[k]
    x, y = Scalar(xv, requires_grad=True), Scalar(yv, requires_grad=True)
    out = f(x, y, exp=_scalar_exp, log=_scalar_log)
    scalar.backpropagate(_creation_order(out), d)
    for leaf, arg in ((x, 0), (y, 1)):
        want = d * _grad_by_complex_step(f, (xv, yv), arg)
        if k == 0 and arg == 1:
            assert leaf.grad is None            # y is not used: no gradient reaches it
        else:
            _close(leaf.grad, want)


@pytest.mark.task("0.8")
def test_backpropagate_sums_the_uses_of_a_value_and_adds_into_grad():
    x = Scalar(3.0, requires_grad=True)
    y = x + x - x + x.exp()       # x used four times, through different ops
    order = _creation_order(y)
    scalar.backpropagate(order)
    assert x.grad == pytest.approx(1.0 + math.exp(3.0))
    scalar.backpropagate(order, 2.0)       # a second pass adds into the leaf's grad
    assert x.grad == pytest.approx(3.0 * (1.0 + math.exp(3.0)))
    x.zero_grad()
    scalar.backpropagate(_creation_order(x + x + x))
    assert x.grad == pytest.approx(3.0)


@pytest.mark.task("0.8")
def test_backpropagate_fills_only_the_leaves_that_require_a_grad():
    x = Scalar(2.0, requires_grad=True)
    c = Scalar(5.0)
    mid = x + c
    out = mid.exp() + mid
    scalar.backpropagate(_creation_order(out))
    assert x.grad == pytest.approx(math.exp(7.0) + 1.0)
    assert c.grad is None and mid.grad is None and out.grad is None


@pytest.mark.task("0.8")
@settings(max_examples=40)
@given(graphs(mul=False))
def test_backpropagate_on_random_graphs_matches_the_complex_step_of_the_graph(graph):
    root, leaves = graph
    scalar.backpropagate(_creation_order(root))
    # Re-evaluate the same graph with one leaf moved (the graph is a function of its leaves).
    for leaf in leaves:
        if not leaf.requires_grad:
            assert leaf.grad is None
            continue
        if leaf.unique_id not in _reachable(root):
            assert leaf.grad is None
            continue
        want = _replay_derivative(root, leaf)
        _close(leaf.grad, want, rel=1e-6, abs_=1e-6)


def _replay(root: Scalar, moved: Scalar, value: complex) -> complex:
    """The value of ``root``'s graph with the leaf ``moved`` set to ``value`` (complex)."""
    memo: dict = {}
    order = sorted(_all_values(root).values(), key=lambda v: v.unique_id)
    for v in order:
        if v.history is None:
            memo[v.unique_id] = value if v is moved else complex(v.data)
            continue
        args = [memo[x.unique_id] if isinstance(x, Scalar) else complex(x)
                for x in v.history.inputs]
        fn = v.history.last_fn
        if fn is scalar.Add:
            memo[v.unique_id] = args[0] + args[1]
        elif fn is scalar.Mul:
            memo[v.unique_id] = args[0] * args[1]
        elif fn is scalar.Neg:
            memo[v.unique_id] = -args[0]
        elif fn is scalar.Exp:
            memo[v.unique_id] = cmath.exp(args[0])
        elif fn is scalar.Log:
            memo[v.unique_id] = cmath.log(args[0])
        else:
            raise AssertionError(f"no replay for {fn.__name__}")
    return memo[root.unique_id]


def _all_values(root: Scalar) -> dict:
    found = {}
    stack = [root]
    while stack:
        v = stack.pop()
        if v.unique_id in found:
            continue
        found[v.unique_id] = v
        stack.extend(v.parents)
    return found


def _replay_derivative(root: Scalar, leaf: Scalar) -> float:
    return _replay(root, leaf, complex(leaf.data, H)).imag / H


@pytest.mark.task("0.8")
def test_backpropagate_a_deep_chain():
    x = Scalar(1.0, requires_grad=True)
    v = x
    for _ in range(20_000):             # 20 times Python's recursion limit
        v = v + x - x + 1.0          # x reached along 40,001 paths
    scalar.backpropagate(_creation_order(v))
    assert x.grad == pytest.approx(1.0)

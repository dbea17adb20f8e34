"""Autodiff on single numbers: the warm-up for the tensor engine (course module 0).

This module is a small, complete reverse-mode autodiff engine whose values
are plain Python floats, in the spirit of Karpathy's *micrograd*.  It is
built from the same parts as minitorch's tensor engine
(:mod:`minitorch.autograd`), with the same names, so that everything learnt
here carries over:

* a :class:`ScalarFunction` is an operation with a static ``forward`` (numbers
  in, a number out) and a static ``backward`` (the gradient of the output in,
  one gradient per input out), exactly like :class:`minitorch.autograd.Function`;
* ``forward`` keeps what ``backward`` needs in a :class:`Context`
  (``ctx.save_for_backward(...)`` / ``ctx.saved_values``);
* every :class:`Scalar` made by an operation remembers its :class:`History`
  (the function, its context and its inputs): together these are the *graph*;
* :func:`topological_sort` orders the graph so that a node comes before the
  nodes it was computed from, and :func:`backpropagate` walks that order,
  applying the chain rule and summing the gradients that reach a node along
  several paths; the *leaves* (the inputs the user made) accumulate theirs in
  ``.grad``.

Nothing here imports the rest of minitorch: it is the bottom of the course,
and of the package's layers.

>>> x = Scalar(2.0, requires_grad=True)
>>> y = x * x + x.exp().log()
>>> y.data
6.0
>>> y.backward()
>>> x.grad
5.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

__all__ = ["Scalar", "ScalarFunction", "Context", "History", "Add", "Neg", "Mul", "Div", "Pow",
           "Exp", "Log", "ReLU", "Sigmoid", "central_difference", "topological_sort",
           "backpropagate"]


# ---------------------------------------------------------------------------
# Numerical derivatives: the checker for everything below
# ---------------------------------------------------------------------------
def central_difference(f: Callable[..., float], *vals: float, arg: int = 0,
                       epsilon: float = 1e-6) -> float:
    """An estimate of the partial derivative of ``f`` with respect to argument ``arg``.

    ``f`` takes plain numbers and returns a number.  The estimate moves only
    argument ``arg`` by a small step ``epsilon`` each way around ``vals`` and
    looks at how much ``f`` changed; it is accurate to about ``epsilon**2``
    for a smooth ``f`` (so far better than a one-sided step).  The other
    arguments keep their values.

    Args:
        f: a function of ``len(vals)`` numbers.

        vals: the point at which to differentiate.

        arg: which argument to differentiate with respect to (0-based).

        epsilon: the step.

    Returns:
        The approximate value of ``df/dvals[arg]`` at ``vals``.

    >>> round(central_difference(lambda x, y: x * y, 3.0, 4.0, arg=1), 6)
    3.0
    """
    # Task 0.1: the central-difference estimate of df/d(vals[arg]) at vals.
    ### BEGIN SOLUTION
    up = list(vals)
    down = list(vals)
    up[arg] += epsilon
    down[arg] -= epsilon
    return (f(*up) - f(*down)) / (2.0 * epsilon)
    ### END SOLUTION


# ---------------------------------------------------------------------------
# The graph: contexts, histories and values
# ---------------------------------------------------------------------------
class Context:
    """What one operation keeps between its forward and its backward.

    ``needs_input_grad[i]`` says whether input ``i`` wants a gradient (it is a
    :class:`Scalar` that requires one); ``backward`` may return ``0.0`` for the
    others.  The tensor engine's context (``ctx`` in a
    :class:`minitorch.autograd.Function`) has the same two members.
    """

    def __init__(self, needs_input_grad: tuple = ()) -> None:
        self.needs_input_grad = needs_input_grad
        self.saved_values: tuple = ()

    def save_for_backward(self, *values: float) -> None:
        """Keep ``values`` (plain numbers) for ``backward``: ``ctx.saved_values``."""
        self.saved_values = values


@dataclass
class History:
    """How a :class:`Scalar` was made: the function, its context and its inputs.

    ``inputs`` holds what the function was called with: :class:`Scalar` s and
    plain numbers (constants, which get no gradient).
    """

    last_fn: type
    ctx: Context
    inputs: tuple = field(default_factory=tuple)


_next_id = 0


class Scalar:
    """One number that remembers how it was computed.

    Args:
        data: the value.

        requires_grad: whether :meth:`backward` should compute this value's
        gradient (a *leaf*: a value the user made, not an operation).

    ``grad`` is ``None`` until a backward pass reaches the value; after it, the
    derivative of the output with respect to this value, summed over every
    backward pass (call :meth:`zero_grad` between them), as in PyTorch.
    """

    def __init__(self, data: float, requires_grad: bool = False,
                 history: History | None = None) -> None:
        global _next_id
        _next_id += 1
        self.unique_id = _next_id
        self.data = float(data)
        self.history = history
        self.requires_grad = bool(requires_grad) or history is not None
        self.grad: float | None = None

    # -- the graph ---------------------------------------------------------
    @property
    def is_leaf(self) -> bool:
        """True for a value the user made (no operation produced it)."""
        return self.history is None

    @property
    def parents(self) -> tuple:
        """The :class:`Scalar` inputs this value was computed from (none for a leaf)."""
        if self.history is None:
            return ()
        return tuple(x for x in self.history.inputs if isinstance(x, Scalar))

    def chain_rule(self, d_output: float) -> list:
        """One step of the chain rule: ``[(input, gradient), ...]`` for this value's inputs.

        Runs this value's function's ``backward`` on ``d_output`` (the
        derivative of the final output with respect to this value) and pairs
        each gradient with its input; constants and inputs that need no
        gradient are left out.
        """
        h = self.history
        if h is None:
            return []
        grads = h.last_fn.backward(h.ctx, d_output)
        if not isinstance(grads, tuple):
            grads = (grads,)
        if len(grads) != len(h.inputs):
            raise RuntimeError(f"{h.last_fn.__name__}.backward returned {len(grads)} gradients "
                               f"for {len(h.inputs)} inputs")
        return [(x, float(g)) for x, g in zip(h.inputs, grads)
                if isinstance(x, Scalar) and x.requires_grad]

    def accumulate_grad(self, g: float) -> None:
        """Add ``g`` into ``self.grad`` (which starts as ``None``): a leaf's gradient."""
        self.grad = float(g) if self.grad is None else self.grad + float(g)

    def zero_grad(self) -> None:
        self.grad = None

    def backward(self, d_output: float = 1.0) -> None:
        """Compute the derivative of this value with respect to every leaf it depends on.

        Each leaf that requires a gradient gets it added to its ``grad``.
        """
        backpropagate(topological_sort(self), d_output)

    # -- operators ---------------------------------------------------------
    def __add__(self, other: Any) -> Scalar:
        return Add.apply(self, other)

    def __radd__(self, other: Any) -> Scalar:
        return Add.apply(other, self)

    def __neg__(self) -> Scalar:
        return Neg.apply(self)

    def __sub__(self, other: Any) -> Scalar:
        return Add.apply(self, Neg.apply(other) if isinstance(other, Scalar) else -other)

    def __rsub__(self, other: Any) -> Scalar:
        return Add.apply(other, Neg.apply(self))

    def __mul__(self, other: Any) -> Scalar:
        return Mul.apply(self, other)

    def __rmul__(self, other: Any) -> Scalar:
        return Mul.apply(other, self)

    def __truediv__(self, other: Any) -> Scalar:
        return Div.apply(self, other)

    def __rtruediv__(self, other: Any) -> Scalar:
        return Div.apply(other, self)

    def __pow__(self, exponent: float) -> Scalar:
        if isinstance(exponent, Scalar):
            raise TypeError("Scalar ** Scalar is not supported: the exponent must be a number")
        return Pow.apply(self, exponent)

    def exp(self) -> Scalar:
        return Exp.apply(self)

    def log(self) -> Scalar:
        return Log.apply(self)

    def relu(self) -> Scalar:
        return ReLU.apply(self)

    def sigmoid(self) -> Scalar:
        return Sigmoid.apply(self)

    def __float__(self) -> float:
        return self.data

    def __repr__(self) -> str:
        grad = "" if self.grad is None else f", grad={self.grad!r}"
        req = ", requires_grad=True" if self.requires_grad and self.is_leaf else ""
        fn = f", fn={self.history.last_fn.__name__}" if self.history is not None else ""
        return f"Scalar({self.data!r}{req}{fn}{grad})"


def _value(x: Any) -> float:
    return x.data if isinstance(x, Scalar) else float(x)


# ---------------------------------------------------------------------------
# Operations
# ---------------------------------------------------------------------------
class ScalarFunction:
    """An operation on numbers with its derivative: subclass it with two static methods.

    ``forward(ctx, *values)`` gets plain floats and returns a float;
    ``backward(ctx, d_output)`` gets the derivative of the final output with
    respect to this operation's output and returns one gradient per input (a
    tuple for two inputs, a number for one).  :meth:`apply` records the call in
    the graph when an input requires a gradient.
    """

    @staticmethod
    def forward(ctx: Context, *values: float) -> float:
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Context, d_output: float) -> Any:
        raise NotImplementedError

    @classmethod
    def apply(cls, *inputs: Any) -> Scalar:
        needs = tuple(isinstance(x, Scalar) and x.requires_grad for x in inputs)
        ctx = Context(needs)
        out = cls.forward(ctx, *(_value(x) for x in inputs))
        history = History(cls, ctx, tuple(inputs)) if any(needs) else None
        return Scalar(out, history=history)


class Add(ScalarFunction):
    """``a + b``.  A worked example of a backward with two inputs."""

    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:
        return a + b

    @staticmethod
    def backward(ctx: Context, d_output: float) -> tuple:
        # d(a + b)/da = d(a + b)/db = 1: each input gets the output's gradient unchanged.
        return d_output, d_output


class Neg(ScalarFunction):
    """``-a``."""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:
        return -a

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        return -d_output


class Mul(ScalarFunction):
    """``a * b``."""

    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx: Context, d_output: float) -> tuple:
        """The gradients of ``a * b`` for ``a`` and for ``b``.

        Args:
            ctx: the context ``forward`` filled (``ctx.saved_values`` is ``(a, b)``).

            d_output: the derivative of the final output with respect to ``a * b``.

        Returns:
            ``(grad_a, grad_b)``.  Example: at ``a = 2, b = 3`` with
            ``d_output = 1``, the gradients are ``(3.0, 2.0)``.
        """
        # Task 0.2: the gradients of a * b with respect to a and to b, given d_output.
        ### BEGIN SOLUTION
        a, b = ctx.saved_values
        return d_output * b, d_output * a
        ### END SOLUTION


class Div(ScalarFunction):
    """``a / b`` (Python's rules: dividing by zero raises ``ZeroDivisionError``)."""

    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:
        ctx.save_for_backward(a, b)
        return a / b

    @staticmethod
    def backward(ctx: Context, d_output: float) -> tuple:
        """The gradients of ``a / b`` for ``a`` and for ``b``.

        Args:
            ctx: the context ``forward`` filled (``ctx.saved_values`` is ``(a, b)``).

            d_output: the derivative of the final output with respect to ``a / b``.

        Returns:
            ``(grad_a, grad_b)``.  Example: at ``a = 3, b = 2`` with
            ``d_output = 1``, the gradients are ``(0.5, -0.75)``.
        """
        # Task 0.3: the gradients of a / b with respect to a and to b, given d_output.
        ### BEGIN SOLUTION
        a, b = ctx.saved_values
        return d_output / b, -d_output * a / (b * b)
        ### END SOLUTION


class Pow(ScalarFunction):
    """``a ** c`` for a constant exponent ``c`` (a number, never a :class:`Scalar`)."""

    @staticmethod
    def forward(ctx: Context, a: float, c: float) -> float:
        ctx.save_for_backward(a, c)
        return a ** c

    @staticmethod
    def backward(ctx: Context, d_output: float) -> tuple:
        """The gradient of ``a ** c`` for ``a`` (and ``0.0`` for the constant ``c``).

        Args:
            ctx: the context ``forward`` filled (``ctx.saved_values`` is ``(a, c)``).

            d_output: the derivative of the final output with respect to ``a ** c``.

        Returns:
            ``(grad_a, 0.0)``.  Example: at ``a = 3, c = 2`` with
            ``d_output = 1``, the gradients are ``(6.0, 0.0)``.  Any exponent
            works, ``c = 0`` (a constant: gradient 0) and negative or
            fractional ones included.
        """
        # Task 0.4: the gradient of a ** c with respect to a (c is a constant), given d_output.
        ### BEGIN SOLUTION
        a, c = ctx.saved_values
        if c == 0:
            return 0.0, 0.0
        return d_output * c * a ** (c - 1), 0.0
        ### END SOLUTION


class Exp(ScalarFunction):
    """``e ** a``.  A worked example of a backward that reuses forward's result."""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:
        out = math.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        # exp is its own derivative: keep the output rather than computing it again.
        (out,) = ctx.saved_values
        return d_output * out


class Log(ScalarFunction):
    """The natural logarithm (``ValueError`` for ``a <= 0``, as ``math.log``)."""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:
        ctx.save_for_backward(a)
        return math.log(a)

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        (a,) = ctx.saved_values
        return d_output / a


class ReLU(ScalarFunction):
    """``max(a, 0)``; its gradient at 0 is 0, as PyTorch's."""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:
        ctx.save_for_backward(a)
        return a if a > 0 else 0.0

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        (a,) = ctx.saved_values
        return d_output if a > 0 else 0.0


class Sigmoid(ScalarFunction):
    """The logistic function ``1 / (1 + e ** -a)``, a number strictly between 0 and 1."""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:
        """The logistic function of ``a``, for every float ``a``.

        Args:
            ctx: save here what :meth:`backward` will need.

            a: any float; ``-1000.0`` and ``1000.0`` included (where a naive
            formula overflows ``math.exp``: its result must still be the
            right one, ``0.0`` and ``1.0``).

        Returns:
            ``sigmoid(a)``.  Example: ``sigmoid(0.0) == 0.5``.
        """
        # Task 0.5: the logistic function of a, without overflow for any float a;
        # save what backward needs.
        ### BEGIN SOLUTION
        if a >= 0:
            out = 1.0 / (1.0 + math.exp(-a))
        else:
            e = math.exp(a)
            out = e / (1.0 + e)
        ctx.save_for_backward(out)
        return out
        ### END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        """The gradient of the logistic function for its input.

        Args:
            ctx: what :meth:`forward` saved.

            d_output: the derivative of the final output with respect to ``sigmoid(a)``.

        Returns:
            The gradient for ``a``.  Example: at ``a = 0`` with ``d_output = 1``
            it is ``0.25``.
        """
        # Task 0.6: the gradient of sigmoid(a) with respect to a, given d_output.
        ### BEGIN SOLUTION
        (out,) = ctx.saved_values
        return d_output * out * (1.0 - out)
        ### END SOLUTION


# ---------------------------------------------------------------------------
# The backward pass
# ---------------------------------------------------------------------------
def topological_sort(root: Scalar) -> list:
    """Every value ``root`` was computed from, each before the values it was computed from.

    Args:
        root: the output of a computation.

    Returns:
        A list that holds ``root`` and every :class:`Scalar` reachable from it
        through :attr:`Scalar.parents` that requires a gradient, each exactly
        once, such that a value always comes *before* each of its parents
        (``root`` first).  Values that need no gradient are left out, along
        with whatever they were computed from.  It must work for a chain of
        100,000 operations (Python's recursion limit is about 1,000).

    Example: for ``y = x * x; z = y + x`` the order is ``[z, y, x]``.
    """
    # Task 0.7: root and every value that requires a grad reachable through .parents, each once,
    # every value before its parents; no recursion.
    ### BEGIN SOLUTION
    if not root.requires_grad:
        return []
    order: list = []
    done: set = set()
    visiting: set = set()
    # An explicit stack of (value, children pushed yet?): a depth-first post-order,
    # reversed at the end, so every value comes before its parents.
    stack = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if node.unique_id in done:
            continue
        if expanded:
            done.add(node.unique_id)
            order.append(node)
            continue
        if node.unique_id in visiting:
            continue
        visiting.add(node.unique_id)
        stack.append((node, True))
        for p in node.parents:
            if p.requires_grad and p.unique_id not in done:
                stack.append((p, False))
    order.reverse()
    return order
    ### END SOLUTION


def backpropagate(order: Sequence[Scalar], d_output: float = 1.0) -> None:
    """Run the chain rule over a graph given in topological order.

    Args:
        order: ``order[0]`` is the output; every value in the list comes
        before the values it was computed from, and every value that
        requires a gradient and that the output depends on is in it
        (what :func:`topological_sort` returns).

        d_output: the derivative of the final output with respect to ``order[0]``.

    Every leaf that requires a gradient gets the derivative of the output with
    respect to it *added* to its ``grad`` (with :meth:`Scalar.accumulate_grad`).
    A value used several times gets the sum of the gradients of all its uses.
    Values that are not leaves get no ``grad``.  Example: for ``y = x * x + x``
    at ``x = 3``, ``x.grad`` becomes ``7.0``.
    """
    # Task 0.8: add d(output)/d(leaf) into the grad of every leaf that requires one, walking
    # order once (use Scalar.chain_rule).
    ### BEGIN SOLUTION
    if not order:
        return
    derivatives: dict = {order[0].unique_id: float(d_output)}
    for node in order:
        d = derivatives.pop(node.unique_id, 0.0)
        if node.is_leaf:
            if node.requires_grad:
                node.accumulate_grad(d)
            continue
        for parent, g in node.chain_rule(d):
            derivatives[parent.unique_id] = derivatives.get(parent.unique_id, 0.0) + g
    ### END SOLUTION


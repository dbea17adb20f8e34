"""An op's derivative as Python source, read from the op's own eager backward.

Each elementwise op's derivative is written once, in ``ops/elementwise.py``,
as the tensor code its eager backward runs: ``Exp``'s is ``g * y``, ``Sin``'s
``g * cos(x)``, ``Sub``'s backward returns ``g`` and ``-g``.  A fused
kernel (:mod:`minitorch.compiler.fusion`) needs the same formulas for one
element, as source text it can paste into its loop.  Rather than a second
copy of every formula (one that could drift from the first), this module
*runs* the eager formula on :class:`Symbol`\\ s: stand-ins for tensors whose
arithmetic writes text instead of computing.  ``g * y`` on the symbols ``g``
and ``y`` gives ``Symbol("g * y")``; ``cos(x)`` gives the call of the fused
kernel's helper for ``cos``, ``unary_cos(x, 0.0, 0.0)``; ``where(c, a, b)``
gives ``a if c else b``.  tinygrad keeps one table of gradient rules for the
same reason.

>>> from minitorch.ops import elementwise
>>> unary_derivative(elementwise.Tanh, 0.0, 0.0)
'g * (1.0 - y * y)'
>>> arith_derivatives(elementwise.Sub)
('g', '-g')

The names in the text are the formula's own: ``g`` (the gradient of the
result), ``x`` and ``y`` (a unary op's input and result), ``a`` and ``b`` (a
binary op's inputs); the fuser puts its variables in their places.  A
unary op's parameters (clamp's bounds, leaky_relu's slope) are numbers by
then, and are written into the text.

A formula that does something a symbol cannot (calls a kernel, branches on
a tensor's values, builds a tensor) gives ``None``: that op does not fuse,
and runs eagerly.  So *which* ops fuse is decided here, by whether their
derivative can be read, not by a list.
"""

from __future__ import annotations

import functools
import math
import types
from typing import Any, Callable

from ..backends.fusion_program import helper_name
from ..backends.fusion_source import literal
from ..ops import elementwise

__all__ = ["Symbol", "unary_derivative", "arith_derivatives", "fusable_unary_ops"]

# How tightly each kind of expression binds (Python's own order): a part is put in
# parentheses only where Python would read it otherwise.
_CONDITIONAL, _OR, _AND, _COMPARE, _SUM, _PRODUCT, _NEGATION, _ATOM = range(8)


class Unreadable(Exception):
    """The formula did something a :class:`Symbol` cannot stand in for."""


class Symbol:
    """A scalar expression as Python source, standing in for a tensor in a formula.

    ``text`` is the source; ``binding`` how tightly it binds (an atom, a
    product, a sum, ...), which decides where parentheses go when it is part
    of a bigger expression.
    """

    __slots__ = ("text", "binding")

    def __init__(self, text: str, binding: int = _ATOM) -> None:
        self.text, self.binding = text, binding

    def __repr__(self) -> str:
        return f"Symbol({self.text!r})"

    # Arithmetic writes text.  A left operand is put in parentheses when it binds less
    # tightly than the operator; a right one also when it binds the same (``a - (b - c)``).
    def _binary(self, op: str, other: Any, binding: int, swap: bool = False) -> Symbol:
        left, right = (as_symbol(other), self) if swap else (self, as_symbol(other))
        return Symbol(f"{_part(left, binding)} {op} {_part(right, binding + 1)}", binding)

    def __add__(self, o): return self._binary("+", o, _SUM)
    def __radd__(self, o): return self._binary("+", o, _SUM, swap=True)
    def __sub__(self, o): return self._binary("-", o, _SUM)
    def __rsub__(self, o): return self._binary("-", o, _SUM, swap=True)
    def __mul__(self, o): return self._binary("*", o, _PRODUCT)
    def __rmul__(self, o): return self._binary("*", o, _PRODUCT, swap=True)
    def __truediv__(self, o): return self._binary("/", o, _PRODUCT)
    def __rtruediv__(self, o): return self._binary("/", o, _PRODUCT, swap=True)
    def __gt__(self, o): return self._binary(">", o, _COMPARE)
    def __ge__(self, o): return self._binary(">=", o, _COMPARE)
    def __lt__(self, o): return self._binary("<", o, _COMPARE)
    def __le__(self, o): return self._binary("<=", o, _COMPARE)
    # ``&``/``|`` of two comparisons (masks, in the tensor formula) are ``and``/``or`` here.
    def __and__(self, o): return self._binary("and", o, _AND)
    def __or__(self, o): return self._binary("or", o, _OR)

    def __neg__(self) -> Symbol:
        return Symbol(f"-{_part(self, _NEGATION)}", _NEGATION)

    def __bool__(self) -> bool:
        # ``if`` on a tensor's values: the fused kernel would have to decide per element.
        raise Unreadable("a formula branches on a tensor's values")

    # What the tensor formulas ask of a tensor besides arithmetic: its dtype, for a cast
    # (each value of a fused kernel is rounded to the program's dtype anyway).
    dtype = None

    def to(self, *args: Any, **kwargs: Any) -> Symbol:
        return self


def as_symbol(value: Any) -> Symbol:
    """``value`` as a :class:`Symbol`: a number becomes its literal."""
    if isinstance(value, Symbol):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = literal(float(value))
        return Symbol(text, _NEGATION if text.startswith("-") else _ATOM)
    raise Unreadable(f"a formula used a {type(value).__name__}")


def _part(symbol: Symbol, binding: int) -> str:
    return symbol.text if symbol.binding >= binding else f"({symbol.text})"


def _where(condition: Any, input: Any, other: Any) -> Symbol:
    c, a, b = as_symbol(condition), as_symbol(input), as_symbol(other)
    return Symbol(f"{_part(a, _OR)} if {_part(c, _OR)} else {_part(b, _CONDITIONAL)}",
                  _CONDITIONAL)


def _helper_call(op: int, x: Any, p0: Any = 0.0, p1: Any = 0.0) -> Symbol:
    """The fused kernel's helper for the unary op ``op`` (its branch of ``scalar_ops``)."""
    args = ", ".join(as_symbol(v).text for v in (x, p0, p1))
    return Symbol(f"{helper_name('unary', op)}({args})")


class _UnaryClass:
    """A unary op's ``Function`` class inside a formula (``Softplus.apply(x, 1.0, 20.0)``)."""

    def __init__(self, op: int) -> None:
        self.op = op

    def apply(self, x: Any, p0: Any = 0.0, p1: Any = 0.0) -> Symbol:
        return _helper_call(self.op, x, p0, p1)


@functools.lru_cache(maxsize=None)
def _namespace() -> dict:
    """``ops/elementwise.py``'s globals, with what a formula calls replaced by symbol writers.

    A unary op's public function (``cos``, ``sigmoid``) and its class become a
    call of the fused kernel's helper; ``where`` a conditional expression;
    summing a broadcast gradient back to its input's shape (``_reduce_grad``)
    nothing, since a fused kernel works one element at a time; and a backward
    takes its differentiable route (``backward_builds_graph``), the formula.
    The module's own helper functions (``_gelu_tanh_grad``) are re-created
    over this namespace, so that what they call is replaced too.
    """
    source = vars(elementwise)
    namespace = dict(source)
    for name, value in source.items():
        if isinstance(value, type) and issubclass(value, elementwise._Unary) \
                and value is not elementwise._Unary:
            namespace[name] = _UnaryClass(value.op)
            public = value.__name__.lower()
            if callable(source.get(public)) and getattr(source[public], "__name__", "") == public:
                namespace[public] = functools.partial(_helper_call, value.op)
    namespace.update(
        where=_where,
        pow=lambda x, exponent: _helper_call(elementwise.PowTensorScalar.op, x, exponent),
        _reduce_grad=lambda g, meta: g,
        backward_builds_graph=lambda: True,
        math=math)
    for name, value in source.items():
        if isinstance(value, types.FunctionType) and value.__module__ == elementwise.__name__ \
                and namespace.get(name) is value:
            namespace[name] = _rebound(value, namespace)
    return namespace


def _rebound(fn: Callable, namespace: dict) -> types.FunctionType:
    """``fn``'s code over ``namespace`` instead of its module's globals."""
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def _read(run: Callable[[], Any]) -> Any:
    """``run()``, or ``None`` if the formula cannot be read.  Any error counts: a formula
    that calls what a symbol is not (``Unreadable``, ``AttributeError``...), and a
    course edition's backward still a stub (``NotImplementedError``): that op then runs
    eagerly, and its backward raises where the student expects it to."""
    try:
        return run()
    except Exception:
        return None


@functools.lru_cache(maxsize=None)
def unary_derivative(cls: type, p0: float, p1: float) -> str | None:
    """d(loss)/dx of the unary op ``cls`` (with parameters ``p0, p1``) as source, or ``None``.

    The text is ``cls.grad_formula``, the formula its eager backward runs,
    applied to the symbols ``x`` (input), ``y`` (result) and ``g`` (the
    result's gradient).
    """
    formula = _rebound(cls.grad_formula, _namespace())
    found = _read(lambda: as_symbol(formula(Symbol("x"), Symbol("y"), Symbol("g"), p0, p1)))
    return None if found is None else found.text


class _Context:
    """The ``ctx`` a binary op's backward reads, for one element of each input."""

    saved_tensors = (Symbol("a"), Symbol("b"))
    needs_input_grad = (True, True, True)
    a = b = None                      # the inputs' (shape, dtype): nothing to sum back
    a_number = b_number = None
    alpha = 1


@functools.lru_cache(maxsize=None)
def arith_derivatives(cls: type) -> tuple[str, str] | None:
    """(d/da, d/db) of the binary op ``cls`` (``Add``, ``Sub``, ``Mul``, ``Div``) as source.

    The text is ``cls.backward`` itself, run with the symbols ``a``, ``b`` and
    ``g``: in a course edition, the student's own backward (tasks 3.4 and 3.7).
    ``None`` when it cannot be read.
    """
    backward = _rebound(cls.backward, _namespace())
    grads = _read(lambda: backward(_Context(), Symbol("g")))
    if grads is None or len(grads) < 2:
        return None
    texts = _read(lambda: tuple(as_symbol(d).text for d in grads[:2]))
    return texts


def fusable_unary_ops() -> list:
    """The unary ops' classes whose derivative reads as source (with parameters 0, 0)."""
    return [cls for cls in vars(elementwise).values()
            if isinstance(cls, type) and issubclass(cls, elementwise._Unary)
            and cls is not elementwise._Unary and cls.grad_formula is not None
            and unary_derivative(cls, 0.0, 0.0) is not None]

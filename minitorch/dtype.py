"""Layer 1: data types and PyTorch's type-promotion rules.

A :class:`dtype` names how one element is stored.  Every dtype maps to one
NumPy dtype, because on the CPU a tensor's storage *is* a NumPy array.

Type promotion decides the dtype of ``a + b`` when ``a`` and ``b`` differ.
PyTorch sorts the operands into three groups, and a group only matters if it
is of a *higher category* (bool < integer < floating point) than the groups
before it:

1. tensors with at least one dimension,
2. zero-dimensional tensors,
3. Python numbers ("wrapped" scalars).

So ``int64_tensor + 2.5`` is a float (a higher category wins), but
``float32_tensor + float64_scalar_tensor`` stays float32 (same category: the
dimensioned tensor wins).  See :func:`result_type`.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

__all__ = [
    "dtype", "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32",
    "int64", "uint8", "bool_", "half", "float", "double", "short", "int", "long",
    "promote_types", "result_type", "get_default_dtype", "set_default_dtype",
    "from_numpy_dtype", "as_dtype", "can_cast",
]


class dtype:
    """A tensor element type, such as ``minitorch.float32``.

    Attributes mirror ``torch.dtype``: ``is_floating_point``, ``is_signed``,
    ``is_complex`` and ``itemsize`` (bytes per element).
    """

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_signed",
                 "is_complex", "_rank", "_legacy")

    def __init__(self, name: str, np_dtype: Any, rank: int, legacy: str) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.is_floating_point = self.np.kind == "f"
        self.is_signed = self.np.kind in "if"
        self.is_complex = False
        self._rank = rank          # position in the promotion lattice below
        self._legacy = legacy      # 'Float' in 'torch.FloatTensor'

    @property
    def category(self) -> int:
        """0 for bool, 1 for integers, 2 for floating point."""
        if self.name == "bool":
            return 0
        return 2 if self.is_floating_point else 1

    def to_real(self) -> "dtype":
        return self

    def __repr__(self) -> str:
        return f"minitorch.{self.name}"

    def __reduce__(self):
        # dtypes are singletons: unpickling must give back the same object.
        return (as_dtype, (self.name,))


bool_ = dtype("bool", np.bool_, 0, "Bool")
uint8 = dtype("uint8", np.uint8, 1, "Byte")
int8 = dtype("int8", np.int8, 2, "Char")
int16 = dtype("int16", np.int16, 3, "Short")
int32 = dtype("int32", np.int32, 4, "Int")
int64 = dtype("int64", np.int64, 5, "Long")
float16 = dtype("float16", np.float16, 6, "Half")
# bfloat16 ("brain float"): float32's 8 exponent bits with only 7 mantissa bits,
# so float32's range at 2-3 significant digits.  NumPy has no bfloat16, so
# minitorch keeps each element in a float32 slot whose value is always a
# bfloat16 value: every write into a bfloat16 tensor rounds to the nearest
# bfloat16 (ties to even), which is also how CPU PyTorch computes most
# bfloat16 ops (in float32, rounded on store).  Its itemsize is the real 2
# bytes; its storage holds 4 per element (see docs/differences.md).
bfloat16 = dtype("bfloat16", np.float32, 7, "BFloat16")
bfloat16.itemsize = 2
float32 = dtype("float32", np.float32, 8, "Float")
float64 = dtype("float64", np.float64, 9, "Double")

# PyTorch's aliases.
half = float16
float = float32      # noqa: A001  (shadows the builtin inside this module only)
double = float64
short = int16
int = int32          # noqa: A001
long = int64

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update({"half": float16, "float": float32, "double": float64,
                 "short": int16, "int": int32, "long": int64})
_BY_NP = {d.np: d for d in ALL_DTYPES if d is not bfloat16}   # its container is float32

_default_dtype = float32


def get_default_dtype() -> dtype:
    """The floating dtype used for Python floats and float factories (float32)."""
    return _default_dtype


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype; only float32 and float64 (and float16) are allowed."""
    global _default_dtype
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_dtype = d


def as_dtype(d: Any) -> dtype:
    """Turn a dtype, a NumPy dtype, a name or a Python type into a :class:`dtype`."""
    if isinstance(d, dtype):
        return d
    if d is None:
        return _default_dtype
    if d is builtins.float:
        return _default_dtype
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool_
    if isinstance(d, str):
        name = d.split(".")[-1]
        if name in _BY_NAME:
            return _BY_NAME[name]
        raise TypeError(f"unknown dtype name {d!r}")
    try:
        return from_numpy_dtype(np.dtype(d))
    except TypeError:
        raise TypeError(f"cannot interpret {d!r} as a minitorch dtype") from None


def from_numpy_dtype(np_dtype: np.dtype) -> dtype:
    """The minitorch dtype with the same element layout as a NumPy dtype."""
    np_dtype = np.dtype(np_dtype)
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np_dtype}. The only supported types are: "
            "float64, float32, float16, int64, int32, int16, int8, uint8, and bool.") from None


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` convert to without losing category.

    Mirrors ``torch.promote_types``: bool < integers < floats; among integers
    the wider one wins, except that uint8 with a signed type needs int16 (or
    the signed type if wider); among floats the wider one wins.
    """
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        return hi
    if a.is_floating_point:
        if {a, b} == {float16, bfloat16}:
            return float32           # neither holds the other: 5 vs 8 exponent bits
        return a if a._rank > b._rank else b
    # Two integer types (bool was handled above: it is its own category).
    if a is uint8 or b is uint8:
        other = b if a is uint8 else a
        return int16 if other is int8 else other
    return a if a._rank > b._rank else b


def _scalar_dtype(value: Any) -> dtype:
    if isinstance(value, bool):
        return bool_
    if isinstance(value, (builtins.int, np.integer)):
        return int64
    if isinstance(value, np.bool_):
        return bool_
    return _default_dtype


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """PyTorch's rule for letting a lower-priority group raise the category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def result_type(*operands: Any) -> dtype:
    """The dtype of an elementwise op over tensors and Python numbers.

    Each operand is a tensor (anything with ``.dtype`` and ``.dim()``) or a
    Python number.  See the module docstring for the three-group rule.
    """
    if len(operands) == 2:
        # The commonest call by far: two tensors of one dtype (both with dims).
        a, b = operands
        dt = getattr(a, "dtype", None)
        if dt is not None and getattr(b, "dtype", None) is dt and hasattr(a, "dim") \
                and hasattr(b, "dim") and a.dim() and b.dim():
            return dt
    dim_result = zero_result = wrapped_result = None
    for op in operands:
        if hasattr(op, "dtype") and hasattr(op, "dim"):
            if op.dim() > 0:
                dim_result = op.dtype if dim_result is None else promote_types(dim_result, op.dtype)
            else:
                zero_result = op.dtype if zero_result is None else promote_types(zero_result, op.dtype)
        else:
            d = _scalar_dtype(op)
            wrapped_result = d if wrapped_result is None else promote_types(wrapped_result, d)
    out = _combine_categories(dim_result, _combine_categories(zero_result, wrapped_result))
    assert out is not None, "result_type needs at least one operand"
    return out


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether an in-place op may write a ``from_`` result into a ``to`` tensor.

    PyTorch forbids casting to a lower category (float into int, int into bool).
    """
    return from_.category <= to.category


# C++ names PyTorch's overflow message gives each dtype.
_C_NAMES = {"bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t",
            "int32": "int", "int64": "int64_t", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}


def check_fill_value(value: Any, dt: dtype) -> None:
    """Refuse to fill a ``dt`` tensor with a number that ``dt`` cannot hold, as PyTorch does.

    ``fill_``, ``full``, ``masked_fill`` and ``t[i] = v`` raise
    ``RuntimeError: value cannot be converted to type int without overflow``
    rather than store a wrapped-around integer (2**40 in an int32) or an
    infinity (1e10 in a float16); NaN and inf fit only floating types.  (The
    arithmetic operators do not check: ``int32_tensor + 2**40`` wraps, in
    PyTorch too.)  A Python int beyond int64 is refused for every dtype, with
    PyTorch's ``OverflowError``.
    """
    if isinstance(value, (builtins.bool, np.bool_)) or dt is bool_:
        return
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, builtins.int) and not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError("int too big to convert")
    bad = False
    if dt.is_floating_point:
        if isinstance(value, builtins.float) and value == value and abs(value) != np.inf:
            bad = abs(value) > builtins.float(np.finfo(dt.np if dt.name != "bfloat16" else np.float32).max)
        elif isinstance(value, builtins.int):
            bad = abs(value) > builtins.float(np.finfo(dt.np).max)
    elif isinstance(value, (builtins.int, builtins.float)):
        info = np.iinfo(dt.np)
        if value != value or abs(value) == np.inf:
            bad = True
        elif info.min == 0:      # unsigned: PyTorch also accepts -max..-1 (they wrap around)
            bad = value > info.max or value < -builtins.int(info.max)
        else:
            bad = not info.min <= value <= info.max
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_C_NAMES.get(dt.name, dt.name)} "
                           "without overflow")

"""The autocast policy: which ops run in lower precision, which in float32.

Mixed precision (``with minitorch.autocast("cuda"):``, the class lives in
:mod:`minitorch.amp`) runs the ops that tolerate it, and profit most from it,
in a 16-bit float type, and keeps the ones that need range or accuracy in
float32.  The decision is made per op, from PyTorch's lists
(``aten/src/ATen/autocast_mode.cpp``):

* ``LOWER``: matrix products (``matmul``, ``mm``, ``bmm``, ``linear``,
  convolutions, which minitorch computes as a matrix product, ``addmm``,
  ``baddbmm``): their floating inputs are cast *down* to the autocast dtype
  (float16 or bfloat16), except float64, which autocast never touches;
* ``FLOAT32``: ops whose result suffers in 16 bits (``exp``, ``log``,
  ``pow``, reductions such as ``sum``/``prod``/``cumsum``, ``softmax``,
  ``log_softmax``, ``logsumexp``, losses, norms): 16-bit inputs are cast
  *up* to float32, so they compute and return float32;
* ``PROMOTE``: ops taking several tensors that must agree (``cat``,
  ``stack``, ``where``...): inputs are cast to the widest floating type
  among them;
* every other op runs in the dtype of its inputs (ordinary promotion).

This module is consulted in ONE place, ``autograd.Function.apply`` (every
op of minitorch is a Function): while no autocast region is active that
costs one attribute check (``STATE.enabled``).  Ops are found by the name of
their ``Function`` class (``MatMul``, ``Softmax``, ...), as PyTorch's lists
name ATen ops.  The casts are ordinary ``.to(dtype)`` ops, recorded by
autograd, so gradients flow back to float32 parameters in float32.

The lists are per device type, as in PyTorch: ``autocast("cpu")`` (default
bfloat16) has a shorter float32 list than ``autocast("cuda")`` (default
float16); a region affects only tensors on its device type.
"""

from __future__ import annotations

import weakref
from typing import Any

from .dtype import bfloat16, float16, float32, float64

__all__ = ["STATE", "cast_inputs", "LOWER", "FLOAT32", "PROMOTE", "category_of",
           "clear_cache"]

LOWER, FLOAT32, PROMOTE = "lower_precision_fp", "fp32", "promote"

# Function class names (minitorch.ops) per policy.  A subclass is found by
# its bases' names too (BMM is a MatMul).
_LISTS = {
    "cuda": {
        LOWER: {"MatMul", "Linear", "Dot", "Einsum"},
        FLOAT32: {"Exp", "Expm1", "Log", "Log10", "Log2", "Log1p", "Reciprocal", "Rsqrt",
                  "Sinh", "Cosh", "Tan", "Asin", "Acos", "Pow", "PowTensorScalar", "Softplus",
                  "LogSumExp", "Sum", "Prod", "CumSum", "CumProd", "Softmax", "LogSoftmax",
                  "NllLoss", "Norm", "VectorNorm", "MatrixNorm", "Dist", "Cdist",
                  "LayerNorm", "GroupNorm", "MseLoss", "L1Loss", "SmoothL1Loss",
                  "BinaryCrossEntropyWithLogits", "KlDiv"},
        PROMOTE: {"Cat", "Stack", "Where", "Atan2", "Cross", "IndexPut", "ScatterAdd"},
    },
    "cpu": {
        LOWER: {"MatMul", "Linear", "Einsum"},
        FLOAT32: {"Prod", "NllLoss", "Cdist", "MseLoss", "L1Loss", "SmoothL1Loss",
                  "BinaryCrossEntropy", "BinaryCrossEntropyWithLogits", "KlDiv",
                  "Inverse", "Cholesky", "Trace"},
        PROMOTE: {"Cat", "Stack", "Where", "Atan2", "Cross", "IndexPut", "ScatterAdd"},
    },
}

DEFAULT_DTYPES = {"cpu": bfloat16, "cuda": float16}


class _State:
    enabled = False                  # any device type's region is active (the one check)

    def __init__(self) -> None:
        # device type -> [enabled, dtype]
        self.devices = {d: [False, dt] for d, dt in DEFAULT_DTYPES.items()}
        self.cache_enabled = True
        self.nesting = 0

    def refresh(self) -> None:
        self.enabled = any(on for on, _ in self.devices.values())


STATE = _State()

_CATEGORY: dict = {}                 # (device type, Function class) -> policy or None


def category_of(cls: type, device_type: str) -> str | None:
    """The policy of a Function class on a device type (None: no cast)."""
    key = (device_type, cls)
    if key not in _CATEGORY:
        lists = _LISTS.get(device_type, {})
        found = None
        for base in cls.__mro__:
            for policy, names in lists.items():
                if base.__name__ in names:
                    found = policy
                    break
            if found:
                break
        _CATEGORY[key] = found
    return _CATEGORY[key]


# Casts of leaf tensors that require grad (a model's weights), kept for the
# region: a weight used by ten matmuls is cast once, as PyTorch does.
_cache: dict = {}


def clear_cache() -> None:
    _cache.clear()


def _cast(t: Any, dt: Any) -> Any:
    if t.dtype is dt:
        return t
    if STATE.cache_enabled and t.is_leaf and t.requires_grad:
        key = (id(t), dt)
        hit = _cache.get(key)
        if hit is not None and hit[0]() is t and hit[1] == t._version_counter.value:
            return hit[2]
        out = t.to(dt)
        _cache[key] = (weakref.ref(t), t._version_counter.value, out)
        return out
    return t.to(dt)


def _eligible(a: Any) -> bool:
    """A floating tensor other than float64 (autocast leaves float64 alone)."""
    dt = getattr(a, "dtype", None)
    return dt is not None and hasattr(a, "_shape") and dt.is_floating_point and dt is not float64


def cast_inputs(cls: type, args: tuple) -> tuple:
    """``args`` with the op's tensor inputs cast as its autocast policy says."""
    device_type = None
    for a in args:
        if _eligible(a):
            device_type = a.device.type
            break
    if device_type is None:
        return args
    on, low = STATE.devices.get(device_type, (False, None))
    if not on:
        return args
    policy = category_of(cls, device_type)
    if policy is None:
        return args
    if policy == LOWER:
        target = low
    elif policy == FLOAT32:
        # Reductions take their result dtype as an argument, worked out from the
        # 16-bit input before the cast: it becomes float32 too.
        args = tuple(float32 if a is float16 or a is bfloat16 else a for a in args)
        target = float32
    else:                               # PROMOTE: the widest floating input type
        widths = [a.dtype for a in args if _eligible(a)]
        target = float32 if (len(set(widths)) > 1 or widths[0] is float32) else widths[0]
    return tuple(_cast(a, target) if _eligible(a) and a.device.type == device_type else a
                 for a in args)

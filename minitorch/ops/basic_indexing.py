"""Basic indexing: ``t[1:, ::2]``, ``t[0]``, ``t[None]``, ``t[..., 1]``, and writes through them.

*Basic* indices (ints, slices with steps, ``None``, ``...``) only change
the header, so ``t[1:, ::2]`` is a view that shares storage with ``t``:

* an int ``i`` in dim d removes that dim and moves the offset by ``i*stride[d]``;
* a slice ``a:b:s`` keeps the dim with size ``ceil((b-a)/s)``, offset
  ``+a*stride[d]`` and stride ``stride[d]*s``;
* ``None`` inserts a dim of size 1; ``...`` stands for all the dims not named.

Assignment ``t[key] = value`` takes the same view and copies ``value`` into
it (broadcasting), so it writes through to every tensor sharing the storage.
``fill_``, ``zero_`` and ``copy_`` write into a whole tensor the same way.
(``ops/indexing.py`` sends each key here or to ``advanced_indexing``.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..layout import broadcast_shapes
from ..tensor_base import TensorBase
from ..trace_mode import recorded   # in-place writes join a compiler's trace
from . import kernels
from .creation import full_like, tensor
from .elementwise import inplace
from .registry import declare
from .views import strided_view


def is_basic(key: tuple) -> bool:
    """Whether every index in ``key`` is basic (int, slice, None, ...): then ``t[key]`` is a view."""
    return all(k is None or k is Ellipsis or isinstance(k, slice) or
               (isinstance(k, int) and not isinstance(k, bool)) or
               (hasattr(k, "__index__") and not isinstance(k, (TensorBase, bool, list, np.bool_))
                and not (isinstance(k, np.ndarray) and k.ndim > 0))
               for k in key)


def normalize_key(key: Any) -> tuple:
    """``t[k]`` and ``t[k1, k2]`` alike: the key as a tuple."""
    if not isinstance(key, tuple):
        key = (key,)
    return key


def _expand_ellipsis(key: tuple, ndim: int) -> tuple:
    """Replace ``...`` by the right number of full slices; pad with full slices."""
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    out = []
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (ndim - used))
        else:
            out.append(k)
    if not n_ell:
        out.extend([slice(None)] * (ndim - used))
    return tuple(out)


def basic_index_layout(key: tuple, shape: tuple, stride: tuple, offset: int) -> tuple:
    """The (shape, stride, offset) that ``key`` (basic indices only) selects."""
    new_shape, new_stride = [], []
    d = 0
    for k in key:
        if k is None:
            new_shape.append(1)
            # Any stride works for a size-1 dim; this is PyTorch's choice.
            new_stride.append(stride[d] * shape[d] if d < len(shape) else 1)
            continue
        size = shape[d]
        if isinstance(k, slice):
            start, stop, step = k.start, k.stop, k.step
            step = 1 if step is None else int(step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start, stop, _ = slice(start, stop, step).indices(size)
            n = max(0, (stop - start + step - 1) // step)
            if n:
                offset += start * stride[d]
            new_shape.append(n)
            new_stride.append(stride[d] * step)
        else:
            i = k.__index__()
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {d} with size "
                                 f"{size}")
            offset += (i + size if i < 0 else i) * stride[d]
        d += 1
    return tuple(new_shape), tuple(new_stride), offset


def _view_name(key: tuple) -> str:
    if all(isinstance(k, slice) or k is None for k in key):
        return "SliceBackward0" if any(isinstance(k, slice) and k != slice(None)
                                       for k in key) else (
            "UnsqueezeBackward0" if any(k is None for k in key) else "AliasBackward0")
    return "SelectBackward0"


def basic_getitem(self: TensorBase, key: tuple) -> TensorBase:
    """``self[key]`` for a basic ``key`` (see :func:`is_basic`): a view."""
    if self.dim() == 0 and any(k is not None and k is not Ellipsis for k in key):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    full = _expand_ellipsis(key, self.dim())
    # Validate now (a clear IndexError before any view is made).
    basic_index_layout(full, self._shape, self._stride, self._offset)

    def fn(shape, stride, offset, full=full):
        return basic_index_layout(full, shape, stride, offset)
    return strided_view(self, fn, _view_name(full))


def copy_like(src: Any, like: TensorBase) -> TensorBase:
    """``src`` broadcast to ``like``'s shape and converted to its dtype (differentiably)."""
    if isinstance(src, TensorBase):
        out = src.to(like.dtype) if src.dtype is not like.dtype else src
        out = out.expand(like._shape) if out._shape != like._shape else out
        # A plain expand would alias src; inplace() copies the values out anyway.
        if like.requires_grad and not out.requires_grad:
            return out + like * 0
        # src itself (a leaf that requires grad) would hand ``like`` no history:
        # a copy node passes the gradient back to src.
        return out.clone() if out is src and src.requires_grad else out
    return full_like(like, src)


def basic_setitem(self: TensorBase, key: tuple, value: Any) -> None:
    """``self[key] = value`` for a basic ``key``: write ``value`` (broadcast) into the view."""
    if not isinstance(value, TensorBase) and not kernels.is_number(value):
        value = tensor(value, dtype=self.dtype, device=self.device)
    target = basic_getitem(self, key)
    if isinstance(value, TensorBase):
        # PyTorch drops leading size-1 dims of the value first: b[0] = ones(1, 3).
        while value.dim() > target.dim() and value._shape[0] == 1:
            value = value.squeeze(0)
        if broadcast_shapes(value._shape, target._shape) != target._shape:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(value._shape)} "
                               f"cannot be broadcast to indexing result of shape "
                               f"{list(target._shape)}")
    inplace(target, lambda x: copy_like(value, x))


@recorded
def fill_(self: TensorBase, value: Any) -> TensorBase:
    """Write ``value`` (a number or a 0-d tensor) into every element of ``self``."""
    if isinstance(value, TensorBase):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.dim()} dimensions.")
        return inplace(self, lambda x: value.expand(x._shape).to(x.dtype) + x * 0)
    return inplace(self, lambda x: full_like(x, value))


@recorded
def zero_(self: TensorBase) -> TensorBase:
    """Write zeros into every element of ``self``."""
    return fill_(self, 0)


@recorded
def copy_(self: TensorBase, src: TensorBase, non_blocking: bool = False) -> TensorBase:
    """Copy ``src``'s values into ``self`` (broadcasting, casting, differentiable)."""
    if not isinstance(src, TensorBase):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(src).__name__}")
    if src._shape != self._shape:
        src.expand(self._shape)          # raises PyTorch's error if src does not broadcast
    return inplace(self, lambda x: copy_like(src, x))


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(fill_, function=False)
declare(zero_, function=False)
declare(copy_, function=False)

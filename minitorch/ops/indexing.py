"""Indexing: ``t[...]`` and ``t[...] = value``.

*Basic* indexing (ints, slices with steps, ``None``, ``...``) only changes
the header, so ``t[1:, ::2]`` is a view that shares storage with ``t``:

* an int ``i`` in dim d removes that dim and moves the offset by ``i*stride[d]``;
* a slice ``a:b:s`` keeps the dim with size ``ceil((b-a)/s)``, offset
  ``+a*stride[d]`` and stride ``stride[d]*s``;
* ``None`` inserts a dim of size 1; ``...`` stands for all the dims not named.

Assignment ``t[key] = value`` takes the same view and copies ``value`` into
it (broadcasting), so it writes through to every tensor sharing the storage.
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import _raw
from .views import strided_view

__all__ = ["getitem", "setitem", "basic_index_layout", "copy_like"]


def _is_basic(key: tuple) -> bool:
    return all(k is None or k is Ellipsis or isinstance(k, slice) or
               (isinstance(k, int) and not isinstance(k, bool)) or
               (hasattr(k, "__index__") and not isinstance(k, (Tensor, bool, list)))
               for k in key)


def _normalize_key(key: Any) -> tuple:
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


def getitem(self: Tensor, key: Any) -> Tensor:
    """``self[key]``: a view for basic indices."""
    key = _normalize_key(key)
    if not _is_basic(key):
        from . import advanced_indexing
        return advanced_indexing.getitem(self, key)
    if self.dim() == 0 and any(k is not None and k is not Ellipsis for k in key):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    full = _expand_ellipsis(key, self.dim())
    # Validate now (a clear IndexError before any view is made).
    basic_index_layout(full, self._shape, self._stride, self._offset)

    def fn(shape, stride, offset, full=full):
        return basic_index_layout(full, shape, stride, offset)
    return strided_view(self, fn, _view_name(full))


def copy_like(src: Any, like: Tensor) -> Tensor:
    """``src`` broadcast to ``like``'s shape and converted to its dtype (differentiably)."""
    if isinstance(src, Tensor):
        out = src.to(like.dtype) if src.dtype is not like.dtype else src
        out = out.expand(like._shape) if out._shape != like._shape else out
        # A plain expand would alias src; inplace() copies the values out anyway.
        return out + like * 0 if like.requires_grad and not out.requires_grad else out
    from .creation import full_like
    return full_like(like, src)


def setitem(self: Tensor, key: Any, value: Any) -> None:
    """``self[key] = value``: write ``value`` (broadcast) into the selected elements."""
    from .elementwise import inplace
    key = _normalize_key(key)
    if not _is_basic(key):
        from . import advanced_indexing
        advanced_indexing.setitem(self, key, value)
        return
    if not isinstance(value, Tensor) and not _raw.is_number(value):
        from .creation import tensor
        value = tensor(value, dtype=self.dtype, device=self.device)
    target = getitem(self, key)
    if isinstance(value, Tensor):
        from ..layout import broadcast_shapes
        if broadcast_shapes(value._shape, target._shape) != target._shape:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(value._shape)} "
                               f"cannot be broadcast to indexing result of shape "
                               f"{list(target._shape)}")
    inplace(target, lambda x: copy_like(value, x))

"""What every index op shares: checking index tensors, and raw headers and copies.

The index ops (``gather``, ``scatter``, ``index_select``, ``masked_fill``,
``embedding``, advanced indexing, ...) all read or write "at positions given
by an index tensor".  Each one

1. checks the index tensor's dtype and shape, with PyTorch's message;
2. checks that every index is in range (:func:`check_index`) *before* any
   kernel runs: kernels do not bounds-check, so an unchecked index would
   read or write outside the tensor's memory;
3. runs its kernel on a fresh output (the in-place forms ``scatter_`` etc.
   write straight into ``self`` when autograd is not recording, see
   :func:`index_inplace`);
4. has a backward written with the other index ops: the gradient of a
   *read* at some positions is a *write* (an add) at the same positions,
   and vice versa.
"""

from __future__ import annotations

from typing import Any, Callable

from ..autograd import grad_mode
from ..dtype import dtype as dtype_cls, int64
from ..layout import contiguous_strides
from ..tensor_base import TensorBase
from . import kernels
from .elementwise import inplace
from .views import raw_copy


def header(t: TensorBase, shape: tuple, strides: tuple | None = None) -> TensorBase:
    """A new header over ``t``'s storage (no history); contiguous strides by default."""
    return TensorBase._make(t._storage, tuple(shape),
                        contiguous_strides(shape) if strides is None else tuple(strides),
                        t._offset, t.dtype)


def at_least_1d(t: TensorBase) -> TensorBase:
    """A 0-d tensor seen as shape (1,); PyTorch's index ops treat them alike."""
    return header(t, (1,), (1,)) if t.dim() == 0 else t


def fresh(shape: tuple, dt: dtype_cls, device: Any, fill: Any = None) -> TensorBase:
    out = kernels.empty(tuple(shape), dt, device)
    if fill is not None and out.numel():
        kernels.fill(out, fill)
    return out


def zeros_like_grad(g: TensorBase, shape: tuple) -> TensorBase:
    """Differentiable-friendly zeros (a plain new tensor) with ``g``'s dtype and device."""
    return fresh(shape, g.dtype, g.device, 0)


def type_name(dt: dtype_cls) -> str:
    return dt._legacy


def as_index(index: TensorBase) -> TensorBase:
    """``index`` as a contiguous int64 tensor: every kernel sees one index dtype.

    (One dtype means one compiled kernel per data dtype, not two.)
    """
    if index.dtype is not int64:
        index = kernels.cast(index, int64)
    return kernels.contiguous(index)


def index_range(index: TensorBase) -> tuple | None:
    """``(min, max)`` of a contiguous int64 tensor, or ``None`` if it is empty."""
    if index.numel() == 0:
        return None
    return kernels.index_bounds(index)


def check_index(index: TensorBase, size: int, error: Callable[[int], Exception], *,
                negative: bool = False) -> bool:
    """Raise ``error(bad_value)`` unless every index lies in ``[0, size)``.

    With ``negative=True``, ``[-size, 0)`` is allowed too (counting from the
    end).  Returns True if some index is negative (so the caller must wrap).
    This is the guard that keeps kernels, which never bounds-check, inside
    the tensor's memory.
    """
    bounds = index_range(index)
    if bounds is None:
        return False
    lo, hi = bounds
    if hi >= size:
        raise error(hi)
    if lo < (-size if negative else 0):
        raise error(lo)
    return lo < 0


def wrap_index(index: TensorBase, size: int) -> TensorBase:
    """A copy of a (checked) int64 index with negative entries replaced by ``i + size``."""
    out = fresh(index._shape, int64, index.device, 0)
    kernels.add_index_offsets(out, index, size, 1)
    return out


def check_dtype(index: TensorBase, allowed: tuple, error: Callable[[], Exception]) -> None:
    if not isinstance(index, TensorBase):
        raise TypeError(f"expected Tensor as index, but got {type(index).__name__}")
    if index.dtype not in allowed:
        raise error()


def check_writable(t: TensorBase) -> None:
    """In-place writes need one memory location per element (no expanded dims)."""
    if any(st == 0 and n > 1 for n, st in zip(t._shape, t._stride)):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")


def unaliased(src: Any, target: TensorBase) -> Any:
    """``src``, copied if it shares memory with ``target``: a kernel must not read what it
    writes."""
    if isinstance(src, TensorBase) and src._storage is target._storage:
        return raw_copy(src)
    return src


def index_inplace(self: TensorBase, others: tuple, functional: Callable[[TensorBase], TensorBase],
                   write: Callable[[TensorBase], None]) -> TensorBase:
    """Run an in-place index op such as ``scatter_``.

    When autograd records (``self`` or another input requires grad), the op
    runs out of place (``functional``) and ``elementwise.inplace`` stores the
    result into ``self`` and rebases its history, as for ``add_``.
    Otherwise ``write(self)`` runs the kernel straight into ``self``'s memory.
    """
    check_writable(self)
    if grad_mode.STATE.grad_enabled and (self.requires_grad or any(
            isinstance(o, TensorBase) and o.requires_grad for o in others)):
        return inplace(self, functional)
    write(self)
    self._bump_version()
    return self


def dim_size(x: TensorBase, dim: int) -> int:
    return x._shape[dim] if x.dim() else 1


def with_size(shape: Any, d: int, value: int) -> tuple:
    shape = list(shape)
    shape[d] = value
    return tuple(shape)

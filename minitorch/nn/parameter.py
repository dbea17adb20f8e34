"""``Parameter``: a tensor that a ``Module`` registers as learnable.

A Parameter is an ordinary leaf tensor with ``requires_grad=True``; the only
difference is that assigning one to a module attribute (``self.w =
Parameter(...)``) registers it, so ``module.parameters()`` finds it and an
optimizer can update it.  ``UninitializedParameter`` is the placeholder a
lazy module (``LazyLinear``) holds until the first forward tells it the
input size.
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from ..ops.creation import empty

__all__ = ["Parameter", "UninitializedParameter", "Buffer", "UninitializedBuffer"]


class Parameter(Tensor):
    """A learnable tensor; ``Parameter(data)`` shares ``data``'s storage."""

    _is_param = True

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> "Parameter":
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__}")
        p = cls._make(data._storage, data._shape, data._stride, data._offset, data.dtype)
        p._version_counter = data._version_counter
        p.requires_grad = requires_grad
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass

    def __deepcopy__(self, memo: dict) -> "Parameter":
        if id(self) in memo:
            return memo[id(self)]
        out = Parameter(self.detach().clone(), self.requires_grad)
        if self._grad is not None:
            out._grad = self._grad.clone()
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol: Any):
        raise TypeError("Parameters are saved with minitorch.save (no pickled code)")


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (used by lazy modules)."""

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None):
        p = super().__new__(cls, empty(0, dtype=dtype, device=device), requires_grad)
        return p

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        pass

    def materialize(self, shape: tuple, device: Any = None, dtype: Any = None) -> None:
        """Give the parameter a shape: it becomes an ordinary ``Parameter``."""
        data = empty(tuple(shape), dtype=dtype or self.dtype, device=device or self.device)
        self._storage, self._shape, self._stride = data._storage, data._shape, data._stride
        self._offset = 0
        self.__class__ = Parameter

    def __repr__(self) -> str:
        return "<UninitializedParameter>"


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` is true for any tensor that ``Buffer(...)`` marked."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor as a buffer: ``self.stats = nn.Buffer(t)`` registers it.

    Like ``register_buffer``: saved in ``state_dict`` (unless
    ``persistent=False``), moved by ``.to()``, but not a parameter.  The
    result is ``t`` detached (an ordinary tensor), as in PyTorch.
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Any:
        if data is None:
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class UninitializedBuffer(Tensor):
    """A buffer whose shape is not known yet (lazy modules), until ``materialize``."""

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                persistent: bool = True) -> "UninitializedBuffer":
        data = empty(0, dtype=dtype, device=device)
        b = cls._make(data._storage, data._shape, data._stride, data._offset, data.dtype)
        b.persistent = persistent
        b._is_buffer = True
        return b

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                 persistent: bool = True) -> None:
        pass

    def materialize(self, shape: tuple, device: Any = None, dtype: Any = None) -> None:
        """Give the buffer a shape: it becomes an ordinary tensor."""
        data = empty(tuple(shape), dtype=dtype or self.dtype, device=device or self.device)
        self._storage, self._shape, self._stride = data._storage, data._shape, data._stride
        self._offset = 0
        self.__class__ = Tensor

    def __repr__(self) -> str:
        return "<UninitializedBuffer>"

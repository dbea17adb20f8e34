"""``minitorch.Tensor``: the tensor users hold, with every method and operator.

This is the class that ``minitorch.tensor([1., 2.])`` returns.  It adds
behaviour to :class:`~minitorch.tensor_base.TensorBase` (layer 5, the data:
shape, strides, storage, autograd metadata), in the way PyTorch's
``torch/_tensor.py`` subclasses its C++ ``TensorBase``:

* the ops declared with ``method=True`` in :mod:`minitorch.ops` (see
  ``ops/registry.py``) become methods: ``t.exp()`` is ``ops.elementwise.exp(t)``,
  ``t.sum(1)`` is ``ops.reduction.sum(t, 1)``; with ``inplace=True`` also
  ``t.exp_()``, which computes the op and writes the result back into ``t``;
* the class body below declares what is not one op: Python's operators
  (``+``, ``@``, ``[]``, ...), the autograd entry points (``backward``,
  ``register_hook``, ``retain_grad``), dtype and device shorthands
  (``t.double()``, ``t.cuda()``), ``new_*`` factories and ``Tensor(...)``,
  PyTorch's legacy constructor.

The module sits above the ops (it imports them) and below ``nn``.  The ops
themselves never import this class: they make tensors with
``TensorBase._make``, which builds the class registered here with
``result_class=True``.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from . import ops
from .backends.cuda import runtime as cuda_runtime
from .autograd import engine
from .autograd.graph import HookDict, RemovableHandle
from .device import as_device
from .dtype import (ALL_DTYPES, as_dtype, bfloat16, bool_, dtype, float16, float32, float64, int8,
                    int16, int32, int64, uint8)
from .ops import (creation, elementwise, indexing, inplace_views, linalg, tensor_extras,
                  views)
from .ops.registry import INPLACE, METHODS
from .trace_mode import recorded
from .tensor_base import Size, TensorBase, VersionCounter, strided

__all__ = ["Tensor", "Size", "strided", "VersionCounter"]

_LEGACY_DEVICE = {"cpu": "", "cuda": "cuda."}


def _is_operand(other: Any) -> bool:
    """Whether a binary operator handles ``other`` (else Python tries the reflected one)."""
    return isinstance(other, TensorBase) or ops.kernels.is_number(other)


def _matrix_transpose(t: TensorBase, name: str, batches: bool) -> TensorBase:
    """``t.mT``/``t.mH`` (``batches``: any dims before the matrix) and ``t.H``: the last two
    dims swapped, as PyTorch checks them (a 0-d tensor is itself, with a warning)."""
    d = t.dim()
    if d == 0:
        instead = ("This function is the identity in these cases." if name == "mT"
                   else "Consider using x.conj().")
        warnings.warn(f"Tensor.{name} is deprecated on 0-D tensors. {instead}", UserWarning,
                      stacklevel=3)
        return views.permute(t, ())
    if d == 1 or (not batches and d != 2):
        what = "matrices or batches of matrices" if batches else "matrices (2-D tensors)"
        raise RuntimeError(f"tensor.{name} is only supported on {what}. Got {d}-D tensor.")
    return views.transpose(t, -2, -1)


def _inplace_method(fn: Callable, name: str) -> Callable:
    """``t.name_(...)``: run the out-of-place op ``fn`` and write the result into ``t``."""
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return elementwise.inplace(self, lambda x: fn(x, *args, **kwargs))
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place version of :meth:`Tensor.{name}`."
    # A compiler's trace records the whole in-place call (trace_mode.recorded).
    return recorded(method)


def _with_declared_ops(cls: type) -> type:
    """Bind every op declared with ``method=True``/``inplace=True`` (ops/registry.py).

    A method written in the class body wins over a declared op of the same name.
    """
    for name, fn in METHODS.items():
        if name not in cls.__dict__:
            setattr(cls, name, fn)
    for name, fn in INPLACE.items():
        if name + "_" not in cls.__dict__:
            setattr(cls, name + "_", _inplace_method(fn, name))
    return cls


@_with_declared_ops
class Tensor(TensorBase, result_class=True):
    """An n-dimensional array with automatic differentiation.

    Create tensors with factory functions (``minitorch.tensor``,
    ``minitorch.zeros``, ...).  Calling ``Tensor(...)`` directly is PyTorch's
    *legacy constructor*: ``Tensor([1, 2])`` makes a float32 tensor from data,
    ``Tensor(2, 3)`` an uninitialised float32 tensor of shape (2, 3), and
    ``Tensor(storage)`` a tensor over an existing storage.
    """

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any):
        if cls is not Tensor:                 # a subclass (Parameter) builds itself
            return object.__new__(cls)
        return creation.legacy_new(*args, **kwargs)

    # -- autograd ------------------------------------------------------------
    @property
    def grad_fn(self):
        """The node that computes this tensor's gradient (None for a leaf).

        A view's history is stale once its base was changed in place after
        the view's node was recorded (``v = y[0]; y.mul_(2)``): then, as in
        PyTorch, the view gets a fresh node reading its region of the base's
        new history (``AsStridedBackward0``).
        """
        fn = self._grad_fn
        if (fn is not None and self._base is not None
                and self._grad_fn_version != self._version_counter.value):
            fn = inplace_views.refresh_view_grad_fn(self)
        return fn

    @grad_fn.setter
    def grad_fn(self, node) -> None:
        self._grad_fn = node
        self._grad_fn_version = self._version_counter.value

    def backward(self, gradient: Any = None, retain_graph: Any = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Compute d(self)/d(leaf) for every leaf and add it into ``leaf.grad``."""
        engine.backward(self, gradient, retain_graph, create_graph, inputs)

    @recorded            # hooks registered inside a compiled function: on every replay
    def register_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new grad."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self.grad_fn is not None:
            return self.grad_fn._add_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = HookDict()
        handle = RemovableHandle(self._hooks)
        self._hooks[handle.id] = hook
        return handle

    @recorded
    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward (a no-op on leaves)."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        self.grad_fn._add_retain(self._output_nr, self)

    def detach_(self) -> Tensor:
        """Make this tensor a leaf that does not require grad, in place."""
        if self._base is not None and self._base.requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    # -- operators -------------------------------------------------------------
    # A binary operator returns NotImplemented for an operand it does not know,
    # so that Python tries the other operand's reflected operator.
    def __add__(self, other: Any) -> Tensor:
        return elementwise.add(self, other) if _is_operand(other) else NotImplemented

    __radd__ = __add__

    def __sub__(self, other: Any) -> Tensor:
        return elementwise.sub(self, other) if _is_operand(other) else NotImplemented

    def __rsub__(self, other: Any) -> Tensor:
        return elementwise.sub(other, self) if _is_operand(other) else NotImplemented

    def __mul__(self, other: Any) -> Tensor:
        return elementwise.mul(self, other) if _is_operand(other) else NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Tensor:
        return elementwise.div(self, other) if _is_operand(other) else NotImplemented

    def __rtruediv__(self, other: Any) -> Tensor:
        return elementwise.div(other, self) if _is_operand(other) else NotImplemented

    def __floordiv__(self, other: Any) -> Tensor:
        return elementwise.floor_divide(self, other) if _is_operand(other) else NotImplemented

    def __rfloordiv__(self, other: Any) -> Tensor:
        return elementwise.floor_divide(other, self) if _is_operand(other) else NotImplemented

    def __mod__(self, other: Any) -> Tensor:
        return elementwise.remainder(self, other) if _is_operand(other) else NotImplemented

    def __rmod__(self, other: Any) -> Tensor:
        return elementwise.remainder(other, self) if _is_operand(other) else NotImplemented

    def __pow__(self, other: Any) -> Tensor:
        return elementwise.pow(self, other) if _is_operand(other) else NotImplemented

    def __rpow__(self, other: Any) -> Tensor:
        return elementwise.pow(other, self) if _is_operand(other) else NotImplemented

    def __matmul__(self, other: Any) -> Tensor:
        return linalg.matmul(self, other) if isinstance(other, TensorBase) else NotImplemented

    def __rmatmul__(self, other: Any) -> Tensor:
        return linalg.matmul(other, self)

    def __and__(self, other: Any) -> Tensor:
        return elementwise.bitwise_and(self, other) if _is_operand(other) else NotImplemented

    __rand__ = __and__

    def __or__(self, other: Any) -> Tensor:
        return elementwise.bitwise_or(self, other) if _is_operand(other) else NotImplemented

    __ror__ = __or__

    def __xor__(self, other: Any) -> Tensor:
        return elementwise.bitwise_xor(self, other) if _is_operand(other) else NotImplemented

    __rxor__ = __xor__

    # ``x << 1``, ``2 >> x``: integer shifts.  A reflected operand is a number (a tensor
    # would have run its own operator): a 0-d tensor of x's dtype, as a wrapped number.
    def __lshift__(self, other: Any) -> Tensor:
        return tensor_extras.bitwise_left_shift(self, other) if _is_operand(other) \
            else NotImplemented

    def __rlshift__(self, other: Any) -> Tensor:
        return tensor_extras.bitwise_left_shift(self.new_full((), other), self) \
            if _is_operand(other) else NotImplemented

    def __rshift__(self, other: Any) -> Tensor:
        return tensor_extras.bitwise_right_shift(self, other) if _is_operand(other) \
            else NotImplemented

    def __rrshift__(self, other: Any) -> Tensor:
        return tensor_extras.bitwise_right_shift(self.new_full((), other), self) \
            if _is_operand(other) else NotImplemented

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return elementwise.eq(self, other) if _is_operand(other) else NotImplemented

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return elementwise.ne(self, other) if _is_operand(other) else NotImplemented

    def __lt__(self, other: Any) -> Tensor:
        return elementwise.lt(self, other) if _is_operand(other) else NotImplemented

    def __le__(self, other: Any) -> Tensor:
        return elementwise.le(self, other) if _is_operand(other) else NotImplemented

    def __gt__(self, other: Any) -> Tensor:
        return elementwise.gt(self, other) if _is_operand(other) else NotImplemented

    def __ge__(self, other: Any) -> Tensor:
        return elementwise.ge(self, other) if _is_operand(other) else NotImplemented

    # Defining __eq__ would make the class unhashable; tensors hash by identity.
    __hash__ = TensorBase.__hash__

    def __neg__(self) -> Tensor:
        return elementwise.neg(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return elementwise.abs(self)

    def __invert__(self) -> Tensor:
        if self.dtype.is_floating_point:
            raise TypeError("~ (operator.invert) is only implemented on integer and "
                            "Boolean-type tensors")
        return elementwise.bitwise_not(self)

    # In-place operators: ``t += 1`` is ``t.add_(1)``.
    def __iadd__(self, other: Any) -> Tensor:
        return self.add_(other)

    def __isub__(self, other: Any) -> Tensor:
        return self.sub_(other)

    def __imul__(self, other: Any) -> Tensor:
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> Tensor:
        return self.div_(other)

    def __ipow__(self, other: Any) -> Tensor:
        return self.pow_(other)

    def __imod__(self, other: Any) -> Tensor:
        return self.remainder_(other)

    def __ifloordiv__(self, other: Any) -> Tensor:
        return self.floor_divide_(other)

    def __iand__(self, other: Any) -> Tensor:
        return elementwise.inplace(self, lambda x: elementwise.bitwise_and(x, other))

    def __ior__(self, other: Any) -> Tensor:
        return elementwise.inplace(self, lambda x: elementwise.bitwise_or(x, other))

    def __ilshift__(self, other: Any) -> Tensor:
        return elementwise.inplace(self, lambda x: tensor_extras.bitwise_left_shift(x, other))

    def __irshift__(self, other: Any) -> Tensor:
        return elementwise.inplace(self, lambda x: tensor_extras.bitwise_right_shift(x, other))

    def __getitem__(self, key: Any) -> Tensor:
        return indexing.getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        indexing.setitem(self, key, value)

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(views.unbind(self, 0))

    def __deepcopy__(self, memo: dict) -> Tensor:
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        out = self.clone().detach()
        out._requires_grad = self._requires_grad
        if self._grad is not None:
            out._grad = self._grad.clone()
        memo[id(self)] = out
        return out

    # -- methods that are not one op ------------------------------------------
    def apply_(self, callable: Callable) -> Tensor:
        """Replace each element ``v`` by ``callable(v)`` (a Python number), in place.

        CPU only, as in PyTorch, and slow: one Python call per element.  Nothing is
        recorded for autograd beyond the in-place write itself.
        """
        return self._elementwise_python("apply_", lambda values: [callable(v) for v in values])

    def map_(self, tensor: Tensor, callable: Callable) -> Tensor:
        """Replace each element ``v`` by ``callable(v, w)``, ``w`` the element of ``tensor``
        (broadcast to this tensor's shape) at the same place, in place (CPU only)."""
        others = views.expand(tensor, self._shape).reshape(-1).tolist() \
            if isinstance(tensor, TensorBase) else None
        if others is None:
            raise TypeError(f"map_(): argument 'tensor' must be Tensor, not "
                            f"{type(tensor).__name__}")
        return self._elementwise_python(
            "map_", lambda values: [callable(v, w) for v, w in zip(values, others)], tensor)

    def _elementwise_python(self, name: str, compute: Callable, *others: Any) -> Tensor:
        for t in (self, *others):
            if t.device.type != "cpu":
                raise TypeError(f"{name} is only implemented on CPU tensors")
        values = compute(self.reshape(-1).tolist())
        self.copy_(creation.tensor(values, dtype=self.dtype).reshape(self._shape))
        return self

    def where(self, condition: Tensor, other: Any) -> Tensor:
        """``self`` where ``condition`` holds, else ``other`` (``minitorch.where(condition, self, other)``)."""
        return elementwise.where(condition, self, other)

    def view_as(self, other: Tensor) -> Tensor:
        return views.view(self, other._shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return views.reshape(self, other._shape)

    def expand_as(self, other: Tensor) -> Tensor:
        return views.expand(self, other._shape)

    @property
    def T(self) -> Tensor:  # noqa: N802 (PyTorch's name)
        """All dims reversed (the transpose of a matrix)."""
        return views.permute(self, tuple(reversed(range(self.dim()))))

    @property
    def mT(self) -> Tensor:  # noqa: N802
        """The last two dims swapped (a batch of transposed matrices)."""
        return _matrix_transpose(self, "mT", batches=True)

    # The conjugate transposes: minitorch has no complex numbers, so they are the transposes,
    # with PyTorch's checks.
    @property
    def mH(self) -> Tensor:  # noqa: N802
        """The last two dims swapped (with no complex numbers, :attr:`mT`)."""
        return _matrix_transpose(self, "mH", batches=True)

    @property
    def H(self) -> Tensor:  # noqa: N802
        """The transpose of a matrix (with no complex numbers, :attr:`T` of a 2-D tensor)."""
        return _matrix_transpose(self, "H", batches=False)

    # -- dtype and device shorthands: ``t.double()`` is ``t.to(float64)`` -----
    def is_pinned(self, device: Any = None) -> bool:
        """Is this tensor in page-locked ("pinned") host memory?  Never: minitorch's CPU
        tensors are NumPy memory, which the CUDA backend copies from as it is."""
        return False

    def pin_memory(self, device: Any = None) -> Tensor:
        """PyTorch copies a CPU tensor into page-locked memory, for faster copies to a GPU.

        minitorch copies to the GPU from ordinary memory, so there is nothing to do: the
        tensor itself, where a GPU (or the simulator) is there to copy to; PyTorch's error
        where none is, and for a tensor already on a GPU.
        """
        if self.device.type != "cpu":
            raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be "
                               f"pinned")
        if not cuda_runtime.is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return self

    def cpu(self, memory_format: Any = None) -> Tensor:
        return self.to("cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False,
             memory_format: Any = None) -> Tensor:
        if device is None:
            device = "cuda"
        elif isinstance(device, int):
            device = f"cuda:{device}"
        return self.to(as_device(device))

    def float(self, memory_format: Any = None) -> Tensor:
        return self.to(float32)

    def double(self, memory_format: Any = None) -> Tensor:
        return self.to(float64)

    def half(self, memory_format: Any = None) -> Tensor:
        return self.to(float16)

    def bfloat16(self, memory_format: Any = None) -> Tensor:
        return self.to(bfloat16)

    def long(self, memory_format: Any = None) -> Tensor:
        return self.to(int64)

    def int(self, memory_format: Any = None) -> Tensor:
        return self.to(int32)

    def short(self, memory_format: Any = None) -> Tensor:
        return self.to(int16)

    def char(self, memory_format: Any = None) -> Tensor:
        return self.to(int8)

    def byte(self, memory_format: Any = None) -> Tensor:
        return self.to(uint8)

    def bool(self, memory_format: Any = None) -> Tensor:
        return self.to(bool_)

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(other.dtype)

    def type(self, dtype: Any = None, non_blocking: bool = False):
        """Without an argument, the legacy type name, such as ``'torch.FloatTensor'``.

        The name says ``torch`` as PyTorch's does, because that is the string
        code written for PyTorch compares against (see docs/differences.md).
        """
        if dtype is None:
            return f"torch.{_LEGACY_DEVICE[self.device.type]}{self.dtype._legacy}Tensor"
        target = _type_string_to_dtype(dtype)
        kind = getattr(dtype, "_device_type", None)       # a legacy type such as FloatTensor
        if kind is None and isinstance(dtype, str):
            kind = "cuda" if dtype.split(".")[-2:-1] == ["cuda"] else "cpu"
        if kind is not None and kind != self.device.type:
            return self.to(kind, target)
        return self.to(target)

    # -- new_* factories: same dtype and device as self unless given ----------
    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False, **kwargs: Any) -> Tensor:
        return creation.zeros(*size, dtype=dtype or self.dtype, device=device or self.device,
                              requires_grad=requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False, **kwargs: Any) -> Tensor:
        return creation.ones(*size, dtype=dtype or self.dtype, device=device or self.device,
                             requires_grad=requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False, **kwargs: Any) -> Tensor:
        return creation.empty(*size, dtype=dtype or self.dtype, device=device or self.device,
                              requires_grad=requires_grad)

    def new_full(self, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:
        return creation.full(size, fill_value, dtype=dtype or self.dtype,
                             device=device or self.device, requires_grad=requires_grad)

    def new_tensor(self, data: Any, *, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:
        return creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                               requires_grad=requires_grad)


def _type_string_to_dtype(name: Any) -> dtype:
    """The dtype of a legacy type name ('torch.FloatTensor'), legacy type or dtype."""
    if isinstance(name, str):
        # Only legacy names such as 'torch.FloatTensor' (or 'torch.cuda.FloatTensor').
        legacy = name.split(".")[-1]
        for d in ALL_DTYPES:
            if legacy == d._legacy + "Tensor":
                return d
        raise ValueError(f"invalid type: '{name}'")
    if isinstance(getattr(name, "dtype", None), dtype):      # a legacy type: FloatTensor
        return name.dtype
    return as_dtype(name)

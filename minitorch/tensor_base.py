"""Layer 5: ``TensorBase``, a header over a storage plus autograd metadata.

The header says how to read the storage:

* ``shape``  - the size of each dimension,
* ``stride`` - how many storage elements to step per index in each dimension,
* ``storage_offset`` - where element ``(0, 0, ...)`` lives,
* ``dtype`` and ``device``.

The autograd metadata says how the tensor was made: ``grad_fn`` (the graph
node that computes its gradient; ``None`` for a leaf), ``requires_grad``,
``grad``, and a *version counter* shared with every view of the same data,
bumped by each in-place change so that autograd can tell when a tensor it
saved for backward was modified.

This module defines the data structure only, as PyTorch's C++
``TensorBase`` does.  The maths (``t + 1``, ``t.sum()``, ``t.view(...)``) is
defined as functions in :mod:`minitorch.ops` (layer 7), which work on
``TensorBase`` objects; the public ``minitorch.Tensor`` (``minitorch/tensor.py``,
above the ops) subclasses ``TensorBase`` and declares those functions as its
methods.  Every tensor the ops make is a ``minitorch.Tensor``: see
``TensorBase.__init_subclass__``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import _printing
from .backends import Operand, get_backend
from .device import CPU, device
from .dtype import bool_, dtype, int64
from .layout import contiguous_strides, is_contiguous, numel
from .memory_format import channels_last
from .storage import TypedStorage, UntypedStorage
from .trace_mode import STATE as TRACE, note_data_read, recorded
from .dtype import get_default_dtype
from .layout import normalize_dim

__all__ = ["TensorBase", "VersionCounter", "Size", "strided"]


class VersionCounter:
    """How many times the data was modified in place; shared by a tensor and its views."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class TensorBase:
    """The data of an n-dimensional array: a header over a storage, and autograd metadata.

    ``minitorch.Tensor`` adds the methods (``minitorch/tensor.py``).  Tensors are
    made by :meth:`_make` (a header over a storage) and :meth:`_empty` (a fresh
    buffer); both build the class registered with ``result_class=True``.
    """

    __slots__ = ("_storage", "_shape", "_stride", "_offset", "dtype", "device",
                 "_requires_grad", "_grad", "_grad_fn", "_grad_fn_version", "_output_nr",
                 "_version_counter",
                 "_base", "_hooks", "_retains_grad", "_accumulator", "__weakref__",
                 "__dict__")

    # Makes NumPy defer to our operators in ``ndarray + tensor``.
    __array_priority__ = 1000

    # The class that ``TensorBase._make`` builds: ``minitorch.Tensor``, registered by
    # ``class Tensor(TensorBase, result_class=True)``.  (The ops below that class
    # make tensors without importing it, as PyTorch's C++ ops make Python tensors.)
    _result_class: type = None  # type: ignore[assignment]

    def __init_subclass__(cls, result_class: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if result_class:
            TensorBase._result_class = cls

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass  # all work happens in __new__ / _make

    # -- construction ------------------------------------------------------
    @classmethod
    def _make(cls, storage: UntypedStorage, shape: tuple, stride: tuple, offset: int,
              dt: dtype, base: "TensorBase | None" = None) -> "TensorBase":
        """A new header over ``storage`` (no autograd history)."""
        t = object.__new__(TensorBase._result_class if cls is TensorBase else cls)
        t._storage = storage
        t._shape = shape
        t._stride = stride
        t._offset = offset
        t.dtype = dt
        t.device = storage.device
        t._requires_grad = False
        t._grad = None
        t._grad_fn = None
        t._output_nr = 0
        t._version_counter = base._version_counter if base is not None else VersionCounter()
        t._grad_fn_version = t._version_counter.value
        t._base = None if base is None else (base._base if base._base is not None else base)
        t._hooks = None
        t._retains_grad = False
        t._accumulator = None
        return t

    @classmethod
    def _empty(cls, shape: tuple, dt: dtype, dev: device = CPU,
               strides: tuple | None = None) -> "TensorBase":
        """A new tensor with uninitialised elements: contiguous, or with the given
        dense ``strides`` (a permutation of a contiguous layout, same storage size)."""
        backend = get_backend(dev)
        data = backend.allocate(numel(shape), dt.np)
        return cls._make(UntypedStorage(data, dev), shape,
                         contiguous_strides(shape) if strides is None else strides, 0, dt)

    def _alias(self) -> "TensorBase":
        """A new header identical to ``self`` (shares storage and version)."""
        return TensorBase._make(self._storage, self._shape, self._stride, self._offset,
                                self.dtype, base=self)

    @property
    def data(self) -> "TensorBase":
        """The same data without history, and with its own version counter (legacy ``.data``)."""
        return TensorBase._make(self._storage, self._shape, self._stride, self._offset,
                                self.dtype)

    @data.setter
    def data(self, value: "TensorBase") -> None:
        self._storage, self._shape, self._stride = value._storage, value._shape, value._stride
        self._offset, self.dtype = value._offset, value.dtype

    def _operand(self) -> Operand:
        """What a kernel needs: the buffer and the header that reads it."""
        return Operand(self._storage._data, self._shape, self._stride, self._offset)

    @property
    def _backend(self):
        return get_backend(self.device)

    # -- the header --------------------------------------------------------
    @property
    def shape(self) -> "Size":
        return Size(self._shape)

    def size(self, dim: int | None = None):
        """The shape, or the size of one dimension."""
        if dim is None:
            return Size(self._shape)
        return self._shape[self._dim_index(dim)]

    def stride(self, dim: int | None = None):
        """Storage elements to step per index, for each dimension (or one)."""
        if dim is None:
            return self._stride
        return self._stride[self._dim_index(dim)]

    def _dim_index(self, dim: int) -> int:
        if not self._shape:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return normalize_dim(dim, len(self._shape))

    def storage_offset(self) -> int:
        return self._offset

    def dim(self) -> int:
        return len(self._shape)

    ndimension = dim

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def numel(self) -> int:
        return numel(self._shape)

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """Row-major with no gaps (or, with ``memory_format=channels_last``, NHWC)."""
        if memory_format is channels_last:
            if len(self._shape) != 4:
                return False
            order = (0, 2, 3, 1)
            return is_contiguous(tuple(self._shape[d] for d in order),
                                 tuple(self._stride[d] for d in order))
        return is_contiguous(self._shape, self._stride)

    def untyped_storage(self) -> UntypedStorage:
        return self._storage

    def storage(self) -> TypedStorage:
        """The legacy typed view of the storage (PyTorch warns it is deprecated)."""
        return TypedStorage(self._storage)

    def data_ptr(self) -> int:
        """Address of the first element: the storage's address plus the offset."""
        return self._storage.data_ptr() + self._offset * self.dtype.itemsize

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded operation."""
        return self.grad_fn is None

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return False

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    @property
    def _version(self) -> int:
        return self._version_counter.value

    def _bump_version(self) -> None:
        self._version_counter.value += 1

    @property
    def layout(self) -> "LayoutType":
        return strided

    def get_device(self) -> int:
        return -1 if self.device.type == "cpu" else self.device.index

    # -- autograd metadata -------------------------------------------------
    @property
    def grad_fn(self):
        """The node that computes this tensor's gradient (None for a leaf).

        (``minitorch.Tensor`` refines this for views whose base was changed in
        place: see ``Tensor.grad_fn``.)
        """
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, node) -> None:
        self._grad_fn = node
        self._grad_fn_version = self._version_counter.value

    @property
    def requires_grad(self) -> bool:
        # (``_grad_fn`` is None exactly when the ``grad_fn`` property is.)
        return self._requires_grad or self._grad_fn is not None

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None:
            if not value:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return
        if value and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        self._requires_grad = bool(value)

    @recorded            # a compiler's trace replays the flag's change
    def requires_grad_(self, requires_grad: bool = True) -> "TensorBase":
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> "TensorBase | None":
        if self._grad is None and self.grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: "TensorBase | None") -> None:
        if value is not None:
            if not isinstance(value, TensorBase):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got "
                                f"grad of type {type(value).__name__}")
            if value._shape != self._shape:
                raise RuntimeError(f"assigned grad has data of a different size: grad is "
                                   f"{list(value._shape)}, tensor is {list(self._shape)}")
            if value.dtype is not self.dtype:
                raise RuntimeError(f"assigned grad has data of a different type: "
                                   f"{value.dtype} vs {self.dtype}")
            if value.device != self.device:
                raise RuntimeError("assigned grad has data located on a different device")
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def _is_view(self) -> bool:
        return self._base is not None

    def _is_view_of_same(self) -> bool:
        return self._base is not None

    # -- conversion to Python and NumPy ------------------------------------
    def _host_array(self) -> np.ndarray:
        """The elements as a NumPy array (a view on the CPU, a copy from a GPU)."""
        if TRACE.recorder is not None:
            note_data_read(self)          # a compiler's trace now depends on these values
        op = self._operand()
        if self.device.type == "cpu":
            return self._backend.numpy_view(op)
        return self._backend.to_numpy(op)

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """A NumPy array sharing this tensor's memory (CPU tensors only)."""
        if self.dtype.name == "bfloat16":
            raise TypeError("Got unsupported ScalarType BFloat16")      # NumPy has no bfloat16
        if self.device.type != "cpu":
            if not force:
                raise TypeError(
                    f"can't convert {self.device} device type tensor to numpy. Use "
                    "Tensor.cpu() to copy the tensor to host memory first.")
            return self._host_array()
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._host_array()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self.dtype.name == "bfloat16":
            raise TypeError("Got unsupported ScalarType BFloat16")
        if self.device.type != "cpu":
            raise TypeError(
                f"can't convert {self.device} device type tensor to numpy. Use "
                "Tensor.cpu() to copy the tensor to host memory first.")
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        arr = self._host_array()
        if dtype is not None:
            arr = arr.astype(dtype)
        return arr

    def tolist(self) -> Any:
        """The elements as (nested) Python lists of Python numbers."""
        return self._host_array().tolist()

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted "
                               "to Scalar")
        return self._host_array().reshape(()).item()

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is "
                               "ambiguous" if self.numel() > 1 else
                               "Boolean value of Tensor with no values is ambiguous")
        return bool(self.item())

    def __float__(self) -> float:
        return float(self._scalar_for_conversion("float"))

    def __int__(self) -> int:
        return int(self._scalar_for_conversion("int"))

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.dtype is bool_ or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to "
                            "an index")
        return int(self.item())

    def _scalar_for_conversion(self, kind: str):
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __complex__(self) -> complex:
        return complex(self._scalar_for_conversion("complex"))

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __hash__(self) -> int:
        return id(self)

    def __reduce_ex__(self, protocol):
        raise TypeError("minitorch tensors are saved with minitorch.save, which stores no "
                        "pickled code; pickling a Tensor is not supported")

    # -- printing ------------------------------------------------------------
    def __repr__(self, *, tensor_contents: Any = None) -> str:
        return _format(self)

    def __str__(self) -> str:
        return _format(self)

    def __format__(self, spec: str) -> str:
        if self.dim() == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)   # TypeError for a non-empty spec, like PyTorch


class LayoutType:
    """How a tensor's elements are laid out; minitorch has only ``strided``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"minitorch.{self.name}"


strided = LayoutType("strided")


class Size(tuple):
    """The shape of a tensor: a tuple of ints that prints as ``minitorch.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"minitorch.Size({list(self)})"

    def numel(self) -> int:
        return numel(self)

    def __getitem__(self, key):
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


def _format(t: TensorBase) -> str:
    """PyTorch's repr: ``tensor([1., 2.], requires_grad=True)``."""
    kind = "float" if t.dtype.is_floating_point else ("bool" if t.dtype is bool_ else "int")
    values = t._host_array()
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default_shown = (_default_float(), int64, bool_)
    if t.numel() == 0:
        if t.dtype is not _default_float():
            suffixes.append(f"dtype={t.dtype}")
    elif t.dtype not in default_shown:
        suffixes.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    prefix = "Parameter containing:\ntensor(" if getattr(t, "_is_param", False) else "tensor("
    return _printing.format_tensor(values, kind=kind, suffixes=suffixes, prefix=prefix)


def _default_float() -> dtype:
    return get_default_dtype()

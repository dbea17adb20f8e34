"""Creation ops: ``tensor``, ``zeros``, ``arange``, ``eye``, the ``*_like`` forms, and
``Tensor(...)``, the legacy constructor.

Every factory takes ``dtype``, ``device`` and ``requires_grad`` keywords.
The result is a leaf: it has no ``grad_fn``.  Random factories (``rand``,
``randn``, ...) are in ``ops/sampling.py``.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..device import as_device
from ..dtype import as_dtype, bfloat16, bool_, from_numpy_dtype, get_default_dtype, int64
from .bfloat16 import round_array as round_bfloat16_array
from ..layout import check_shape, contiguous_strides, numel
from ..storage import TypedStorage, UntypedStorage
from ..tensor_base import Size, TensorBase
from ..trace_mode import recorded   # factories join a compiler's trace
from . import kernels
from .registry import declare
from ..layout import storage_span

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "eye",
           "arange", "linspace", "logspace", "zeros_like", "ones_like", "full_like",
           "empty_like", "empty_strided", "scalar_tensor", "asarray", "legacy_new",
           "size_arg", "new_leaf", "like_layout"]


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def size_arg(size: Sequence) -> tuple:
    """A factory's sizes, given as ``f(2, 3)`` or ``f((2, 3))``, as a checked shape tuple."""
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    return check_shape(size)


def new_leaf(t: TensorBase, requires_grad: bool) -> TensorBase:
    """A factory's result: a leaf, requiring grad if asked."""
    if requires_grad:
        t.requires_grad_(True)
    return t


def _from_host(arr: np.ndarray, dev: Any, dt: Any = None) -> TensorBase:
    """A tensor that owns a contiguous copy (on CPU: maybe the array itself) of ``arr``.

    Its dtype is ``arr``'s, or ``dt`` (bfloat16: ``arr``'s values rounded to it).
    """
    # (np.ascontiguousarray would turn a 0-d array into 1-d)
    arr = arr if arr.flags.c_contiguous else arr.copy()
    if dt is bfloat16:
        arr = round_bfloat16_array(arr)
    else:
        dt = from_numpy_dtype(arr.dtype)
    data = kernels.from_host(arr.reshape(-1), dev)
    return TensorBase._make(UntypedStorage(data, dev), arr.shape, contiguous_strides(arr.shape), 0,
                        dt)


def _infer_data(data: Any, exact: bool = False) -> np.ndarray:
    """Nested Python lists/numbers/tensors -> a NumPy array with PyTorch's dtype choice.

    Python floats become the default float dtype, NumPy scalars keep their
    own dtype.  With ``exact=True`` (the caller casts to a requested dtype
    afterwards) Python floats are kept in float64, so that
    ``tensor([0.1], dtype=float64)`` is not rounded through float32.
    """
    if isinstance(data, TensorBase):
        return np.array(data._host_array())
    if isinstance(data, np.ndarray):
        return data
    if isinstance(data, (list, tuple)):
        items = [_infer_item(x) for x in data]
        if any(isinstance(x, TensorBase) for x in data) and any(
                isinstance(x, TensorBase) and x.dim() > 0 for x in data):
            raise ValueError("only one element tensors can be converted to Python scalars")
        return _nested_array(items, exact)
    if isinstance(data, (bool, np.bool_)):
        return np.array(bool(data))
    if isinstance(data, (np.integer, np.floating)):
        return np.array(data)
    if isinstance(data, int):
        return np.array(int(data), dtype=np.int64)
    if isinstance(data, float):
        return np.array(float(data), dtype=np.float64 if exact else get_default_dtype().np)
    if isinstance(data, complex):
        raise TypeError("complex tensors are not supported by minitorch")
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _infer_item(x: Any) -> Any:
    if isinstance(x, TensorBase):
        return x.item()
    return x


def _numpy_float_types(items: Any, found: set) -> set:
    """The dtypes of NumPy floating scalars and arrays inside nested lists."""
    for x in items:
        if isinstance(x, (list, tuple)):
            _numpy_float_types(x, found)
        elif isinstance(x, (np.floating, np.ndarray)) and x.dtype.kind == "f":
            found.add(x.dtype)
    return found


def _nested_array(items: list, exact: bool = False) -> np.ndarray:
    try:
        arr = np.array(items)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal length lists: {e}") from None
    if arr.dtype == object:
        raise ValueError("too many dimensions or ragged nested sequence: every sublist must "
                         "have the same length")
    if arr.dtype.kind == "f" and not exact:
        # Python floats give the default dtype; NumPy float64 scalars win over it.
        arr = arr.astype(np.result_type(get_default_dtype().np,
                                        *_numpy_float_types(items, set())))
    elif arr.dtype.kind in "iu":
        arr = arr.astype(np.int64)
    elif arr.dtype.kind == "U" or arr.dtype.kind == "S":
        raise TypeError("new(): invalid data type 'str'")
    if arr.size == 0 and arr.dtype.kind == "f" and not exact:
        arr = arr.astype(get_default_dtype().np)
    return arr


# ---------------------------------------------------------------------------
# from data
# ---------------------------------------------------------------------------
@recorded
def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> TensorBase:
    """A new tensor holding a *copy* of ``data`` (nested lists, numbers, NumPy arrays).

    Python ints give int64, floats the default float dtype, bools bool; a
    NumPy array keeps its dtype.
    """
    if isinstance(data, TensorBase):
        import warnings
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.clone().detach() or sourceTensor.clone().detach()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    arr = _infer_data(data, exact=dtype is not None)
    if dtype is not None:
        arr = arr.astype(as_dtype(dtype).np)
    from_numpy_dtype(arr.dtype)   # raises TypeError for unsupported NumPy dtypes
    out = _from_host(np.array(arr, copy=True), as_device(device),
                     as_dtype(dtype) if dtype is not None else None)
    return new_leaf(out, requires_grad)


@recorded
def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> TensorBase:
    return tensor(s, dtype=dtype or get_default_dtype(), device=device,
                  requires_grad=requires_grad)


@recorded
def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> TensorBase:
    """Like ``tensor`` but shares memory with a tensor or NumPy array when it can."""
    dt = as_dtype(dtype) if dtype is not None else None
    dev = as_device(device) if device is not None else None
    if isinstance(data, TensorBase):
        out = data
        if dt is not None and dt is not data.dtype:
            out = out.to(dt)
        if dev is not None and dev != out.device:
            out = out.to(dev)
        return out
    if isinstance(data, np.ndarray) and (dev is None or dev.type == "cpu"):
        out = from_numpy(data)
        return out.to(dt) if dt is not None and dt is not out.dtype else out
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray: np.ndarray) -> TensorBase:
    """A tensor sharing memory with a NumPy array: writes to one show in the other."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dt = from_numpy_dtype(ndarray.dtype)
    item = ndarray.itemsize
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    if any(s % item for s in ndarray.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    strides = tuple(s // item for s in ndarray.strides)
    if ndarray.size == 0:
        buf = np.empty(0, ndarray.dtype)
        return TensorBase._make(UntypedStorage(buf), ndarray.shape, contiguous_strides(ndarray.shape),
                            0, dt)
    span = 1 + sum((n - 1) * s for n, s in zip(ndarray.shape, strides))
    # A flat view of the memory the array covers, so the storage is shared.
    flat = np.lib.stride_tricks.as_strided(ndarray, shape=(span,), strides=(item,))
    t = TensorBase._make(UntypedStorage(flat), tuple(ndarray.shape), strides, 0, dt)
    t._numpy_owner = ndarray  # keep the array alive as long as the tensor
    return t


# ---------------------------------------------------------------------------
# filled tensors
# ---------------------------------------------------------------------------
def _factory(size: tuple, dt: Any, device: Any, fill: Any, strides: tuple | None = None
             ) -> TensorBase:
    dt = as_dtype(dt) if dt is not None else get_default_dtype()
    dev = as_device(device)
    out = TensorBase._empty(size, dt, dev, strides)
    if fill is not None and out.numel():
        kernels.fill(out, fill)
    return out


@recorded
def zeros(*size: Any, out: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> TensorBase:
    return new_leaf(_factory(size_arg(size), dtype, device, 0), requires_grad)


@recorded
def ones(*size: Any, out: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> TensorBase:
    return new_leaf(_factory(size_arg(size), dtype, device, 1), requires_grad)


@recorded
def empty(*size: Any, out: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, layout: Any = None, pin_memory: bool = False,
          memory_format: Any = None) -> TensorBase:
    return new_leaf(_factory(size_arg(size), dtype, device, None), requires_grad)


@recorded
def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None,
                  device: Any = None, requires_grad: bool = False) -> TensorBase:
    dt = as_dtype(dtype) if dtype is not None else get_default_dtype()
    _, hi = storage_span(tuple(size), tuple(stride), 0)
    base = TensorBase._empty((hi,), dt, as_device(device))
    return new_leaf(TensorBase._make(base._storage, tuple(size), tuple(stride), 0, dt), requires_grad)


@recorded
def full(size: Sequence[int], fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, out: Any = None) -> TensorBase:
    """A tensor of ``size`` filled with ``fill_value``; the dtype follows the value by default."""
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = bool_
        elif isinstance(fill_value, int):
            dtype = int64
        elif isinstance(fill_value, TensorBase):
            dtype = fill_value.dtype
            fill_value = fill_value.item()
    return new_leaf(_factory(size_arg((size,)) if not isinstance(size, int) else (size,),
                            dtype, device, fill_value), requires_grad)


@recorded
def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> TensorBase:
    m = n if m is None else m
    out = zeros(n, m, dtype=dtype, device=device)
    k = min(n, m)
    if k:
        kernels.fill(out, 1, target=kernels.operand(out, (k,), (m + 1,), 0))
    return new_leaf(out, requires_grad)


def like_layout(input: TensorBase, dtype: Any, device: Any, memory_format: Any = None) -> tuple:
    """Shape, dtype, device and strides of a ``*_like`` result (layout kept by default)."""
    return (input._shape, dtype if dtype is not None else input.dtype,
            device if device is not None else input.device,
            kernels.layout_strides(input, memory_format))


@recorded
def zeros_like(input: TensorBase, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> TensorBase:
    shape, dt, dev, strides = like_layout(input, dtype, device, memory_format)
    return new_leaf(_factory(shape, dt, dev, 0, strides), requires_grad)


@recorded
def ones_like(input: TensorBase, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> TensorBase:
    shape, dt, dev, strides = like_layout(input, dtype, device, memory_format)
    return new_leaf(_factory(shape, dt, dev, 1, strides), requires_grad)


@recorded
def empty_like(input: TensorBase, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> TensorBase:
    shape, dt, dev, strides = like_layout(input, dtype, device, memory_format)
    return new_leaf(_factory(shape, dt, dev, None, strides), requires_grad)


@recorded
def full_like(input: TensorBase, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> TensorBase:
    shape, dt, dev, strides = like_layout(input, dtype, device, memory_format)
    return new_leaf(_factory(shape, dt, dev, fill_value, strides), requires_grad)


# ---------------------------------------------------------------------------
# ranges
# ---------------------------------------------------------------------------
@recorded
def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False, out: Any = None) -> TensorBase:
    """Values from ``start`` up to (not including) ``end``, ``step`` apart."""
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, TensorBase) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0 and end != start:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        dtype = int64 if all(isinstance(v, int) and not isinstance(v, bool) for v in vals) \
            else get_default_dtype()
    dt = as_dtype(dtype)
    n = max(0, math.ceil((end - start) / step))
    # start + i * step computed in float64 (or int64), as PyTorch does, then cast.
    if dt.is_floating_point:
        host = (start + np.arange(n, dtype=np.float64) * step).astype(dt.np)
    else:
        host = (int(start) + np.arange(n, dtype=np.int64) * int(step)) if all(
            isinstance(v, int) for v in vals) else \
            np.floor(start + np.arange(n, dtype=np.float64) * step).astype(dt.np)
        host = host.astype(dt.np)
    return new_leaf(_from_host(host, as_device(device), dt), requires_grad)


@recorded
def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> TensorBase:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _spaced_dtype("linspace", dtype, device)
    start = start.item() if isinstance(start, TensorBase) else start
    end = end.item() if isinstance(end, TensorBase) else end
    host = np.linspace(start, end, steps, dtype=np.float64)
    if not dt.is_floating_point:
        host = np.trunc(host)
    return new_leaf(_from_host(host.astype(dt.np), as_device(device), dt), requires_grad)


def _spaced_dtype(name: str, dtype: Any, device: Any) -> Any:
    """The dtype of ``linspace``/``logspace``: any but bool, which has no evenly spaced values."""
    dt = as_dtype(dtype) if dtype is not None else get_default_dtype()
    if dt is bool_:
        raise NotImplementedError(f"\"{name}_{as_device(device).type}\" not implemented for "
                                  f"'Bool'")
    return dt


@recorded
def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> TensorBase:
    dt = _spaced_dtype("logspace", dtype, device)
    host = np.power(base, np.linspace(start, end, steps, dtype=np.float64))
    return new_leaf(_from_host(host.astype(dt.np), as_device(device), dt), requires_grad)


# ---------------------------------------------------------------------------
# Tensor(...): the legacy constructor
# ---------------------------------------------------------------------------
def legacy_new(*args: Any, device: Any = None, dtype: Any = None) -> TensorBase:
    """``Tensor(data)``, ``Tensor(*sizes)`` or ``Tensor(storage)``: always the default float type."""
    dt = get_default_dtype() if dtype is None else as_dtype(dtype)
    if len(args) == 0:
        return empty(0, dtype=dt, device=device)
    if len(args) == 1 and isinstance(args[0], (TypedStorage, UntypedStorage)):
        st = args[0].untyped() if isinstance(args[0], TypedStorage) else args[0]
        n = st._data.shape[0]
        return TensorBase._make(st, (n,), (1,), 0, from_numpy_dtype(st._data.dtype))
    if len(args) == 1 and isinstance(args[0], TensorBase):
        return args[0]
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return empty(*args, dtype=dt, device=device)
    if len(args) == 1 and isinstance(args[0], Size):
        return empty(tuple(args[0]), dtype=dt, device=device)
    if len(args) == 1:
        return tensor(_infer_data(args[0]).astype(dt.np), device=device)
    raise TypeError(f"new() received an invalid combination of arguments - got "
                    f"({', '.join(type(a).__name__ for a in args)})")




# ---------------------------------------------------------------------------
# resize_: a new shape over the same (possibly grown) storage
# ---------------------------------------------------------------------------
def resize_(self: TensorBase, *sizes: Any) -> TensorBase:
    """Change the shape in place; grows the storage if needed (new elements are uninitialised)."""
    shape = size_arg(sizes)
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if shape == self._shape:
        return self            # same shape: nothing changes, strides included
    needed = self._offset + numel(shape)
    if needed * self.dtype.itemsize > self._storage.nbytes():
        _grow_storage(self, needed * self.dtype.itemsize)
    self._shape = shape
    self._stride = contiguous_strides(shape)
    return self


def _grow_storage(t: TensorBase, nbytes: int) -> None:
    """Grow ``t``'s storage in place to ``nbytes`` (old elements kept, new ones zero)."""
    st = t._storage
    if st.device.type == "cpu":
        st.resize_(nbytes)
        return
    # A device buffer cannot grow: copy it into a bigger one with the backend's kernels.
    st._data = kernels.grown(st._data, nbytes // st._data.dtype.itemsize, st.device)


def resize_as_(self: TensorBase, other: TensorBase) -> TensorBase:
    """``resize_`` to ``other``'s shape."""
    return resize_(self, other._shape)

# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(arange, method=False)
declare(as_tensor, "as_tensor", "asarray", method=False)
declare(empty, method=False)
declare(empty_like, method=False)
declare(empty_strided, method=False)
declare(eye, method=False)
declare(from_numpy, method=False)
declare(full, method=False)
declare(full_like, method=False)
declare(linspace, method=False)
declare(logspace, method=False)
declare(ones, method=False)
declare(ones_like, method=False)
declare(scalar_tensor, method=False)
declare(tensor, method=False)
declare(zeros, method=False)
declare(zeros_like, method=False)
declare(resize_, function=False)
declare(resize_as_, function=False)

"""Raw tensor computations for the op definitions: no autograd, just kernels.

Every op's ``forward`` is built from these.  They take tensors, decide dtypes,
broadcast shapes and pick the kernel family, and return new tensors (or
write into an ``out`` tensor).  None of them records a graph; that is the
job of the ``Function`` that calls them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends import Operand
from ..backends import scalar_ops
from ..dtype import check_fill_value, bfloat16, bool_, dtype, float16, float32, int64, result_type
from . import bfloat16 as bf16
from ..layout import (broadcast_shapes, channels_last_strides, contiguous_strides,
                      elementwise_strides, expand_strides, is_contiguous, numel,
                      preserved_strides)
from ..memory_format import channels_last, contiguous_format, preserve_format
from ..storage import UntypedStorage
from ..tensor_base import TensorBase
from ..backends import get_backend, rng
from ..backends.interface import (ARITH, COMPARE, DIRECT_CONV, FAST, FUSED_ELEMENTWISE, INT,
                                  MATH, SCALAR_BUFFER, THRESHOLD_BACKWARD, RandomKind)
from ..device import CPU, get_default_device

Number = (int, float, bool, np.number, np.bool_)


def is_number(x: Any) -> bool:
    return isinstance(x, Number)


def check_same_device(*tensors: Any) -> None:
    if len(tensors) == 2:
        a, b = tensors
        if (not isinstance(a, TensorBase) or not isinstance(b, TensorBase) or a.device is b.device
                or a.device == b.device):
            return           # at most one device involved
    devs = {t.device for t in tensors if isinstance(t, TensorBase) and (t.dim() > 0 or
                                                                   t.device.type != "cpu")}
    if len(devs) > 1:
        a, b = sorted(str(d) for d in devs)[-1], sorted(str(d) for d in devs)[0]
        raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                           f"two devices, {a} and {b}!")


def empty(shape: tuple, dt: dtype, device: Any, strides: tuple | None = None) -> TensorBase:
    return TensorBase._empty(tuple(shape), dt, device, strides)


def empty_like(t: TensorBase, dt: dtype | None = None, device: Any = None,
               memory_format: Any = None) -> TensorBase:
    """A new tensor shaped like ``t``, laid out by ``memory_format`` (default: like ``t``)."""
    return empty(t._shape, dt or t.dtype, device or t.device,
                 layout_strides(t, memory_format))


def layout_strides(t: TensorBase, memory_format: Any = None) -> tuple | None:
    """The strides ``memory_format`` gives a copy of ``t`` (None: contiguous)."""
    if memory_format is None or memory_format is preserve_format:
        if is_contiguous(t._shape, t._stride):
            return None
        return preserved_strides(t._shape, t._stride)
    if memory_format is contiguous_format:
        return None
    if memory_format is channels_last:
        return channels_last_strides(t._shape)
    raise TypeError(f"memory_format must be a minitorch.memory_format, not {memory_format!r}")


def empty_elementwise(shape: tuple, dt: dtype, device: Any, *inputs: Any) -> TensorBase:
    """The result of an elementwise op over ``inputs`` (tensors or numbers).

    It is laid out in the tensor inputs' memory order, as in PyTorch, so the
    sum of two transposes is a transpose, computed as one pass over memory
    (see :func:`minitorch.layout.elementwise_strides`).
    """
    plain = contiguous_strides(shape)
    for x in inputs:
        if isinstance(x, TensorBase) and x._shape and (x._stride != plain or x._shape != shape):
            break
    else:
        return TensorBase._empty(shape, dt, device, plain)     # the common case, decided quickly
    strides = [expand_strides(x._shape, x._stride, shape)[1] if x._shape != shape else x._stride
               for x in inputs if isinstance(x, TensorBase) and x._shape]
    if all(is_contiguous(shape, s) for s in strides):
        return empty(shape, dt, device)
    return empty(shape, dt, device, elementwise_strides(shape, *strides))


def compute_dtype(dt: dtype) -> dtype:
    """float16 and bfloat16 are stored, not computed: kernels run in float32 (see docs/differences.md)."""
    return float32 if dt is float16 or dt is bfloat16 else dt


def round_bfloat16(t: TensorBase) -> TensorBase:
    """Round the elements of bfloat16 ``t``'s storage to bfloat16 after a write (see ops/bfloat16.py)."""
    bf16.round_buffer(t._storage._data, t._backend)
    return t


def cast(t: TensorBase, dt: dtype) -> TensorBase:
    """``t`` converted to dtype ``dt`` (``t`` itself if it already is)."""
    if t.dtype is dt:
        return t
    out = empty_like(t, dt)
    t._backend.copy(t._operand(), out._operand())
    return round_bfloat16(out) if dt is bfloat16 else out


def contiguous(t: TensorBase) -> TensorBase:
    if t.is_contiguous():
        return t
    out = empty(t._shape, t.dtype, t.device)
    t._backend.copy(t._operand(), out._operand())
    return out


def broadcast_operand(t: TensorBase, shape: tuple) -> Operand:
    """The operand that reads ``t`` as if it had ``shape`` (stride 0 where stretched)."""
    if t._shape == shape:
        return t._operand()
    _, strides = expand_strides(t._shape, t._stride, shape)
    return Operand(t._storage._data, shape, strides, t._offset)


def scalar_operand(value: Any, dt: dtype, shape: tuple, backend: Any) -> Operand:
    """A Python number as a one-element buffer read with stride 0 everywhere."""
    return Operand(scalar_buffer(value, dt, backend), shape, (0,) * len(shape), 0)


def scalar_buffer(value: Any, dt: dtype, backend: Any) -> Any:
    """A one-element buffer of the device holding ``value`` in dtype ``dt``.

    Kernels only read it, so a backend may hand out a cached buffer
    (``scalar_buffer``: the CUDA backend saves a copy to the device per use).
    """
    cached = _SCALAR_BUFFER_OF.get(backend, _UNKNOWN)
    if cached is _UNKNOWN:
        cached = _SCALAR_BUFFER_OF[backend] = (
            backend.scalar_buffer if SCALAR_BUFFER in backend.CAPABILITIES else None)
    if cached is not None:
        buf = cached(value, dt.np)
    else:
        key = (dt, type(value), value)
        buf = _HOST_SCALARS.get(key)
        if buf is None:
            buf = backend.from_host(np.array([value]).astype(dt.np))
            # 0.0 == -0.0 and nan != nan as dict keys: those are not cached.
            if value == value and (value or not isinstance(value, float)):
                if len(_HOST_SCALARS) >= 1024:
                    _HOST_SCALARS.clear()
                _HOST_SCALARS[key] = buf
    return buf


# ``x * 1.01`` in a loop: the one-element buffer of 1.01 is made once.
_HOST_SCALARS: dict = {}

# Each backend's ``scalar_buffer`` (None: the CPU's numbers stay on the host), looked up
# once per backend (a capability, see backends/interface.py), as this runs for every
# ``x * 2``.
_SCALAR_BUFFER_OF: dict = {}
_UNKNOWN = object()


def as_operand(x: Any, dt: dtype, shape: tuple, backend: Any) -> Operand:
    """A tensor or number, in dtype ``dt``, broadcast to ``shape``."""
    if isinstance(x, TensorBase):
        return broadcast_operand(cast(x, dt), shape)
    return scalar_operand(x, dt, shape, backend)


def shape_of(x: Any) -> tuple:
    return x._shape if isinstance(x, TensorBase) else ()


def device_of(*xs: Any):
    for x in xs:
        if isinstance(x, TensorBase):
            return x.device
    return get_default_device()


# ---------------------------------------------------------------------------
# elementwise
# ---------------------------------------------------------------------------
_ARITH = set(scalar_ops.ARITH_OPS)
_UNARY_FAST = set(scalar_ops.UNARY_FAST_OPS)


def _stored_first(x: Any, result: dtype, kernel: dtype) -> Any:
    """An integer tensor in a float16 (or bfloat16) op, converted to that dtype first.

    The op is computed in float32 (``compute_dtype``), but PyTorch converts
    the integers to the op's dtype, float16, so that 70000 is already inf:
    ``int_tensor + half_tensor`` must round the integers the same way.
    """
    if result is not kernel and isinstance(x, TensorBase) and not x.dtype.is_floating_point:
        return cast(x, result)
    return x


def compare(a: Any, b: Any, op: int) -> TensorBase:
    """Elementwise comparison (``scalar_ops.EQ``, ``scalar_ops.LT``, ...): a bool tensor."""
    check_same_device(a, b)
    compute = result_type(a, b)
    kernel_dtype = compute_dtype(compute)
    a, b = _stored_first(a, compute, kernel_dtype), _stored_first(b, compute, kernel_dtype)
    shape = broadcast_shapes(shape_of(a), shape_of(b))
    out = empty_elementwise(shape, bool_, device_of(a, b), a, b)
    backend = out._backend
    backend.binary(op, as_operand(a, kernel_dtype, shape, backend),
                   as_operand(b, kernel_dtype, shape, backend), out._operand(), COMPARE)
    return out


def arith(a: Any, b: Any, op: int, out: TensorBase | None = None) -> TensorBase:
    """``a (op) b`` for the arithmetic and math binary ops, result in the promoted dtype."""
    compute = _dtype_with_number(a, b) if type(b) in (float, int) else None
    if compute is None:
        compute = result_type(a, b)
    kernel = compute_dtype(compute)
    return _binary_family(a, b, op, compute, kernel, out)


def _dtype_with_number(a: Any, b: Any) -> dtype | None:
    """The dtype of ``tensor (op) number`` when the number cannot change it, else None.

    A Python float keeps a floating tensor's dtype and a Python int keeps any
    non-bool tensor's dtype: a wrapped number only ever raises the *category*
    (``dtype.result_type``).  A shortcut for the commonest mixed call,
    ``x * 2``, past ``result_type``'s general loop.
    """
    if isinstance(a, TensorBase):
        kind = type(b)
        if kind is float and a.dtype.is_floating_point or kind is int and a.dtype is not bool_:
            return a.dtype
    return None


def _binary_family(a: Any, b: Any, op: int, result: dtype, kernel: dtype,
                   out: TensorBase | None) -> TensorBase:
    if (out is None and isinstance(a, TensorBase) and a.dtype is kernel and a._shape
            and a._stride == contiguous_strides(a._shape)
            and (not isinstance(b, TensorBase) and is_number(b)
                 or isinstance(b, TensorBase) and b._shape == a._shape and b.dtype is kernel
                 and b.device is a.device and b._stride == a._stride)):
        # The commonest calls, decided in a few comparisons: a contiguous
        # tensor with a contiguous tensor of its shape, dtype and device, or
        # with a number.  Nothing to check, cast or broadcast; the result is
        # contiguous (what the general path below would also find, at
        # several times the Python cost).
        n = numel(a._shape)
        backend = a._backend
        data = backend.allocate(n, kernel.np)
        family = (ARITH if op in _ARITH else MATH) if kernel.is_floating_point else INT
        if isinstance(b, TensorBase):
            b_data, b_offset, b_step = b._storage._data, b._offset, 1
        else:
            b_data, b_offset, b_step = scalar_buffer(b, kernel, backend), 0, 0
        if n:
            backend.binary_runs(op, family, a._storage._data, a._offset, b_data, b_offset,
                                b_step, data, n)
        target = TensorBase._make(UntypedStorage(data, a.device), a._shape, a._stride, 0, kernel)
        return cast(target, result) if kernel is not result else target
    check_same_device(a, b)
    a, b = _stored_first(a, result, kernel), _stored_first(b, result, kernel)
    shape = broadcast_shapes(shape_of(a), shape_of(b))
    dev = device_of(a, b)
    target = empty_elementwise(shape, kernel, dev, a, b) if (
        out is None or out.dtype is not kernel or out._shape != shape) else out
    backend = target._backend
    if kernel.is_floating_point:
        family = ARITH if op in _ARITH else MATH
    else:
        family = INT
    backend.binary(op, as_operand(a, kernel, shape, backend),
                   as_operand(b, kernel, shape, backend), target._operand(), family)
    if out is not None and target is not out:
        out._backend.copy(broadcast_operand(target, out._shape), out._operand())
        return out
    return cast(target, result) if target.dtype is not result else target


def threshold_backward(y: TensorBase, g: TensorBase) -> TensorBase:
    """ReLU's backward, ``0 where y <= 0 else g`` (PyTorch's threshold_backward at 0).

    A backend may have a kernel of its own for it (the CPU's); otherwise, and
    for operands that are not two contiguous tensors of one shape and float
    dtype, it is the ``THRESHOLD_MASK`` op of the arithmetic family.
    """
    backend = y._backend
    if (THRESHOLD_BACKWARD in backend.CAPABILITIES and y._shape == g._shape and y.dtype is g.dtype
            and y.dtype.name in ("float32", "float64") and y.device == g.device
            and y.is_contiguous() and g.is_contiguous()):
        out = empty(y._shape, y.dtype, y.device)
        backend.threshold_backward(flat(y), flat(g), flat(out))
        return out
    return arith(y, g, scalar_ops.THRESHOLD_MASK)


def unary(x: TensorBase, op: int, out_dtype: dtype | None = None, p0: float = 0.0,
          p1: float = 0.0, out: TensorBase | None = None, *, integer: bool = False) -> TensorBase:
    """Elementwise ``f(x)``; floats run the float families, ``integer`` the int family."""
    result_dtype = out_dtype or x.dtype
    kernel = compute_dtype(x.dtype)
    src = cast(x, kernel)
    target_dtype = compute_dtype(result_dtype)
    if out is not None and out.dtype is target_dtype:
        target = out
    elif x._stride == contiguous_strides(x._shape):
        target = TensorBase._empty(x._shape, target_dtype, x.device)     # quickly: contiguous
    else:
        target = empty_like(x, target_dtype)
    if integer:
        family = INT
    else:
        family = FAST if op in _UNARY_FAST else MATH
    target._backend.unary(op, src._operand(), target._operand(), p0, p1, family)
    if out is not None and target is not out:
        out._backend.copy(target._operand(), out._operand())
        return out
    return cast(target, result_dtype) if target.dtype is not result_dtype else target


def copy_into(dst: TensorBase, src: Any) -> None:
    """``dst[...] = src`` with broadcasting and casting (no autograd)."""
    backend = dst._backend
    if isinstance(src, TensorBase):
        if src.device != dst.device:
            src = to_device(src, dst.device)
        backend.copy(broadcast_operand(src, dst._shape), dst._operand())
    else:
        check_fill_value(src, dst.dtype)
        backend.fill(dst._operand(), src)
    if dst.dtype is bfloat16:
        round_bfloat16(dst)


def to_device(t: TensorBase, dev: Any) -> TensorBase:
    """A copy of ``t`` on device ``dev`` (contiguous)."""
    if t.device == dev:
        return t
    host = t._host_array()
    host = host if host.flags.c_contiguous else host.copy()
    data = get_backend(dev).from_host(host.reshape(-1))
    return TensorBase._make(UntypedStorage(data, dev), t._shape, contiguous_strides(t._shape), 0,
                        t.dtype)


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------
def reduce(x: TensorBase, op: str, dims: tuple, keepdim: bool, out_dtype: dtype,
           want_index: bool = False):
    """Reduce ``x`` over ``dims`` with kernel ``op``; returns values (and indices)."""
    kept = tuple(s for d, s in enumerate(x._shape) if d not in dims)
    src = cast(x, compute_dtype(x.dtype)) if x.dtype is float16 or x.dtype is bfloat16 else x
    n_out = numel(kept)
    values = empty(kept, compute_dtype(out_dtype), x.device)
    idx = empty(kept, int64, x.device) if want_index else None
    if n_out:
        x._backend.reduce(op, src._operand(), dims, values._storage._data,
                          idx._storage._data if idx is not None else None)
    if keepdim:
        kshape = tuple(1 if d in dims else s for d, s in enumerate(x._shape))
        values = _reshape_contig(values, kshape)
        if idx is not None:
            idx = _reshape_contig(idx, kshape)
    if values.dtype is not out_dtype:
        values = cast(values, out_dtype)
    return (values, idx) if want_index else values


def _reshape_contig(t: TensorBase, shape: tuple) -> TensorBase:
    return TensorBase._make(t._storage, shape, contiguous_strides(shape), t._offset, t.dtype)


def array_of(t: TensorBase, shape: tuple):
    """The backend array of a contiguous tensor's elements, in ``shape`` (a view, no copy)."""
    return flat(t).reshape(shape)


def rows_along(x: TensorBase, dim: int) -> tuple:
    """``x`` with ``dim`` moved last and made contiguous, and its (rows, n) array.

    Row kernels (scans, softmax) see one row per position of the other dims.
    With ``dim`` already last and ``x`` contiguous nothing is copied.
    """
    perm = [d for d in range(x.dim()) if d != dim] + [dim]
    moved = x if dim == x.dim() - 1 else TensorBase._make(
        x._storage, tuple(x._shape[d] for d in perm), tuple(x._stride[d] for d in perm),
        x._offset, x.dtype)
    moved = contiguous(moved)
    n = x._shape[dim]
    return moved, array_of(moved, (moved.numel() // n if n else 0, n))


def from_rows(out: TensorBase, x: TensorBase, dim: int) -> TensorBase:
    """A result laid out as ``rows_along(x, dim)``, put back into ``x``'s shape (contiguous)."""
    if dim == x.dim() - 1:
        return out
    perm = [d for d in range(x.dim()) if d != dim] + [dim]
    inverse = [perm.index(d) for d in range(x.dim())]
    back = TensorBase._make(out._storage, x._shape, tuple(out._stride[inverse[d]]
                                                      for d in range(x.dim())), 0, out.dtype)
    return contiguous(back)


def scan(x: TensorBase, op: str, dim: int, out_dtype: dtype) -> TensorBase:
    """Cumulative sum or product along ``dim`` (a contiguous result).

    ``dim`` is moved last and made contiguous, so the kernel scans rows.
    """
    if x.dim() == 0:
        x = _reshape_contig(contiguous(x), (1,))
        return _reshape_contig(scan(x, op, 0, out_dtype), ())
    src = cast(x, compute_dtype(out_dtype))
    moved, rows = rows_along(src, dim)
    result = empty(moved._shape, moved.dtype, x.device)
    x._backend.scan(op, rows, array_of(result, rows.shape))
    return cast(from_rows(result, src, dim), out_dtype)


# ===========================================================================
# One typed function per kernel the ops call.  Every op reaches the backend of
# its tensors' device through this module, never through ``t._backend`` or
# ``t._storage._data`` directly: so this file is the whole interface between
# the ops (layer 7) and the kernels (layer 4), and a new backend implements
# what these functions call.
# ===========================================================================
Array = Any
"""A flat device buffer: a NumPy array on the CPU, a ``numba.cuda`` device array on a GPU."""


def buffer(t: TensorBase) -> Array:
    """The whole flat buffer of ``t``'s storage (all its elements, any offset)."""
    return t._storage._data


def flat(t: TensorBase) -> Array:
    """The buffer slice holding a contiguous tensor's elements (a view, no copy)."""
    return t._storage._data[t._offset: t._offset + t.numel()]


def operand(t: TensorBase, shape: tuple | None = None, strides: tuple | None = None,
            offset: int | None = None) -> Operand:
    """``t``'s buffer read through a header (by default ``t``'s own)."""
    return Operand(t._storage._data, t._shape if shape is None else shape,
                   t._stride if strides is None else strides,
                   t._offset if offset is None else offset)


def fill(t: TensorBase, value: Any, target: Operand | None = None) -> None:
    """Write ``value`` into every element of ``t`` (or of ``target``, a view of its buffer)."""
    check_fill_value(value, t.dtype)
    t._backend.fill(t._operand() if target is None else target, value)
    if t.dtype is bfloat16:
        round_bfloat16(t)


def from_host(array: np.ndarray, device: Any) -> Array:
    """A flat buffer on ``device`` holding ``array``'s elements (on the CPU maybe ``array`` itself)."""
    return get_backend(device).from_host(array)


def grown(buf: Array, n: int, device: Any) -> Array:
    """A new buffer of ``n`` elements: ``buf``'s elements first, zeros after."""
    backend = get_backend(device)
    new = backend.zeros(n, buf.dtype)
    if buf.shape[0]:
        size = buf.shape[0]
        backend.copy(Operand(buf, (size,), (1,), 0), Operand(new, (size,), (1,), 0))
    return new


def number_operand(value: Any, dt: dtype, shape: tuple, like: TensorBase) -> Operand:
    """A Python number as an operand of ``shape`` on ``like``'s device (stride 0 everywhere)."""
    return scalar_operand(value, dt, shape, like._backend)


def select(cond: TensorBase, a: Any, b: Any, out: TensorBase) -> None:
    """``out = a where cond else b`` (tensors or numbers), broadcast to ``out``'s shape."""
    backend, shape, dt = out._backend, out._shape, out.dtype
    backend.where(broadcast_operand(cond, shape), as_operand(a, dt, shape, backend),
                  as_operand(b, dt, shape, backend), out._operand())


def copy(src: Operand, dst: TensorBase, target: Operand | None = None) -> None:
    """Copy the elements ``src`` reads into ``dst`` (or into ``target``, a view of its buffer)."""
    dst._backend.copy(src, dst._operand() if target is None else target)


def index_bounds(index: TensorBase) -> tuple:
    """``(min, max)`` of a non-empty contiguous int64 tensor."""
    return index._backend.index_bounds(flat(index))


def add_index_offsets(out: TensorBase, index: TensorBase, size: int, stride: int) -> None:
    """``out += (index wrapped into [0, size)) * stride``, elementwise (contiguous int64)."""
    out._backend.add_index_offsets(flat(out), flat(index), size, stride)


def index_select(src: Operand, dim: int, positions: Array, out: TensorBase) -> None:
    """``out[.., k, ..] = src[.., positions[k], ..]`` along ``dim`` (positions checked)."""
    out._backend.index_select(src, dim, positions, out._operand())


def index_reduce(op: str, target: TensorBase, dim: int, positions: Array, values: Operand,
                 folded: Operand | None = None) -> None:
    """``target[.., positions[k], ..] (op)= values[.., k, ..]``; ``op`` is "set" or "add".

    ``folded`` reads ``target``'s buffer with another header (advanced indexing
    folds several indexed dims into one).
    """
    target._backend.index_reduce(op, target._operand() if folded is None else folded, dim,
                                 positions, values)


def gather(src: TensorBase, dim: int, index: TensorBase, out: TensorBase) -> None:
    """``out[p] = src[p with coordinate dim replaced by index[p]]``."""
    src._backend.gather(src._operand(), dim, index._operand(), out._operand())


def scatter(op: str, target: TensorBase, dim: int, index: TensorBase, values: Operand) -> None:
    """``target[p with coordinate dim replaced by index[p]] (op)= values[p]``."""
    target._backend.scatter(op, target._operand(), dim, index._operand(), values)


def masked_fill(out: TensorBase, mask: Operand, value: Any) -> None:
    """``out[mask] = value`` for a contiguous ``out``."""
    check_fill_value(value, out.dtype)
    out._backend.masked_fill(flat(out), mask, value)


def masked_select(src: Operand, mask: Operand, device: Any) -> Array:
    """The elements ``src`` reads where ``mask`` is true, as a new 1-d buffer."""
    return get_backend(device).masked_select(src, mask)


def count_true(mask: Operand, device: Any) -> int:
    """How many elements of ``mask`` are true."""
    return get_backend(device).count_true(mask)


def masked_scatter(out: TensorBase, mask: Operand, source: TensorBase) -> None:
    """Write consecutive elements of ``source`` into contiguous ``out`` where ``mask`` is true."""
    out._backend.masked_scatter(flat(out), mask, flat(source))


def nonzero(mask: TensorBase) -> Array:
    """The coordinates of the true elements of a bool tensor: a (count, ndim) buffer."""
    return mask._backend.nonzero(mask._operand())


def matmul(a: Operand, b: Operand, out: TensorBase, batch: int, n: int, m: int) -> None:
    """``out[i] = a[i] @ b[i]`` for ``batch`` products of (n, k) @ (k, m); ``out`` contiguous."""
    out._backend.matmul(a, b, out._storage._data.reshape(batch, n, m))


def im2col(x: Array, geometry: tuple, cols: Array, device: Any, batched: bool = False) -> None:
    """The convolution windows of the NCHW images ``x`` as the columns of ``cols``."""
    backend = get_backend(device)
    (backend.im2col_batch if batched else backend.im2col)(x, geometry, cols)


def col2im(cols: Array, geometry: tuple, x: Array, device: Any, batched: bool = False) -> None:
    """The adjoint of :func:`im2col`: add each column back into its window of ``x``."""
    backend = get_backend(device)
    (backend.col2im_batch if batched else backend.col2im)(cols, geometry, x)


def has_direct_conv(device: Any) -> bool:
    """Does ``device``'s backend have the direct stride-1 convolution (the CPU's does)?"""
    return DIRECT_CONV in get_backend(device).CAPABILITIES


def conv2d_direct(x: Array, weight: Array, bias: Array | None, geometry: tuple, groups: int,
                  out: Array, device: Any) -> None:
    """Stride-1 convolution straight from the images, bias added (no column matrix)."""
    get_backend(device).conv2d_direct(x, weight, bias, geometry, groups, out)


def conv2d_direct_backward(x: Array, weight: Array, grad: Array, geometry: tuple, groups: int,
                           grad_input: Array | None, grad_weight: Array | None,
                           grad_bias: Array | None, device: Any) -> None:
    """The gradients of :func:`conv2d_direct` that are not None."""
    get_backend(device).conv2d_direct_backward(x, weight, grad, geometry, groups, grad_input,
                                               grad_weight, grad_bias)


def max_pool2d(x: Array, geometry: tuple, out: Array, argmax: Array, device: Any) -> None:
    """The maximum of each pooling window, and where it was."""
    get_backend(device).max_pool2d(x, geometry, out, argmax)


def max_pool2d_backward(grad: Array, argmax: Array, grad_input: Array, device: Any,
                        geometry: tuple | None = None) -> None:
    """Route each window's gradient to the element that was its maximum (``geometry``,
    the forward's, lets a backend pick a faster kernel for windows that tile the input)."""
    get_backend(device).max_pool2d_backward(grad, argmax, grad_input, geometry)


def softmax_rows(rows: Array, out: Array, log: bool, device: Any) -> None:
    """softmax (or log_softmax) of each row of a (rows, n) buffer."""
    get_backend(device).softmax(rows, out, log)


def softmax_rows_backward(grad: Array, y: Array, out: Array, log: bool, device: Any) -> None:
    """The gradient of :func:`softmax_rows` given its result ``y``."""
    get_backend(device).softmax_backward(grad, y, out, log)


def nll_loss_rows(logp: Array, target: Array, weight: Array | None, ignore_index: int,
                  losses: Array, weights: Array, device: Any) -> int:
    """``losses[r] = -weight[t] * logp[r, t]`` with ``t = target[r]``, for each row ``r``.

    Every target is checked before any is read: the result is the first row
    whose target is out of range, or -1.
    """
    return get_backend(device).nll_loss(logp, target, weight, ignore_index, losses, weights)


def nll_loss_rows_backward(target: Array, weight: Array | None, ignore_index: int,
                           grad: Array, device: Any) -> None:
    """The gradient of :func:`nll_loss_rows`: ``-weight[t]`` at each row's target, else 0."""
    get_backend(device).nll_loss_backward(target, weight, ignore_index, grad)


def has_fused_elementwise(device: Any) -> bool:
    """Can ``device``'s backend run fused elementwise programs (the CPU's can)?"""
    return FUSED_ELEMENTWISE in get_backend(device).CAPABILITIES


def fused_elementwise(program: Any, inputs: list, outputs: list, device: Any) -> None:
    """Run a fused elementwise program (``backends/fusion_program.py``) in one pass."""
    get_backend(device).fused_elementwise(program, inputs, outputs)


def fused_elementwise_source(program: Any, device: Any) -> str:
    """The source code ``device``'s backend generates for a fused elementwise program."""
    return get_backend(device).fused_elementwise_source(program)


def fused_elementwise_backward(program: Any, inputs: list, grad_outputs: list,
                               grad_inputs: list, device: Any) -> None:
    """The input gradients of a fused elementwise program, one pass."""
    get_backend(device).fused_elementwise_backward(program, inputs, grad_outputs, grad_inputs)


def fused_update(hyper: Any, arrays: list, device: Any) -> None:
    """One optimizer step in place: the rule of ``hyper``'s type over parameter, gradient, state."""
    get_backend(device).fused_update(hyper, arrays)


def normal_counters(n: int) -> int:
    """How many counters of the random stream ``n`` normal numbers use."""
    return rng.normal_counters(n)


def multinomial_counters(rows: int, categories: int, samples: int, replacement: bool) -> int:
    """How many counters of the random stream a ``multinomial`` draw uses."""
    return rng.multinomial_counters(rows, categories, samples, replacement)


def random_fill(kind: RandomKind, out: Array, seed: Any, offset: Any, device: Any,
                *params: Any) -> None:
    """Fill the buffer ``out`` with the random stream ``(seed, offset)`` of ``kind``
    (``UNIFORM``, ``NORMAL``, ...: ``backends/interface.py``)."""
    get_backend(device).random_fill(kind, out, seed, offset, *params)


def sort_rows(rows: Array, descending: bool, k: int, device: Any) -> tuple:
    """Each row of a (rows, n) buffer sorted (its first ``k``): ``(values, indices)``."""
    return get_backend(device).sort_rows(rows, descending, k)


def unique_sorted(values: Array, order: Array, device: Any) -> tuple:
    """Runs of equal values in sorted ``values``: ``(unique, inverse, counts)``."""
    return get_backend(device).unique_sorted(values, order)


# ---------------------------------------------------------------------------
# dense linear algebra (backends/cpu/linalg.py)
# ---------------------------------------------------------------------------
def linalg(name: str, inputs: tuple, *params: Any) -> tuple:
    """Run the linear-algebra routine ``name`` of ``backends/cpu/linalg.py`` on stacks of matrices.

    Each input tensor (..., r, c) (all with the same leading "batch" dims) is
    handed over as a contiguous (batch, r, c) array; each array the routine
    returns, (batch, ...), comes back as a contiguous tensor of shape
    ``batch dims + (...)`` on the inputs' device (``None`` stays ``None``).
    Float arrays keep the inputs' dtype; integer ones (pivots, info) are int64.

    The routines exist only on the CPU: CUDA tensors are copied to the host
    and the results copied back (see docs/linalg.md).
    """
    first = inputs[0]
    batch = first._shape[:-2]
    arrays = []
    for t in inputs:
        host = to_device(t, CPU) if t.device != CPU else t
        host = contiguous(host)
        arrays.append(flat(host).reshape((-1,) + host._shape[-2:]) if numel(batch)
                      else np.zeros((0,) + host._shape[-2:], host.dtype.np))
    results = getattr(get_backend(CPU).linalg, name)(*arrays, *params)
    outs = []
    for arr in (results if isinstance(results, tuple) else (results,)):
        if arr is None:
            outs.append(None)
            continue
        dt = int64 if arr.dtype.kind in "iu" else first.dtype
        arr = np.ascontiguousarray(arr, dtype=dt.np)
        shape = batch + arr.shape[1:]
        data = get_backend(first.device).from_host(arr.reshape(-1))
        outs.append(TensorBase._make(UntypedStorage(data, first.device), shape,
                                     contiguous_strides(shape), 0, dt))
    return tuple(outs)

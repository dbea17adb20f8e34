"""View ops: new headers over the same storage (and the few shape ops that copy).

A view changes only shape, stride and offset; its output shares the input's
storage and version counter (``_make(..., base=x)``), so writing through one
is seen through the other.  Each view is a ``Function`` whose backward puts
the gradient back into the input's shape.

Slicing-like views (``x[1:3]``, ``select``, ``narrow``, ``split``,
``unbind``, ``as_strided``) share one mechanism: a *layout function* maps the
input's (shape, stride, offset) to the view's.  Applied to the real header it
gives the forward view; applied to a fresh contiguous header of the input's
shape it tells backward where the gradient goes (:class:`ViewScatter`).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..autograd.function import Function
from ..layout import (contiguous_strides, expand_strides, infer_size, normalize_dim,
                      normalize_dims, numel, storage_span, view_strides)
from ..tensor_base import Size, TensorBase
from ..trace_mode import recorded   # detach() joins a compiler's trace
from ..memory_format import contiguous_format, preserve_format
from . import kernels
from .registry import declare
from .creation import tensor
from ..dtype import as_dtype, dtype, promote_types
from ..storage import UntypedStorage

__all__ = ["view", "reshape", "transpose", "permute", "squeeze", "unsqueeze", "expand",
           "flatten", "unflatten", "narrow", "select", "split", "chunk", "unbind", "movedim",
           "as_strided", "contiguous", "clone", "detach", "cat", "stack", "sum_to_shape",
           "t", "strided_view", "flip", "repeat", "broadcast_to", "diagonal", "tile",
           "tensor_split", "hstack", "vstack", "swapaxes", "roll"]

Layout = tuple  # (shape, stride, offset)


def _view_of(x: TensorBase, shape: tuple, stride: tuple, offset: int) -> TensorBase:
    return TensorBase._make(x._storage, tuple(shape), tuple(stride), offset, x.dtype, base=x)


def _shape_arg(shape: Sequence) -> tuple:
    """Accept ``f(2, 3)`` and ``f((2, 3))`` and ``f([2, 3])`` as PyTorch does."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
        return tuple(shape[0])
    return tuple(shape)


# ---------------------------------------------------------------------------
# view / reshape
# ---------------------------------------------------------------------------
class View(Function):
    _backward_name = "ViewBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, shape: tuple) -> TensorBase:
        shape = infer_size(shape, x.numel())
        strides = view_strides(x._shape, x._stride, shape)
        if strides is None:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
        ctx.in_shape = x._shape
        return _view_of(x, shape, strides, x._offset)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return reshape(g, ctx.in_shape), None


class _UnsafeView(Function):
    """reshape that had to copy: the output is a fresh tensor."""

    _backward_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, shape: tuple) -> TensorBase:
        ctx.in_shape = x._shape
        c = kernels.contiguous(x)
        if c is x:
            c = kernels.cast(x, x.dtype) if False else raw_copy(x)
        return TensorBase._make(c._storage, shape, contiguous_strides(shape), 0, x.dtype)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return reshape(g, ctx.in_shape), None


def raw_copy(x: TensorBase, memory_format: Any = None) -> TensorBase:
    """A copy of ``x`` laid out by ``memory_format`` (default: in ``x``'s own memory order)."""
    out = kernels.empty_like(x, memory_format=memory_format)
    kernels.copy(x._operand(), out)
    return out


def view(x: TensorBase, *shape: Any) -> TensorBase:
    """Same storage, new shape; raises where the strides do not allow it (see layout.view_strides)."""
    if len(shape) == 1 and isinstance(shape[0], (dtype, str)) or (
            len(shape) == 1 and shape[0] is not None and not isinstance(shape[0], (int, tuple,
                                                                                    list))
            and hasattr(shape[0], "itemsize")):
        return _view_dtype(x, as_dtype(shape[0]))
    return View.apply(x, _shape_arg(shape))


def _view_dtype(x: TensorBase, dt: Any) -> TensorBase:
    if dt is x.dtype:
        return x
    old, new = x.dtype.itemsize, dt.itemsize
    shape, stride, offset = list(x._shape), list(x._stride), x._offset
    if old != new:
        # Like PyTorch: the last dim must be contiguous; it is re-cut into
        # elements of the new size, and every other stride and the offset,
        # measured in bytes, must be whole numbers of new elements.
        what = f"to view {x.dtype._legacy} as {dt._legacy} (different element sizes)"
        if x.dim() == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if x._stride[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {x._stride[-1]}")
        if (shape[-1] * old) % new:
            raise RuntimeError(f"self.size(-1) must be divisible by {new // old} {what}, but "
                               f"got {shape[-1]}")
        if (offset * old) % new:
            raise RuntimeError(f"self.storage_offset() must be divisible by {new // old} "
                               f"{what}, but got {offset}")
        for d in range(x.dim() - 1):
            if (stride[d] * old) % new:
                raise RuntimeError(f"self.stride({d}) must be divisible by {new // old} {what}, "
                                   f"but got {stride[d]}")
            stride[d] = stride[d] * old // new
        shape[-1] = shape[-1] * old // new
        offset = offset * old // new
    buf = kernels.buffer(x)
    if (buf.shape[0] * old) % new:
        raise RuntimeError(f"view(dtype): the storage of {buf.shape[0] * old} bytes is not a "
                           f"whole number of {dt} elements")
    storage = UntypedStorage(buf.view(dt.np), x.device)
    return TensorBase._make(storage, tuple(shape), tuple(stride), offset, dt, base=x)


def reshape(x: TensorBase, *shape: Any) -> TensorBase:
    """A view when the strides allow it, else a contiguous copy."""
    shape = infer_size(_shape_arg(shape), x.numel())
    if view_strides(x._shape, x._stride, shape) is not None:
        return View.apply(x, shape)
    return _UnsafeView.apply(x, shape)


def flatten(x: TensorBase, start_dim: int = 0, end_dim: int = -1) -> TensorBase:
    if x.dim() == 0:
        return reshape(x, (1,))
    s = normalize_dim(start_dim, x.dim())
    e = normalize_dim(end_dim, x.dim())
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return x
    shape = x._shape[:s] + (numel(x._shape[s:e + 1]),) + x._shape[e + 1:]
    return reshape(x, shape)


def unflatten(x: TensorBase, dim: int, sizes: Sequence[int]) -> TensorBase:
    d = normalize_dim(dim, x.dim())
    sizes = infer_size(tuple(sizes), x._shape[d])
    return view(x, x._shape[:d] + tuple(sizes) + x._shape[d + 1:])


# ---------------------------------------------------------------------------
# permutations
# ---------------------------------------------------------------------------
class Transpose(Function):
    _backward_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, d0: int, d1: int) -> TensorBase:
        ctx.dims = (d0, d1)
        shape, stride = list(x._shape), list(x._stride)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        stride[d0], stride[d1] = stride[d1], stride[d0]
        return _view_of(x, shape, stride, x._offset)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return transpose(g, *ctx.dims), None, None


class T(Transpose):
    _backward_name = "TBackward0"


def transpose(x: TensorBase, dim0: int, dim1: int) -> TensorBase:
    n = x.dim()
    if not n:
        # A 0-d tensor accepts dims -1 and 0, as a 1-d one would (others raise IndexError).
        normalize_dim(dim0, 1), normalize_dim(dim1, 1)
        return _alias_view(x)
    return Transpose.apply(x, normalize_dim(dim0, n), normalize_dim(dim1, n))


swapaxes = transpose


def _alias_view(x: TensorBase) -> TensorBase:
    return View.apply(x, x._shape)


def t(x: TensorBase) -> TensorBase:
    """Transpose a matrix (a 0-d or 1-d tensor is returned as is)."""
    if x.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.dim()}D")
    if x.dim() < 2:
        return _alias_view(x)
    return T.apply(x, 0, 1)


class Permute(Function):
    _backward_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dims: tuple) -> TensorBase:
        ctx.dims = dims
        return _view_of(x, [x._shape[d] for d in dims], [x._stride[d] for d in dims],
                        x._offset)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        inverse = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inverse[d] = i
        return permute(g, tuple(inverse)), None


def permute(x: TensorBase, *dims: Any) -> TensorBase:
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _shape_arg(dims)
    if len(dims) != x.dim():
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {x.dim()} is not equal to len(dims) = {len(dims)}"
                           .replace("(sparse_coo)", ""))
    return Permute.apply(x, normalize_dims(dims, x.dim()))


def movedim(x: TensorBase, source: Any, destination: Any) -> TensorBase:
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    n = x.dim()
    src = normalize_dims(src, n)
    dst = normalize_dims(dst, n)
    if n == 0:              # a 0-d tensor: dims 0 and -1 name it, and nothing moves
        return permute(x, ())
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    order = [o if o is not None else next(rest) for o in order]
    return permute(x, tuple(order))


# ---------------------------------------------------------------------------
# squeeze / unsqueeze / expand
# ---------------------------------------------------------------------------
class Squeeze(Function):
    _backward_name = "SqueezeBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dims: tuple) -> TensorBase:
        ctx.in_shape = x._shape
        keep = [d for d in range(x.dim()) if not (d in dims and x._shape[d] == 1)]
        return _view_of(x, [x._shape[d] for d in keep], [x._stride[d] for d in keep],
                        x._offset)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return reshape(g, ctx.in_shape), None


class SqueezeDim(Squeeze):
    _backward_name = "SqueezeBackward1"


def squeeze(x: TensorBase, dim: Any = None) -> TensorBase:
    if dim is None:
        return Squeeze.apply(x, tuple(range(x.dim())))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if x.dim() == 0:
        normalize_dims(dims, 0)
        return _alias_view(x)
    return SqueezeDim.apply(x, normalize_dims(dims, x.dim()))


class Unsqueeze(Function):
    _backward_name = "UnsqueezeBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dim: int) -> TensorBase:
        ctx.dim = dim
        shape, stride = list(x._shape), list(x._stride)
        # The new dim's stride: anything works for size 1; PyTorch uses this.
        new_stride = stride[dim] * shape[dim] if dim < len(shape) else 1
        shape.insert(dim, 1)
        stride.insert(dim, new_stride)
        return _view_of(x, shape, stride, x._offset)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return squeeze(g, ctx.dim), None


def unsqueeze(x: TensorBase, dim: int) -> TensorBase:
    return Unsqueeze.apply(x, normalize_dim(dim, x.dim() + 1))


def sum_to_shape(g: TensorBase, shape: tuple) -> TensorBase:
    """The backward of broadcasting: the gradient ``g`` of a broadcast tensor, for the
    tensor of ``shape`` it was broadcast from.

    Args:
        g: a gradient whose shape is ``shape`` broadcast to something larger
        (more dims in front, or size-1 dims stretched).

        shape: the shape of the tensor before broadcasting.

    Returns:
        A tensor of exactly ``shape``: each of its elements is the sum of the
        elements of ``g`` that read it through the broadcast.  Written with
        tensor ops, so that it can be differentiated again.  Example:
        ``sum_to_shape(ones(2, 3), (1, 3))`` is ``[[2., 2., 2.]]``, and
        ``sum_to_shape(ones(2, 3), ())`` is ``6.``.
    """
    if g._shape == tuple(shape):
        return g                  # nothing was broadcast (the common case, and no copy)
    # Task 3.5: the gradient g of a broadcast tensor, summed back to the shape it was
    # broadcast from.
    ### BEGIN SOLUTION
    lead = g.dim() - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and g._shape[i + lead] != 1)
    out = g.sum(dims, keepdim=True) if dims else g
    if lead:
        out = reshape(out, shape)
    elif out._shape != tuple(shape):
        out = reshape(out, shape)
    return out
    ### END SOLUTION


class Expand(Function):
    _backward_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, shape: tuple) -> TensorBase:
        ctx.in_shape = x._shape
        new_shape, strides = expand_strides(x._shape, x._stride, shape)
        return _view_of(x, new_shape, strides, x._offset)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return sum_to_shape(g, ctx.in_shape), None


def expand(x: TensorBase, *sizes: Any) -> TensorBase:
    return Expand.apply(x, _shape_arg(sizes))


def broadcast_to(x: TensorBase, shape: Sequence[int]) -> TensorBase:
    return expand(x, tuple(shape))


# ---------------------------------------------------------------------------
# Slicing-like views through layout functions
# ---------------------------------------------------------------------------
class _StridedView(Function):
    """A view given by a layout function ``fn(shape, stride, offset) -> layout``."""

    _backward_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, fn: Callable) -> TensorBase:
        ctx.in_shape = x._shape
        ctx.fn = fn
        shape, stride, offset = fn(x._shape, x._stride, x._offset)
        return _view_of(x, shape, stride, offset)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return ViewScatter.apply(g, ctx.in_shape, ctx.fn), None


class ViewScatter(Function):
    """Backward of a strided view: zeros of the input's shape with ``g`` written into the view."""

    _backward_name = "AsStridedScatterBackward0"

    @staticmethod
    def forward(ctx: Any, g: TensorBase, in_shape: tuple, fn: Callable) -> TensorBase:
        ctx.fn = fn
        out = kernels.empty(in_shape, g.dtype, g.device)
        kernels.fill(out, 0)
        shape, stride, offset = fn(in_shape, contiguous_strides(in_shape), 0)
        kernels.copy(g._operand(), out, target=kernels.operand(out, shape, stride, offset))
        return out

    @staticmethod
    def backward(ctx: Any, gg: TensorBase):
        return strided_view(gg, ctx.fn), None, None


def strided_view(x: TensorBase, fn: Callable, name: str = "AsStridedBackward0") -> TensorBase:
    cls = _VIEW_CLASSES.get(name)
    if cls is None:
        cls = _VIEW_CLASSES[name] = type(name.replace("Backward0", "").replace("Backward1", ""),
                                         (_StridedView,), {"_backward_name": name})
    return cls.apply(x, fn)


_VIEW_CLASSES: dict = {}


def select(x: TensorBase, dim: int, index: int) -> TensorBase:
    """``x[..., index, ...]`` along ``dim``: a view with that dim removed."""
    if x.dim() == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, x.dim())
    size = x._shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x._shape)} at dimension {d}")
    i = index + size if index < 0 else index

    def fn(shape, stride, offset, d=d, i=i):
        return (shape[:d] + shape[d + 1:], stride[:d] + stride[d + 1:], offset + i * stride[d])
    return strided_view(x, fn, "SelectBackward0")


def narrow(x: TensorBase, dim: int, start: Any, length: int) -> TensorBase:
    if x.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, x.dim())
    size = x._shape[d]
    start = int(start)
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return _slice(x, d, start, start + length, 1)


def _slice(x: TensorBase, d: int, start: int, stop: int, step: int) -> TensorBase:
    n = max(0, (stop - start + step - 1) // step)

    def fn(shape, stride, offset, d=d, start=start, n=n, step=step):
        return (shape[:d] + (n,) + shape[d + 1:],
                stride[:d] + (stride[d] * step,) + stride[d + 1:],
                offset + (start * stride[d] if n else 0))
    return strided_view(x, fn, "SliceBackward0")


def split(x: TensorBase, split_size_or_sections: Any, dim: int = 0) -> tuple:
    d = normalize_dim(dim, x.dim())
    size = x._shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and not (step == 0 and size == 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {size}")
        # An empty dim still gives one (empty) piece, as PyTorch's split does.
        sizes = [min(step, size - s) for s in range(0, size, step)] if step and size else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
    out, start = [], 0
    for s in sizes:
        out.append(_slice(x, d, start, start + s, 1))
        start += s
    return tuple(out)


def chunk(x: TensorBase, chunks: int, dim: int = 0) -> tuple:
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = normalize_dim(dim, x.dim())
    size = x._shape[d]
    if size == 0:
        return split(x, [0] * chunks, d)      # PyTorch: `chunks` empty pieces
    step = -(-size // chunks)
    return split(x, step, d)


def tensor_split(x: TensorBase, indices_or_sections: Any, dim: int = 0) -> tuple:
    d = normalize_dim(dim, x.dim())
    size = x._shape[d]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        base, extra = divmod(size, n)
        sizes = [base + 1] * extra + [base] * (n - extra)
        return split(x, sizes, d)
    bounds = [0] + [min(max(int(i), 0), size) for i in indices_or_sections] + [size]
    return tuple(_slice(x, d, a, max(a, b), 1) for a, b in zip(bounds[:-1], bounds[1:]))


def unbind(x: TensorBase, dim: int = 0) -> tuple:
    d = normalize_dim(dim, x.dim())
    return tuple(select(x, d, i) for i in range(x._shape[d]))


def diagonal(x: TensorBase, offset: int = 0, dim1: int = 0, dim2: int = 1) -> TensorBase:
    a = normalize_dim(dim1, x.dim())
    b = normalize_dim(dim2, x.dim())
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")

    def fn(shape, stride, off, a=a, b=b, k=offset):
        if k >= 0:
            n = max(0, min(shape[a], shape[b] - k))
            start = off + (k * stride[b] if n else 0)
        else:
            n = max(0, min(shape[a] + k, shape[b]))
            start = off + (-k * stride[a] if n else 0)
        keep = [i for i in range(len(shape)) if i not in (a, b)]
        return (tuple(shape[i] for i in keep) + (n,),
                tuple(stride[i] for i in keep) + (stride[a] + stride[b],), start)
    return strided_view(x, fn, "DiagonalBackward0")


def as_strided(x: TensorBase, size: Sequence[int], stride: Sequence[int],
               storage_offset: int | None = None) -> TensorBase:
    """A view with any geometry over ``x``'s storage (checked to stay inside it)."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    offset = x._offset if storage_offset is None else int(storage_offset)
    lo, hi = storage_span(size, stride, offset)
    storage_n = kernels.buffer(x).shape[0]
    if offset < 0 or hi > storage_n:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {x.dtype.itemsize} requiring a storage size of "
            f"{hi * x.dtype.itemsize} are out of bounds for storage of size "
            f"{storage_n * x.dtype.itemsize}")
    return AsStrided.apply(x, size, stride, offset)


class AsStrided(Function):
    """``as_strided``: a view whose geometry is given in *storage* positions.

    Unlike the other views, its result does not depend on ``x``'s strides, so
    backward cannot work in ``x``'s index space: it routes the gradient
    through the storage instead (see :class:`_StorageRoute`).
    """

    _backward_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, size: tuple, stride: tuple, offset: int) -> TensorBase:
        ctx.geometry = ((x._shape, x._stride, x._offset), (size, stride, offset),
                        kernels.buffer(x).shape[0])
        return _view_of(x, size, stride, offset)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return _StorageRoute.apply(g, ctx.geometry, False), None, None, None


def _positions(shape: tuple, stride: tuple, offset: int):
    """The storage position of every element of a header, as an int64 array of ``shape``."""
    import numpy as np
    pos = np.full((), offset, dtype=np.int64)
    for n, st in zip(shape, stride):
        pos = pos[..., None] + np.arange(n, dtype=np.int64) * st
    return pos


class _StorageRoute(Function):
    """Move values between two headers over one storage: summed in, then read out.

    Forward (``reverse=False``): ``g`` sits at the view's positions; each input
    element receives the sum of what lands on its storage position.
    ``reverse=True`` is the adjoint (used for double backward).
    """

    _backward_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx: Any, g: TensorBase, geometry: tuple, reverse: bool) -> TensorBase:
        import numpy as np
        ctx.geometry, ctx.reverse = geometry, reverse
        inp, view_geo, n = geometry
        src, dst = (inp, view_geo) if reverse else (view_geo, inp)
        values = np.asarray(g.detach()._host_array(), dtype=np.float64)
        buf = np.bincount(_positions(*src).reshape(-1), weights=values.reshape(-1),
                          minlength=n)
        out = buf[_positions(*dst)] if dst[0] else buf[_positions(*dst)].reshape(())
        return tensor(out.astype(g.dtype.np), device=g.device)

    @staticmethod
    def backward(ctx: Any, gg: TensorBase):
        return _StorageRoute.apply(gg, ctx.geometry, not ctx.reverse), None, None


# ---------------------------------------------------------------------------
# copies: contiguous, clone, detach, cat, stack, flip, repeat
# ---------------------------------------------------------------------------
class Clone(Function):
    _backward_name = "CloneBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, memory_format: Any = None) -> TensorBase:
        return raw_copy(x, memory_format)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return g, None


def clone(x: TensorBase, *, memory_format: Any = None) -> TensorBase:
    """A copy with its own storage; by default laid out like ``x`` (``preserve_format``)."""
    return Clone.apply(x, memory_format)


def contiguous(x: TensorBase, memory_format: Any = contiguous_format) -> TensorBase:
    """``x`` itself if already contiguous (in ``memory_format``), else a contiguous copy."""
    if memory_format is None:
        memory_format = contiguous_format
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if x.is_contiguous(memory_format=memory_format):
        return x
    return Clone.apply(x, memory_format)


@recorded
def detach(x: TensorBase) -> TensorBase:
    """A new leaf that shares storage (and version counter) but has no history."""
    return TensorBase._make(x._storage, x._shape, x._stride, x._offset, x.dtype, base=x)


class Cat(Function):
    _backward_name = "CatBackward0"

    @staticmethod
    def forward(ctx: Any, dim: int, *tensors: TensorBase) -> TensorBase:
        ctx.dim = dim
        ctx.sizes = [t._shape[dim] if t.dim() else 0 for t in tensors]
        ref = next(t for t in tensors if not (t.dim() == 1 and t._shape[0] == 0))
        shape = list(ref._shape)
        shape[dim] = sum(ctx.sizes)
        dt = tensors[0].dtype
        for tt in tensors[1:]:
            dt = promote_types(dt, tt.dtype)
        out = kernels.empty(tuple(shape), dt, ref.device)
        start = 0
        for tt, n in zip(tensors, ctx.sizes):
            if tt.dim() == 1 and tt._shape[0] == 0:
                continue
            offset = start * out._stride[dim]
            kernels.copy(tt._operand(), out,
                         target=kernels.operand(out, tt._shape, out._stride, offset))
            start += n
        return out

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        grads, start = [], 0
        for n in ctx.sizes:
            grads.append(_slice(g, ctx.dim, start, start + n, 1) if n or g.dim() else None)
            start += n
        return (None, *grads)


def cat(tensors: Sequence[TensorBase], dim: int = 0, *, out: TensorBase | None = None) -> TensorBase:
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for t_ in tensors:
        if not isinstance(t_, TensorBase):
            raise TypeError(f"expected Tensor as element {tensors.index(t_)} in argument 0, "
                            f"but got {type(t_).__name__}")
    kernels.check_same_device(*tensors)
    real = [t_ for t_ in tensors if not (t_.dim() == 1 and t_._shape[0] == 0)]
    if not real:
        return clone(tensors[0])
    ref = real[0]
    if ref.dim() == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = normalize_dim(dim, ref.dim())
    for i, t_ in enumerate(tensors):
        if t_.dim() == 1 and t_._shape[0] == 0:
            continue
        if t_.dim() != ref.dim():
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.dim()} "
                               f"and {t_.dim()}")
        for k in range(ref.dim()):
            if k != d and t_._shape[k] != ref._shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref._shape[k]} but got size {t_._shape[k]} for tensor number {i} in the "
                    "list.")
    result = Cat.apply(d, *tensors)
    if out is not None:
        kernels.copy_into(out, result)
        return out
    return result


concat = cat
concatenate = cat


def stack(tensors: Sequence[TensorBase], dim: int = 0, *, out: TensorBase | None = None) -> TensorBase:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._shape
    for i, t_ in enumerate(tensors):
        if t_._shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shape)} at entry 0 and {list(t_._shape)} at entry {i}")
    d = normalize_dim(dim, len(shape) + 1)
    kernels.check_same_device(*tensors)
    result = Stack.apply(d, *tensors)
    if out is not None:
        kernels.copy_into(out, result)
        return out
    return result


class Stack(Function):
    """``stack``: one node whose backward hands each input its slice (like PyTorch's)."""

    _backward_name = "StackBackward0"

    @staticmethod
    def forward(ctx: Any, dim: int, *tensors: TensorBase) -> TensorBase:
        ctx.dim = dim
        return Cat.forward(ctx, dim, *[unsqueeze(t_, dim) for t_ in tensors])

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return (None, *unbind(g, ctx.dim))


def hstack(tensors: Sequence[TensorBase]) -> TensorBase:
    tensors = [t_ if t_.dim() else reshape(t_, (1,)) for t_ in tensors]
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1)


def vstack(tensors: Sequence[TensorBase]) -> TensorBase:
    return cat([t_ if t_.dim() >= 2 else reshape(t_, (1, -1)) for t_ in tensors], 0)


class Flip(Function):
    _backward_name = "FlipBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, dims: tuple) -> TensorBase:
        ctx.dims = dims
        # minitorch has no negative strides, so a flip is a copy read backwards:
        # start at the last element of each flipped dim and step with -stride.
        offset = x._offset
        strides = list(x._stride)
        for d in dims:
            if x._shape[d] > 0:
                offset += (x._shape[d] - 1) * strides[d]
            strides[d] = -strides[d]
        out = kernels.empty(x._shape, x.dtype, x.device)
        if x.numel():
            kernels.copy(kernels.operand(x, x._shape, tuple(strides), offset), out)
        return out

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return flip(g, ctx.dims), None


def flip(x: TensorBase, *dims: Any) -> TensorBase:
    dims = normalize_dims(_shape_arg(dims), x.dim())
    if not x._shape:
        return clone(x)          # a 0-d tensor (dims 0 and -1 name it): a copy, as PyTorch's
    return Flip.apply(x, dims)


def roll(x: TensorBase, shifts: Any, dims: Any = None) -> TensorBase:
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    given = () if dims is None else (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(given) and not (dims is None and len(shifts) == 1):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(given)}")
    if dims is None:           # one shift of the flattened tensor
        return reshape(roll(flatten(x), shifts[0], 0), x._shape)
    dims = given
    out = x
    for s, d in zip(shifts, dims):
        d = normalize_dim(d, x.dim())
        n = x._shape[d]
        if n == 0:
            continue
        s %= n
        if s:
            out = cat([_slice(out, d, n - s, n, 1), _slice(out, d, 0, n - s, 1)], d)
    return out


class Repeat(Function):
    _backward_name = "RepeatBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, sizes: tuple) -> TensorBase:
        ctx.in_shape, ctx.sizes = x._shape, sizes
        lead = len(sizes) - x.dim()
        xs = reshape(x, (1,) * lead + x._shape)
        # Interleave a new size-r axis before each dim, expand it, then merge.
        shape, expanded = [], []
        for r, s in zip(sizes, xs._shape):
            shape += [1, s]
            expanded += [r, s]
        y = expand(reshape(xs, tuple(shape)), tuple(expanded))
        return reshape(contiguous(y), tuple(r * s for r, s in zip(sizes, xs._shape)))

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        # Undo the merge, then sum over the interleaved repeat axes.
        lead = len(ctx.sizes) - len(ctx.in_shape)
        split = []
        for r, s in zip(ctx.sizes, (1,) * lead + ctx.in_shape):
            split += [r, s]
        g = reshape(g, tuple(split)).sum(tuple(range(0, len(split), 2)))
        return reshape(g, ctx.in_shape), None


def repeat(x: TensorBase, *sizes: Any) -> TensorBase:
    """Tile ``x``: ``sizes[i]`` copies along dim i (leading sizes add new dims)."""
    sizes = _shape_arg(sizes)
    if len(sizes) < x.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    return Repeat.apply(x, tuple(sizes))


def tile(x: TensorBase, *dims: Any) -> TensorBase:
    dims = _shape_arg(dims)
    if len(dims) < x.dim():
        dims = (1,) * (x.dim() - len(dims)) + dims
    return repeat(x, dims)




# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(as_strided)
declare(broadcast_to)
declare(cat, "cat", "concat", "concatenate", method=False)
declare(chunk)
declare(clone)
declare(contiguous)
declare(detach)
declare(diagonal)
declare(flatten)
declare(flip)
declare(hstack, method=False)
declare(movedim, "movedim", "moveaxis")
declare(narrow)
declare(permute)
declare(repeat)
declare(reshape)
declare(roll)
declare(select)
declare(split)
declare(squeeze)
declare(stack, method=False)
declare(transpose, "transpose", "swapaxes")
declare(transpose, "swapdims", function=False)
declare(t)
declare(tensor_split)
declare(tile)
declare(unbind)
declare(unflatten)
declare(unsqueeze)
declare(view)
declare(vstack, method=False)
declare(expand, function=False)

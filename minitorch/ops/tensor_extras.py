"""More of PyTorch's Tensor API, each a few lines over existing ops.

* views and their in-place forms: ``unfold`` (sliding windows as a view),
  ``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``, ... (the tensor's own
  header changes, as in PyTorch);
* ``*_scatter``: a copy with a view of it overwritten (``select_scatter``,
  ``slice_scatter``, ``diagonal_scatter``, ``as_strided_scatter``);
* splits, ``sum_to_size``, ``fill_diagonal_``, bit shifts, ``prelu``;
* quantiles and NaN-aware medians, built on ``sort``;
* in-place random fills derived from ``uniform_``/``normal_``
  (``cauchy_``, ``log_normal_``, ``geometric_``);
* torch-level helpers: window functions, ``isin``, ``trapezoid``,
  ``histogram``, ``chain_matmul``, ``pdist``, ``unravel_index``, ``rsub``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Sequence

import numpy as np

from ..autograd import grad_mode
from ..dtype import bool_, float32, int64
from ..layout import normalize_dim, to_index
from ..tensor_base import TensorBase
from . import elementwise as ew
from .creation import arange, empty_strided, from_numpy, linspace, tensor, zeros
from .elementwise import where
from .linalg import dot, matmul
from .reduction import return_types
from .registry import declare
from .views import as_strided, cat, chunk, split, sum_to_shape, transpose

__all__ = ["unfold", "sum_to_size", "split_with_sizes", "narrow_copy", "select_scatter",
           "slice_scatter", "diagonal_scatter", "as_strided_scatter", "fill_diagonal_",
           "bitwise_left_shift", "bitwise_right_shift", "prelu", "quantile", "nanquantile",
           "nanmedian", "mode", "isin", "trapezoid", "cumulative_trapezoid", "histogram",
           "chain_matmul", "pdist", "unravel_index", "rsub", "get_device", "frombuffer",
           "torch_range", "empty_permuted", "fill", "hann_window", "hamming_window",
           "blackman_window", "bartlett_window"]


# ---------------------------------------------------------------------------
# views
# ---------------------------------------------------------------------------
def unfold(input: TensorBase, dimension: int, size: int, step: int) -> TensorBase:
    """All windows of ``size`` elements, ``step`` apart, along ``dimension``, as a view.

    The windows become a new last dim: shape ``(..., n_windows, ..., size)``;
    window ``i`` starts ``i * step`` elements in, so its stride is
    ``step * stride[dimension]`` (elements are shared, not copied).
    """
    d = normalize_dim(dimension, max(input.dim(), 1))
    n = input._shape[d] if input.dim() else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if input.dim() == 0:
        return input.reshape(1)
    shape = list(input._shape)
    stride = list(input.stride())
    shape[d] = (n - size) // step + 1
    inner = stride[d]
    stride[d] = step * inner
    return as_strided(input, shape + [size], stride + [inner], input.storage_offset())


def _inplace_view(self: TensorBase, view: TensorBase) -> TensorBase:
    """Make ``self`` take the header (and history) of ``view``, one of its own views."""
    if grad_mode.is_grad_enabled() and self.requires_grad and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    self._shape, self._stride, self._offset = view._shape, view._stride, view._offset
    if view.grad_fn is not None:
        self.grad_fn = view.grad_fn
    return self


def t_(self: TensorBase) -> TensorBase:
    """In-place :meth:`Tensor.t`: this tensor's own header is transposed."""
    return _inplace_view(self, self.t())


def transpose_(self: TensorBase, dim0: int, dim1: int) -> TensorBase:
    """In-place :meth:`Tensor.transpose`."""
    return _inplace_view(self, self.transpose(dim0, dim1))


def squeeze_(self: TensorBase, *dim: Any) -> TensorBase:
    """In-place :meth:`Tensor.squeeze`."""
    return _inplace_view(self, self.squeeze(*dim))


def unsqueeze_(self: TensorBase, dim: int) -> TensorBase:
    """In-place :meth:`Tensor.unsqueeze`."""
    return _inplace_view(self, self.unsqueeze(dim))


def as_strided_(self: TensorBase, size: Sequence[int], stride: Sequence[int],
                storage_offset: int | None = None) -> TensorBase:
    """In-place :meth:`Tensor.as_strided`."""
    return _inplace_view(self, as_strided(self, size, stride, storage_offset))


def sum_to_size(self: TensorBase, *size: Any) -> TensorBase:
    """Sum over the broadcast dims so that the result has ``size`` (the backward of ``expand``)."""
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    return sum_to_shape(self, tuple(shape))


def split_with_sizes(self: TensorBase, split_sizes: Sequence[int], dim: int = 0) -> tuple:
    """``split`` with a list of sizes that must add up to the size of ``dim``."""
    d = normalize_dim(dim, self.dim())
    if sum(split_sizes) != self._shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{self._shape[d]} (input tensor's size at dimension {dim}), but got "
                           f"split_sizes={list(split_sizes)}")
    return self.split(list(split_sizes), d)


def narrow_copy(self: TensorBase, dim: int, start: int, length: int) -> TensorBase:
    """``narrow``, copied into new memory."""
    return self.narrow(dim, start, length).clone()


def new_empty_strided(self: TensorBase, size: Sequence[int], stride: Sequence[int], *,
                      dtype: Any = None, device: Any = None, requires_grad: bool = False,
                      **kwargs: Any) -> TensorBase:
    """An uninitialised tensor with the given geometry, like this one by default."""
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)


# ---------------------------------------------------------------------------
# *_scatter: a copy with one view of it overwritten
# ---------------------------------------------------------------------------
def _write_into_view(input: TensorBase, src: TensorBase, view_of: Any) -> TensorBase:
    out = input.clone()
    target = view_of(out)
    if target._shape != src._shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src._shape)}, slice size = {list(target._shape)}")
    target.copy_(src)
    return out


def select_scatter(input: TensorBase, src: TensorBase, dim: int, index: int) -> TensorBase:
    """A copy of ``input`` with ``input.select(dim, index)`` replaced by ``src``."""
    return _write_into_view(input, src, lambda t: t.select(dim, index))


def slice_scatter(input: TensorBase, src: TensorBase, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> TensorBase:
    """A copy of ``input`` with the slice ``start:end:step`` along ``dim`` replaced by ``src``."""
    d = normalize_dim(dim, input.dim())
    index = (slice(None),) * d + (slice(start, end, step),)
    return _write_into_view(input, src, lambda t: t[index])


def diagonal_scatter(input: TensorBase, src: TensorBase, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> TensorBase:
    """A copy of ``input`` with a diagonal replaced by ``src``."""
    return _write_into_view(input, src, lambda t: t.diagonal(offset, dim1, dim2))


def as_strided_scatter(input: TensorBase, src: TensorBase, size: Sequence[int],
                       stride: Sequence[int], storage_offset: int | None = None) -> TensorBase:
    """A copy of ``input`` with the ``as_strided`` view of it replaced by ``src``."""
    return _write_into_view(input.contiguous(), src,
                            lambda t: as_strided(t, size, stride, storage_offset))


def fill_diagonal_(self: TensorBase, fill_value: Any, wrap: bool = False) -> TensorBase:
    """Write ``fill_value`` on the main diagonal (all dims equal, or a matrix) in place.

    For a tall matrix with ``wrap=True`` the diagonal starts again after
    each block of ``cols + 1`` rows, as NumPy's ``fill_diagonal``.
    """
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self._shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n = min(self._shape)
    step = sum(self.stride())
    if wrap and self.dim() == 2 and self._shape[0] > self._shape[1]:
        rows, cols = self._shape
        # Row r holds a diagonal element at column r % (cols + 1), if that is a column.
        positions = [r * self.stride()[0] + (r % (cols + 1)) * self.stride()[1]
                     for r in range(rows) if r % (cols + 1) < cols]
        for p in positions:
            as_strided(self, (1,), (1,), self.storage_offset() + p).fill_(fill_value)
        return self
    as_strided(self, (n,), (step,), self.storage_offset()).fill_(fill_value)
    return self


# ---------------------------------------------------------------------------
# elementwise
# ---------------------------------------------------------------------------
def _check_shift(name: str, input: Any, other: Any) -> None:
    """Shifts are for integer (and bool) tensors: PyTorch has no float kernel for them."""
    for x in (input, other):
        if isinstance(x, TensorBase) and x.dtype.is_floating_point:
            raise NotImplementedError(
                f"\"{name}_{x.device.type}\" not implemented for '{x.dtype._legacy}'")


def bitwise_left_shift(input: Any, other: Any) -> TensorBase:
    """``input << other`` for integers: ``input * 2**other``."""
    _check_shift("lshift", input, other)
    return ew.mul(input, ew.pow(2, other) if isinstance(other, TensorBase) else 2 ** int(other))


def bitwise_right_shift(input: Any, other: Any) -> TensorBase:
    """``input >> other`` for integers (arithmetic: rounds towards -inf, like Python's ``>>``)."""
    _check_shift("rshift", input, other)
    return ew.floor_divide(input, ew.pow(2, other) if isinstance(other, TensorBase)
                           else 2 ** int(other))


def prelu(input: TensorBase, weight: TensorBase) -> TensorBase:
    """``x`` where ``x >= 0``, else ``weight * x``; ``weight`` has one value or one per channel (dim 1)."""
    if weight.numel() == 1:
        w = weight.reshape(())      # one slope: a scalar, so the result has input's shape
    else:
        if input.dim() < 2 or input._shape[1] != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{input._shape[1] if input.dim() > 1 else 1}.")
        w = weight.reshape((1, -1) + (1,) * (input.dim() - 2))
    return where(input >= 0, input, w * input)


# ---------------------------------------------------------------------------
# quantiles and medians that skip NaN
# ---------------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name: str, input: TensorBase, q: Any, dim: Any, keepdim: bool,
              interpolation: str, ignore_nan: bool) -> TensorBase:
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    scalar_q = not isinstance(q, TensorBase)
    qs = tensor([float(q)] if scalar_q else q.reshape(-1).tolist(), dtype=input.dtype,
                device=input.device)
    if bool(((qs < 0) | (qs > 1)).any()):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    x = input.reshape(-1) if dim is None else input.movedim(normalize_dim(dim, input.dim()), -1)
    values = x.sort(-1).values                         # NaN sorts last
    nan = ew.isnan(x)
    n_valid = (~nan).sum(-1, keepdim=True) if ignore_nan else \
        x.new_full(x._shape[:-1] + (1,), x._shape[-1], dtype=int64)
    last = (n_valid - 1).clamp(min=0).to(x.dtype)
    rank = qs.reshape((1,) * (x.dim() - 1) + (-1,)) * last      # (..., len(q))
    if interpolation == "lower":
        rank = rank.floor()
    elif interpolation == "higher":
        rank = rank.ceil()
    elif interpolation == "nearest":
        rank = rank.round()
    lo = rank.floor().to(int64)
    hi = rank.ceil().to(int64)
    v_lo, v_hi = values.gather(-1, lo), values.gather(-1, hi)
    frac = (rank - lo.to(x.dtype)) if interpolation != "midpoint" else \
        where(hi > lo, x.new_full((), 0.5), x.new_zeros(()))
    out = v_lo + (v_hi - v_lo) * frac
    missing = (n_valid == 0) if ignore_nan else nan.any(-1, keepdim=True)
    out = where(missing, x.new_full((), math.nan), out)
    out = out.movedim(-1, 0)                            # q first, as PyTorch
    if dim is not None and keepdim:
        out = out.unsqueeze(normalize_dim(dim, input.dim()) + 1)
    elif dim is None and keepdim:
        out = out.reshape((out._shape[0],) + (1,) * input.dim())
    return out[0] if scalar_q else out


def quantile(input: TensorBase, q: Any, dim: Any = None, keepdim: bool = False, *,
             interpolation: str = "linear", out: Any = None) -> TensorBase:
    """The ``q``-th quantiles along ``dim`` (of all elements if None); NaN if any element is NaN."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input: TensorBase, q: Any, dim: Any = None, keepdim: bool = False, *,
                interpolation: str = "linear", out: Any = None) -> TensorBase:
    """:func:`quantile` ignoring NaN elements."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


def nanmedian(input: TensorBase, dim: Any = None, keepdim: bool = False) -> Any:
    """The lower median of the non-NaN elements (with ``dim``: ``(values, indices)``)."""
    x = input.reshape(-1) if dim is None else input.movedim(normalize_dim(dim, input.dim()), -1)
    if x.dim() == 0:
        x = x.reshape(1)
    values, order = x.sort(-1)
    n_valid = (~ew.isnan(x)).sum(-1, keepdim=True)
    pos = ((n_valid - 1).clamp(min=0) // 2)
    med = values.gather(-1, pos)
    idx = order.gather(-1, pos)
    if x.dtype.is_floating_point:        # an integer has no NaN: nothing to mark
        med = where(n_valid == 0, x.new_full((), math.nan), med)
    if dim is None:
        return med.reshape(())
    d = normalize_dim(dim, input.dim())
    med, idx = med.squeeze(-1), idx.squeeze(-1)
    if keepdim:
        med, idx = med.unsqueeze(d), idx.unsqueeze(d)
    return return_types.nanmedian(med, idx)


# ---------------------------------------------------------------------------
# in-place random fills, transformed from uniform_ / normal_ draws
# ---------------------------------------------------------------------------
def _fill_from(self: TensorBase, values: TensorBase) -> TensorBase:
    with grad_mode.no_grad():
        self.copy_(values)
    return self


def cauchy_(self: TensorBase, median: float = 0.0, sigma: float = 1.0, *,
            generator: Any = None) -> TensorBase:
    """Fill with Cauchy samples: ``median + sigma * tan(pi * (u - 1/2))``, ``u`` uniform."""
    u = self.new_empty(self._shape).uniform_(generator=generator)
    return _fill_from(self, ew.tan((u - 0.5) * math.pi) * sigma + median)


def log_normal_(self: TensorBase, mean: float = 1.0, std: float = 2.0, *,
                generator: Any = None) -> TensorBase:
    """Fill with ``exp(N(mean, std))`` samples."""
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    z = self.new_empty(self._shape).normal_(mean, std, generator=generator)
    return _fill_from(self, ew.exp(z))


def geometric_(self: TensorBase, p: float, *, generator: Any = None) -> TensorBase:
    """Fill with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    u = self.new_empty(self._shape, dtype=float32).uniform_(generator=generator)
    # Inversion: ceil(log(1 - u) / log(1 - p)), with 1 - u in (0, 1].
    k = (ew.log(1.0 - u) / math.log(1.0 - p)).ceil().clamp(min=1)
    return _fill_from(self, k)


def mode(input: TensorBase, dim: int = -1, keepdim: bool = False) -> Any:
    """``(values, indices)``: the most frequent value along ``dim`` and where it last occurs.

    Among equally frequent values the smallest wins, as in PyTorch.  Sorting
    puts equal values next to each other; each element learns the length of
    its run of equals, and the first element of the longest run is the mode.
    """
    d = normalize_dim(dim, max(input.dim(), 1))
    x = input.reshape(1) if input.dim() == 0 else input.movedim(d, -1)
    n = x._shape[-1]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    with grad_mode.no_grad():
        values, order = x.sort(-1)
        starts = cat([values.new_ones(values._shape[:-1] + (1,), dtype=bool_),
                      values[..., 1:] != values[..., :-1]], -1)
        run = starts.to(int64).cumsum(-1) - 1
        counts = zeros(run._shape, dtype=int64, device=x.device).scatter_add(
            -1, run, run.new_ones(run._shape))
        first_of_best = counts.gather(-1, run).argmax(-1, keepdim=True)
        best = values.gather(-1, first_of_best)
        positions = arange(n, device=x.device)
        last = where(x == best, positions, positions.new_full((), -1)).amax(-1, keepdim=True)
        index = where(last < 0, order.gather(-1, first_of_best), last)
    out = x.gather(-1, index)                 # differentiable: the gradient goes to ``index``
    if input.dim() == 0:
        return return_types.mode(out.reshape(()), index.reshape(()))
    out, index = out.squeeze(-1), index.squeeze(-1)
    if keepdim:
        out, index = out.unsqueeze(d), index.unsqueeze(d)
    return return_types.mode(out, index)


# ---------------------------------------------------------------------------
# torch-level helpers
# ---------------------------------------------------------------------------
def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> TensorBase:
    """Whether each element of ``elements`` occurs in ``test_elements``."""
    e = elements if isinstance(elements, TensorBase) else tensor(elements)
    t = test_elements if isinstance(test_elements, TensorBase) else tensor(test_elements)
    hit = (e.reshape(-1, 1) == t.reshape(1, -1)).any(-1).reshape(e._shape)
    return ~hit if invert else hit


def trapezoid(y: TensorBase, x: Any = None, *, dx: Any = None, dim: int = -1) -> TensorBase:
    """The trapezoid rule along ``dim``: ``sum((y[i] + y[i+1]) / 2 * (x[i+1] - x[i]))``."""
    d = normalize_dim(dim, y.dim())
    n = y._shape[d]
    if n == 0:
        return y.sum(d) * 0
    avg = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) / 2
    if isinstance(x, TensorBase):
        spacing = x.diff(dim=-1 if x.dim() == 1 else d)
        if x.dim() == 1:
            spacing = spacing.reshape((-1,) + (1,) * (y.dim() - 1 - d))
        return (avg * spacing).sum(d)
    step = 1.0 if x is None and dx is None else (dx if dx is not None else x)
    return avg.sum(d) * step


def trapz(y: TensorBase, x: Any = None, *, dx: Any = None, dim: int = -1) -> TensorBase:
    """``trapezoid`` under NumPy's older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: TensorBase, x: Any = None, *, dx: Any = None,
                         dim: int = -1) -> TensorBase:
    """The running sums of :func:`trapezoid`'s terms along ``dim``."""
    d = normalize_dim(dim, y.dim())
    n = y._shape[d]
    avg = (y.narrow(d, 1, max(n - 1, 0)) + y.narrow(d, 0, max(n - 1, 0))) / 2
    if isinstance(x, TensorBase):
        spacing = x.diff(dim=-1 if x.dim() == 1 else d)
        if x.dim() == 1:
            spacing = spacing.reshape((-1,) + (1,) * (y.dim() - 1 - d))
        return (avg * spacing).cumsum(d)
    step = 1.0 if x is None and dx is None else (dx if dx is not None else x)
    return (avg * step).cumsum(d)


def histogram(input: TensorBase, bins: Any = 100, *, range: Any = None,  # noqa: A002
              weight: TensorBase | None = None, density: bool = False, out: Any = None) -> Any:
    """``(hist, bin_edges)``: counts (or summed weights) of the elements in each bin, like NumPy's."""
    x = input.reshape(-1)
    if isinstance(bins, TensorBase):
        edges = bins.to(input.dtype)
    else:
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.numel():
            lo, hi = float(x.min().item()), float(x.max().item())
        else:
            lo, hi = 0.0, 1.0
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = linspace(lo, hi, int(bins) + 1, dtype=input.dtype, device=input.device)
    nb = edges.numel() - 1
    # Bin i holds edges[i] <= x < edges[i+1]; the last bin also holds its right edge.
    idx = (x.unsqueeze(-1) >= edges[1:-1].unsqueeze(0)).sum(-1)
    inside = (x >= edges[0]) & (x <= edges[-1])
    w = weight.reshape(-1).to(input.dtype) if weight is not None else x.new_ones(x._shape)
    hist = zeros((nb,), dtype=input.dtype, device=input.device).index_add(
        0, idx[inside], w[inside])
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return return_types.histogram(hist, edges)


def chain_matmul(*matrices: TensorBase, out: Any = None) -> TensorBase:
    """The product of the matrices, left to right (deprecated in PyTorch for ``linalg.multi_dot``)."""
    result = matrices[0]
    for m in matrices[1:]:
        result = matmul(result, m)
    return result


def pdist(input: TensorBase, p: float = 2) -> TensorBase:
    """The distances between every pair of rows ``i < j`` of a 2-D input, in row-major order."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    n = input._shape[0]
    i, j = zip(*[(a, b) for a in range(n) for b in range(a + 1, n)]) if n > 1 else ((), ())
    ii = tensor(list(i), dtype=int64, device=input.device)
    jj = tensor(list(j), dtype=int64, device=input.device)
    diff = input.index_select(0, ii) - input.index_select(0, jj)
    absd = diff.abs()
    if p == math.inf:
        return absd.amax(-1) if diff._shape[0] else absd.sum(-1)
    if p == 2:
        return (absd * absd).sum(-1).sqrt()
    return (absd ** p).sum(-1) ** (1.0 / p)


def unravel_index(indices: Any, shape: Sequence[int]) -> tuple:
    """The coordinates in ``shape`` of flat (row-major) ``indices``, one tensor per dim."""
    idx = indices if isinstance(indices, TensorBase) else tensor(indices)
    if idx.dtype.is_floating_point or idx.dtype is bool_:
        raise TypeError("expected 'indices' to be integer dtype, but got "
                        f"{idx.dtype._legacy}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    # layout.to_index (course task 1.2) on a whole tensor of ordinals at once: its integer
    # arithmetic (% and //) works elementwise.  A copy, because `ordinal //= size` is in place.
    coords = [None] * len(shape)
    to_index(idx.to(int64).clone(), shape, coords)
    return tuple(coords)


def get_device(input: TensorBase) -> int:
    """``torch.get_device``: the CUDA device index, or -1 for a CPU tensor."""
    return input.get_device()


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> TensorBase:
    """A 1-D tensor over the memory of a Python buffer (``bytearray``, ``memoryview``, ...), not a copy."""
    arr = np.frombuffer(buffer, dtype=dtype.np, count=count, offset=offset)
    return from_numpy(arr).requires_grad_(requires_grad)


def torch_range(start: Any = 0, end: Any = None, step: Any = 1, *, dtype: Any = None,
                device: Any = None, requires_grad: bool = False, **kwargs: Any) -> TensorBase:
    """Deprecated ``torch.range``: like ``arange`` but *including* ``end``, default float dtype."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    n = int(math.floor((end - start) / step)) + 1
    out = arange(n, dtype=dtype or float32, device=device) * step + start
    return out.requires_grad_(requires_grad)


def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: Any = None,
                   device: Any = None, requires_grad: bool = False, **kwargs: Any) -> TensorBase:
    """An uninitialised tensor whose dims are laid out in memory in the order ``physical_layout``."""
    size, order = tuple(size), tuple(physical_layout)
    strides = [0] * len(size)
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= max(size[d], 1)
    return empty_strided(size, strides, dtype=dtype, device=device, requires_grad=requires_grad)


def fill(input: TensorBase, value: Any) -> TensorBase:
    """``torch.fill``: a new tensor like ``input`` with every element ``value`` (``fill_`` out of place)."""
    return input.clone().fill_(value) if not input.requires_grad else \
        input * 0 + value


def rsub(input: TensorBase, other: Any, *, alpha: Any = 1) -> TensorBase:
    """``other - alpha * input``."""
    return other - (input * alpha if alpha != 1 else input)


def _window(n: int, periodic: bool, dtype: Any, device: Any, terms: Sequence[float]) -> TensorBase:
    """``sum_k (-1)^k a_k cos(2 pi k i / N)``, the generalized cosine window of ``terms``."""
    dt = dtype or float32
    if n == 0:
        return zeros((0,), dtype=dt, device=device)
    if n == 1:
        return zeros((1,), dtype=dt, device=device) + 1
    denom = n if periodic else n - 1
    i = arange(n, dtype=dt, device=device)
    out = zeros((n,), dtype=dt, device=device)
    for k, a in enumerate(terms):
        out = out + ((-1) ** k) * a * ew.cos(i * (2 * math.pi * k / denom))
    return out


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                layout: Any = None, device: Any = None, requires_grad: bool = False) -> TensorBase:
    return _window(window_length, periodic, dtype, device, (0.5, 0.5)).requires_grad_(
        requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False) -> TensorBase:
    return _window(window_length, periodic, dtype, device, (alpha, beta)).requires_grad_(
        requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None,
                    requires_grad: bool = False) -> TensorBase:
    return _window(window_length, periodic, dtype, device, (0.42, 0.5, 0.08)).requires_grad_(
        requires_grad)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None,
                    requires_grad: bool = False) -> TensorBase:
    """The triangular window ``1 - |2i/N - 1|``."""
    dt = dtype or float32
    if window_length <= 1:
        return zeros((window_length,), dtype=dt, device=device) + 1
    denom = window_length if periodic else window_length - 1
    i = arange(window_length, dtype=dt, device=device)
    return (1 - (i * (2.0 / denom) - 1).abs()).requires_grad_(requires_grad)


# ---------------------------------------------------------------------------
# The public forms of this module's ops (see ops/registry.py):
# minitorch.<name>, Tensor.<name> and, with inplace=True, Tensor.<name>_
# ---------------------------------------------------------------------------
declare(as_strided_, function=False)
declare(cauchy_, function=False)
declare(geometric_, function=False)
declare(log_normal_, function=False)
declare(as_strided_scatter)
declare(bartlett_window, method=False)
declare(bitwise_left_shift, inplace=True)
declare(bitwise_right_shift, inplace=True)
declare(blackman_window, method=False)
declare(chain_matmul, method=False)
declare(cumulative_trapezoid, method=False)
declare(diagonal_scatter)
declare(dot, "vdot", function=False)
declare(fill_diagonal_, function=False)
declare(hamming_window, method=False)
declare(hann_window, method=False)
declare(histogram)
declare(isin, method=False)
declare(mode)
declare(nanmedian)
declare(nanquantile)
declare(narrow_copy)
declare(new_empty_strided, function=False)
declare(pdist, method=False)
declare(prelu)
declare(quantile)
declare(rsub, method=False)
declare(get_device, method=False)
declare(frombuffer, method=False)
declare(torch_range, "range", method=False)
declare(empty_permuted, method=False)
declare(fill, method=False)
declare(select_scatter)
declare(slice_scatter)
declare(split_with_sizes)
declare(squeeze_, function=False)
declare(sum_to_size, function=False)
declare(t_, function=False)
declare(transpose_, "transpose_", "swapaxes_", "swapdims_", function=False)
declare(trapezoid, method=False)
declare(trapz, method=False)
declare(unfold, function=False)
declare(unravel_index, method=False)
declare(unsqueeze_, function=False)
declare(split_with_sizes, "unsafe_split_with_sizes")
declare(split, "unsafe_split")
declare(chunk, "unsafe_chunk")
declare(transpose, "swapdims", method=False)

"""More pooling for ``nn.functional``: 3-D, power-average, adaptive max, unpooling, fractional.

``max_pool1d/2d`` and ``avg_pool1d/2d`` have kernels of their own (``ops/conv.py``).
The 3-D pools here take the sliding-window view of ``functional_conv`` and
reduce over its window dims; the winner of a max pool is found with ``max``,
whose gradient goes to that one element.  Indices (``return_indices=True``)
are flat positions in each input plane, like PyTorch's, so ``max_unpool``
can put every value back where it came from.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.grad_mode import no_grad
from ..dtype import int64
from ..ops import conv as conv_ops
from ..ops.creation import arange, ones, tensor, zeros
from ..ops.padding import pad
from ..ops.views import cat, stack
from ..tensor import Tensor
from .functional_conv import ntuple, sliding_windows

__all__ = ["max_pool3d", "avg_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "lp_pool1d",
           "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
           "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices",
           "local_response_norm"]


def _pool_out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output size (ceil mode: the last window must start in bounds)."""
    span = size + 2 * p - d * (k - 1) - 1
    o = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (o - 1) * s >= size + p:
        o -= 1
    return o


def _batched(input: Tensor, n: int, name: str) -> tuple:
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{name}: Expected {n + 1}D or {n + 2}D (batch mode) tensor for "
                           f"input, but got: {list(input.shape)}")
    batched = input.dim() == n + 2
    return (input if batched else input.unsqueeze(0)), batched


def _windows_of(x: Tensor, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple,
                ceil_mode: bool, value: float) -> tuple:
    """Pad ``x`` (with ``value``), ceil-mode extra included; return its windows and out size."""
    spatial = tuple(x.shape[2:])
    out = tuple(_pool_out_size(s, k, st, p, d, ceil_mode)
                for s, k, st, p, d in zip(spatial, kernel, stride, padding, dilation))
    flat = []
    for i in reversed(range(len(kernel))):
        need = (out[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1
        right = max(need - spatial[i] - padding[i], 0)
        flat += [padding[i], right]
    xp = pad(x, tuple(flat), value=value) if any(flat) else x
    win = sliding_windows(xp, kernel, stride, dilation)
    return win, out, tuple(flat)


def _flat_positions(spatial: tuple, flat_pad: tuple, device: Any) -> Tensor:
    """Each padded cell's flat index in the unpadded plane (-1 in the padding)."""
    n = 1
    for s in spatial:
        n *= s
    pos = arange(n, dtype=int64, device=device).reshape((1, 1) + spatial)
    return pad(pos, flat_pad, value=-1) if any(flat_pad) else pos


def _max_pool_nd(input: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                 ceil_mode: bool, return_indices: bool, n: int, name: str) -> Any:
    x, batched = _batched(input, n, name)
    kernel = ntuple(kernel_size, n)
    stride = kernel if stride is None or stride == [] or stride == () else ntuple(stride, n)
    padding, dilation = ntuple(padding, n), ntuple(dilation, n)
    if any(p > k // 2 for p, k in zip(padding, kernel)):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={padding[0]}, kernel_size={kernel[0]} and dilation="
                           f"{dilation[0]}")
    win, out_sp, flat_pad = _windows_of(x, kernel, stride, padding, dilation, ceil_mode,
                                        float("-inf"))
    lead = tuple(win.shape[:2 + n])
    values, arg = win.reshape(lead + (-1,)).max(-1)
    if not batched:
        values = values.squeeze(0)
    if not return_indices:
        return values
    with no_grad():
        pos = _flat_positions(tuple(x.shape[2:]), flat_pad, x.device)
        pos_win = sliding_windows(pos, kernel, stride, dilation).reshape((1, 1) + out_sp + (-1,))
        idx = pos_win.expand(lead + (pos_win.shape[-1],)).gather(-1, arg.unsqueeze(-1))
        idx = idx.squeeze(-1)
    return values, (idx if batched else idx.squeeze(0))


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The largest value in each 3-D window of (N, C, D, H, W)."""
    return _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices, 3, "max_pool3d")


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple:
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple:
    return conv_ops.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple:
    return conv_ops.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each 3-D window (padding counted unless ``count_include_pad=False``)."""
    n = 3
    x, batched = _batched(input, n, "avg_pool3d")
    kernel = ntuple(kernel_size, n)
    stride = kernel if stride is None or stride == [] or stride == () else ntuple(stride, n)
    padding = ntuple(padding, n)
    if any(p > k // 2 for p, k in zip(padding, kernel)):
        raise RuntimeError("pad should be at most half of effective kernel size")
    win, out_sp, flat_pad = _windows_of(x, kernel, stride, padding, (1,) * n, ceil_mode, 0.0)
    lead = tuple(win.shape[:2 + n])
    total = win.reshape(lead + (-1,)).sum(-1)
    if divisor_override is not None:
        out = total / divisor_override
    else:
        with no_grad():
            # Cells that count: the input (and its padding, with count_include_pad), never
            # the extra ceil-mode cells beyond the padding.
            spatial = tuple(x.shape[2:])
            if count_include_pad:
                grown = tuple(s + 2 * p for s, p in zip(spatial, padding))
                mask = ones((1, 1) + grown, dtype=x.dtype, device=x.device)
                extra = []
                for i in reversed(range(n)):
                    extra += [0, flat_pad[2 * (n - 1 - i) + 1] - padding[i]]
                mask = pad(mask, tuple(extra)) if any(extra) else mask
            else:
                mask = pad(ones((1, 1) + spatial, dtype=x.dtype, device=x.device), flat_pad)
            counts = sliding_windows(mask, kernel, stride, (1,) * n).reshape(
                (1, 1) + out_sp + (-1,)).sum(-1)
        out = total / counts
    return out if batched else out.squeeze(0)


def _adaptive_ranges(size: int, out: int) -> list:
    """PyTorch's adaptive windows: ``[floor(i*size/out), ceil((i+1)*size/out))``."""
    return [((i * size) // out, -(-((i + 1) * size) // out)) for i in range(out)]


def _sizes(output_size: Any, spatial: tuple) -> tuple:
    sizes = ntuple(output_size, len(spatial)) if not isinstance(output_size, (tuple, list)) \
        else tuple(output_size)
    return tuple(s if o is None else int(o) for o, s in zip(sizes, spatial))


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average-pool (N, C, D, H, W) to a fixed output size, whatever the input size."""
    x, batched = _batched(input, 3, "adaptive_avg_pool3d")
    out = x
    for axis, o in enumerate(_sizes(output_size, tuple(x.shape[2:]))):
        d = 2 + axis
        parts = [out.narrow(d, a, b - a).mean(d, keepdim=True)
                 for a, b in _adaptive_ranges(out.shape[d], o)]
        out = cat(parts, d)
    return out if batched else out.squeeze(0)


def _adaptive_max_nd(input: Tensor, output_size: Any, return_indices: bool, n: int,
                     name: str) -> Any:
    """Adaptive max pooling: one window per output cell, each with its own extent."""
    x, batched = _batched(input, n, name)
    spatial = tuple(x.shape[2:])
    out_sp = _sizes(output_size, spatial)
    ranges = [_adaptive_ranges(s, o) for s, o in zip(spatial, out_sp)]
    nb, c = x.shape[0], x.shape[1]
    plane = x.reshape(nb, c, -1)
    strides = [1] * n
    for i in range(n - 2, -1, -1):
        strides[i] = strides[i + 1] * spatial[i + 1]
    values, indices = [], []
    for cell in np.ndindex(*out_sp):
        # The flat positions of this cell's window, then the max over them.
        grids = np.meshgrid(*[np.arange(*ranges[i][cell[i]]) for i in range(n)], indexing="ij")
        flat = sum(g * s for g, s in zip(grids, strides)).reshape(-1)
        pos = tensor(flat.tolist(), dtype=int64, device=x.device)
        v, a = plane.index_select(2, pos).max(-1)
        values.append(v)
        if return_indices:
            indices.append(pos.index_select(0, a.reshape(-1)).reshape(a.shape))
    out = stack(values, -1).reshape((nb, c) + out_sp)
    idx = stack(indices, -1).reshape((nb, c) + out_sp) if return_indices else None
    if not batched:
        out = out.squeeze(0)
        idx = idx.squeeze(0) if idx is not None else None
    return (out, idx) if return_indices else out


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    return _adaptive_max_nd(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple:
    return _adaptive_max_nd(input, output_size, True, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple:
    return _adaptive_max_nd(input, output_size, True, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    return _adaptive_max_nd(input, output_size, return_indices, 3, "adaptive_max_pool3d")


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple:
    return _adaptive_max_nd(input, output_size, True, 3, "adaptive_max_pool3d")


def _lp_finish(out: Tensor, norm_type: float, window: int) -> Tensor:
    # PyTorch's formula: (sign(mean) * relu(|mean|) * window) ** (1/p).
    return (out.sign() * out.abs().relu() * window).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling: ``(sum over the window of x^p)^(1/p)``."""
    k = ntuple(kernel_size, 1)[0]
    s = k if stride is None else ntuple(stride, 1)[0]
    out = conv_ops.avg_pool1d(input.pow(norm_type), k, s, 0, ceil_mode)
    return _lp_finish(out, norm_type, k)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    kh, kw = ntuple(kernel_size, 2)
    out = conv_ops.avg_pool2d(input.pow(norm_type), (kh, kw),
                              (kh, kw) if stride is None else stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, kh * kw)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    kd, kh, kw = ntuple(kernel_size, 3)
    out = avg_pool3d(input.pow(norm_type), (kd, kh, kw), stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, kd * kh * kw)


def _max_unpool_nd(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any,
                   padding: Any, output_size: Any, n: int, name: str) -> Tensor:
    """Put each pooled value back at its recorded position; zeros elsewhere."""
    x, batched = _batched(input, n, name)
    idx = indices if batched else indices.unsqueeze(0)
    kernel = ntuple(kernel_size, n)
    stride = kernel if stride is None else ntuple(stride, n)
    padding = ntuple(padding, n)
    default = tuple((s - 1) * st - 2 * p + k for s, st, p, k in
                    zip(x.shape[2:], stride, padding, kernel))
    if output_size is None:
        out_sp = default
    else:
        out_sp = tuple(int(v) for v in tuple(output_size)[-n:])
    nb, c = x.shape[0], x.shape[1]
    size = 1
    for s in out_sp:
        size *= s
    flat_idx = idx.reshape(nb, c, -1)
    if flat_idx.numel() and (int(flat_idx.min()) < 0 or int(flat_idx.max()) >= size):
        raise RuntimeError(f"Found an invalid max index: {int(flat_idx.max())} (output volumes "
                           f"are of size {'x'.join(map(str, out_sp))}")
    out = zeros(nb, c, size, dtype=x.dtype, device=x.device)
    out = out.scatter(2, flat_idx, x.reshape(nb, c, -1)).reshape((nb, c) + out_sp)
    return out if batched else out.squeeze(0)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The partial inverse of ``max_pool1d``: maxima back in place, zeros elsewhere."""
    return _max_unpool_nd(input, indices, kernel_size, stride, padding, output_size, 1,
                          "max_unpool1d")


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    return _max_unpool_nd(input, indices, kernel_size, stride, padding, output_size, 2,
                          "max_unpool2d")


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    return _max_unpool_nd(input, indices, kernel_size, stride, padding, output_size, 3,
                          "max_unpool3d")


# ---------------------------------------------------------------------------
# Fractional max pooling
# ---------------------------------------------------------------------------
def _intervals(sample: np.ndarray, size: int, out: int, k: int, dtype: Any) -> np.ndarray:
    """Window starts, pseudo-random but covering the input (PyTorch's generate_intervals)."""
    starts = np.empty(sample.shape + (out,), dtype=np.int64)
    if out > 1:
        alpha = dtype((size - k) / (out - 1)) if dtype is np.float32 else \
            (size - k) / (out - 1)
        alpha = np.asarray(alpha, dtype=dtype)
        i = np.arange(out - 1, dtype=dtype)
        s = sample.astype(dtype)[..., None]
        starts[..., :-1] = (np.trunc((i + s) * alpha).astype(np.int64)
                            - np.trunc(s * alpha).astype(np.int64))
    if out > 0:
        starts[..., -1] = size - k
    return starts


def _fractional_max_nd(input: Tensor, kernel_size: Any, output_size: Any, output_ratio: Any,
                       return_indices: bool, samples: Tensor | None, n: int, name: str) -> Any:
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         "output_ratio")
    x, batched = _batched(input, n, name)
    spatial = tuple(x.shape[2:])
    kernel = ntuple(kernel_size, n)
    if output_size is None:
        ratio = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * n
        output_size = tuple(int(s * r) for s, r in zip(spatial, ratio))
    out_sp = ntuple(output_size, n)
    for s, o, k in zip(spatial, out_sp, kernel):
        if o + k - 1 >= s:
            raise RuntimeError(f"{name}(): pool size {k} too large relative to input size "
                               f"{s} for output size {o}")
    nb, c = x.shape[0], x.shape[1]
    np_dtype = np.float64 if x.dtype.name == "float64" else np.float32
    if samples is None:
        rnd = np.random.default_rng(int(np.random.randint(0, 2 ** 31)))
        u = rnd.random((nb, c, n)).astype(np_dtype)
    else:
        u = samples.detach().cpu().numpy().astype(np_dtype).reshape(nb, c, n)
    # PyTorch's sample order: [W, H] in 2-D, [T, H, W] in 3-D.
    order = [1, 0] if n == 2 else list(range(n))
    starts = [_intervals(u[..., order[i]], spatial[i], out_sp[i], kernel[i], np_dtype)
              for i in range(n)]
    strides = [1] * n
    for i in range(n - 2, -1, -1):
        strides[i] = strides[i + 1] * spatial[i + 1]
    # flat[n, c, *out, *k] = sum_i (start_i[n, c, o_i] + k_i) * stride_i
    total = np.zeros((nb, c) + out_sp + kernel, dtype=np.int64)
    for i in range(n):
        shape = [nb, c] + [1] * (2 * n)
        shape[2 + i] = out_sp[i]
        kshape = [1] * (2 + 2 * n)
        kshape[2 + n + i] = kernel[i]
        total = total + (starts[i].reshape(shape) + np.arange(kernel[i]).reshape(kshape)) \
            * strides[i]
    flat = tensor(total.reshape(nb, c, -1).tolist(), dtype=int64, device=x.device)
    picked = x.reshape(nb, c, -1).gather(2, flat).reshape((nb, c) + out_sp + (-1,))
    values, arg = picked.max(-1)
    if not batched:
        values = values.squeeze(0)
    if not return_indices:
        return values
    idx = flat.reshape((nb, c) + out_sp + (-1,)).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    return values, (idx if batched else idx.squeeze(0))


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """Max pooling over pseudo-randomly placed windows (Graham, 2014)."""
    return _fractional_max_nd(input, kernel_size, output_size, output_ratio, return_indices,
                              _random_samples, 2, "fractional_max_pool2d")


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any,
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple:
    return _fractional_max_nd(input, kernel_size, output_size, output_ratio, True,
                              _random_samples, 2, "fractional_max_pool2d")


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    return _fractional_max_nd(input, kernel_size, output_size, output_ratio, return_indices,
                              _random_samples, 3, "fractional_max_pool3d")


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any,
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple:
    return _fractional_max_nd(input, kernel_size, output_size, output_ratio, True,
                              _random_samples, 3, "fractional_max_pool3d")


# ---------------------------------------------------------------------------
# Local response normalisation (an average pool over neighbouring channels)
# ---------------------------------------------------------------------------
def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Divide each element by ``(k + alpha * mean of x^2 over `size` neighbouring channels)^beta``.

    The mean runs over a window of channels centred on each channel (AlexNet's
    "local response normalisation"), computed as an average pool along dim 1.
    """
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = (input * input).unsqueeze(1)                     # (N, 1, C, ...)
    n, c = input.shape[0], input.shape[1]
    rest = tuple(input.shape[2:])
    flat = div.reshape(n, 1, c, -1)                        # (N, 1, C, L)
    flat = pad(flat, (0, 0, size // 2, (size - 1) // 2))
    div = conv_ops.avg_pool2d(flat, (size, 1), stride=1).reshape((n, c) + rest)
    div = (div * alpha + k).pow(beta)
    return input / div


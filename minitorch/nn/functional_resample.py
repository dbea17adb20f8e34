"""Resampling for ``nn.functional``: ``interpolate``, pixel and channel shuffles, sampling grids.

``interpolate`` is separable: it resizes one spatial dim at a time.  For each
output position along a dim it computes (in NumPy, once per call, exactly as
PyTorch's kernels do) which input positions it reads and with what weights,
then gathers them with ``index_select`` and sums: the gradient flows back
through ``index_select`` to the input elements that were read.

``pixel_shuffle`` and ``channel_shuffle`` are reshapes and permutations only.
``affine_grid``/``grid_sample`` build and read a sampling grid (spatial
transformer networks).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..dtype import int64
from ..ops import conv as conv_ops, elementwise as elementwise_ops
from ..ops.creation import tensor
from ..ops.linalg import matmul
from ..ops.views import stack
from ..tensor import Tensor
from .functional_pooling import adaptive_avg_pool3d

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear",
           "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
           "affine_grid", "grid_sample"]

_MODES_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def _np_dtype(t: Tensor) -> Any:
    # PyTorch computes source coordinates in the input's precision (float for float32).
    return np.float64 if t.dtype.name == "float64" else np.float32


def _scale(in_size: int, out_size: int, align_corners: bool, scale: float | None,
           dtype: Any) -> Any:
    """PyTorch's area_pixel_compute_scale: the step between source coordinates."""
    if align_corners:
        return dtype((in_size - 1) / (out_size - 1)) if out_size > 1 else dtype(0)
    if scale is not None and scale > 0:
        return dtype(1.0 / scale)
    return dtype(in_size / out_size)


def _source_index(scale: Any, dst: np.ndarray, align_corners: bool, cubic: bool) -> np.ndarray:
    if align_corners:
        return scale * dst
    src = scale * (dst + dst.dtype.type(0.5)) - dst.dtype.type(0.5)
    return src if cubic else np.maximum(src, 0)


def _taps(mode: str, in_size: int, out_size: int, align_corners: bool, scale: float | None,
          dtype: Any) -> list:
    """``[(indices, weights), ...]``: output ``j`` is ``sum(w[j] * input[idx[j]])`` over taps."""
    dst = np.arange(out_size, dtype=dtype)
    if mode in ("nearest", "nearest-exact"):
        # Nearest uses float arithmetic (PyTorch's nearest_idx), and no align_corners.
        s = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
            np.float32(in_size / out_size)
        d = np.arange(out_size, dtype=np.float32)
        if mode == "nearest":
            src = np.floor(d * s)
        else:
            src = np.floor((d + np.float32(0.5)) * s)
        idx = np.minimum(src.astype(np.int64), in_size - 1)
        return [(idx, None)]
    sc = _scale(in_size, out_size, align_corners, scale, dtype)
    if mode in ("linear", "bilinear", "trilinear"):
        src = _source_index(sc, dst, align_corners, cubic=False)
        i0 = np.floor(src).astype(np.int64)
        i0 = np.minimum(i0, in_size - 1)
        i1 = i0 + (i0 < in_size - 1)
        l1 = (src - i0).astype(dtype)
        return [(i0, (1 - l1).astype(dtype)), (i1, l1)]
    if mode == "bicubic":
        src = _source_index(sc, dst, align_corners, cubic=True)
        i = np.floor(src).astype(np.int64)
        t = (src - i).astype(dtype)
        a = dtype(-0.75)

        def near(x: np.ndarray) -> np.ndarray:           # |x| <= 1
            return ((a + 2) * x - (a + 3)) * x * x + 1

        def far(x: np.ndarray) -> np.ndarray:            # 1 < |x| < 2
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

        weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
        return [(np.clip(i - 1 + k, 0, in_size - 1), w.astype(dtype))
                for k, w in enumerate(weights)]
    raise NotImplementedError(f"Got {mode!r} mode for interpolate: minitorch supports "
                              "nearest, nearest-exact, linear, bilinear, bicubic, trilinear "
                              "and area")


def _resize_dim(x: Tensor, dim: int, taps: list) -> Tensor:
    out = None
    for idx, w in taps:
        picked = x.index_select(dim, tensor(idx.tolist(), dtype=int64, device=x.device))
        if w is not None:
            shape = [1] * x.dim()
            shape[dim] = len(w)
            picked = picked * tensor(w.tolist(), dtype=x.dtype, device=x.device).reshape(shape)
        out = picked if out is None else out + picked
    return out


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize the spatial dims of ``(N, C, *spatial)`` to ``size`` or by ``scale_factor``."""
    n = input.dim() - 2
    if n < 1 or n > 3:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.dim()}D) for the modes: nearest | linear | "
                                  f"bilinear | bicubic | trilinear | area | nearest-exact "
                                  f"(got {mode})")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if mode in _MODES_DIMS and _MODES_DIMS[mode] != n:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                  f"{_MODES_DIMS[mode] + 2}D input")
    if antialias:
        raise NotImplementedError("minitorch's interpolate does not support antialias=True")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    spatial = tuple(input.shape[2:])
    if size is not None:
        out_sp = tuple(int(s) for s in size) if isinstance(size, (tuple, list)) else \
            (int(size),) * n
        if len(out_sp) != n:
            raise ValueError(f"Input and output must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(spatial)} and output size of {list(out_sp)}. Please "
                             "provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             "output size in (o1, o2, ...,oK) format.")
        scales = (None,) * n
    else:
        factors = tuple(float(f) for f in scale_factor) if \
            isinstance(scale_factor, (tuple, list)) else (float(scale_factor),) * n
        out_sp = tuple(int(math.floor(s * f)) for s, f in zip(spatial, factors))
        scales = (None,) * n if recompute_scale_factor else factors
    if mode == "area":
        if n == 1:
            return conv_ops.adaptive_avg_pool1d(input, out_sp)
        if n == 2:
            return conv_ops.adaptive_avg_pool2d(input, out_sp)
        return adaptive_avg_pool3d(input, out_sp)
    dtype = _np_dtype(input)
    out = input
    for i in range(n):
        taps = _taps(mode, spatial[i], out_sp[i], bool(align_corners), scales[i], dtype)
        out = _resize_dim(out, 2 + i, taps)
    return out


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated alias of ``interpolate``."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C r^2, H, W) -> (*, C, H r, W r)``: channels become sub-pixel positions."""
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)="
                           f"{c} is not divisible by {r * r}")
    lead = tuple(lead)
    k = len(lead)
    x = input.reshape(lead + (c // (r * r), r, r, h, w))
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(lead + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H r, W r) -> (*, C r^2, H, W)``: the inverse of ``pixel_shuffle``."""
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, "
                           f"but got input with {input.dim()} dimension(s)")
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor, but got {h}x{w} and {r}")
    lead = tuple(lead)
    k = len(lead)
    x = input.reshape(lead + (c, h // r, r, w // r, r))
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(lead + (c * r * r, h // r, w // r))


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``(N, g * k, *)``: interleave the groups' channels (ShuffleNet)."""
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, "
                           f"but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value "
                           f"of groups:{groups}")
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    rest = tuple(input.shape[2:])
    x = input.reshape((n, groups, c // groups) + rest).transpose(1, 2)
    return x.reshape((n, c) + rest)


native_channel_shuffle = channel_shuffle


def _base_coords(size: int, align_corners: bool, like: Tensor) -> Tensor:
    """Evenly spaced coordinates in [-1, 1] (pixel centres unless ``align_corners``)."""
    if size <= 1:
        vals = np.zeros(max(size, 0))
    else:
        vals = np.linspace(-1.0, 1.0, size)
        if not align_corners:
            vals = vals * (size - 1) / size
    return tensor(vals.tolist(), dtype=like.dtype, device=like.device)


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of affine maps ``theta``."""
    align_corners = bool(align_corners)
    size = tuple(int(s) for s in size)
    if len(size) == 4:
        if tuple(theta.shape[1:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{list(size)}. Got {list(theta.shape)}.")
        n, _, h, w = size
        xs = _base_coords(w, align_corners, theta).reshape(1, w).expand(h, w)
        ys = _base_coords(h, align_corners, theta).reshape(h, 1).expand(h, w)
        one = xs * 0 + 1
        base = stack([xs, ys, one], -1).reshape(1, h * w, 3)
        return matmul(base, theta.transpose(1, 2)).reshape(n, h, w, 2)
    if len(size) == 5:
        if tuple(theta.shape[1:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{list(size)}. Got {list(theta.shape)}.")
        n, _, d, h, w = size
        xs = _base_coords(w, align_corners, theta).reshape(1, 1, w).expand(d, h, w)
        ys = _base_coords(h, align_corners, theta).reshape(1, h, 1).expand(d, h, w)
        zs = _base_coords(d, align_corners, theta).reshape(d, 1, 1).expand(d, h, w)
        one = xs * 0 + 1
        base = stack([xs, ys, zs, one], -1).reshape(1, d * h * w, 4)
        return matmul(base, theta.transpose(1, 2)).reshape(n, d, h, w, 3)
    raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                              f"affine transforms, respectively. Got size {list(size)}.")


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample (N, C, H, W) at the points of ``grid`` (N, Ho, Wo, 2), given in [-1, 1].

    Bilinear or nearest sampling, with zeros or border padding (4-D input).
    Gradients flow to the input (through ``gather``) and to the grid (through
    the bilinear weights).
    """
    if input.dim() != 4:
        raise NotImplementedError("minitorch's grid_sample supports 4-D input only")
    if mode not in ("bilinear", "nearest"):
        raise NotImplementedError(f"grid_sample: mode {mode!r} is not supported by minitorch")
    if padding_mode not in ("zeros", "border"):
        raise NotImplementedError(f"grid_sample: padding_mode {padding_mode!r} is not "
                                  "supported by minitorch")
    align_corners = bool(align_corners)
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    ix = _unnormalize(grid[..., 0], w, align_corners)
    iy = _unnormalize(grid[..., 1], h, align_corners)
    if padding_mode == "border":
        ix = elementwise_ops.clamp(ix, 0, w - 1)
        iy = elementwise_ops.clamp(iy, 0, h - 1)
    plane = input.reshape(n, c, h * w)

    def read(yy: Tensor, xx: Tensor) -> Tensor:
        """input[n, :, yy, xx] for integer coordinates; zero outside the image."""
        inside = ((xx >= 0) & (xx <= w - 1) & (yy >= 0) & (yy <= h - 1))
        flat = (elementwise_ops.clamp(yy, 0, h - 1) * w
                + elementwise_ops.clamp(xx, 0, w - 1)).to(int64).reshape(n, 1, ho * wo)
        vals = plane.gather(2, flat.expand(n, c, ho * wo)).reshape(n, c, ho, wo)
        return vals * inside.to(input.dtype).unsqueeze(1)

    if mode == "nearest":
        # Round half to even, like PyTorch's nearbyint.
        return read(iy.detach().round(), ix.detach().round())
    x0, y0 = ix.detach().floor(), iy.detach().floor()
    x1, y1 = x0 + 1, y0 + 1
    wx1, wy1 = ix - x0, iy - y0
    wx0, wy0 = 1 - wx1, 1 - wy1
    return (read(y0, x0) * (wy0 * wx0).unsqueeze(1) + read(y0, x1) * (wy0 * wx1).unsqueeze(1)
            + read(y1, x0) * (wy1 * wx0).unsqueeze(1) + read(y1, x1) * (wy1 * wx1).unsqueeze(1))

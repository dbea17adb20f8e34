"""N-dimensional convolutions for ``nn.functional``: ``conv3d`` and the transposed convolutions.

``conv1d``/``conv2d`` have their own im2col kernels (``ops/conv.py``).  The rest
are written here with one idea: a **sliding-window view**.  ``as_strided`` gives a
tensor of shape ``(N, C, *out, *kernel)`` whose element ``[n, c, o.., k..]`` *is*
input element ``[n, c, o*stride + k*dilation ..]``: no copy, and the gradient of
the view adds back into every input element each window read.  A convolution
is then one matrix product of those windows with the weights.

A transposed convolution is the gradient of a convolution with respect to its
input: spread the input out by the stride (zeros between the elements), pad it
by ``dilation * (kernel - 1) - padding``, and convolve with the kernel flipped
and its in/out channels swapped.
"""

from __future__ import annotations

from typing import Any

from ..ops.linalg import matmul
from ..ops.padding import pad
from ..tensor import Tensor

__all__ = ["conv3d", "conv_transpose1d", "conv_transpose3d", "conv_tbc"]


def ntuple(v: Any, n: int) -> tuple:
    """``v`` repeated ``n`` times, or ``v`` itself as a tuple (length 1 is broadcast)."""
    if isinstance(v, (tuple, list)):
        return tuple(int(x) for x in v) * (n if len(v) == 1 else 1)
    return (int(v),) * n


def sliding_windows(x: Tensor, kernel: tuple, stride: tuple, dilation: tuple) -> Tensor:
    """The view ``(N, C, *out, *kernel)`` of every window of ``x``, ``(N, C, *spatial)``."""
    x = x.contiguous()
    spatial = tuple(x.shape[2:])
    out = tuple((s - d * (k - 1) - 1) // st + 1
                for s, k, st, d in zip(spatial, kernel, stride, dilation))
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size: {spatial}. Calculated output size: {out}. "
                           "Output size is too small")
    strides = x.stride()
    shape = tuple(x.shape[:2]) + out + tuple(kernel)
    step = tuple(strides[:2]) + tuple(strides[2 + i] * stride[i] for i in range(len(kernel))) \
        + tuple(strides[2 + i] * dilation[i] for i in range(len(kernel)))
    return x.as_strided(shape, step, x.storage_offset())


def _padding_pairs(padding: Any, kernel: tuple, dilation: tuple, stride: tuple) -> list:
    """Per-dim (left, right) padding from an int, a tuple or 'valid'/'same'."""
    n = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * n
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for k, d in zip(kernel, dilation)]
            return [(t // 2, t - t // 2) for t in total]
        raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                         "{'valid', 'same'}")
    return [(p, p) for p in ntuple(padding, n)]


def _pad_spatial(x: Tensor, pairs: list, value: float = 0.0) -> Tensor:
    flat = []
    for left, right in reversed(pairs):
        flat += [left, right]
    return x if not any(flat) else pad(x, tuple(flat), value=value)


def conv_nd(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
            dilation: Any, groups: int, n: int, name: str) -> Tensor:
    """An ``n``-d convolution of ``(N, C, *spatial)`` by ``(O, C/groups, *kernel)``."""
    batched = input.dim() == n + 2
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    x = input if batched else input.unsqueeze(0)
    c = x.shape[1]
    o, cg = weight.shape[0], weight.shape[1]
    kernel = tuple(weight.shape[2:])
    if c != cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{list(x.shape)} to have {cg * groups} channels, "
                           f"but got {c} channels instead")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"Input type ({input.dtype.name}) and weight type "
                           f"({weight.dtype.name}) should be the same")
    stride, dilation = ntuple(stride, n), ntuple(dilation, n)
    x = _pad_spatial(x, _padding_pairs(padding, kernel, dilation, stride))
    win = sliding_windows(x, kernel, stride, dilation)            # (N, C, *out, *k)
    nb = win.shape[0]
    out_sp = tuple(win.shape[2:2 + n])
    L = 1
    for s in out_sp:
        L *= s
    K = 1
    for k in kernel:
        K *= k
    # (N, *out, C, *k) -> (G, N*L, Cg*K) @ (G, Cg*K, Og) -> (G, N*L, Og)
    order = (0,) + tuple(range(2, 2 + n)) + (1,) + tuple(range(2 + n, 2 + 2 * n))
    cols = win.permute(*order).reshape(nb * L, groups, cg * K).transpose(0, 1)
    w = weight.reshape(groups, o // groups, cg * K).transpose(1, 2)
    out = matmul(cols, w)                                           # (G, N*L, Og)
    out = out.permute(1, 0, 2).reshape((nb,) + out_sp + (o,))
    out = out.permute(0, n + 1, *range(1, n + 1)).contiguous()
    if bias is not None:
        out = out + bias.reshape((1, o) + (1,) * n)
    return out if batched else out.squeeze(0)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D convolution over (N, C, D, H, W) volumes."""
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _spread(x: Tensor, dim: int, step: int) -> Tensor:
    """Insert ``step - 1`` zeros between neighbouring elements along ``dim``."""
    if step == 1 or x.shape[dim] == 0:
        return x
    size = x.shape[dim]
    moved = x.movedim(dim, -1).unsqueeze(-1)
    moved = pad(moved, (0, step - 1))
    moved = moved.reshape(tuple(moved.shape[:-2]) + (size * step,))
    moved = moved.narrow(-1, 0, (size - 1) * step + 1)
    return moved.movedim(-1, dim)


def conv_transpose_nd(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
                      padding: Any, output_padding: Any, groups: int, dilation: Any, n: int,
                      name: str) -> Tensor:
    """The gradient of an ``n``-d convolution with respect to its input, used as a layer."""
    batched = input.dim() == n + 2
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    x = input if batched else input.unsqueeze(0)
    cin, og = weight.shape[0], weight.shape[1]
    kernel = tuple(weight.shape[2:])
    if x.shape[1] != cin:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, "
                           f"expected input{list(x.shape)} to have {cin} channels, but got "
                           f"{x.shape[1]} channels instead")
    stride, padding = ntuple(stride, n), ntuple(padding, n)
    dilation, output_padding = ntuple(dilation, n), ntuple(output_padding, n)
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            raise RuntimeError("output padding must be smaller than either stride or dilation")
    for i in range(n):
        x = _spread(x, 2 + i, stride[i])
    pairs = [(d * (k - 1) - p, d * (k - 1) - p + op)
             for k, d, p, op in zip(kernel, dilation, padding, output_padding)]
    flat = []
    for left, right in reversed(pairs):
        flat += [left, right]
    x = pad(x, tuple(flat))          # negative amounts crop (padding > dilation * (k - 1))
    # (Cin, Og, *k) -> (G*Og, Cin/G, *k), flipped in space.
    cg = cin // groups
    w = weight.reshape((groups, cg, og) + kernel).transpose(1, 2)
    w = w.reshape((groups * og, cg) + kernel).flip(tuple(range(2, 2 + n)))
    out = conv_nd(x, w, bias, 1, 0, dilation, groups, n, name)
    return out if batched else out.squeeze(0)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """1-D transposed convolution (sometimes called deconvolution): upsamples (N, C, L)."""
    return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 1, "conv_transpose1d")


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """3-D transposed convolution over (N, C, D, H, W)."""
    return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 3, "conv_transpose3d")


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution in (time, batch, channel) layout; weight is (k, C_in, C_out)."""
    out = conv_nd(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, 1, pad, 1, 1, 1,
                  "conv_tbc")
    return out.permute(2, 0, 1)

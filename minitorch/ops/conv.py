"""Convolution and pooling ops.

``conv2d`` is built from two differentiable pieces:

1. ``unfold`` (im2col): every receptive field becomes a column; for the
   whole batch the columns sit side by side, (C*kh*kw, N*L);
2. one matrix product with the flattened weights, (O, C*kh*kw) @ columns.

``unfold``'s backward is ``fold`` (col2im) and ``fold``'s backward is
``unfold``, so convolution gets its gradient, and its gradient's gradient,
from autograd with no hand-written conv backward.  Groups split the channels
into independent convolutions.

``max_pool2d`` records which input won each window and sends the gradient
there; ``avg_pool2d`` is an unfold followed by a mean.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..autograd.grad_mode import backward_builds_graph
from ..autocast_mode import STATE as AUTOCAST
from ..tensor_base import TensorBase
from . import kernels
from .padding import pad
from .linalg import matmul
from .views import cat
from .creation import ones
from ..dtype import float32, float64, int64

__all__ = ["unfold", "fold", "conv1d", "conv2d", "max_pool1d", "max_pool2d", "avg_pool1d",
           "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool2d",
           "conv_transpose2d"]


def _pair(v: Any) -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (int(v[0]), int(v[0]))
        return (int(v[0]), int(v[1]))
    return (int(v), int(v))


def _not_a_pair(**arguments: Any) -> tuple | None:
    """The first ``(name, value)`` of ``arguments`` given as a tuple or list of neither one
    nor two numbers (what :func:`_pair` would silently cut or fail on); ``None`` if none is."""
    for name, value in arguments.items():
        if isinstance(value, (tuple, list)) and len(value) not in (1, 2):
            return name, value
    return None


def _out_size(size: int, k: int, s: int, p: int, d: int) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _geometry(h: int, w: int, kernel: tuple, stride: tuple, padding: tuple,
              dilation: tuple) -> tuple:
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    oh, ow = _out_size(h, kh, sh, ph, dh), _out_size(w, kw, sw, pw, dw)
    return (kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)


def _check_geometry(h: int, w: int, geo: tuple, what: str) -> None:
    kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = geo
    if min(sh, sw) <= 0:
        raise RuntimeError(f"{what}: stride should be greater than zero, but got "
                           f"sH: {sh} sW: {sw}")
    if min(dh, dw) <= 0:
        raise RuntimeError(f"{what}: dilation should be greater than zero, but got "
                           f"dilationH: {dh} dilationW: {dw}")
    if min(ph, pw) < 0:
        raise RuntimeError(f"{what}: negative padding is not supported")
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"Given input size: ({h}x{w}). Calculated output size: ({oh}x{ow}). "
            "Output size is too small")


class Unfold(Function):
    _backward_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, geo: tuple) -> TensorBase:
        n, c, h, w = x.shape
        kh, kw, *_, oh, ow = geo
        ctx.geo, ctx.hw = geo, (h, w)
        src = kernels.contiguous(kernels.cast(x, kernels.compute_dtype(x.dtype)))
        cols = kernels.empty((n, c * kh * kw, oh * ow), src.dtype, x.device)
        kernels.im2col(_array4(src), geo, kernels.array_of(cols, (n, c * kh * kw, oh * ow)),
                       x.device)
        return kernels.cast(cols, x.dtype)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return Fold.apply(g, ctx.hw, ctx.geo), None


class Fold(Function):
    _backward_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx: Any, cols: TensorBase, hw: tuple, geo: tuple) -> TensorBase:
        n, ckk, _ = cols.shape
        kh, kw = geo[0], geo[1]
        c = ckk // (kh * kw)
        ctx.geo = geo
        src = kernels.contiguous(kernels.cast(cols, kernels.compute_dtype(cols.dtype)))
        out = kernels.empty((n, c) + tuple(hw), src.dtype, cols.device)
        kernels.col2im(kernels.array_of(src, tuple(src.shape)), geo, _array4(out), cols.device)
        return kernels.cast(out, cols.dtype)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return Unfold.apply(g, ctx.geo), None, None


class UnfoldBatch(Function):
    """im2col with the batch folded into the columns: (N, C, H, W) -> (C*kh*kw, N*L)."""

    _backward_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, geo: tuple) -> TensorBase:
        n, c, h, w = x.shape
        kh, kw, *_, oh, ow = geo
        ctx.geo, ctx.shape = geo, (n, c, h, w)
        src = kernels.contiguous(kernels.cast(x, kernels.compute_dtype(x.dtype)))
        cols = kernels.empty((c * kh * kw, n * oh * ow), src.dtype, x.device)
        kernels.im2col(_array4(src), geo, kernels.array_of(cols, tuple(cols.shape)), x.device,
                       batched=True)
        return kernels.cast(cols, x.dtype)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return FoldBatch.apply(g, ctx.shape, ctx.geo), None


class FoldBatch(Function):
    _backward_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx: Any, cols: TensorBase, shape: tuple, geo: tuple) -> TensorBase:
        ctx.geo = geo
        src = kernels.contiguous(kernels.cast(cols, kernels.compute_dtype(cols.dtype)))
        out = kernels.empty(shape, src.dtype, cols.device)
        kernels.col2im(kernels.array_of(src, tuple(src.shape)), geo, _array4(out), cols.device,
                       batched=True)
        return kernels.cast(out, cols.dtype)

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        return UnfoldBatch.apply(g, ctx.geo), None, None


class Conv2dDirect(Function):
    """Stride-1 convolution computed from the images themselves: no column matrix.

    The CPU backend's specialised path (``backends/cpu/conv_direct.py``,
    explained in ``docs/kernels.md``); :func:`conv2d` picks it for stride 1
    and enough work, and im2col + matmul for everything else.  Its backward
    is written out (input, weight and bias gradients from two kernels) rather
    than left to autograd; with ``create_graph=True`` it is built from the
    differentiable im2col pieces instead, so double backward still works.
    """

    _backward_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, weight: TensorBase, bias: TensorBase | None,
                geo: tuple, groups: int) -> TensorBase:
        n = x.shape[0]
        o = weight.shape[0]
        oh, ow = geo[-2], geo[-1]
        src, w = kernels.contiguous(x), kernels.contiguous(weight)
        b = None if bias is None else kernels.array_of(kernels.contiguous(bias), (o,))
        out = kernels.empty((n, o, oh, ow), x.dtype, x.device)
        kernels.conv2d_direct(_array4(src), _array4(w), b, geo, groups, _array4(out), x.device)
        ctx.save_for_backward(x, weight)
        ctx.geo, ctx.groups = geo, groups
        return out

    @staticmethod
    def backward(ctx: Any, g: TensorBase):
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        if backward_builds_graph():     # the formula; else the direct convolution's kernel
            return conv2d_backward(x, weight, g, ctx.geo, ctx.groups,
                                   (need_x, need_w, need_b)) + (None, None)
        src, w, gc = kernels.contiguous(x), kernels.contiguous(weight), kernels.contiguous(g)
        gx = kernels.empty(tuple(x.shape), x.dtype, x.device) if need_x else None
        gw = kernels.empty(tuple(weight.shape), x.dtype, x.device) if need_w else None
        gb = kernels.empty((weight.shape[0],), x.dtype, x.device) if need_b else None
        kernels.conv2d_direct_backward(
            _array4(src), _array4(w), _array4(gc), ctx.geo, ctx.groups,
            None if gx is None else _array4(gx), None if gw is None else _array4(gw),
            None if gb is None else kernels.array_of(gb, (weight.shape[0],)), x.device)
        return gx, gw, gb, None, None


def conv2d_backward(x: TensorBase, weight: TensorBase, g: TensorBase, geo: tuple, groups: int,
                    needs: tuple) -> tuple:
    """The gradients of a convolution, built from differentiable ops (so they have gradients too).

    Args:
        x: the convolution's input, shape ``(N, C, H, W)``.

        weight: its filters, shape ``(O, C // groups, kh, kw)``.

        g: the gradient of the loss with respect to the output, ``(N, O, oh, ow)``.

        geo: the geometry ``(kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)``, as
        :class:`UnfoldBatch` and :class:`FoldBatch` take it.

        groups: the input and output channels are split into ``groups`` equal
        groups; output group ``k`` sees input group ``k`` only.

        needs: three booleans: which of (input, weight, bias) want a gradient.

    Returns:
        ``(grad input, grad weight, grad bias)`` in the shapes of ``x``, ``weight``
        and the bias ``(O,)``; ``None`` for each one not needed.

    :class:`Conv2dDirect` uses it under ``create_graph=True``.  Example: a 1x1
    convolution of ``x = [[[[2.]]]]`` with ``weight = [[[[3.]]]]`` and ``g = [[[[1.]]]]``
    gives ``([[[[3.]]]], [[[[2.]]]], [1.])``.
    """
    # Task 4.8: the gradients of conv2d with respect to its input, its weight and its bias,
    # from differentiable ops (im2col's adjoint is col2im), with groups.
    ### BEGIN SOLUTION
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    og = o // groups
    gmat = g.permute(1, 0, 2, 3).reshape(groups, og, -1)              # (G, og, N*L)
    gx = gw = gb = None
    if needs[0]:
        wmat = weight.reshape(groups, og, cg * kh * kw).transpose(1, 2)
        cols = matmul(wmat, gmat).reshape(c * kh * kw, -1)            # (C*kh*kw, N*L)
        gx = FoldBatch.apply(cols, (n, c, h, w), geo)
    if needs[1]:
        cols = UnfoldBatch.apply(x, geo).reshape(groups, cg * kh * kw, -1)
        gw = matmul(gmat, cols.transpose(1, 2)).reshape(weight.shape)
    if needs[2]:
        gb = g.sum((0, 2, 3))
    return gx, gw, gb
    ### END SOLUTION


def conv2d_im2col(x: TensorBase, weight: TensorBase, bias: TensorBase | None, geo: tuple,
                  groups: int) -> TensorBase:
    """A batch's convolution as im2col and matrix products (autograd does the backward).

    Args:
        x: the input, shape ``(N, C, H, W)``.

        weight: the filters, shape ``(O, C // groups, kh, kw)``.

        bias: ``None`` or shape ``(O,)``: added to every pixel of output channel ``o``.

        geo: ``(kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)``, as :class:`UnfoldBatch` takes it.

        groups: the channels are split into ``groups`` equal groups; output group
        ``k`` sees input group ``k`` only.

    Returns:
        The output, shape ``(N, O, oh, ow)``, contiguous (as PyTorch returns it),
        recorded on the graph (only differentiable ops, no kernels called directly).

    Example: a 1x1 filter ``[[[[2.]]]]`` on ``x = [[[[1., 2.]]]]`` with bias ``[1.]``
    gives ``[[[[3., 5.]]]]``.
    """
    # Task 4.7: conv2d's forward for a whole batch, from im2col (UnfoldBatch), as few
    # matrix products as possible and differentiable ops, with groups and bias.
    ### BEGIN SOLUTION
    n = x.shape[0]
    o, cg, kh, kw = weight.shape
    oh, ow = geo[-2], geo[-1]
    # One matrix product for the whole batch: (O, C*kh*kw) @ (C*kh*kw, N*L).
    cols = UnfoldBatch.apply(x, geo)
    if groups == 1:
        out = matmul(weight.reshape(o, -1), cols)                      # (O, N*L)
    else:
        og = o // groups
        cols_g = cols.reshape(groups, cg * kh * kw, n * oh * ow)
        out = matmul(weight.reshape(groups, og, cg * kh * kw), cols_g)  # (G, og, N*L)
    # Back to (N, O, oh, ow), contiguous as PyTorch returns it (so that
    # ``out.view(n, -1)`` works); then the bias is added in place.
    out = out.reshape(o, n, oh, ow).permute(1, 0, 2, 3).contiguous()
    if bias is not None:
        out = out.add_(bias.reshape(1, o, 1, 1))
    return out
    ### END SOLUTION


# The direct path pays off once a convolution has about this many
# multiply-adds (smaller ones, as in most unit tests, take im2col + matmul,
# whose fixed costs are lower).
DIRECT_MIN_MACS = 1 << 16


def _use_direct(x: TensorBase, weight: TensorBase, bias: TensorBase | None, geo: tuple) -> bool:
    """Take :class:`Conv2dDirect`?  Stride 1, float32/float64, enough work, a backend with it.

    Not under autocast: its policy applies to the ops of the im2col path (the matmul).
    """
    kh, kw, sh, sw, *_, oh, ow = geo
    if sh != 1 or sw != 1 or x.dtype not in (float32, float64) or AUTOCAST.enabled:
        return False
    if weight.dtype is not x.dtype or (bias is not None and bias.dtype is not x.dtype):
        return False
    macs = x.shape[0] * weight.shape[0] * oh * ow * weight.shape[1] * kh * kw
    return macs >= DIRECT_MIN_MACS and kernels.has_direct_conv(x.device)


def _array4(t: TensorBase):
    return kernels.array_of(t, tuple(t.shape))


def unfold(input: TensorBase, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> TensorBase:
    """(N, C, H, W) -> (N, C*kh*kw, L): each column is one receptive field."""
    if input.dim() != 4:
        raise RuntimeError(f"Input Error: Only 4D input Tensors are supported (got "
                           f"{input.dim()}D)")
    geo = _geometry(input.shape[2], input.shape[3], _pair(kernel_size), _pair(stride),
                    _pair(padding), _pair(dilation))
    _check_geometry(input.shape[2], input.shape[3], geo, "unfold")
    return Unfold.apply(input, geo)


def fold(input: TensorBase, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> TensorBase:
    """(N, C*kh*kw, L) -> (N, C, H, W): columns summed back into the image."""
    h, w = _pair(output_size)
    geo = _geometry(h, w, _pair(kernel_size), _pair(stride), _pair(padding), _pair(dilation))
    if input.dim() == 2:
        return fold(input.unsqueeze(0), output_size, kernel_size, dilation, padding,
                    stride).squeeze(0)
    if input.shape[2] != geo[-2] * geo[-1]:
        raise RuntimeError(f"Given output_size=({h}, {w}), kernel_size={_pair(kernel_size)}, "
                           f"dilation={_pair(dilation)}, padding={_pair(padding)}, "
                           f"stride={_pair(stride)}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {geo[-2]} * "
                           f"{geo[-1]} = {geo[-2] * geo[-1]}, but got "
                           f"input.size(2)={input.shape[2]}.")
    return Fold.apply(input, (h, w), geo)


def _same_padding(size: tuple, kernel: tuple, dilation: tuple) -> tuple:
    """Padding for padding='same' (stride 1): total d*(k-1), extra on the right."""
    return tuple(d * (k - 1) for k, d in zip(kernel, dilation))


def conv2d(input: TensorBase, weight: TensorBase, bias: TensorBase | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> TensorBase:
    """2-D convolution (cross-correlation, as in every deep-learning library)."""
    batched = input.dim() == 4
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
                           f"input of size: {list(input.shape)}")
    x = input if batched else input.unsqueeze(0)
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    if c != cg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
            f"{list(x.shape)} to have {cg * groups} channels, but got {c} channels instead")
    if o % groups:
        raise RuntimeError("out_channels must be divisible by groups")
    if input.dtype is not weight.dtype and not AUTOCAST.enabled:     # (autocast casts both)
        raise RuntimeError(f"Input type ({input.dtype.name}) and weight type "
                           f"({weight.dtype.name}) should be the same")
    wrong = _not_a_pair(stride=stride, dilation=dilation, padding=padding)
    if wrong:
        name, value = wrong
        raise RuntimeError(f"expected {name} to be a single integer value or a list of 2 "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(value)}")
    dilation = _pair(dilation)
    stride = _pair(stride)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            if stride != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions")
            total = _same_padding((h, w), (kh, kw), dilation)
            left = tuple(t // 2 for t in total)
            if any(t % 2 for t in total):
                x = pad(x, (left[1], total[1] - left[1], left[0], total[0] - left[0]))
                padding = (0, 0)
            else:
                padding = left
        else:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             "{'valid', 'same'}")
    geo = _geometry(x.shape[2], x.shape[3], (kh, kw), stride, _pair(padding), dilation)
    _check_geometry(x.shape[2], x.shape[3], geo, "conv2d")
    if _use_direct(x, weight, bias, geo):
        out = Conv2dDirect.apply(x, weight, bias, geo, groups)
        return out if batched else out.squeeze(0)
    out = conv2d_im2col(x, weight, bias, geo, groups)
    return out if batched else out.squeeze(0)


def conv1d(input: TensorBase, weight: TensorBase, bias: TensorBase | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> TensorBase:
    """1-D convolution, run as a 2-D one over an image of height 1."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got "
                           f"input of size: {list(input.shape)}")
    s = stride[0] if isinstance(stride, (tuple, list)) else stride
    d = dilation[0] if isinstance(dilation, (tuple, list)) else dilation
    p = padding if isinstance(padding, str) else (
        padding[0] if isinstance(padding, (tuple, list)) else padding)
    x = input.unsqueeze(-2)
    out = conv2d(x, weight.unsqueeze(-2), bias, (1, s), p if isinstance(p, str) else (0, p),
                 (1, d), groups)
    return out.squeeze(-2)


def conv_transpose2d(input: TensorBase, weight: TensorBase, bias: TensorBase | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> TensorBase:
    """The gradient of conv2d with respect to its input, used as a layer (``fold(W^T @ x)``)."""
    if groups != 1:
        raise RuntimeError("minitorch's conv_transpose2d supports groups=1 only")
    n, c, h, w = input.shape
    _, o, kh, kw = weight.shape
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    oph, opw = _pair(output_padding)
    out_h = (h - 1) * sh - 2 * ph + dh * (kh - 1) + oph + 1
    out_w = (w - 1) * sw - 2 * pw + dw * (kw - 1) + opw + 1
    cols = matmul(weight.reshape(c, o * kh * kw).t(), input.reshape(n, c, h * w))
    out = fold(cols, (out_h, out_w), (kh, kw), (dh, dw), (ph, pw), (sh, sw))
    if bias is not None:
        out = out + bias.reshape(1, o, 1, 1)
    return out


# ---------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------
class MaxPool2d(Function):
    _backward_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx: Any, x: TensorBase, geo: tuple):
        n, c, h, w = x.shape
        oh, ow = geo[-2], geo[-1]
        src = kernels.contiguous(kernels.cast(x, kernels.compute_dtype(x.dtype)))
        out = kernels.empty((n, c, oh, ow), src.dtype, x.device)
        idx = kernels.empty((n, c, oh, ow), int64, x.device)
        kernels.max_pool2d(_array4(src), geo, _array4(out), _array4(idx), x.device)
        ctx.save_for_backward(idx)
        ctx.in_shape = x.shape
        ctx.geo = geo
        ctx.mark_non_differentiable(idx)
        return kernels.cast(out, x.dtype), idx

    @staticmethod
    def backward(ctx: Any, g: TensorBase, _gi: Any = None):
        (idx,) = ctx.saved_tensors
        return MaxPool2dBackward.apply(g, idx, tuple(ctx.in_shape), ctx.geo), None


class MaxPool2dBackward(Function):
    _backward_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx: Any, g: TensorBase, idx: TensorBase, in_shape: tuple,
                geo: tuple | None = None) -> TensorBase:
        ctx.save_for_backward(idx)
        src = kernels.contiguous(kernels.cast(g, kernels.compute_dtype(g.dtype)))
        out = kernels.empty(in_shape, src.dtype, g.device)
        kernels.max_pool2d_backward(_array4(src), _array4(kernels.contiguous(idx)),
                                    _array4(out), g.device, geo)
        return kernels.cast(out, g.dtype)

    @staticmethod
    def backward(ctx: Any, gg: TensorBase):
        (idx,) = ctx.saved_tensors
        flat = gg.reshape(gg.shape[0], gg.shape[1], -1)
        picked = flat.gather(2, idx.reshape(idx.shape[0], idx.shape[1], -1))
        return picked.reshape(idx.shape), None, None, None


def _pool_args(op: str, kernel_size: Any, stride: Any, padding: Any, dilation: Any) -> tuple:
    """A 2-D pool's (kernel, stride, padding, dilation), each a pair; a tuple of another
    length is refused in PyTorch's words (``op`` names the pool)."""
    omitted = stride is None or stride == [] or stride == ()
    wrong = _not_a_pair(kernel_size=kernel_size, stride=None if omitted else stride,
                        padding=padding, dilation=dilation)
    if wrong:
        name = wrong[0]
        either = "either be omitted, a single int," if name == "stride" else \
            "either be a single int,"
        raise RuntimeError(f"{op}: {name} must {either} or a tuple of two ints")
    kernel = _pair(kernel_size)
    stride = kernel if omitted else _pair(stride)
    return kernel, stride, _pair(padding), _pair(dilation)


def _check_pool_padding(kernel: tuple, padding: tuple, dilation: tuple) -> None:
    """PyTorch's rule for max and average pooling: 0 <= padding <= kernel_size // 2 on each axis.

    More padding would give windows that see only padding (an average of
    nothing, a maximum of -inf).
    """
    for k, p, d in zip(kernel, padding, dilation):
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > k // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")


def _ceil_geometry(h: int, w: int, kernel: tuple, stride: tuple, padding: tuple,
                   dilation: tuple, ceil_mode: bool) -> tuple:
    geo = list(_geometry(h, w, kernel, stride, padding, dilation))
    if ceil_mode:
        for axis, size in ((0, h), (1, w)):
            k, s, p, d = kernel[axis], stride[axis], padding[axis], dilation[axis]
            o = -(-(size + 2 * p - d * (k - 1) - 1) // s) + 1
            # The last window must start inside the input or the left padding.
            if (o - 1) * s >= size + p:
                o -= 1
            geo[8 + axis] = o
    return tuple(geo)


def max_pool2d(input: TensorBase, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The largest value in each window; optionally with the flat indices of the winners."""
    batched = input.dim() == 4
    if input.dim() not in (3, 4):
        raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input, but "
                           f"got: {list(input.shape)}")
    x = input if batched else input.unsqueeze(0)
    kernel, stride, padding, dilation = _pool_args("max_pool2d", kernel_size, stride, padding,
                                                   dilation)
    _check_pool_padding(kernel, padding, dilation)
    geo = _ceil_geometry(x.shape[2], x.shape[3], kernel, stride, padding, dilation, ceil_mode)
    _check_geometry(x.shape[2], x.shape[3], geo, "max_pool2d")
    out, idx = MaxPool2d.apply(x, geo)
    if not batched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return (out, idx) if return_indices else out


def max_pool1d(input: TensorBase, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    k = kernel_size[0] if isinstance(kernel_size, (tuple, list)) else kernel_size
    s = k if stride is None else (stride[0] if isinstance(stride, (tuple, list)) else stride)
    p = padding[0] if isinstance(padding, (tuple, list)) else padding
    d = dilation[0] if isinstance(dilation, (tuple, list)) else dilation
    result = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode,
                        return_indices)
    if return_indices:
        return result[0].squeeze(-2), result[1].squeeze(-2)
    return result.squeeze(-2)


def avg_pool2d(input: TensorBase, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> TensorBase:
    """The mean of each window (padding counted as zeros unless ``count_include_pad=False``)."""
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    kernel, stride, padding, dilation = _pool_args("avg_pool2d", kernel_size, stride, padding, 1)
    _check_pool_padding(kernel, padding, dilation)
    geo = _ceil_geometry(x.shape[2], x.shape[3], kernel, stride, padding, dilation, ceil_mode)
    _check_geometry(x.shape[2], x.shape[3], geo, "avg_pool2d")
    n, c, h, w = x.shape
    oh, ow = geo[-2], geo[-1]
    cols = Unfold.apply(x, geo).reshape(n, c, kernel[0] * kernel[1], oh * ow)
    total = cols.sum(2)
    if divisor_override is not None:
        out = total / divisor_override
    elif count_include_pad and not ceil_mode:
        out = total / (kernel[0] * kernel[1])
    else:
        ones_img = ones(1, 1, h, w, dtype=x.dtype, device=x.device)
        counts = Unfold.apply(ones_img, geo).sum(1)           # real pixels per window
        if count_include_pad:
            counts = _padded_counts(h, w, geo, x)
        out = total / counts.reshape(1, 1, oh * ow)
    out = out.reshape(n, c, oh, ow)
    return out if batched else out.squeeze(0)


def _padded_counts(h: int, w: int, geo: tuple, like: TensorBase) -> TensorBase:
    """Window sizes counting padding but not the part beyond it (ceil_mode edges)."""
    kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = geo
    big = ones(1, 1, h + 2 * ph, w + 2 * pw, dtype=like.dtype, device=like.device)
    geo2 = (kh, kw, sh, sw, 0, 0, dh, dw, oh, ow)
    return Unfold.apply(big, geo2).sum(1)


def avg_pool1d(input: TensorBase, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> TensorBase:
    k = kernel_size[0] if isinstance(kernel_size, (tuple, list)) else kernel_size
    s = k if stride is None else (stride[0] if isinstance(stride, (tuple, list)) else stride)
    p = padding[0] if isinstance(padding, (tuple, list)) else padding
    return avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode,
                      count_include_pad).squeeze(-2)


def _adaptive_ranges(size: int, out: int) -> list:
    """PyTorch's adaptive windows: [floor(i*size/out), ceil((i+1)*size/out))."""
    return [((i * size) // out, -(-((i + 1) * size) // out)) for i in range(out)]


def _adaptive_output(output_size: Any, h: int, w: int) -> tuple:
    """An adaptive pool's ``(out_h, out_w)``; ``None`` (for both, or one) keeps the input's."""
    if output_size is None:
        return h, w
    oh, ow = (output_size, output_size) if not isinstance(output_size, (tuple, list)) \
        else (output_size[0], output_size[-1])
    return (h if oh is None else int(oh)), (w if ow is None else int(ow))


def adaptive_avg_pool2d(input: TensorBase, output_size: Any) -> TensorBase:
    """Average pooling to a fixed output size, whatever the input size."""
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    n, c, h, w = x.shape
    oh, ow = _adaptive_output(output_size, h, w)
    if h % oh == 0 and w % ow == 0:
        # Equal windows: one ordinary average pool.
        out = avg_pool2d(x, (h // oh, w // ow), (h // oh, w // ow))
    else:
        rows = [x[:, :, a:b, :].mean(2, keepdim=True) for a, b in _adaptive_ranges(h, oh)]
        xr = cat(rows, 2)
        cols = [xr[:, :, :, a:b].mean(3, keepdim=True) for a, b in _adaptive_ranges(w, ow)]
        out = cat(cols, 3)
    return out if batched else out.squeeze(0)


def adaptive_avg_pool1d(input: TensorBase, output_size: Any) -> TensorBase:
    o = output_size[0] if isinstance(output_size, (tuple, list)) else output_size
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def adaptive_max_pool2d(input: TensorBase, output_size: Any, return_indices: bool = False) -> Any:
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    n, c, h, w = x.shape
    oh, ow = _adaptive_output(output_size, h, w)
    rows = [x[:, :, a:b, :].amax(2, keepdim=True) for a, b in _adaptive_ranges(h, oh)]
    xr = cat(rows, 2)
    cols = [xr[:, :, :, a:b].amax(3, keepdim=True) for a, b in _adaptive_ranges(w, ow)]
    out = cat(cols, 3)
    if return_indices:
        raise RuntimeError("adaptive_max_pool2d(return_indices=True) is not supported by "
                           "minitorch")
    return out if batched else out.squeeze(0)

"""``nn.functional``: the stateless twin of every layer.

``nn.Linear`` holds a weight and a bias and calls ``F.linear(x, w, b)``;
``F.relu`` is what ``nn.ReLU`` does.  Everything here is composed of
differentiable ops, so gradients (and gradients of gradients) come from
autograd; the few places where a fused kernel matters are marked.
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.grad_mode import no_grad
from ..ops import elementwise as elementwise_ops, reduction as reduction_ops
from ..ops.creation import full, arange, tensor as _tensor
from ..ops.sampling import bernoulli
from ..ops.tensor_extras import prelu  # noqa: F401  (one prelu: minitorch.prelu's)
from ..ops.embedding import embedding as embedding_op
from ..ops.padding import pad
from ..ops.linalg import linear as _linear, matmul
from ..ops.conv import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool2d,  # noqa: F401
                        avg_pool1d, avg_pool2d, conv1d, conv2d, conv_transpose2d, fold,
                        max_pool1d, max_pool2d, unfold)
from ..ops.loss import nll_loss_rows
from ..ops.views import cat
from ..tensor import Tensor
from ..trace_mode import recorded   # in-place activations join a compiler's trace
from ..dtype import bool_, int64, result_type
from ..layout import broadcast_shapes
from ..ops.einsum import einsum

__all__ = [
    "linear", "bilinear", "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu",
    "mish", "softplus", "softsign", "hardtanh", "hardsigmoid", "hardswish", "sigmoid", "tanh",
    "logsigmoid", "softmax", "log_softmax", "softmin", "dropout", "dropout1d", "dropout2d",
    "alpha_dropout", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy",
    "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "layer_norm", "batch_norm", "group_norm", "embedding", "one_hot", "pad", "normalize",
    "cosine_similarity", "pairwise_distance", "scaled_dot_product_attention", "threshold",
    "glu", "prelu", "rms_norm", "instance_norm", "conv1d", "conv2d", "conv_transpose2d",
    "unfold", "fold", "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool2d",
]

# The rest of nn.functional lives in topic modules (each composed of ops, like this one).
from . import (functional_activations, functional_attention, functional_conv,  # noqa: E402
               functional_embedding, functional_losses, functional_pooling,
               functional_resample)
from .functional_activations import (gumbel_softmax, hardshrink, rrelu, rrelu_,  # noqa: E402
                                     softshrink, tanhshrink)
from .functional_attention import multi_head_attention_forward  # noqa: E402
from .functional_conv import conv3d, conv_tbc, conv_transpose1d, conv_transpose3d  # noqa: E402
from .functional_embedding import embedding_bag  # noqa: E402
from .functional_losses import (cosine_embedding_loss, ctc_loss, reduce_loss,  # noqa: E402
                                gaussian_nll_loss, hinge_embedding_loss, margin_ranking_loss,
                                multi_margin_loss, multilabel_margin_loss,
                                multilabel_soft_margin_loss, poisson_nll_loss,
                                soft_margin_loss, triplet_margin_loss,
                                triplet_margin_with_distance_loss)
from .functional_pooling import (adaptive_avg_pool3d, adaptive_max_pool1d,  # noqa: E402
                                 adaptive_max_pool1d_with_indices,
                                 adaptive_max_pool2d_with_indices, adaptive_max_pool3d,
                                 adaptive_max_pool3d_with_indices, avg_pool3d,
                                 fractional_max_pool2d, fractional_max_pool2d_with_indices,
                                 fractional_max_pool3d, fractional_max_pool3d_with_indices,
                                 local_response_norm, lp_pool1d, lp_pool2d, lp_pool3d,
                                 max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d,
                                 max_pool3d_with_indices, max_unpool1d, max_unpool2d,
                                 max_unpool3d)
from .functional_resample import (affine_grid, channel_shuffle, grid_sample,  # noqa: E402
                                  interpolate, native_channel_shuffle, pixel_shuffle,
                                  pixel_unshuffle, upsample, upsample_bilinear,
                                  upsample_nearest)

__all__ += (functional_activations.__all__ + functional_attention.__all__
            + functional_conv.__all__ + functional_embedding.__all__
            + functional_losses.__all__ + functional_pooling.__all__
            + functional_resample.__all__
            + ["relu_", "elu_", "celu_", "selu_", "leaky_relu_", "hardtanh_", "threshold_",
               "dropout3d", "feature_alpha_dropout", "pdist", "linear_cross_entropy"])


# ---------------------------------------------------------------------------
# Linear layers
# ---------------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``: weight has shape (out_features, in_features)."""
    return _linear(input, weight, bias)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """``y_k = x1 @ W_k @ x2 + b_k`` for weight of shape (out, in1, in2)."""
    out = einsum("bi,kij,bj->bk", input1.reshape(-1, input1.shape[-1]), weight,
                 input2.reshape(-1, input2.shape[-1]))
    out = out.reshape(tuple(input1.shape[:-1]) + (weight.shape[0],))
    return out + bias if bias is not None else out


# ---------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------
def _maybe_inplace(input: Tensor, result_fn: Any, inplace: bool) -> Tensor:
    if inplace:
        return _inplace(input, result_fn)
    return result_fn(input)


@recorded
def _inplace(input: Tensor, result_fn: Any) -> Tensor:
    """``input`` overwritten by ``result_fn(input)`` (one step of a compiler's trace)."""
    return elementwise_ops.inplace(input, result_fn)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, elementwise_ops.relu, inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0, inplace)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, lambda x: elementwise_ops.where(x > threshold, x, value), inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, lambda x: elementwise_ops.leaky_relu(x, negative_slope), inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, lambda x: elementwise_ops.elu(x, alpha), inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    return _maybe_inplace(input, lambda x: elementwise_ops.elu(x, alpha) * scale, inplace)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, lambda x: elementwise_ops.elu(x / alpha, 1.0) * alpha, inplace)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return elementwise_ops.gelu(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, elementwise_ops.silu, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, elementwise_ops.mish, inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return elementwise_ops.softplus(input, beta, threshold)


def softsign(input: Tensor) -> Tensor:
    return input / (input.abs() + 1)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _maybe_inplace(input, lambda x: elementwise_ops.clamp(x, min_val, max_val), inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, lambda x: elementwise_ops.clamp(x / 6 + 0.5, 0.0, 1.0), inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, lambda x: x * elementwise_ops.clamp(x / 6 + 0.5, 0.0, 1.0), inplace)


def sigmoid(input: Tensor) -> Tensor:
    return elementwise_ops.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    return elementwise_ops.tanh(input)


def logsigmoid(input: Tensor) -> Tensor:
    return elementwise_ops.logsigmoid(input)


def softmax(input: Tensor, dim: Any = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    return reduction_ops.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: Any = None, _stacklevel: int = 3, dtype: Any = None
                ) -> Tensor:
    return reduction_ops.log_softmax(input, dim, dtype)


def softmin(input: Tensor, dim: Any = None, dtype: Any = None) -> Tensor:
    return reduction_ops.softmax(-input, dim, dtype)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


# ---------------------------------------------------------------------------
# Dropout
# ---------------------------------------------------------------------------
def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
            ) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``.

    The scaling keeps the expected value of every element unchanged, so at
    evaluation time (``training=False``) dropout is simply the identity.

    Args:
        input: any tensor (float).

        p: the probability of zeroing an element, ``0 <= p <= 1`` (checked already).

        training: ``False`` returns ``input`` itself (the same object).

        inplace: write the result into ``input`` (``_maybe_inplace`` does it) and
        return it.

    Returns:
        A tensor of ``input``'s shape, dtype and device, recorded on the graph:
        its gradient is the same mask (0 or ``1/(1-p)``) times the incoming one.
        Draws its random numbers from the global generator
        (``torch.manual_seed`` makes it repeatable); ``p = 1`` zeroes everything.

    Example: ``dropout(ones(4), 0.5)`` may give ``[2., 0., 0., 2.]``.
    """
    _check_p(p)
    # Task 4.5: dropout in training: each element zeroed independently with probability p,
    # the others scaled so that the expected value is unchanged; the identity otherwise.
    ### BEGIN SOLUTION
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _maybe_inplace(input, lambda x: x * 0.0, inplace)
    with no_grad():
        keep = bernoulli(full(tuple(input.shape), 1.0 - p, dtype=input.dtype,
                              device=input.device)) / (1.0 - p)
    return _maybe_inplace(input, lambda x: x * keep, inplace)
    ### END SOLUTION


def _channel_dropout(input: Tensor, p: float, training: bool, inplace: bool, spatial: int
                     ) -> Tensor:
    _check_p(p)
    if not training or p == 0.0:
        return input
    batched = input.dim() == spatial + 2
    shape = tuple(input.shape[:2] if batched else input.shape[:1]) + (1,) * spatial
    with no_grad():
        # One mask value per channel, from dropout itself (course task 4.5).
        keep = dropout(full(shape, 1.0, dtype=input.dtype, device=input.device), p, True)
    return input.mul_(keep) if inplace else input * keep


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    return _channel_dropout(input, p, training, inplace, 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels (feature maps) at once: neighbouring pixels are correlated."""
    return _channel_dropout(input, p, training, inplace, 2)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
                  ) -> Tensor:
    _check_p(p)
    if not training or p == 0.0:
        return input
    alpha_p = -1.7580993408473766
    a = ((1 - p) * (1 + p * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * p
    with no_grad():
        # The 0/1 mask of dropout itself (course task 4.5), unscaled.
        keep = (dropout(full(tuple(input.shape), 1.0, dtype=input.dtype, device=input.device),
                        p, True) != 0).to(input.dtype)
    return (input * keep + alpha_p * (1 - keep)) * a + b


# ---------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------
def _check_same_size(input: Tensor, target: Tensor, name: str) -> None:
    if tuple(input.shape) != tuple(target.shape):
        import warnings
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=3)


def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean squared error: ``mean((input - target)**2)``."""
    _check_same_size(input, target, "mse_loss")
    broadcast_shapes(tuple(input.shape), tuple(target.shape))      # shapes are checked first
    if not (input.dtype.is_floating_point or target.dtype.is_floating_point):
        raise NotImplementedError(f'"mse_cpu" not implemented for \'{input.dtype._legacy}\'')
    dt = result_type(input, target)
    input, target = input.to(dt), target.to(dt)          # (a bool input cannot be subtracted)
    loss = (input - target).square()
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    _check_same_size(input, target, "l1_loss")
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Quadratic for small errors (< beta), linear for large ones."""
    _check_same_size(input, target, "smooth_l1_loss")
    d = (input - target).abs()
    if beta == 0:
        return reduce_loss(d, reduction)
    loss = elementwise_ops.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return reduce_loss(loss, reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    _check_same_size(input, target, "huber_loss")
    d = (input - target).abs()
    loss = elementwise_ops.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, reduction)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """Negative log likelihood: ``-input[n, target[n]]``, weighted and averaged.

    ``input`` holds log-probabilities, shape (N, C) or (N, C, d1, ...), or (C,).
    With ``reduction='mean'`` the sum is divided by the total *weight* of the
    targets that are not ``ignore_index`` (not by N).
    """
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if target.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.name.title()}")
    target_shape = target.shape                # () for a 1-d input: reduction='none' gives ()
    if input.dim() == 1:
        input, target = input.unsqueeze(0), target.reshape(1)
    n_classes = input.shape[1]
    target_batch = target.shape[0] if target.dim() else 0
    if input.shape[0] != target_batch:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target_batch}).")
    if input.dim() > 2 and tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {[input.shape[0], *input.shape[2:]]}, got "
                           f"{list(target.shape)}")
    # Move classes last and flatten: (N * d1 * ..., C) rows against (N * d1 * ...,) targets.
    logp = input.movedim(1, -1).reshape(-1, n_classes) if input.dim() > 2 else input
    loss = nll_loss_rows(logp, target.reshape(-1), weight, ignore_index, reduction,
                         images=input.dim() == 4)
    return loss.reshape(target_shape) if reduction == "none" and loss.shape != target_shape \
        else loss


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """``nll_loss(log_softmax(input))``; ``target`` holds class indices or class probabilities."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if tuple(target.shape) == tuple(input.shape) and not target.dtype.is_floating_point:
        # Same shapes means class probabilities to PyTorch (a 0-d input included).
        raise RuntimeError("Expected floating point type for target with class probabilities, "
                           f"got {target.dtype._legacy}")
    class_dim = 0 if input.dim() == 1 else 1
    logp = reduction_ops.log_softmax(input, class_dim)
    n_classes = input.shape[class_dim]
    if target.dtype.is_floating_point:
        # Class probabilities (same shape as input).
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(f"Expected target size {list(input.shape)}, got "
                               f"{list(target.shape)}")
        t = target
        if label_smoothing > 0:
            t = t * (1 - label_smoothing) + label_smoothing / n_classes
        w_shape = [1] * input.dim()
        w_shape[class_dim] = n_classes
        per = logp * t if weight is None else logp * t * weight.reshape(w_shape)
        loss = -per.sum(class_dim)
        return reduce_loss(loss, reduction)      # 'mean' averages over the batch (and spatial) dims
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    # Smoothing adds eps/C of the uniform distribution's cross-entropy.
    valid = (target != ignore_index).to(input.dtype)
    w_shape = [1] * input.dim()
    w_shape[class_dim] = n_classes
    per_class = logp if weight is None else logp * weight.reshape(w_shape)
    smooth = -per_class.sum(class_dim) * valid
    if reduction == "mean":
        if weight is not None:
            safe = elementwise_ops.where(target != ignore_index, target, 0).to(int64)
            denom = (weight.gather(0, safe.reshape(-1)).reshape(safe.shape) * valid).sum()
        else:
            denom = valid.sum()
        smooth = smooth.sum() / denom
    else:
        smooth = reduce_loss(smooth, reduction)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / n_classes)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """``-(t log p + (1 - t) log(1 - p))`` with the logs clamped at -100 like PyTorch."""
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the "
                         "same size.")
    if bool(((input < 0) | (input > 1)).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    log_p = elementwise_ops.clamp(input.log(), min=-100.0)
    log_1p = elementwise_ops.clamp((1 - input).log(), min=-100.0)
    loss = -(target * log_p + (1 - target) * log_1p)
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """BCE on logits, computed stably: ``(1 - t) x + (1 + (pw - 1) t) * softplus(-x)``."""
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    log_sig_neg = -elementwise_ops.logsigmoid(input)      # = softplus(-x) = log(1 + e^-x)
    if pos_weight is not None:
        coeff = 1 + (pos_weight - 1) * target
        loss = (1 - target) * input + coeff * log_sig_neg
    else:
        loss = (1 - target) * input + log_sig_neg
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, reduction)


def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL(target || exp(input)) with ``input`` given as log-probabilities."""
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = elementwise_ops.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return reduce_loss(loss, reduction)


# ---------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------
def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dims of each sample."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    if tuple(input.shape[-len(normalized_shape):]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input "
                           f"with shape [*, {', '.join(map(str, normalized_shape))}], but got "
                           f"input of size{list(input.shape)}")
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    mu = input.mean(dims, keepdim=True)
    var = (input - mu).square().mean(dims, keepdim=True)
    out = (input - mu) / (var + eps).sqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def rms_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    if eps is None:
        import numpy as np
        eps = float(np.finfo(input.dtype.np).eps)
    out = input * (input.square().mean(dims, keepdim=True) + eps).rsqrt()
    return out * weight if weight is not None else out


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) over the batch and spatial dims.

    In training the batch statistics are used and the running estimates are
    updated in place (``running = (1 - momentum) * running + momentum * batch``,
    with the *unbiased* batch variance); in evaluation the running estimates
    are used.

    Args:
        input: shape ``(N, C)`` or ``(N, C, *spatial)``.

        running_mean, running_var: shape ``(C,)`` or ``None`` (then nothing is
        updated in training; evaluation needs them).

        weight, bias: ``None`` or shape ``(C,)``: the per-channel scale and shift
        applied after normalising.

        training: use the batch's statistics (the biased variance for
        normalising) and update the running ones; else use the running ones.

        momentum, eps: as in PyTorch (``eps`` is added to the variance).

    Returns:
        A tensor of ``input``'s shape, recorded on the graph (gradients flow to
        ``input``, ``weight`` and ``bias``, never into the running statistics).
        Training with a single value per channel is a ValueError, as in PyTorch.

    Example: ``input = [[1.], [3.]]`` in training gives about ``[[-1.], [1.]]`` and moves
    ``running_mean`` from ``[0.]`` to ``[0.2]``.
    """
    if input.dim() < 2:
        raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")
    # Task 4.6: batch normalisation: per channel, with the batch's statistics (updating the
    # running ones) in training, with the running ones in evaluation, then weight and bias.
    ### BEGIN SOLUTION
    dims = (0,) + tuple(range(2, input.dim()))
    shape = (1, input.shape[1]) + (1,) * (input.dim() - 2)
    if training:
        n = input.numel() // input.shape[1]
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {list(input.shape)}")
        mu = input.mean(dims)
        var = (input - mu.reshape(shape)).square().mean(dims)
        if running_mean is not None and running_var is not None:
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mu.detach() * momentum)
                running_var.mul_(1 - momentum).add_(var.detach() * (momentum * n / (n - 1)))
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        mu, var = running_mean, running_var
    out = (input - mu.reshape(shape)) / (var.reshape(shape) + eps).sqrt()
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out
    ### END SOLUTION


def instance_norm(input: Tensor, running_mean: Any = None, running_var: Any = None,
                  weight: Tensor | None = None, bias: Tensor | None = None,
                  use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> Tensor:
    # Each (sample, channel) is its own channel of a batch of one: batch_norm's statistics
    # (course task 4.6) over the spatial dims, with the affine parameters repeated per sample.
    n, c = input.shape[0], input.shape[1]
    if use_input_stats and input.numel() <= n * c:
        # One value per (sample, channel): its variance over the spatial dims is undefined.
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{input.shape}")
    return batch_norm(input.reshape((1, n * c) + tuple(input.shape[2:])), None, None,
                      None if weight is None else weight.repeat(n),
                      None if bias is None else bias.repeat(n), True, 0.0, eps
                      ).reshape(input.shape)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise groups of channels within each sample."""
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    # Each (sample, group) is a channel of a batch of one: batch_norm's statistics (course
    # task 4.6); the affine parameters are per channel, so they come after.
    if input.numel() == n * num_groups:         # one value per group: it is its own mean
        out = input - input
    else:
        out = batch_norm(input.reshape(1, n * num_groups, -1), None, None, training=True,
                         eps=eps).reshape(input.shape)
    per_channel = (1, c) + (1,) * (input.dim() - 2)
    if weight is not None:
        out = out * weight.view(per_channel)
    if bias is not None:
        out = out + bias.view(per_channel)
    return out


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Any = None) -> Tensor:
    denom = elementwise_ops.clamp_min(reduction_ops.norm(input, p, dim, keepdim=True), eps)
    return input / denom


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum(x1/|x1| * x2/|x2|, dim)``, each norm at least ``eps``, after broadcasting x1 with x2.

    As PyTorch computes it: each input is divided by its own (clamped) norm
    before the product is summed, so a tiny vector gives a small similarity
    (``|x1| / eps``), not 0.
    """
    if not (x1.dtype.is_floating_point or x2.dtype.is_floating_point):
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{x1.dtype._legacy}")
    shape = broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    x1, x2 = x1.expand(*shape), x2.expand(*shape)
    # The dtype of the *expanded* inputs, as PyTorch (expand, then result_type): a
    # 0-d float64 with a float32 vector gives float64, not the 0-d rule's float32.
    dt = result_type(x1, x2)                          # int or bool with float: that float
    x1, x2 = x1.to(dt), x2.to(dt)
    n1 = elementwise_ops.clamp_min(reduction_ops.norm(x1, 2, dim, keepdim=True), eps)
    n2 = elementwise_ops.clamp_min(reduction_ops.norm(x2, 2, dim, keepdim=True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    return reduction_ops.norm(x1 - x2 + eps, p, -1, keepdim)


# ---------------------------------------------------------------------------
# Embedding, one_hot, pad
# ---------------------------------------------------------------------------
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input`` (a lookup table)."""
    if input.dtype.is_floating_point:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{input.dtype.name.title()} instead")
    if max_norm is not None:
        with no_grad():
            flat = input.reshape(-1)
            rows = weight.index_select(0, flat)
            norms = reduction_ops.norm(rows, norm_type, 1, keepdim=True)
            scale = elementwise_ops.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
            weight.index_copy_(0, flat, rows * scale)
    if padding_idx is None:
        padding_idx = -1                      # no padding row
    elif padding_idx > 0:
        assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
        padding_idx = weight.size(0) + padding_idx
    return embedding_op(weight, input, padding_idx, scale_grad_by_freq)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    if tensor.dtype.is_floating_point:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    if tensor.numel() and (int(tensor.min().item()) < 0 or
                           int(tensor.max().item()) >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).to(int64)


# ---------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(Q K^T / sqrt(d) + mask) V``.

    A boolean ``attn_mask`` marks the positions that may be attended to
    (``True`` = keep); a float mask is added to the scores.  ``is_causal``
    lets position i attend only to positions <= i.
    """
    L, S = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(rep, -3) if hasattr(key, "repeat_interleave") else \
            cat([key] * rep, -3)
        value = value.repeat_interleave(rep, -3) if hasattr(value, "repeat_interleave") else \
            cat([value] * rep, -3)
    scores = matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        # Query i may look at keys j <= i (the lower triangle).
        causal = arange(L, device=query.device).unsqueeze(1) >= arange(S, device=query.device)
        scores = scores.masked_fill(causal.logical_not(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype is bool_:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    weights = reduction_ops.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return matmul(weights, value)


# ---------------------------------------------------------------------------
# In-place forms, 3-D and feature dropout, pdist, linear_cross_entropy
# ---------------------------------------------------------------------------
def relu_(input: Tensor) -> Tensor:
    return relu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _threshold(input, threshold, value, inplace=True)


_threshold = threshold      # the parameter named ``threshold`` hides the function above


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole 3-D feature maps (channels of (N, C, D, H, W))."""
    return _channel_dropout(input, p, training, inplace, 3)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels: dropped channels take SELU's negative saturation."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    alpha_p = -1.7580993408473766
    a = ((1 - p) * (1 + p * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * p
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    with no_grad():
        keep = bernoulli(full(shape, 1.0 - p, dtype=input.dtype, device=input.device))
    return (input * keep + alpha_p * (1 - keep)) * a + b


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distance between every pair of rows of (N, M): the upper triangle, flat."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    n = input.shape[0]
    rows = [i for i in range(n) for _ in range(i + 1, n)]
    cols = [j for i in range(n) for j in range(i + 1, n)]
    if not rows:
        return full((0,), 0.0, dtype=input.dtype, device=input.device)
    from_i = input.index_select(0, _tensor(rows, dtype=int64, device=input.device))
    from_j = input.index_select(0, _tensor(cols, dtype=int64, device=input.device))
    return reduction_ops.norm(from_i - from_j, p, 1)


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target)`` in one call.

    PyTorch can run it in chunks of the batch so that the (batch, classes)
    logits never exist at once (``options``); minitorch computes the logits.
    """
    logits = linear(input, linear_weight, linear_bias)
    return cross_entropy(logits, target, weight, ignore_index=-100 if ignore_index is None
                         else ignore_index, reduction=reduction,
                         label_smoothing=label_smoothing)

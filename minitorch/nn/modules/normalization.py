"""Normalisation layers: ``BatchNorm1d/2d``, ``LayerNorm``, ``GroupNorm``."""

from __future__ import annotations

from typing import Any

from ...autograd.grad_mode import no_grad
from ...dtype import int64
from ...ops.creation import ones, tensor, zeros
from ...ops.views import cat
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "RMSNorm",
           "InstanceNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm3d",
           "LocalResponseNorm", "CrossMapLRN2d"]


class _BatchNorm(Module):
    _expected_dims: tuple = (2, 3)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(ones(num_features, device=device, dtype=dtype))
            self.bias = Parameter(zeros(num_features, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in self._expected_dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._expected_dims)} "
                             f"input (got {input.dim()}D input)")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:       # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        use_batch_stats = self.training or not self.track_running_stats
        unbatched = input.dim() == self._expected_dims[0] - 1
        x = input.unsqueeze(0) if unbatched else input
        out = F.batch_norm(x, self.running_mean if self.track_running_stats else None,
                           self.running_var if self.track_running_stats else None,
                           self.weight, self.bias, use_batch_stats, momentum, self.eps)
        return out.squeeze(0) if unbatched else out

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over (N, C) or (N, C, L) inputs."""

    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over (N, C, H, W): per-channel statistics over N, H, W."""

    _expected_dims = (4,)


class LayerNorm(Module):
    """Normalise each sample over its last dims (``normalized_shape``)."""

    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(*self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(*self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class RMSNorm(Module):
    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape, self.eps = tuple(normalized_shape), eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(*self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, input: Tensor) -> Tensor:
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    """Normalise groups of channels within each sample (independent of batch size)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        if affine:
            self.weight = Parameter(ones(num_channels, device=device, dtype=dtype))
            self.bias = Parameter(zeros(num_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over (N, C, D, H, W)."""

    _expected_dims = (5,)


class _InstanceNormNd(_BatchNorm):
    """Normalise each channel of each sample over its spatial dims.

    Unlike batch norm the defaults are ``affine=False`` and
    ``track_running_stats=False``; with running stats, eval mode uses them.
    """

    _spatial = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype)

    def forward(self, input: Tensor) -> Tensor:
        n = self._spatial
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")
        unbatched = input.dim() == n + 1
        x = input.unsqueeze(0) if unbatched else input
        use_input_stats = self.training or not self.track_running_stats
        if use_input_stats:
            # Statistics per (sample, channel): batch norm of a (1, N*C, ...) view.
            b, c = x.shape[0], x.shape[1]
            rm = self.running_mean.repeat(b) if self.running_mean is not None else None
            rv = self.running_var.repeat(b) if self.running_var is not None else None
            out = F.batch_norm(x.reshape((1, b * c) + tuple(x.shape[2:])), rm, rv, None, None,
                               True, 0.0 if self.momentum is None else self.momentum,
                               self.eps).reshape(x.shape)
            if rm is not None and self.training:
                with no_grad():
                    self.running_mean.copy_(rm.reshape(b, c).mean(0))
                    self.running_var.copy_(rv.reshape(b, c).mean(0))
        else:
            out = F.batch_norm(x, self.running_mean, self.running_var, None, None, False, 0.0,
                               self.eps)
        if self.affine:
            shape = (1, x.shape[1]) + (1,) * n
            out = out * self.weight.reshape(shape) + self.bias.reshape(shape)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNormNd):
    _spatial = 1


class InstanceNorm2d(_InstanceNormNd):
    """Instance normalisation of (N, C, H, W): each image's channels on their own (style
    transfer)."""

    _spatial = 2


class InstanceNorm3d(_InstanceNormNd):
    _spatial = 3


class LocalResponseNorm(Module):
    """Normalise each channel by the energy of its ``size`` neighbouring channels (AlexNet)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
                 ) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(LocalResponseNorm):
    """Lua Torch's cross-map LRN on (N, C, H, W), window quirk included.

    Channel ``c`` is scaled by the squares of channels ``lo..hi`` with
    ``hi = c + pre_pad - 1`` and ``lo = c - pre_pad + 1``, where ``pre_pad =
    (size - 1) // 2 + 1`` -- except that the running window of the original
    code forgets to drop channel 0 at ``c = pre_pad``, so ``lo = 0`` up to there.
    The window sums are differences of a cumulative sum over channels.
    """

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        c = input.shape[1]
        pre_pad = int((self.size - 1) / 2 + 1)
        hi = [min(ch + pre_pad - 1, c - 1) + 1 for ch in range(c)]
        lo = [ch - pre_pad + 1 if ch > pre_pad else 0 for ch in range(c)]
        sq = input * input
        zero = sq.narrow(1, 0, 1) * 0
        cs = cat([zero, sq.cumsum(1)], 1)                       # cs[:, j] = sum of sq[:, :j]
        pick = lambda idx: cs.index_select(1, tensor(idx, dtype=int64, device=input.device))
        scale = (pick(hi) - pick(lo)) * (self.alpha / self.size) + self.k
        return input * scale.pow(-self.beta)

"""Lazy layers: the number of input channels is read from the first input.

``nn.LazyConv2d(16, 3)`` is a ``Conv2d(?, 16, 3)`` whose ``in_channels`` is not
known yet: its weight is an ``UninitializedParameter`` until the first forward,
which builds the real layer's parameters and buffers from ``input.shape`` and
turns the module into that layer (``cls_to_become``).  (``LazyLinear`` lives
beside ``Linear``.)
"""

from __future__ import annotations

from typing import Any

from ...ops.creation import empty
from ...tensor import Tensor
from ..parameter import UninitializedParameter
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .module import Module
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d,
                            InstanceNorm2d, InstanceNorm3d)

__all__ = ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _LazyModule(Module):
    """Holds the constructor arguments until the first input gives the channel count."""

    cls_to_become: type = Module
    _spatial = 1                # spatial dims of a batched input (to find the channel dim)
    _has_weight = True
    _tracks_by_default: bool | None = None      # norm layers: track_running_stats default

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self._lazy_args = (args, kwargs)
        device, dtype = kwargs.get("device"), kwargs.get("dtype")
        # A placeholder weight carries the device and dtype that .to()/.double() give the
        # module before it is built (instance norm has one only when affine).
        affine = kwargs.get("affine", args[2] if len(args) > 2 else False)
        if self._has_weight or affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        tracks = kwargs.get("track_running_stats", args[3] if len(args) > 3 else
                            self._tracks_by_default)
        if tracks and self._tracks_by_default is not None:
            # PyTorch's UninitializedBuffer: an empty placeholder until the first input.
            self.register_buffer("running_mean", empty(0, device=device, dtype=dtype))
            self.register_buffer("running_var", empty(0, device=device, dtype=dtype))

    def has_uninitialized_params(self) -> bool:
        return True             # after the first forward the module is no longer lazy

    def initialize_parameters(self, input: Tensor) -> None:
        """Build the real layer for ``input``'s channel count and become it."""
        batched = self._spatial < 0 or input.dim() == self._spatial + 2
        channels = input.shape[1] if batched else input.shape[0]
        args, kwargs = self._lazy_args
        placeholder = self._parameters.get("weight")
        if placeholder is None:
            placeholder = self._buffers.get("running_mean")
        if placeholder is not None:
            kwargs = {**kwargs, "device": placeholder.device, "dtype": placeholder.dtype}
        real = self.cls_to_become(channels, *args, **kwargs)
        for key, value in real.__dict__.items():
            if key in ("_parameters", "_buffers", "_modules") or not key.startswith("_"):
                self.__dict__[key] = value
        del self.__dict__["_lazy_args"]
        self.__class__ = self.cls_to_become

    def forward(self, input: Tensor) -> Any:
        self.initialize_parameters(input)
        return self(input)


def _lazy(name: str, become: type, spatial: int, has_weight: bool = True,
          doc: str = "", tracks: bool | None = None) -> type:
    return type(name, (_LazyModule,), {"cls_to_become": become, "_spatial": spatial,
                                       "_has_weight": has_weight, "__doc__": doc,
                                       "_tracks_by_default": tracks, "__module__": __name__})


LazyConv1d = _lazy("LazyConv1d", Conv1d, 1, doc="A Conv1d whose in_channels is inferred.")
LazyConv2d = _lazy("LazyConv2d", Conv2d, 2, doc="A Conv2d whose in_channels is inferred.")
LazyConv3d = _lazy("LazyConv3d", Conv3d, 3, doc="A Conv3d whose in_channels is inferred.")
LazyConvTranspose1d = _lazy("LazyConvTranspose1d", ConvTranspose1d, 1)
LazyConvTranspose2d = _lazy("LazyConvTranspose2d", ConvTranspose2d, 2)
LazyConvTranspose3d = _lazy("LazyConvTranspose3d", ConvTranspose3d, 3)
# Batch norm: the channel dim is always 1 ((N, C) and (N, C, L) inputs alike).
LazyBatchNorm1d = _lazy("LazyBatchNorm1d", BatchNorm1d, -1, tracks=True)
LazyBatchNorm2d = _lazy("LazyBatchNorm2d", BatchNorm2d, -1, tracks=True)
LazyBatchNorm3d = _lazy("LazyBatchNorm3d", BatchNorm3d, -1, tracks=True)


class _LazyInstanceNorm(_LazyModule):
    """Unlike the eager layers, PyTorch's lazy instance norms default to ``affine=True``
    and ``track_running_stats=True``."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None
                 ) -> None:
        super().__init__(eps, momentum, affine, track_running_stats, device=device,
                         dtype=dtype)


def _lazy_instance(name: str, become: type, spatial: int) -> type:
    return type(name, (_LazyInstanceNorm,), {"cls_to_become": become, "_spatial": spatial,
                                             "_has_weight": False, "_tracks_by_default": True,
                                             "__module__": __name__})


LazyInstanceNorm1d = _lazy_instance("LazyInstanceNorm1d", InstanceNorm1d, 1)
LazyInstanceNorm2d = _lazy_instance("LazyInstanceNorm2d", InstanceNorm2d, 2)
LazyInstanceNorm3d = _lazy_instance("LazyInstanceNorm3d", InstanceNorm3d, 3)

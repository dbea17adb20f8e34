"""Layer 6: automatic differentiation (``minitorch.autograd``)."""

from typing import Any

from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, no_grad,
                        set_grad_enabled)
from .graph import Node
# Imported eagerly, as in PyTorch: importing the submodule lazily would rebind the
# package attribute ``gradcheck`` from the function to the module.  The module
# itself imports the ops (a higher layer) only when called.
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from . import forward_ad, functional  # noqa: E402  (torch.autograd.forward_ad / .functional)

__all__ = ["Function", "FunctionCtx", "backward", "grad", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "detect_anomaly",
           "set_detect_anomaly", "is_anomaly_enabled", "once_differentiable", "Variable",
           "Node", "gradcheck", "gradgradcheck", "GradcheckError",
           "forward_ad", "functional"]


def Variable(data: Any, requires_grad: bool = False, volatile: bool = False) -> Any:
    """Pre-0.4 PyTorch wrapped tensors in Variables; now it just returns the tensor."""
    if requires_grad:
        data.requires_grad_(True)
    return data



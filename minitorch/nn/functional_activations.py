"""More activations for ``nn.functional``: the shrinkage functions, RReLU, Gumbel-softmax."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..ops import elementwise as elementwise_ops, reduction as reduction_ops
from ..ops.composite_math import hardshrink  # noqa: F401  (one hardshrink: minitorch's)
from ..ops.creation import empty, zeros
from ..tensor import Tensor

__all__ = ["hardshrink", "softshrink", "tanhshrink", "rrelu", "rrelu_", "gumbel_softmax"]


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """Shrink towards 0 by ``lambd`` (the proximal step of an L1 penalty)."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    # ``input * 0`` in the middle, as PyTorch's kernel: a NaN stays NaN (and -0.2 gives -0.0).
    return elementwise_ops.where(input > lambd, input - lambd,
                                 elementwise_ops.where(input < -lambd, input + lambd, input * 0))


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    return input - input.tanh()


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """Leaky ReLU with a random negative slope in [lower, upper] while training.

    In evaluation the slope is the mean, ``(lower + upper) / 2``.
    """
    def compute(x: Tensor) -> Tensor:
        if not training:
            return elementwise_ops.leaky_relu(x, (lower + upper) / 2)
        with no_grad():
            slope = empty(tuple(x.shape), dtype=x.dtype, device=x.device)
            slope.uniform_(lower, upper)
        return elementwise_ops.where(x >= 0, x, x * slope)

    return elementwise_ops.inplace(input, compute) if inplace else compute(input)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    return rrelu(input, lower, upper, training, inplace=True)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A differentiable sample from the categorical distribution ``softmax(logits)``.

    Adds Gumbel noise ``-log(E)`` (E ~ Exp(1)) and takes a softmax at
    temperature ``tau``.  With ``hard=True`` the result is one-hot in the
    forward pass but has the soft sample's gradient (straight-through).
    """
    with no_grad():
        noise = empty(tuple(logits.shape), dtype=logits.dtype, device=logits.device)
        gumbels = -noise.exponential_().log()
    y_soft = reduction_ops.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros(tuple(logits.shape), dtype=logits.dtype, device=logits.device)
    y_hard = y_hard.scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft

"""Small synthetic 2-D datasets for the quick demos (``minitorch train xor``).

Each function returns ``(X, y)``: float32 points of shape (n, 2) and int64
labels 0/1, drawn with minitorch's generator so a seed fixes them.
"""

from __future__ import annotations

import math

from ..dtype import float32, int64
from ..ops.sampling import rand, randn
from ..random import Generator
from ..ops.views import stack

__all__ = ["xor", "circles", "spiral", "split", "TOY_DATASETS"]


def _gen(seed: int) -> Generator:
    return Generator().manual_seed(seed)


def xor(n: int = 200, seed: int = 0) -> tuple:
    """Points in [-1, 1]^2; label 1 when x and y have different signs."""
    g = _gen(seed)
    x = rand(n, 2, generator=g) * 2 - 1
    y = ((x[:, 0] > 0) != (x[:, 1] > 0)).to(int64)
    return x, y


def split(n: int = 200, seed: int = 0) -> tuple:
    """Label 1 to the right of x = 0.2: a linearly separable warm-up."""
    g = _gen(seed)
    x = rand(n, 2, generator=g) * 2 - 1
    return x, (x[:, 0] > 0.2).to(int64)


def circles(n: int = 200, seed: int = 0, noise: float = 0.05) -> tuple:
    """An inner disc (label 1) inside a ring (label 0)."""
    g = _gen(seed)
    angle = rand(n, generator=g) * (2 * math.pi)
    label = (rand(n, generator=g) > 0.5).to(int64)
    radius = label.to(float32) * -0.5 + 1.0 + randn(n, generator=g) * noise
    x = stack([radius * angle.cos(), radius * angle.sin()], 1)
    return x, label


def spiral(n: int = 200, seed: int = 0, noise: float = 0.05) -> tuple:
    """Two interleaved spirals, one per class."""
    g = _gen(seed)
    t = rand(n, generator=g) * 3 * math.pi + 0.5
    label = (rand(n, generator=g) > 0.5).to(int64)
    sign = label.to(float32) * 2 - 1
    x = stack([sign * t * t.cos(), sign * t * t.sin()], 1) / (3 * math.pi) \
        + randn(n, 2, generator=g) * noise
    return x, label


TOY_DATASETS = {"xor": xor, "circles": circles, "spiral": spiral, "split": split}

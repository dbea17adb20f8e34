"""The demo models: LeNet-5 style CNN, a 784-128-10 MLP, and a tiny MLP for 2-D data."""

from __future__ import annotations

from .. import nn
from ..tensor import Tensor

__all__ = ["LeNet", "MLP", "ToyMLP", "MODELS"]


class LeNet(nn.Module):
    """Two conv+pool stages and three linear layers (LeCun et al., 1998, with ReLU)."""

    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),   # 6 x 14 x 14
            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),             # 16 x 5 x 5
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
            nn.Linear(84, num_classes),
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


class MLP(nn.Module):
    """784 -> 128 -> 10 with a ReLU."""

    def __init__(self, hidden: int = 128, num_classes: int = 10) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, hidden), nn.ReLU(),
                                 nn.Linear(hidden, num_classes))

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class ToyMLP(nn.Module):
    """2 -> hidden -> hidden -> 2 for the synthetic 2-D datasets."""

    def __init__(self, hidden: int = 16) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, hidden),
                                 nn.Tanh(), nn.Linear(hidden, 2))

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


MODELS = {"lenet": LeNet, "mlp": MLP}

"""The demo models: LeNet-5 style CNN, a 784-128-10 MLP, and a tiny MLP for 2-D data."""

from __future__ import annotations

from .. import nn
from ..tensor import Tensor

__all__ = ["LeNet", "MLP", "ToyMLP", "MODELS", "TOY_MODELS", "models_for", "build_model"]


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
    """2 -> hidden -> hidden -> 2 for the synthetic 2-D datasets.

    32 ReLU units per layer: enough to bend a boundary around the two
    interleaved arms of ``spiral`` within the default 100 epochs (16 tanh
    units stalled at 60% there).
    """

    def __init__(self, hidden: int = 32) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.ReLU(), nn.Linear(hidden, 2))

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


# The networks each task can train, by their --model name; the first is the default.
MODELS = {"lenet": LeNet, "mlp": MLP}
TOY_MODELS = {"mlp": ToyMLP}


def models_for(task: str) -> dict:
    """The ``--model`` choices of ``task``: LeNet or an MLP for mnist, a small MLP for 2-D data."""
    return MODELS if task == "mnist" else TOY_MODELS


def build_model(task: str, name: str) -> nn.Module:
    """A fresh, randomly initialised network (its weights draw from minitorch's generator)."""
    choices = models_for(task)
    if name not in choices:
        raise ValueError(f"--model {name} does not fit the {task} task; choose "
                         f"{' or '.join(choices)}")
    return choices[name]()

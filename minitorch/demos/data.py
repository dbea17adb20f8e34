"""The data each demo task trains and tests on.

``mnist`` reads the shipped 5,000-digit subset (or the full IDX files from
``data_dir``); the 2-D tasks draw 400 training and 400 test points from
:mod:`minitorch.datasets.toy` with the run's seed.  ``limit`` cuts the
training set and ``test_limit`` the test set, separately: a quick run
(``--limit 256``) still reports accuracy on the whole test set unless asked
otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..datasets.mnist import MNIST
from ..datasets.toy import TOY_DATASETS
from ..tensor import Tensor
from .checks import UserError

__all__ = ["TaskData", "load_task_data", "TOY_POINTS", "describe_source"]

TOY_POINTS = 400   # training points, and as many test points, for the 2-D tasks


@dataclass
class TaskData:
    """Training and test tensors: images (N, 1, 28, 28) or points (N, 2), labels (N,)."""

    train_x: Tensor
    train_y: Tensor
    test_x: Tensor
    test_y: Tensor
    num_classes: int


def load_task_data(task: str, data_dir: str | None = None, seed: int = 0,
                   limit: int | None = None, test_limit: int | None = None,
                   train: bool = True) -> TaskData:
    """Load ``task``'s data; ``limit`` / ``test_limit`` keep the first N samples of each set.

    ``train=False`` skips reading the training set (evaluation needs only the test set).
    """
    if task == "mnist":
        try:
            test_set = MNIST(data_dir, train=False)
            train_set = MNIST(data_dir, train=True) if train else test_set
        except (FileNotFoundError, ValueError) as e:     # missing or malformed IDX files
            raise UserError(f"--data-dir {data_dir}: {e}" if data_dir else str(e)) from None
        xs, ys, xt, yt = train_set.data, train_set.targets, test_set.data, test_set.targets
        if not train:
            xs, ys = xs[:0], ys[:0]
        classes = 10
    else:
        if task not in TOY_DATASETS:
            raise ValueError(f"unknown task {task!r}; choose mnist or one of "
                             f"{sorted(TOY_DATASETS)}")
        make = TOY_DATASETS[task]
        # The test points come from the next seed: the same distribution, other samples.
        xs, ys = make(TOY_POINTS, seed=seed)
        xt, yt = make(TOY_POINTS, seed=seed + 1)
        classes = 2
    if limit is not None:
        xs, ys = xs[:limit], ys[:limit]
    if test_limit is not None:
        xt, yt = xt[:test_limit], yt[:test_limit]
    return TaskData(xs, ys, xt, yt, classes)


def describe_source(task: str, data_dir: str | None) -> str:
    """Where a task's data comes from, in words (for the messages of the commands)."""
    if task != "mnist":
        return f"synthetic {task} points"
    return f"MNIST from {data_dir}" if data_dir else "the MNIST subset shipped with minitorch"

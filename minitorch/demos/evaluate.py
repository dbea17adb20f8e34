"""``minitorch evaluate``: how good is a saved model, and where does it go wrong.

Runs the checkpoint's model over its task's test set and reports the
accuracy, the mean cross-entropy loss and the confusion matrix (row: the
true class, column: the predicted one; the diagonal holds the correct
answers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import nn
from ..autograd.grad_mode import no_grad
from ..ops.views import cat
from ..tensor import Tensor

__all__ = ["run_model", "accuracy_and_loss", "confusion_matrix", "Evaluation", "evaluate_model",
           "format_confusion"]


def run_model(model: nn.Module, x: Tensor, batch_size: int,
              on_batch: Callable[[int], None] | None = None) -> Tensor:
    """The logits of ``model`` for every row of ``x``, batch by batch, in eval mode.

    ``no_grad`` because nothing here is differentiated: no graph is recorded,
    so each batch's intermediate results are freed as soon as they are used.
    ``on_batch(i)`` is called after the ``i``-th batch (counted from 1).
    """
    was_training = model.training
    model.eval()
    outputs = []
    try:
        with no_grad():
            for i, start in enumerate(range(0, x.shape[0], batch_size), 1):
                outputs.append(model(x[start:start + batch_size]))
                if on_batch is not None:
                    on_batch(i)
    finally:
        model.train(was_training)
    return cat(outputs) if outputs else x.new_zeros((0, 0))


def accuracy_and_loss(logits: Tensor, y: Tensor) -> tuple[float, float]:
    """Fraction of rows whose largest logit is the label, and the mean cross-entropy."""
    n = y.shape[0]
    if n == 0:
        return 0.0, 0.0
    with no_grad():
        correct = int((logits.argmax(1) == y).sum().item())
        loss = float(nn.functional.cross_entropy(logits, y).item())
    return correct / n, loss


def confusion_matrix(predicted: np.ndarray, target: np.ndarray, num_classes: int) -> np.ndarray:
    """``m[t, p]``: how many samples of true class ``t`` were predicted as ``p``.

    >>> confusion_matrix(np.array([0, 1, 1]), np.array([0, 0, 1]), 2)
    array([[1, 1],
           [0, 1]])
    """
    flat = target.astype(np.int64) * num_classes + predicted.astype(np.int64)
    return np.bincount(flat, minlength=num_classes * num_classes).reshape(num_classes,
                                                                          num_classes)


@dataclass
class Evaluation:
    """The results of :func:`evaluate_model`."""

    accuracy: float
    loss: float
    confusion: np.ndarray          # (classes, classes)
    predicted: np.ndarray          # (N,) predicted class of each sample
    confidence: np.ndarray         # (N,) softmax probability of that prediction

    @property
    def n(self) -> int:
        return int(self.predicted.shape[0])

    def as_dict(self) -> dict:
        return {"n": self.n, "accuracy": self.accuracy, "loss": self.loss,
                "correct": int(np.trace(self.confusion)),
                "confusion_matrix": self.confusion.tolist()}


def evaluate_model(model: nn.Module, x: Tensor, y: Tensor, num_classes: int,
                   batch_size: int = 500) -> Evaluation:
    """Accuracy, loss, confusion matrix and per-sample predictions of ``model`` on ``(x, y)``."""
    logits = run_model(model, x, batch_size)
    accuracy, loss = accuracy_and_loss(logits, y)
    with no_grad():
        probs = logits.softmax(1).cpu().numpy()
    predicted = probs.argmax(1) if probs.size else np.zeros(0, np.int64)
    confidence = probs.max(1) if probs.size else np.zeros(0, np.float32)
    target = y.cpu().numpy()
    return Evaluation(accuracy, loss, confusion_matrix(predicted, target, num_classes),
                      predicted, confidence)


def format_confusion(m: np.ndarray) -> str:
    """The confusion matrix as a text table (rows: true class, columns: predicted).

    >>> print(format_confusion(np.array([[5, 1], [0, 7]])))
    true \\ predicted     0    1
                    0     5    1
                    1     0    7
    """
    k = m.shape[0]
    width = max(4, len(str(int(m.max()))) + 1) if m.size else 4
    lines = ["true \\ predicted " + "".join(f"{c:>{width}}" for c in range(k))]
    for t in range(k):
        lines.append(f"{t:>17}" + "".join(f"{int(v):>{width}}" for v in m[t]))
    return "\n".join(lines)

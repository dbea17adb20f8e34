"""The figures the commands write: training curves, misclassified digits, feature maps.

matplotlib is optional (``pip install 'minitorch[plot]'``); it is imported
inside each function with the non-interactive Agg backend, so the commands
work on machines without a display.  The format follows the file's
extension (.png, .pdf, .svg, ...), checked before any work by
:func:`minitorch.demos.checks.check_image_output`.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["run_title", "plot_history", "plot_misclassified", "plot_points", "plot_features"]


def _pyplot() -> Any:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def run_title(config: dict) -> str:
    """One line naming a run's configuration, for figure titles.

    >>> run_title({"task": "mnist", "model": "lenet", "optimizer": "adam", "lr": 0.002,
    ...            "schedule": "cosine", "batch_size": 64, "seed": 0, "limit": None})
    'mnist, lenet: adam lr 0.002 (cosine), batch 64, seed 0'
    """
    text = (f"{config['task']}, {config['model']}: {config['optimizer']} lr {config['lr']:g} "
            f"({config['schedule']}), batch {config['batch_size']}, seed {config['seed']}")
    if config.get("limit"):
        text += f", first {config['limit']} training samples"
    return text


def plot_history(history: list, path: str, title: str | None = None) -> None:
    """Loss and accuracy per epoch, side by side, titled with the run's configuration."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator
    epochs = [h["epoch"] for h in history]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(epochs, [h["loss"] for h in history], marker="o", label="train")
    if history and "test_loss" in history[0]:
        ax1.plot(epochs, [h["test_loss"] for h in history], marker="o", label="test")
    ax1.set_ylabel("cross-entropy loss")
    ax1.set_title("Loss")
    ax1.legend()
    ax2.plot(epochs, [100 * h["train_acc"] for h in history], marker="o", label="train")
    ax2.plot(epochs, [100 * h["test_acc"] for h in history], marker="o", label="test")
    ax2.set_ylabel("accuracy (%)")
    ax2.set_title("Accuracy")
    ax2.legend()
    for ax in (ax1, ax2):
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))   # epochs are whole numbers
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_misclassified(images: np.ndarray, true: Sequence[int], predicted: Sequence[int],
                       confidence: Sequence[float], path: str, title: str = "",
                       limit: int = 40) -> None:
    """A grid of misclassified digits, each labelled "true -> predicted (probability)"."""
    plt = _pyplot()
    shown = min(len(images), limit)
    cols = 8
    rows = max(1, -(-shown // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 1.3, rows * 1.5 + 0.6), squeeze=False)
    for i, ax in enumerate(axes.flat):
        ax.axis("off")
        if i < shown:
            ax.imshow(images[i].reshape(28, 28), cmap="gray_r", vmin=0, vmax=1)
            ax.set_title(f"{true[i]} \u2192 {predicted[i]} ({100 * confidence[i]:.0f}%)",
                         fontsize=8)
    if not shown:
        axes.flat[0].text(0, 0.5, "no misclassified samples", fontsize=12)
    fig.suptitle(f"{title}{': ' if title else ''}{len(images)} misclassified"
                 f"{f', first {shown} shown' if shown < len(images) else ''} (true \u2192 "
                 "predicted)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_points(points: np.ndarray, labels: np.ndarray, predicted: np.ndarray, path: str,
                title: str = "") -> None:
    """A 2-D test set coloured by true class, the misclassified points marked with a cross."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 5))
    wrong = labels != predicted
    for c, colour in ((0, "tab:blue"), (1, "tab:orange")):
        keep = (labels == c) & ~wrong
        ax.scatter(points[keep, 0], points[keep, 1], s=10, color=colour, label=f"class {c}")
    ax.scatter(points[wrong, 0], points[wrong, 1], s=40, marker="x", color="red",
               label=f"misclassified ({int(wrong.sum())})")
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_features(image: np.ndarray, filters: np.ndarray, maps: list[tuple[str, np.ndarray]],
                  path: str, title: str = "") -> None:
    """The input digit, the first convolution's filters, then each conv layer's feature maps.

    ``filters`` is (out_channels, in_channels, kh, kw) (the first input channel
    is drawn); each entry of ``maps`` is ``(layer name, array (channels, h, w))``.
    """
    plt = _pyplot()
    cols = 8
    # Rows per block: the input takes the first column of the filter block.
    rows_of = [-(-filters.shape[0] // (cols - 1))] + [-(-m.shape[0] // cols) for _, m in maps]
    total_rows = sum(rows_of)
    fig, axes = plt.subplots(total_rows, cols, figsize=(cols * 1.2, total_rows * 1.35 + 0.8),
                             squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    row = 0
    # Block 1: the digit, then the filters (red: positive weights, blue: negative).
    axes[0, 0].imshow(image.reshape(image.shape[-2], image.shape[-1]), cmap="gray_r")
    axes[0, 0].set_title("input", fontsize=8)
    limit = float(np.abs(filters).max()) or 1.0
    for i in range(filters.shape[0]):
        r, c = divmod(i, cols - 1)
        ax = axes[row + r, c + 1]
        ax.imshow(filters[i, 0], cmap="RdBu_r", vmin=-limit, vmax=limit)
        ax.set_title(f"filter {i}", fontsize=8)
    row += rows_of[0]
    for (name, m), n_rows in zip(maps, rows_of[1:]):
        for i in range(m.shape[0]):
            r, c = divmod(i, cols)
            ax = axes[row + r, c]
            ax.imshow(m[i], cmap="viridis")
            ax.set_title(f"{name}[{i}]" if i == 0 else f"[{i}]", fontsize=8)
        row += n_rows
    fig.suptitle(title or "features", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)

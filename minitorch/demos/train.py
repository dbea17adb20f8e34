"""The training loop behind ``minitorch train``.

Reproducible by construction: everything random (initial weights, the order
of the batches, dropout) draws from minitorch's generator, which is seeded
once.  A checkpoint stores the model, the optimizer, the generator state and
where in the epoch training stopped (the epoch's shuffled order and the next
batch), so ``--resume`` after a Ctrl-C continues to exactly the weights an
uninterrupted run would reach.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from .. import nn, optim
from ..autograd.grad_mode import no_grad
from ..ops.sampling import randperm
from ..random import get_rng_state, manual_seed, set_rng_state
from ..serialization import load, save
from ..tensor import Tensor
from .models import MODELS, ToyMLP

__all__ = ["TrainConfig", "train", "Interrupted"]


@dataclass
class TrainConfig:
    task: str = "mnist"
    model: str = "lenet"
    epochs: int = 10
    batch_size: int = 64
    lr: float = 1e-3
    optimizer: str = "adam"
    seed: int = 0
    device: str = "cpu"
    data_dir: str | None = None
    limit: int | None = None
    checkpoint: str | None = None
    resume: bool = False
    schedule: str = "cosine"
    eval_batch_size: int = 500
    extra: dict = field(default_factory=dict)


class Interrupted(Exception):
    """Raised after Ctrl-C once the checkpoint is safely written."""


def _load_task(cfg: TrainConfig) -> tuple:
    """``(train_x, train_y, test_x, test_y, model)`` for the task."""
    if cfg.task == "mnist":
        from ..datasets.mnist import MNIST
        train_set = MNIST(cfg.data_dir, train=True)
        test_set = MNIST(cfg.data_dir, train=False)
        xs, ys, xt, yt = train_set.data, train_set.targets, test_set.data, test_set.targets
        if cfg.model not in MODELS:
            raise ValueError(f"unknown model {cfg.model!r}; choose from {sorted(MODELS)}")
        model = MODELS[cfg.model]()
    else:
        from ..datasets.toy import TOY_DATASETS
        if cfg.task not in TOY_DATASETS:
            raise ValueError(f"unknown task {cfg.task!r}; choose mnist or one of "
                             f"{sorted(TOY_DATASETS)}")
        make = TOY_DATASETS[cfg.task]
        xs, ys = make(400, seed=cfg.seed)
        xt, yt = make(400, seed=cfg.seed + 1)
        model = ToyMLP()
    if cfg.limit is not None:
        xs, ys = xs[:cfg.limit], ys[:cfg.limit]
        xt, yt = xt[:max(cfg.limit // 4, 1)], yt[:max(cfg.limit // 4, 1)]
    return xs, ys, xt, yt, model


def _make_optimizer(cfg: TrainConfig, params: Any) -> optim.Optimizer:
    if cfg.optimizer == "sgd":
        return optim.SGD(params, lr=cfg.lr, momentum=0.9)
    if cfg.optimizer == "adam":
        return optim.Adam(params, lr=cfg.lr)
    raise ValueError(f"unknown optimizer {cfg.optimizer!r}; choose sgd or adam")


def evaluate(model: nn.Module, x: Tensor, y: Tensor, batch_size: int) -> float:
    """Accuracy of ``model`` on ``(x, y)``, in eval mode and without recording a graph."""
    model.eval()
    correct = 0
    with no_grad():
        for start in range(0, x.shape[0], batch_size):
            logits = model(x[start:start + batch_size])
            correct += int((logits.argmax(1) == y[start:start + batch_size]).sum().item())
    model.train()
    return correct / max(x.shape[0], 1)


def _make_scheduler(cfg: TrainConfig, opt: optim.Optimizer) -> Any:
    """Cosine annealing over the run (one step per epoch) smooths the last epochs."""
    if cfg.schedule == "cosine":
        return optim.lr_scheduler.CosineAnnealingLR(opt, T_max=cfg.epochs)
    if cfg.schedule == "none":
        return None
    raise ValueError(f"unknown schedule {cfg.schedule!r}; choose cosine or none")


def _checkpoint(path: str, model: nn.Module, opt: optim.Optimizer, sched: Any, epoch: int,
                batch: int, perm: Tensor | None, history: list, cfg: TrainConfig) -> None:
    save({"model": model.state_dict(), "optimizer": opt.state_dict(),
          "scheduler": sched.state_dict() if sched is not None else None,
          "rng": get_rng_state(),
          "epoch": epoch, "batch": batch, "perm": perm, "history": history,
          "config": {k: v for k, v in asdict(cfg).items() if k != "extra"}}, path)


def train(cfg: TrainConfig, echo: Callable[[str], None] = print,
          progress: Callable | None = None) -> list:
    """Train as configured; returns the per-epoch history (a list of dicts).

    ``progress(iterable, length, label)`` may wrap the batch loop (the CLI
    passes ``click.progressbar``).  Ctrl-C writes the checkpoint (if one was
    asked for) and raises :class:`Interrupted`.
    """
    manual_seed(cfg.seed)
    xs, ys, xt, yt, model = _load_task(cfg)
    if cfg.device != "cpu":
        model.to(cfg.device)
        xs, ys, xt, yt = (t.to(cfg.device) for t in (xs, ys, xt, yt))
    opt = _make_optimizer(cfg, model.parameters())
    sched = _make_scheduler(cfg, opt)
    loss_fn = nn.CrossEntropyLoss()
    history: list = []
    start_epoch, start_batch, perm = 0, 0, None
    if cfg.resume:
        if not cfg.checkpoint or not os.path.exists(cfg.checkpoint):
            raise FileNotFoundError(f"--resume: no checkpoint at {cfg.checkpoint!r}")
        state = load(cfg.checkpoint, map_location=cfg.device)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        if sched is not None and state.get("scheduler") is not None:
            sched.load_state_dict(state["scheduler"])
        set_rng_state(state["rng"])
        start_epoch, start_batch = state["epoch"], state["batch"]
        perm, history = state["perm"], list(state["history"])
        echo(f"resumed from {cfg.checkpoint} at epoch {start_epoch + 1}, batch {start_batch}")
    n = xs.shape[0]
    n_batches = -(-n // cfg.batch_size)
    for epoch in range(start_epoch, cfg.epochs):
        if perm is None or start_batch == 0:
            perm = randperm(n, device="cpu")
        # Each batch is taken with one index_select (not sample by sample).  The
        # order is drawn on the CPU (the same on every device), then moved to the data.
        batches = [perm[b * cfg.batch_size:(b + 1) * cfg.batch_size].to(xs.device)
                   for b in range(start_batch, n_batches)]
        loader = ((xs.index_select(0, idx), ys.index_select(0, idx)) for idx in batches)
        t0 = time.perf_counter()
        seen = correct = 0
        loss_sum = 0.0
        batch = start_batch
        try:
            iterator = progress(loader, len(batches), f"epoch {epoch + 1}/{cfg.epochs}") \
                if progress else _nullcontext(loader)
            with iterator as bar:
                for xb, yb in bar:
                    logits = model(xb)
                    loss = loss_fn(logits, yb)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    batch += 1
                    seen += yb.shape[0]
                    loss_sum += float(loss.item()) * yb.shape[0]
                    correct += int((logits.argmax(1) == yb).sum().item())
        except KeyboardInterrupt:
            if cfg.checkpoint:
                _checkpoint(cfg.checkpoint, model, opt, sched, epoch, batch, perm, history, cfg)
                echo(f"\ninterrupted: checkpoint saved to {cfg.checkpoint} (epoch {epoch + 1}, "
                     f"batch {batch}); continue with --resume")
            else:
                echo("\ninterrupted (no --checkpoint given, nothing saved)")
            raise Interrupted() from None
        seconds = time.perf_counter() - t0
        start_batch = 0
        if sched is not None:
            sched.step()
        test_acc = evaluate(model, xt, yt, cfg.eval_batch_size)
        record = {"epoch": epoch + 1, "loss": loss_sum / max(seen, 1),
                  "train_acc": correct / max(seen, 1), "test_acc": test_acc,
                  "seconds": seconds, "images_per_second": seen / seconds if seconds else 0.0}
        history.append(record)
        echo(f"epoch {epoch + 1:>3}/{cfg.epochs}  loss {record['loss']:.4f}  "
             f"train acc {100 * record['train_acc']:.2f}%  test acc {100 * test_acc:.2f}%  "
             f"{seconds:.1f}s  {record['images_per_second']:.0f} img/s")
        if cfg.checkpoint:
            _checkpoint(cfg.checkpoint, model, opt, sched, epoch + 1, 0, None, history, cfg)
    return history


class _nullcontext:
    def __init__(self, value: Any) -> None:
        self.value = value

    def __enter__(self) -> Any:
        return self.value

    def __exit__(self, *exc: Any) -> None:
        return None


def plot_history(history: list, path: str) -> None:
    """Write a PNG with the loss and accuracy curves (needs matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("--plot needs matplotlib: pip install 'minitorch[plot]' (or "
                           "pip install matplotlib)") from None
    epochs = [h["epoch"] for h in history]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(epochs, [h["loss"] for h in history], marker="o")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("training loss")
    ax1.set_title("Loss")
    ax2.plot(epochs, [100 * h["train_acc"] for h in history], marker="o", label="train")
    ax2.plot(epochs, [100 * h["test_acc"] for h in history], marker="o", label="test")
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("accuracy (%)")
    ax2.set_title("Accuracy")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def history_json(history: list, cfg: TrainConfig) -> str:
    return json.dumps({"config": {k: v for k, v in asdict(cfg).items() if k != "extra"},
                       "history": history}, indent=2)

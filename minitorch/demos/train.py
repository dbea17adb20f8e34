"""The training loop behind ``minitorch train``.

Reproducible by construction: everything random (initial weights, the order
of the batches) draws from minitorch's generator, which is seeded once, so
two runs with the same seed print the same numbers.

Resumable exactly, wherever it stops.  The loop keeps a *position*: the
epoch, the phase (training or evaluating), the next batch, the epoch's
shuffled order, the generator state and the epoch's running sums.  Every
change to the weights, the optimizer, the scheduler and the position
happens inside an :class:`~minitorch.demos.interrupt.InterruptGuard` block,
so when Ctrl-C arrives the checkpoint written describes one consistent
moment: a batch has been applied entirely or not at all.  ``--resume`` then
continues from that moment and ends with the same numbers as a run that was
never interrupted, whether it stopped in an epoch's first batch (while the
kernels compile), in the middle, after the last batch, or while evaluating.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from .. import nn, optim
from ..random import get_rng_state, manual_seed, set_rng_state
from ..ops.sampling import randperm
from ..serialization import save
from ..tensor import Tensor
from .checkpoint import KIND, VERSION, CheckpointError, read_checkpoint
from .checks import UserError
from .data import describe_source, load_task_data
from .distributed import LocalShard, data_shard
from .evaluate import accuracy_and_loss, run_model
from .interrupt import InterruptGuard
from .models import build_model
from .plots import plot_history as _plot_history
from .plots import run_title
from .progress import CompileClock, SlowStartNotice, compile_notice, compile_report

__all__ = ["TrainConfig", "train", "Interrupted", "evaluate", "defaults_for", "history_json",
           "plot_history", "RUN_FIELDS", "saved_config"]

# The settings that define a run: resuming with another value of one of them
# would silently continue a different experiment (see resume.py).
RUN_FIELDS = ("task", "model", "batch_size", "lr", "optimizer", "schedule", "seed", "data_dir",
              "limit")


@dataclass
class TrainConfig:
    """Everything ``minitorch train`` was asked for."""

    task: str = "mnist"
    model: str = "lenet"
    epochs: int = 10
    batch_size: int = 64
    lr: float = 1e-3
    optimizer: str = "adam"
    seed: int = 0
    device: str = "cpu"
    data_dir: str | None = None
    limit: int | None = None           # training samples
    checkpoint: str | None = None
    resume: bool = False
    schedule: str = "cosine"
    eval_batch_size: int = 500
    test_limit: int | None = None      # test samples (separate from ``limit``)
    extra: dict = field(default_factory=dict)


def defaults_for(task: str, optimizer: str = "adam") -> dict:
    """The defaults a task trains with when options are left out: model, epochs, lr."""
    if task == "mnist":
        return {"model": "lenet", "epochs": 10, "lr": 2e-3 if optimizer == "adam" else 0.05}
    return {"model": "mlp", "epochs": 100, "lr": 1e-2 if optimizer == "adam" else 0.05}


def saved_config(cfg: TrainConfig) -> dict:
    """The part of the configuration a checkpoint records (not where it is written)."""
    return {k: v for k, v in asdict(cfg).items()
            if k not in ("extra", "checkpoint", "resume")}


class Interrupted(Exception):
    """Raised after Ctrl-C, once the checkpoint (if one was asked for) is safely written."""


@dataclass
class _Position:
    """Where training stands; changed only inside ``guard.hold()`` blocks."""

    epoch: int = 0                    # the epoch in progress, 0-based
    phase: str = "train"              # "train": batches left; "evaluate": only evaluation left
    batch: int = 0                    # the next batch to train
    perm: Tensor | None = None        # this epoch's order, once drawn
    rng: Tensor | None = None         # the generator state to restore at this position
    running: dict = field(default_factory=lambda: {"loss_sum": 0.0, "correct": 0, "seen": 0,
                                                   "seconds": 0.0})


def _make_optimizer(cfg: TrainConfig, params: Any) -> optim.Optimizer:
    if cfg.optimizer == "sgd":
        return optim.SGD(params, lr=cfg.lr, momentum=0.9)
    if cfg.optimizer == "adam":
        return optim.Adam(params, lr=cfg.lr)
    raise ValueError(f"unknown optimizer {cfg.optimizer!r}; choose sgd or adam")


def _make_scheduler(cfg: TrainConfig, opt: optim.Optimizer) -> Any:
    """Cosine annealing over the run (one step per epoch) smooths the last epochs."""
    if cfg.schedule == "cosine":
        return optim.lr_scheduler.CosineAnnealingLR(opt, T_max=cfg.epochs)
    if cfg.schedule == "none":
        return None
    raise ValueError(f"unknown schedule {cfg.schedule!r}; choose cosine or none")


def replan_cosine(sched: Any, epochs: int) -> None:
    """Stretch a cosine schedule to ``epochs`` in all, from the epoch it has reached.

    Epoch ``k`` of ``N`` uses ``lr * (1 + cos(pi k / N)) / 2``.  Keeping the old
    ``T_max`` past its end would make the rate climb back up (cosine annealing
    is periodic); re-planning for the new total continues where an ``N``-epoch
    run stands at epoch ``k`` and decays to zero at the new last epoch.
    """
    sched.T_max = epochs
    k = sched.last_epoch
    for group, base in zip(sched.optimizer.param_groups, sched.base_lrs):
        group["lr"] = sched.eta_min + (base - sched.eta_min) * (1 + math.cos(math.pi * k /
                                                                              epochs)) / 2
    sched._last_lr = [group["lr"] for group in sched.optimizer.param_groups]


def evaluate(model: nn.Module, x: Tensor, y: Tensor, batch_size: int) -> float:
    """Accuracy of ``model`` on ``(x, y)``, in eval mode and without recording a graph."""
    return accuracy_and_loss(run_model(model, x, batch_size), y)[0]


def _state(cfg: TrainConfig, model: nn.Module, opt: optim.Optimizer, sched: Any,
           pos: _Position, history: list) -> dict:
    return {"kind": KIND, "version": VERSION, "config": saved_config(cfg),
            "model": model.state_dict(), "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict() if sched is not None else None,
            "epoch": pos.epoch, "phase": pos.phase, "batch": pos.batch, "perm": pos.perm,
            "rng": pos.rng, "running": dict(pos.running), "history": list(history)}


def _restore(state: dict, cfg: TrainConfig, model: nn.Module, opt: optim.Optimizer,
             sched: Any, n: int, n_batches: int) -> tuple[_Position, list]:
    """Load a checkpoint into the fresh model, optimizer and scheduler; check it fits."""
    path = cfg.checkpoint or "the checkpoint"

    def bad(why: str) -> CheckpointError:
        return CheckpointError(f"{path}: {why}")
    try:
        model.load_state_dict(state["model"])
    except (RuntimeError, KeyError, TypeError, ValueError) as e:
        raise bad(f"its weights do not fit the {cfg.model} model "
                  f"({str(e).splitlines()[0]})") from None
    try:
        opt.load_state_dict(state["optimizer"])
    except (RuntimeError, KeyError, TypeError, ValueError) as e:
        raise bad(f"its optimizer state does not fit {cfg.optimizer} ({e})") from None
    for p, st in opt.state.items():
        for name, value in st.items():
            if isinstance(value, Tensor) and value.dim() > 0 and value.shape != p.shape:
                raise bad(f"its optimizer state {name!r} has shape {tuple(value.shape)} for "
                          f"a parameter of shape {tuple(p.shape)}")
    if sched is not None:
        if not isinstance(state["scheduler"], dict):
            raise bad("it has no learning-rate scheduler state")
        sched.load_state_dict(state["scheduler"])
        if getattr(sched, "T_max", cfg.epochs) != cfg.epochs:
            replan_cosine(sched, cfg.epochs)
    pos = _Position(epoch=state["epoch"], phase=state["phase"], batch=state["batch"],
                    perm=state["perm"], rng=state["rng"], running=dict(state["running"]))
    history = list(state["history"])
    if len(history) != pos.epoch or pos.batch > n_batches:
        raise bad(f"its position (epoch {pos.epoch + 1}, batch {pos.batch}) does not match its "
                  f"history of {len(history)} epochs and {n_batches} batches per epoch")
    if pos.perm is not None:
        order = pos.perm.numpy()
        if order.shape != (n,) or not np.array_equal(np.sort(order), np.arange(n)):
            raise bad(f"its saved order is not a permutation of the {n} training samples")
    try:
        set_rng_state(pos.rng)
    except (RuntimeError, TypeError, ValueError) as e:
        raise bad(f"its generator state is unusable ({e})") from None
    return pos, history


def _batch_stats(logits: Tensor, yb: Tensor, loss: Tensor) -> tuple[float, int]:
    return float(loss.item()) * yb.shape[0], int((logits.argmax(1) == yb).sum().item())


def forward_backward(net: nn.Module, loss_fn: Callable[[Tensor, Tensor], Tensor],
                     opt: optim.Optimizer, xb: Tensor, yb: Tensor) -> tuple[Tensor, Tensor]:
    """The heart of one training step: the batch's logits and loss, and every gradient.

    Args:
        net: the model; ``net(xb)`` gives the logits, shape ``(batch, classes)``.

        loss_fn: ``loss_fn(logits, yb)`` gives the batch's loss (a 0-d tensor).

        opt: the optimizer that owns ``net``'s parameters (its step is *not*
        taken here).

        xb, yb: the batch's inputs and labels.

    Returns:
        ``(logits, loss)``.  Afterwards every parameter's ``.grad`` holds the
        gradient of *this* batch's loss alone, whatever earlier steps left
        there (``backward`` adds into ``.grad``).

    The caller then takes the optimizer's step: that part is kept apart so
    that a Ctrl-C can never stop a step halfway through updating weights.

    Example: two calls in a row on the same batch leave the same gradients as one.
    """
    # Task 5.6: the batch's logits and loss, with every parameter's gradient that of this
    # loss only (the optimizer's step is the caller's).
    ### BEGIN SOLUTION
    logits = net(xb)
    loss = loss_fn(logits, yb)
    opt.zero_grad()
    loss.backward()
    ### END SOLUTION
    return logits, loss


def train(cfg: TrainConfig, echo: Callable[[str], None] = print,
          progress: Callable | None = None, state: dict | None = None,
          pause: Callable[[str, int, int], None] | None = None) -> list:
    """Train as configured; returns the per-epoch history (a list of dicts).

    ``progress(iterable, length, label)`` may wrap the batch loop (the CLI
    passes ``click.progressbar``).  ``state`` is a checkpoint already read
    with :func:`~minitorch.demos.checkpoint.read_checkpoint` to resume from
    (else ``cfg.resume`` reads ``cfg.checkpoint``).  ``pause(where, epoch,
    batch)`` is called at the points where a Ctrl-C is tested ("epoch-start",
    "batch", "forward", "evaluate"; epochs counted from 1).  Ctrl-C writes the
    checkpoint (if one was asked for) and raises :class:`Interrupted`.
    """
    if state is None and cfg.resume:
        if not cfg.checkpoint:
            raise CheckpointError("--resume needs --checkpoint PATH")
        state = read_checkpoint(cfg.checkpoint)
    manual_seed(cfg.seed)
    data = load_task_data(cfg.task, cfg.data_dir, cfg.seed, cfg.limit, cfg.test_limit)
    model = build_model(cfg.task, cfg.model)
    xs, ys, xt, yt = data.train_x, data.train_y, data.test_x, data.test_y
    if cfg.device != "cpu":
        model.to(cfg.device)
        xs, ys, xt, yt = (t.to(cfg.device) for t in (xs, ys, xt, yt))
    opt = _make_optimizer(cfg, model.parameters())
    sched = _make_scheduler(cfg, opt)
    n = xs.shape[0]
    shard = data_shard(cfg)       # all the data, or this rank's share (--distributed)
    n_batches = shard.n_batches(n, cfg.batch_size)
    echo(_data_line(cfg, n, xt.shape[0]))
    if cfg.batch_size > n:
        echo(_batch_warning(cfg, n))
    if state is not None:
        pos, history = _restore(state, cfg, model, opt, sched, n, n_batches)
        where = "evaluation" if pos.phase == "evaluate" else f"batch {pos.batch}/{n_batches}"
        echo(f"resumed from {cfg.checkpoint} at epoch {pos.epoch + 1}, {where}")
    else:
        pos, history = _Position(rng=get_rng_state()), []
    loop = _Loop(cfg, model, opt, sched, xs, ys, xt, yt, echo, progress, pause or _no_pause)
    loop.shard, loop.n_batches, loop.net = shard, n_batches, shard.wrap(model)
    with InterruptGuard() as guard, CompileClock() as clock:
        loop.guard, loop.clock = guard, clock
        try:
            loop.run(pos, history)
        except KeyboardInterrupt:
            loop.save_on_interrupt(pos, history)
            raise Interrupted() from None
    return history


def _data_line(cfg: TrainConfig, n_train: int, n_test: int) -> str:
    """What the run trains and tests on, limits included, in one line."""
    train_part = f"{n_train} training samples" + (f" (--limit {cfg.limit})" if cfg.limit else "")
    test_part = f"{n_test} test samples" + (f" (--test-limit {cfg.test_limit})"
                                           if cfg.test_limit else "")
    epochs = f"{cfg.epochs} epoch{'s' if cfg.epochs != 1 else ''}"
    return (f"{run_title(dict(asdict(cfg), limit=None))}, {epochs}; {train_part} "
            f"and {test_part} from {describe_source(cfg.task, cfg.data_dir)}")


def _batch_warning(cfg: TrainConfig, n_train: int) -> str:
    """``--batch-size`` larger than the training set: what happens instead, in one line.

    As PyTorch's ``DataLoader`` (without ``drop_last``) the run goes on with
    one smaller batch: the whole training set, so one optimizer step per
    epoch, which is why such a run learns so little.
    """
    epochs = f"{cfg.epochs} epoch{'s' if cfg.epochs != 1 else ''}"
    steps = f"{cfg.epochs} step{'s' if cfg.epochs != 1 else ''}"
    return (f"warning: --batch-size {cfg.batch_size} is larger than the {n_train} training "
            f"samples: each epoch is one batch of {n_train} (as DataLoader gives), so "
            f"{epochs} make only {steps} of the optimizer; give a smaller --batch-size "
            f"(default 64)")


def _no_pause(where: str, epoch: int, batch: int) -> None:
    return None


class _Loop:
    """The epochs, batches and evaluations of one run (state lives in ``pos``/``history``)."""

    def __init__(self, cfg: TrainConfig, model: nn.Module, opt: optim.Optimizer, sched: Any,
                 xs: Tensor, ys: Tensor, xt: Tensor, yt: Tensor, echo: Callable,
                 progress: Callable | None, pause: Callable) -> None:
        self.cfg, self.model, self.opt, self.sched = cfg, model, opt, sched
        self.xs, self.ys, self.xt, self.yt = xs, ys, xt, yt
        self.echo, self.progress, self.pause = echo, progress, pause
        self.loss_fn = nn.CrossEntropyLoss()
        self.n_batches = -(-xs.shape[0] // cfg.batch_size)
        self.guard: InterruptGuard = InterruptGuard()
        # Time under Numba's compiler lock is left out of the epochs' seconds.
        self.clock = CompileClock()
        self._lock_mark = (0.0, 0.0, 0.0)   # (compiling, locked, its CPU) at the epoch's start
        # --distributed: the rank's share of each epoch, and the model in DistributedDataParallel.
        self.shard: LocalShard = LocalShard()
        self.net: nn.Module = model

    def run(self, pos: _Position, history: list) -> None:
        while pos.epoch < self.cfg.epochs:
            self._lock_mark = (self.clock.compiling, self.clock.locked, self.clock.locked_cpu)
            if pos.phase == "train":
                self.train_epoch(pos)
            self.evaluate_epoch(pos, history)

    def train_epoch(self, pos: _Position) -> None:
        cfg, guard = self.cfg, self.guard
        epoch = pos.epoch + 1
        if pos.perm is None:
            self.pause("epoch-start", epoch, 0)
            with guard.hold():
                # The order is drawn on the CPU (the same on every device), then moved.
                pos.perm = randperm(self.xs.shape[0], device="cpu")
                pos.rng = get_rng_state()
        batches = range(pos.batch, self.n_batches)
        bar = self.progress(batches, len(batches), f"epoch {epoch}/{cfg.epochs}") \
            if self.progress else _nullcontext(batches)
        last = self._work_time()
        with bar as items:
            for b in items:
                self.pause("batch", epoch, b)
                idx = self.shard.batch(pos.perm, b, cfg.batch_size).to(self.xs.device)
                xb, yb = self.xs.index_select(0, idx), self.ys.index_select(0, idx)
                with SlowStartNotice.first("train", self.echo, compile_notice(cfg.model)):
                    logits, loss = forward_backward(self.net, self.loss_fn, self.opt, xb, yb)
                    self.pause("forward", epoch, b)
                    loss_sum, correct, seen = self.shard.stats(*_batch_stats(logits, yb, loss),
                                                               yb.shape[0])
                    with guard.hold():
                        self.opt.step()
                        now = self._work_time()
                        r = pos.running
                        r["loss_sum"] += loss_sum
                        r["correct"] += correct
                        r["seen"] += seen
                        r["seconds"] += now - last
                        last = now
                        pos.batch = b + 1
                        pos.rng = get_rng_state()
        self.pause("batch", epoch, self.n_batches)
        with guard.hold():
            if self.sched is not None:
                self.sched.step()
            pos.phase = "evaluate"

    def _work_time(self) -> float:
        """A clock that stands still while Numba holds its compiler lock."""
        return time.perf_counter() - self.clock.locked

    def evaluate_epoch(self, pos: _Position, history: list) -> None:
        cfg, epoch = self.cfg, pos.epoch + 1
        with SlowStartNotice.first("evaluate", self.echo, "compiling the evaluation kernels "
                                                          "(first run only)..."):
            logits = run_model(self.model, self.xt, cfg.eval_batch_size,
                               on_batch=lambda i: self.pause("evaluate", epoch, i) if i == 1
                               else None)
        test_acc, test_loss = accuracy_and_loss(logits, self.yt)
        r = pos.running
        seen = max(r["seen"], 1)
        record = {"epoch": epoch, "loss": r["loss_sum"] / seen, "train_acc": r["correct"] / seen,
                  "test_acc": test_acc, "test_loss": test_loss, "seconds": r["seconds"],
                  "images_per_second": r["seen"] / r["seconds"] if r["seconds"] else 0.0,
                  "compile_seconds": self.clock.locked - self._lock_mark[1],
                  "compile_cpu_seconds": self.clock.locked_cpu - self._lock_mark[2]}
        compiled = compile_report(self.clock.compiling - self._lock_mark[0],
                                  record["compile_seconds"], record["compile_cpu_seconds"])
        with self.guard.hold():
            history.append(record)
            pos.epoch, pos.phase, pos.batch, pos.perm = epoch, "train", 0, None
            pos.running = _Position().running
            if cfg.checkpoint:
                _save(_state(cfg, self.model, self.opt, self.sched, pos, history),
                      cfg.checkpoint)
        if compiled:
            self.echo(compiled)
        self.echo(f"epoch {epoch:>3}/{cfg.epochs}  loss {record['loss']:.4f}  "
                  f"train acc {100 * record['train_acc']:.2f}%  test acc {100 * test_acc:.2f}%  "
                  f"{record['seconds']:.1f}s  {record['images_per_second']:.0f} img/s")
        if cfg.checkpoint:
            self.echo(f"saved to {cfg.checkpoint}")

    def save_on_interrupt(self, pos: _Position, history: list) -> None:
        cfg = self.cfg
        if not cfg.checkpoint:
            self.echo("\ninterrupted (no --checkpoint given, nothing saved)")
            return
        try:
            # A second Ctrl-C must not cut the save short (save is atomic anyway).
            with self.guard.hold():
                _save(_state(cfg, self.model, self.opt, self.sched, pos, history),
                      cfg.checkpoint)
        except KeyboardInterrupt:
            pass
        except UserError as e:
            self.echo(f"\ninterrupted, and the checkpoint could not be saved: {e}")
            return
        where = "evaluation" if pos.phase == "evaluate" else f"batch {pos.batch}"
        self.echo(f"\ninterrupted: saved to {cfg.checkpoint} (epoch {pos.epoch + 1}, {where}); "
                  "continue with --resume")


def _save(state: dict, path: str) -> None:
    """``save`` (atomic: the previous checkpoint survives a failure), with a one-line error."""
    try:
        save(state, path)
    except OSError as e:
        raise UserError(f"--checkpoint {path}: cannot write it ({e.strerror or e}); the "
                        "previous checkpoint there is unchanged") from None


class _nullcontext:
    def __init__(self, value: Any) -> None:
        self.value = value

    def __enter__(self) -> Any:
        return self.value

    def __exit__(self, *exc: Any) -> None:
        return None


def plot_history(history: list, path: str, title: str | None = None) -> None:
    """Write the loss and accuracy curves (needs matplotlib); see :mod:`.plots`."""
    _plot_history(history, path, title)


def history_json(history: list, cfg: TrainConfig) -> str:
    """The configuration and the per-epoch metrics as a JSON document."""
    return json.dumps({"config": saved_config(cfg), "history": history}, indent=2)

"""Training checkpoints: what they hold, and reading them without surprises.

A checkpoint of ``minitorch train`` is a :func:`minitorch.save` file holding
one dict, in the format its extension names (see docs/serialization.md):
``run.mt`` (or any other name) minitorch's zip of JSON and raw bytes,
``run.pt``/``run.pth`` PyTorch's format (``torch.load(path,
weights_only=True)`` reads it), ``run.safetensors`` the weights and
optimizer tensors as named safetensors entries (``model.fc1.weight``,
``optimizer.state.0.exp_avg``) with everything else as JSON in the
metadata entry ``minitorch.tree``.  ``evaluate``, ``predict`` and
``--resume`` read all three, whatever the file is called:

=============  ==============================================================
``kind``       ``"minitorch-train-checkpoint"`` and ``version``: what this is
``config``     the run's settings (task, model, optimizer, learning rate, ...)
``model``      ``model.state_dict()``
``optimizer``  ``optimizer.state_dict()`` (Adam's moments, SGD's momentum)
``scheduler``  the learning-rate scheduler's ``state_dict()``, or ``None``
``epoch``      the epoch in progress (0-based); ``epochs`` done when finished
``phase``      ``"train"`` (batches left in the epoch) or ``"evaluate"``
``batch``      the next batch of the epoch to train
``perm``       the epoch's shuffled order, once drawn (``None`` before)
``rng``        minitorch's generator state at that point
``running``    the epoch's sums so far: loss, correct, samples, seconds
``history``    one dict of metrics per finished epoch
=============  ==============================================================

With the generator state *and* the epoch's order saved, a resumed run draws
exactly the numbers an uninterrupted one would: it neither redraws the
order of an epoch already begun nor skips a draw.

:func:`read_checkpoint` turns every way a file can be wrong (missing, a
directory, empty, truncated, not a minitorch file, a minitorch file that is
not a training checkpoint, a checkpoint of another format version) into a
:class:`CheckpointError` with a one-line message naming the file.
"""

from __future__ import annotations

import os

from ..serialization import SerializationError, load
from ..tensor import Tensor
from .checks import UserError

__all__ = ["CheckpointError", "read_checkpoint", "KIND", "VERSION", "describe"]

KIND = "minitorch-train-checkpoint"
VERSION = 1
_KEYS = ("config", "model", "optimizer", "scheduler", "epoch", "phase", "batch", "perm", "rng",
         "running", "history")


class CheckpointError(UserError):
    """A checkpoint that cannot be used; the message says which file and why."""


def read_checkpoint(path: str) -> dict:
    """Load and sanity-check a training checkpoint (on the CPU).

    Raises :class:`CheckpointError` for anything that is not a usable
    checkpoint written by ``minitorch train``.  Whether its weights fit the
    model is checked when they are loaded into it.
    """
    if not os.path.exists(path):
        raise CheckpointError(f"{path}: no such file")
    if os.path.isdir(path):
        raise CheckpointError(f"{path} is a directory, not a checkpoint file")
    if os.path.getsize(path) == 0:
        raise CheckpointError(f"{path} is empty, not a checkpoint (was its writing cut short?)")
    try:
        state = load(path, map_location="cpu")
    except SerializationError as e:
        raise CheckpointError(f"{path} is not a usable minitorch checkpoint ({e.reason})") \
            from None
    except RuntimeError as e:                 # (any other refusal while loading: one line too)
        raise CheckpointError(f"{path} is not a usable minitorch checkpoint ({e})") from None
    except OSError as e:
        raise CheckpointError(f"cannot read {path}: {e.strerror or e}") from None
    if not isinstance(state, dict) or state.get("kind") != KIND:
        if isinstance(state, dict) and "config" in state and "model" in state:
            raise CheckpointError(f"{path} was written by an older minitorch train; its format "
                                  "cannot resume exactly: start a new run")
        raise CheckpointError(f"{path} is a minitorch file but not a checkpoint of "
                              "minitorch train")
    if state.get("version") != VERSION:
        raise CheckpointError(f"{path} is a version {state.get('version')!r} checkpoint; this "
                              f"minitorch reads version {VERSION}")
    missing = [k for k in _KEYS if k not in state]
    if missing:
        raise CheckpointError(f"{path} is damaged: it lacks {', '.join(missing)}")
    _check_fields(path, state)
    return state


def _check_fields(path: str, state: dict) -> None:
    """Types and ranges of the bookkeeping fields (a hand-edited file fails here, not later)."""
    def bad(what: str) -> CheckpointError:
        return CheckpointError(f"{path} is damaged: {what}")
    config = state["config"]
    if not isinstance(config, dict) or not isinstance(config.get("task"), str) \
            or not isinstance(config.get("model"), str) \
            or not isinstance(config.get("epochs"), int):
        raise bad("its config is incomplete")
    if not isinstance(state["model"], dict) or \
            not all(isinstance(v, Tensor) for v in state["model"].values()):
        raise bad("its model weights are not a state_dict")
    if not isinstance(state["optimizer"], dict):
        raise bad("its optimizer state is not a state_dict")
    epoch, batch = state["epoch"], state["batch"]
    if not isinstance(epoch, int) or not isinstance(batch, int) or epoch < 0 or batch < 0:
        raise bad(f"epoch {epoch!r} / batch {batch!r} are not counts")
    if state["phase"] not in ("train", "evaluate"):
        raise bad(f"unknown phase {state['phase']!r}")
    if state["perm"] is not None and (not isinstance(state["perm"], Tensor)
                                      or state["perm"].dim() != 1):
        raise bad("the epoch's order is not a 1-D tensor")
    if not isinstance(state["rng"], Tensor):
        raise bad("the generator state is not a tensor")
    running = state["running"]
    if not isinstance(running, dict) or \
            not all(isinstance(running.get(k), (int, float)) for k in
                    ("loss_sum", "correct", "seen", "seconds")):
        raise bad("its running sums are incomplete")
    if not isinstance(state["history"], list):
        raise bad("its history is not a list")


def describe(state: dict) -> str:
    """One line about a checkpoint: task, model, how far it got, its last test accuracy."""
    cfg, history = state["config"], state["history"]
    done = len(history)
    text = f"{cfg['task']}, {cfg['model']}, {done}/{cfg['epochs']} epochs"
    if history:
        text += f", test acc {100 * history[-1]['test_acc']:.2f}%"
    return text

"""What ``--resume`` does with the options given beside it.

A checkpoint records the configuration it was trained with.  On resume:

* an option **left out** takes the checkpoint's value: ``minitorch train
  --checkpoint c.mt --resume`` continues the saved run as it was, and says so;
* an option that **defines the run** (task, model, optimizer, learning
  rate, schedule, batch size, seed, data, ``--limit``) given with a
  *different* value is refused: continuing an Adam run with SGD, or LeNet
  weights as an MLP, is a different experiment, not a resumption;
* ``--epochs`` may be raised to train further (or lowered, down to the
  epochs already done): the cosine schedule is then re-planned for the new
  total (see :func:`~minitorch.demos.train.replan_cosine`);
* options that only change where or how it runs or what is reported
  (``--device``, ``--threads``, ``--test-limit``, output options) may
  differ freely.
"""

from __future__ import annotations

from typing import Any

from .checks import UserError
from .train import RUN_FIELDS

__all__ = ["ConfigConflict", "merge_resume_config", "OPTION_NAMES"]

OPTION_NAMES = {"task": "TASK", "model": "--model", "batch_size": "--batch-size", "lr": "--lr",
                "optimizer": "--optimizer", "schedule": "--schedule", "seed": "--seed",
                "data_dir": "--data-dir", "limit": "--limit", "epochs": "--epochs",
                "test_limit": "--test-limit", "device": "--device"}


class ConfigConflict(UserError):
    """``--resume`` with an option that contradicts the checkpoint's configuration."""


def _show(field: str, value: Any) -> str:
    if value is None:
        return {"data_dir": "(the shipped subset)", "limit": "(no limit)"}.get(field, "(none)")
    return f"{value:g}" if isinstance(value, float) else str(value)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and abs(float(a) - float(b)) <= 1e-12 * max(
            abs(float(a)), abs(float(b)), 1e-300)
    return a == b


def merge_resume_config(path: str, saved: dict, given: dict, explicit: set[str],
                        epochs_done: int) -> tuple[dict, list[str]]:
    """The configuration to resume with, and the lines to tell the user about it.

    ``saved`` is the checkpoint's config, ``given`` the options of this
    command (defaults included) and ``explicit`` the names the user typed.
    Raises :class:`ConfigConflict` naming every conflicting option.

    >>> saved = {"task": "mnist", "model": "lenet", "epochs": 10, "lr": 0.002}
    >>> merge_resume_config("c.mt", saved, {"model": "mlp"}, {"model"}, 3)
    Traceback (most recent call last):
    ...
    minitorch.demos.resume.ConfigConflict: --resume: c.mt was trained with --model lenet, \
not --model mlp. Leave these options out to continue with the saved configuration, or start a \
new run with another --checkpoint.
    """
    merged = dict(saved)
    conflicts = []
    for field in RUN_FIELDS:
        if field in explicit and field in saved and not _same(given[field], saved[field]):
            name = OPTION_NAMES[field]
            conflicts.append(f"{name} {_show(field, saved[field])}, not {name} "
                             f"{_show(field, given[field])}" if name != "TASK" else
                             f"task {saved[field]}, not {given[field]}")
    if conflicts:
        raise ConfigConflict(f"--resume: {path} was trained with {'; '.join(conflicts)}. Leave "
                             "these options out to continue with the saved configuration, or "
                             "start a new run with another --checkpoint.")
    notes = []
    taken = sorted(f for f in RUN_FIELDS if f not in explicit and f in saved)
    if taken:
        notes.append("continuing with the saved configuration (" + ", ".join(
            f"{OPTION_NAMES[f]} {_show(f, saved[f])}" if f != "task" else f"task {saved[f]}"
            for f in ("task", "model", "optimizer", "lr", "schedule", "batch_size", "seed",
                      "limit", "data_dir") if f in taken) + ")")
    if "epochs" in explicit and given["epochs"] != saved["epochs"]:
        if given["epochs"] < epochs_done:
            raise ConfigConflict(f"--epochs {given['epochs']}: {path} has already trained "
                                 f"{epochs_done} epochs")
        merged["epochs"] = given["epochs"]
        if saved.get("schedule") == "cosine":
            notes.append(f"--epochs {given['epochs']} (was {saved['epochs']}): the cosine "
                         f"schedule is re-planned for {given['epochs']} epochs from epoch "
                         f"{epochs_done + 1}")
    for field in ("test_limit", "eval_batch_size"):
        if field in explicit or field not in saved:
            merged[field] = given.get(field, saved.get(field))
    merged["device"] = given.get("device", "cpu")      # where it runs now, not where it ran
    return merged, notes

"""The ``minitorch`` command line (click).  ``python cli.py`` in a checkout runs the same group.

The installed ``minitorch`` command enters through ``minitorch_launcher.py``
(beside this package), which imports this module and calls :func:`main`; when
the engine does not import, it says why in one line and still runs the
``course`` commands (a student's syntax error must not stop the grader).

    minitorch train mnist                 # LeNet on the shipped MNIST subset
    minitorch train mnist --model mlp --epochs 5 --plot curves.png
    minitorch train mnist --checkpoint run.mt            # Ctrl-C, then add --resume
    minitorch evaluate run.mt --misclassified wrong.png --features maps.png
    minitorch predict run.mt digit.png                   # top-3 classes with probabilities
    minitorch train xor                   # a tiny network on a 2-D toy problem
    minitorch info                        # versions, threads, cache, CUDA
    minitorch bench --quick               # speed against NumPy and PyTorch
    minitorch course build ../student     # a student edition of the course (docs/course/)

Every mistake in the options (a missing directory, an unknown device, a
checkpoint that is corrupt or belongs to another model, ...) is found
before any work starts and reported in one line with a non-zero exit
status; docs/cli-errors.md lists them.  The work itself lives in
:mod:`minitorch.demos`; this module only parses, checks and prints.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import sys
import time
from importlib.metadata import version
from typing import Any, Callable

import click
import numpy as np
from click.core import ParameterSource

import minitorch

from . import bench as benchmarks
from . import cuda
from .course.commands import course
from .backends.cpu.threads import max_num_threads
from .demos.checkpoint import CheckpointError, describe, read_checkpoint
from .demos.checks import (UserError, check_device, check_image_output, check_output_file,
                           check_threads)
from .demos.data import describe_source, load_task_data
from .demos.evaluate import evaluate_model, format_confusion, run_model
from .demos.features import conv_layers, feature_maps
from .demos.models import build_model, models_for
from .demos.plots import plot_features, plot_misclassified, plot_points, run_title
from .demos.predict import load_inputs
from .demos.predict import top_k as best
from .demos.progress import Eta
from .demos.resume import merge_resume_config
from .demos.train import Interrupted, TrainConfig, defaults_for, history_json, plot_history
from .demos.train import train as run_training
from .ops.creation import from_numpy

TASKS = ("mnist", "xor", "circles", "spiral", "split")
EXIT_INTERRUPTED = 130          # the shell's convention for "stopped by SIGINT"


def _user_errors(fn: Callable) -> Callable:
    """Print a :class:`~minitorch.demos.checks.UserError` as one ``Error:`` line, exit 1."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except UserError as e:
            raise click.ClickException(str(e)) from None
    return wrapper


def _explicit(ctx: click.Context) -> set[str]:
    """The parameters the user typed (not left at their defaults)."""
    return {name for name in ctx.params
            if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)}


class _Choice(click.Choice):
    """``click.Choice`` that suggests the closest choice for a misspelled value.

    Click suggests a command for a misspelled command (``minitorch trian``:
    "Did you mean train?") but not a value for a misspelled choice; ``difflib``
    finds it here: ``minitorch train minst`` ends with "Did you mean mnist?".
    """

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as e:
            close = difflib.get_close_matches(str(value), [str(c) for c in self.choices], n=1)
            if close:
                e.message = f"{e.message} Did you mean {close[0]}?"
            raise


def _set_threads(threads: int | None) -> None:
    check_threads(threads)
    if threads is not None:
        minitorch.set_num_threads(threads)


@click.group()
@click.version_option(package_name="minitorch", prog_name="minitorch")
def main() -> None:
    """minitorch: an educational tensor engine with PyTorch's API."""


# ---------------------------------------------------------------------------
# train
# ---------------------------------------------------------------------------
@main.command()
@click.argument("task", type=_Choice(TASKS), default="mnist")
@click.option("--model", type=_Choice(["lenet", "mlp"]), default=None,
              help="Network: lenet (default) or mlp for mnist; the 2-D tasks train a small "
                   "MLP (mlp).")
@click.option("--epochs", type=click.IntRange(min=1), default=None,
              help="Passes over the training set (default: 10 for mnist, 100 for 2-D tasks). "
                   "With --resume, a larger value trains further.")
@click.option("--batch-size", type=click.IntRange(min=1), default=64, show_default=True)
@click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Learning rate (default for adam: 2e-3 on mnist, 1e-2 on 2-D tasks; "
                   "for sgd: 0.05).")
@click.option("--optimizer", type=_Choice(["adam", "sgd"]), default="adam",
              show_default=True)
@click.option("--schedule", type=_Choice(["cosine", "none"]), default="cosine",
              show_default=True, help="Learning-rate schedule over the epochs.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--device", default="cpu", show_default=True, help="cpu or cuda[:N].")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="CPU threads for the kernels (minitorch.set_num_threads).")
@click.option("--data-dir", type=click.Path(exists=True, file_okay=False), default=None,
              help="Directory with the full MNIST IDX files (default: the shipped subset).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Train on the first N training samples only (for quick runs).")
@click.option("--test-limit", type=click.IntRange(min=1), default=None,
              help="Evaluate on the first N test samples only (default: all of them).")
@click.option("--checkpoint", type=click.Path(dir_okay=False), default=None,
              help="Write a checkpoint here after every epoch (atomically) and on Ctrl-C.")
@click.option("--resume", is_flag=True,
              help="Continue the run saved in --checkpoint, exactly where it stopped.")
@click.option("--overwrite", is_flag=True,
              help="Start a new run even if --checkpoint already holds one (replacing it).")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write the loss and accuracy curves here (.png, .pdf, .svg; needs "
                   "matplotlib).")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON on stdout.")
@click.option("--no-progress", is_flag=True, help="No progress bar (one line per epoch).")
@click.option("--pause-at", default=None, hidden=True,
              help="Tests: stop at WHERE:EPOCH:BATCH and wait for Ctrl-C.")
@click.option("--distributed", is_flag=True,
              help="Data-parallel training over the processes of an MPI job: mpiexec -n N "
                   "minitorch train ... --distributed (needs the 'distributed' extra). Rank 0 "
                   "prints, plots and writes the checkpoint.")
@click.pass_context
@_user_errors
def train(ctx: click.Context, task: str, model: str | None, epochs: int | None,
          batch_size: int, lr: float | None, optimizer: str, schedule: str, seed: int,
          device: str, threads: int | None, data_dir: str | None, limit: int | None,
          test_limit: int | None, checkpoint: str | None, resume: bool, overwrite: bool,
          plot: str | None, as_json: bool, no_progress: bool, pause_at: str | None,
          distributed: bool) -> None:
    """Train a demo model and report loss and accuracy after each epoch."""
    from .demos.distributed import session_for  # loaded when a command runs, as the others

    # 1. Every check before any work: options, paths, device, the checkpoint.
    if resume and not checkpoint:
        raise click.UsageError("--resume needs --checkpoint PATH")
    if resume and overwrite:
        raise click.UsageError("--resume continues the run in --checkpoint and --overwrite "
                               "replaces it: choose one")
    check_device(device)
    if plot:
        check_image_output(plot, "--plot")
    if checkpoint:
        check_output_file(checkpoint, "--checkpoint")
    pause = _pause_hook(pause_at) if pause_at else None
    explicit = _explicit(ctx)
    given = dict(task=task, model=model, epochs=epochs, batch_size=batch_size, lr=lr,
                 optimizer=optimizer, schedule=schedule, seed=seed, device=device,
                 data_dir=data_dir, limit=limit, test_limit=test_limit)
    # With --json the metrics go to stdout and the human-readable lines to stderr.
    echo = (lambda s: click.echo(s, err=True)) if as_json else click.echo
    # --distributed: rank 0 alone speaks and writes
    session = session_for(distributed, threads, batch_size)
    if not session.is_main:
        echo, plot, as_json, no_progress = session.silent, None, False, True
    state = None
    if resume:
        state = read_checkpoint(checkpoint)
        done = len(state["history"])
        config, notes = merge_resume_config(checkpoint, state["config"], given, explicit, done)
        for line in notes:
            echo(line)
    else:
        if checkpoint and os.path.exists(checkpoint) and not overwrite:
            raise UserError(f"--checkpoint {checkpoint} already exists: add --resume to "
                            "continue that run, or --overwrite to start a new one in its place")
        defaults = defaults_for(task, optimizer)
        model = model or defaults["model"]
        if model not in models_for(task):
            raise UserError(f"--model {model}: the {task} task trains a small MLP (--model "
                            "mlp); lenet is for mnist")
        config = dict(given, model=model, epochs=epochs or defaults["epochs"],
                      lr=lr or defaults["lr"])
    cfg = TrainConfig(**config, checkpoint=checkpoint if session.is_main else None,
                      resume=resume, extra=session.extra)
    _set_threads(threads)
    if state is not None and state["epoch"] >= cfg.epochs:
        # 2a. A finished run: nothing to train; say what it reached and what to do next.
        _load_model(checkpoint, state, "cpu")          # its weights must still fit its model
        echo(f"{checkpoint} has finished all {cfg.epochs} epochs ({describe(state)}); nothing "
             f"to train. Raise --epochs to train further, or run: minitorch evaluate "
             f"{checkpoint}")
        history = list(state["history"])
    else:
        # 2b. Train.
        show_bar = not no_progress and not as_json and sys.stderr.isatty()
        try:
            with session.guard(echo):
                history = run_training(cfg, echo=echo,
                                       progress=_progress_bar if show_bar else None,
                                       state=state, pause=pause)
        except Interrupted:
            sys.exit(EXIT_INTERRUPTED)
        except KeyboardInterrupt:          # before training started: nothing to save
            echo("\ninterrupted before training started; nothing saved")
            sys.exit(EXIT_INTERRUPTED)
    if plot:
        plot_history(history, plot, run_title(cfg.__dict__))
        echo(f"saved to {plot}")
    if as_json:
        click.echo(history_json(history, cfg))


def _progress_bar(iterable: Any, length: int, label: str) -> "_LateBar":
    """An epoch's progress bar, drawn from the end of its first batch on (see _LateBar)."""
    return _LateBar(iterable, length, label)


class _LateBar:
    """``click.progressbar`` that appears once the first batch is done, with an honest ETA.

    A bar drawn before the first batch would sit at ``0/63`` while Numba
    compiles, and stay on the screen above the "compiling kernels" notice
    printed meanwhile; drawn after the first batch, it starts below the notice
    (and a warm run draws it a fraction of a second later).  :class:`Eta`
    estimates the time left from the batches after the first, compiling ones.
    """

    def __init__(self, iterable: Any, length: int, label: str) -> None:
        self.iterable, self.length, self.label = iterable, length, label
        self.eta = Eta(length)
        self.bar: Any = None

    def __enter__(self) -> Any:
        return self._items()

    def _items(self) -> Any:
        for item in self.iterable:
            yield item
            self.eta.step()     # runs when the loop asks for the next item: the batch is done
            if self.bar is None:
                self.bar = click.progressbar(length=self.length, label=self.label,
                                             file=sys.stderr, show_eta=False, show_pos=True,
                                             item_show_func=lambda _: self.eta.text())
                self.bar.update(1)          # first at 1/N: a 0/N bar would flash by
                self.bar.__enter__()
            else:
                self.bar.update(1)

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


def _pause_hook(spec: str) -> Callable[[str, int, int], None]:
    """For the tests: block at ``WHERE:EPOCH:BATCH`` until a real Ctrl-C (SIGINT) arrives."""
    try:
        where, epoch, batch = spec.split(":")
        target = (where, int(epoch), int(batch))
    except ValueError:
        raise click.UsageError(f"--pause-at {spec}: expected WHERE:EPOCH:BATCH") from None

    def pause(point: str, epoch: int, batch: int) -> None:
        if (point, epoch, batch) == target:
            click.echo(f"paused at {spec}", err=True)
            sys.stderr.flush()
            while True:
                time.sleep(0.05)   # the SIGINT handler raises KeyboardInterrupt in here
    return pause


# ---------------------------------------------------------------------------
# evaluate and predict
# ---------------------------------------------------------------------------
def _load_model(checkpoint: str, state: dict, device: str) -> Any:
    """The checkpoint's network with its weights, in eval mode, on ``device``."""
    cfg = state["config"]
    try:
        model = build_model(cfg["task"], cfg["model"])
        model.load_state_dict(state["model"])
    except (RuntimeError, KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{checkpoint}: its weights do not fit the {cfg['model']} model "
                              f"({str(e).splitlines()[0]})") from None
    if device != "cpu":
        model.to(device)
    return model.eval()


def _position(state: dict) -> str:
    cfg, done = state["config"], len(state["history"])
    if state["epoch"] >= cfg["epochs"]:
        return f"trained {done} epochs"
    return (f"stopped in epoch {state['epoch'] + 1}/{cfg['epochs']} "
            f"({'evaluating' if state['phase'] == 'evaluate' else 'batch ' + str(state['batch'])})"
            f"; {done} epochs finished")


@main.command()
@click.argument("checkpoint", type=click.Path(dir_okay=True))
@click.option("--data-dir", type=click.Path(exists=True, file_okay=False), default=None,
              help="Directory with the full MNIST IDX files (default: the checkpoint's data).")
@click.option("--test-limit", type=click.IntRange(min=1), default=None,
              help="Evaluate on the first N test samples only.")
@click.option("--batch-size", type=click.IntRange(min=1), default=500, show_default=True)
@click.option("--device", default="cpu", show_default=True, help="cpu or cuda[:N].")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="CPU threads for the kernels (minitorch.set_num_threads).")
@click.option("--misclassified", type=click.Path(dir_okay=False), default=None,
              help="Draw the misclassified test samples into this image file.")
@click.option("--features", type=click.Path(dir_okay=False), default=None,
              help="Draw the first convolution's filters and every conv layer's feature maps "
                   "for one test digit (captured with forward hooks).")
@click.option("--index", type=click.IntRange(min=0), default=0, show_default=True,
              help="Which test digit --features draws.")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON on stdout.")
@_user_errors
def evaluate(checkpoint: str, data_dir: str | None, test_limit: int | None, batch_size: int,
             device: str, threads: int | None, misclassified: str | None,
             features: str | None, index: int, as_json: bool) -> None:
    """Accuracy, loss and confusion matrix of a saved model on its test set."""
    check_device(device)
    for path, option in ((misclassified, "--misclassified"), (features, "--features")):
        if path:
            check_image_output(path, option)
    state = read_checkpoint(checkpoint)
    cfg = state["config"]
    model = _load_model(checkpoint, state, device)
    if features and not conv_layers(model):
        raise UserError(f"--features: the {cfg['model']} model of {checkpoint} has no "
                        "convolution layers to show; train one with --model lenet")
    data_dir = data_dir or cfg.get("data_dir")
    data = load_task_data(cfg["task"], data_dir, cfg.get("seed", 0), train=False,
                          test_limit=test_limit if test_limit else cfg.get("test_limit"))
    x, y = data.test_x, data.test_y
    if features and index >= x.shape[0]:
        raise UserError(f"--index {index}: the test set has {x.shape[0]} samples")
    _set_threads(threads)
    if device != "cpu":
        x, y = x.to(device), y.to(device)
    echo = (lambda s: click.echo(s, err=True)) if as_json else click.echo
    echo(f"{checkpoint}: {cfg['task']}, {cfg['model']}, {_position(state)}")
    result = evaluate_model(model, x, y, data.num_classes, batch_size)
    echo(f"test set: {result.n} samples ({describe_source(cfg['task'], data_dir)})")
    echo(f"accuracy {100 * result.accuracy:.2f}% ({int(np.trace(result.confusion))}/"
         f"{result.n})  loss {result.loss:.4f}")
    echo("confusion matrix (rows: true class, columns: predicted):")
    echo(format_confusion(result.confusion))
    title = run_title(cfg)
    if misclassified:
        target = y.cpu().numpy()
        wrong = np.flatnonzero(result.predicted != target)
        if cfg["task"] == "mnist":
            images = x.cpu().numpy()[wrong]
            plot_misclassified(images, target[wrong], result.predicted[wrong],
                               result.confidence[wrong], misclassified, title)
        else:
            plot_points(x.cpu().numpy(), target, result.predicted, misclassified, title)
        echo(f"saved to {misclassified}")
    if features:
        filters, maps = feature_maps(model, x[index])
        plot_features(x[index].cpu().numpy(), filters, maps, features,
                      f"{title}\ntest sample {index} (label {int(y[index].item())})")
        echo(f"saved to {features}")
    if as_json:
        click.echo(json.dumps(dict(result.as_dict(), checkpoint=checkpoint, config=cfg),
                              indent=2))


@main.command()
@click.argument("checkpoint", type=click.Path(dir_okay=True))
@click.argument("images", nargs=-1, required=True)
@click.option("--top-k", "-k", type=click.IntRange(min=1), default=None,
              help="How many of the most probable classes to show (default: 3, or all of "
                   "them when there are fewer).")
@click.option("--device", default="cpu", show_default=True, help="cpu or cuda[:N].")
@click.option("--json", "as_json", is_flag=True, help="Print the predictions as JSON.")
@_user_errors
def predict(checkpoint: str, images: tuple[str, ...], top_k: int | None, device: str,
            as_json: bool) -> None:
    """Classify IMAGES (.png, .npy or IDX files) with a saved model: top-k with probabilities."""
    check_device(device)
    state = read_checkpoint(checkpoint)
    cfg = state["config"]
    classes = 10 if cfg["task"] == "mnist" else 2
    top_k = top_k or min(3, classes)
    if top_k > classes:
        raise UserError(f"--top-k {top_k}: the model has only {classes} classes")
    inputs = load_inputs(list(images), "image" if cfg["task"] == "mnist" else "point")
    model = _load_model(checkpoint, state, device)
    batch = from_numpy(np.stack([i.array for i in inputs]).astype(np.float32))
    if device != "cpu":
        batch = batch.to(device)
    probs = run_model(model, batch, 500).softmax(1).cpu().numpy()
    rows = [{"input": i.name, "top": [{"class": c, "probability": p}
                                      for c, p in best(row, top_k)]}
            for i, row in zip(inputs, probs)]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    width = max(len(r["input"]) for r in rows)
    for r in rows:
        guesses = "  ".join(f"{t['class']} ({100 * t['probability']:.1f}%)" for t in r["top"])
        click.echo(f"{r['input']:<{width}}  {guesses}")


# ---------------------------------------------------------------------------
# info and bench
# ---------------------------------------------------------------------------
@main.command()
def info() -> None:
    """Versions, threads, the Numba cache directory and CUDA availability."""
    click.echo(f"minitorch {minitorch.__version__}")
    click.echo(f"python {sys.version.split()[0]}, numpy {np.__version__}, "
               f"numba {version('numba')}")
    click.echo(f"numba threads: {minitorch.get_num_threads()} (pool of {max_num_threads()}; "
               "--threads N or minitorch.set_num_threads(N) to change)")
    cache = os.environ.get("NUMBA_CACHE_DIR") or "__pycache__ next to each kernel module"
    click.echo(f"numba cache: {cache}")
    count = cuda.device_count()
    names = ", ".join(cuda.get_device_name(i) for i in range(count))
    click.echo(f"cuda available: {count > 0} ({count} devices{': ' + names if names else ''})")


@main.command()
@click.option("--quick", is_flag=True, help="A fast subset of the workloads, fewer samples.")
@click.option("--filter", "pattern", default=None, metavar="TEXT",
              help="Only the workloads whose name contains TEXT (e.g. matmul, conv2d, train).")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Threads for minitorch (minitorch.set_num_threads) and PyTorch "
                   "(torch.set_num_threads). NumPy's OpenBLAS fixes its count at import: for "
                   "one-thread comparisons also start with OPENBLAS_NUM_THREADS=1 "
                   "NUMBA_NUM_THREADS=1.")
@click.option("--cold", is_flag=True,
              help="Also measure start-up in fresh processes: import and the first LeNet step "
                   "with an empty Numba cache, then with the warm cache (slow: it compiles).")
@click.option("--no-torch", is_flag=True, help="Compare with NumPy alone.")
@click.option("--repeats", type=click.IntRange(min=1), default=None,
              help="Samples per library and workload (default 21, 7 with --quick).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON on stdout.")
@click.option("--tiny", is_flag=True, hidden=True, help="Tiny sizes, for the tests.")
@_user_errors
def bench(quick: bool, pattern: str | None, threads: int | None, cold: bool, no_torch: bool,
          repeats: int | None, as_json: bool, tiny: bool) -> None:
    """Time the same workloads in minitorch, NumPy and PyTorch; print medians and ratios."""
    check_threads(threads)

    def progress(name: str) -> None:
        click.echo(f"  measuring {name} ...", err=True)
    try:
        report = benchmarks.benchmark(quick=quick, pattern=pattern, threads=threads, cold=cold,
                                      use_torch=not no_torch, tiny=tiny, repeats=repeats,
                                      progress=progress)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    if not report["results"] and not report["startup"]:
        raise click.ClickException(f"no workload matches --filter {pattern!r}")
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        click.echo(benchmarks.format_report(report))


# ---------------------------------------------------------------------------
# run: an unmodified PyTorch program on minitorch (the work is in minitorch/run.py)
# ---------------------------------------------------------------------------
@main.command(context_settings=dict(ignore_unknown_options=True, allow_interspersed_args=False))
@click.argument("program", metavar="PROGRAM.py")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run(program: str, args: tuple[str, ...]) -> None:
    """Run an unmodified PyTorch program on minitorch.

    As `python PROGRAM.py ARGS...` would, with `import torch` and every
    `torch.*` resolving to minitorch (real PyTorch is never loaded). A PyTorch
    name minitorch lacks ends in one line; see docs/running-pytorch-programs.md.
    """
    from . import run as runner        # loaded when the command runs, as the others
    problem = runner.check_program(program)
    if problem is not None:
        click.echo(problem, err=True)
        sys.exit(2)
    sys.exit(runner.run_program(program, args))


main.add_command(course)          # minitorch course tasks | build | test | grade


if __name__ == "__main__":
    main()

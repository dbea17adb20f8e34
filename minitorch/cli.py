"""The ``minitorch`` command line (click).  ``python cli.py`` in a checkout runs the same group.

    minitorch train mnist                 # LeNet on the shipped MNIST subset
    minitorch train mnist --model mlp --epochs 5 --plot curves.png
    minitorch train xor                   # a tiny network on a 2-D toy problem
    minitorch info                        # versions, threads, cache, CUDA
"""

from __future__ import annotations

import sys

import click

TASKS = ("mnist", "xor", "circles", "spiral", "split")


@click.group()
@click.version_option(package_name="minitorch", prog_name="minitorch")
def main() -> None:
    """minitorch: an educational tensor engine with PyTorch's API."""


@main.command()
@click.argument("task", type=click.Choice(TASKS), default="mnist")
@click.option("--model", type=click.Choice(["lenet", "mlp"]), default="lenet",
              show_default=True, help="Network for mnist (the 2-D tasks use a small MLP).")
@click.option("--epochs", type=click.IntRange(min=1), default=None,
              help="Passes over the training set (default: 10 for mnist, 100 for 2-D tasks).")
@click.option("--batch-size", type=click.IntRange(min=1), default=64, show_default=True)
@click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Learning rate (default for adam: 1e-3 on mnist, 1e-2 on 2-D tasks; "
                   "for sgd: 0.05).")
@click.option("--optimizer", type=click.Choice(["adam", "sgd"]), default="adam",
              show_default=True)
@click.option("--schedule", type=click.Choice(["cosine", "none"]), default="cosine",
              show_default=True, help="Learning-rate schedule over the epochs.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--device", default="cpu", show_default=True, help="cpu or cuda[:N].")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="Directory with the full MNIST IDX files (default: the shipped subset).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Use only the first N training samples (for quick runs).")
@click.option("--checkpoint", type=click.Path(dir_okay=False), default=None,
              help="Write a checkpoint here after every epoch (atomically) and on Ctrl-C.")
@click.option("--resume", is_flag=True, help="Continue from --checkpoint.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write a PNG of the loss and accuracy curves (needs matplotlib).")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON on stdout.")
@click.option("--no-progress", is_flag=True, help="No progress bar (one line per epoch).")
def train(task: str, model: str, epochs: int | None, batch_size: int, lr: float | None,
          optimizer: str, schedule: str, seed: int, device: str, data_dir: str | None,
          limit: int | None,
          checkpoint: str | None, resume: bool, plot: str | None, as_json: bool,
          no_progress: bool) -> None:
    """Train a demo model and report loss and accuracy after each epoch."""
    from .demos.train import Interrupted, TrainConfig, history_json, plot_history
    from .demos.train import train as run
    if resume and not checkpoint:
        raise click.UsageError("--resume needs --checkpoint PATH")
    if device.startswith("cuda"):
        from . import cuda
        if not cuda.is_available():
            raise click.UsageError(f"--device {device}: no CUDA device is available to "
                                   "minitorch (use --device cpu)")
    if epochs is None:
        epochs = 10 if task == "mnist" else 100
    if lr is None:
        lr = (1e-3 if task == "mnist" else 1e-2) if optimizer == "adam" else 0.05
    cfg = TrainConfig(task=task, model=model, epochs=epochs, batch_size=batch_size, lr=lr,
                      optimizer=optimizer, schedule=schedule, seed=seed, device=device,
                      data_dir=data_dir,
                      limit=limit, checkpoint=checkpoint, resume=resume)
    # With --json the metrics go to stdout and the human-readable lines to stderr.
    echo = (lambda s: click.echo(s, err=True)) if as_json else click.echo
    show_bar = not no_progress and not as_json and sys.stderr.isatty()

    def progress(iterable, length, label):
        return click.progressbar(iterable, length=length, label=label, file=sys.stderr,
                                 show_eta=True)
    try:
        history = run(cfg, echo=echo, progress=progress if show_bar else None)
    except Interrupted:
        sys.exit(130)
    except (FileNotFoundError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    if plot:
        try:
            plot_history(history, plot)
        except RuntimeError as e:
            raise click.ClickException(str(e)) from None
        echo(f"wrote {plot}")
    if as_json:
        click.echo(history_json(history, cfg))


@main.command()
def info() -> None:
    """Versions, Numba threads, the Numba cache directory and CUDA availability."""
    import os

    import numba
    import numpy

    import minitorch
    from . import cuda
    click.echo(f"minitorch {minitorch.__version__}")
    click.echo(f"python {sys.version.split()[0]}, numpy {numpy.__version__}, "
               f"numba {numba.__version__}")
    click.echo(f"numba threads: {numba.get_num_threads()}")
    cache = os.environ.get("NUMBA_CACHE_DIR") or "__pycache__ next to each kernel module"
    click.echo(f"numba cache: {cache}")
    click.echo(f"cuda available: {cuda.is_available()} ({cuda.device_count()} devices)")


if __name__ == "__main__":
    main()

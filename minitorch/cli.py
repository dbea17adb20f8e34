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
              help="Learning rate (default for adam: 2e-3 on mnist, 1e-2 on 2-D tasks; "
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
        from .device import as_device
        try:
            index = as_device(device).index
        except (RuntimeError, TypeError) as e:
            raise click.UsageError(f"--device {device}: {e}") from None
        if not cuda.is_available():
            raise click.UsageError(f"--device {device}: {cuda.NO_CUDA_MESSAGE}")
        if index >= cuda.device_count():
            raise click.UsageError(f"--device {device}: minitorch sees "
                                   f"{cuda.device_count()} CUDA device(s)")
    if epochs is None:
        epochs = 10 if task == "mnist" else 100
    if lr is None:
        lr = (2e-3 if task == "mnist" else 1e-2) if optimizer == "adam" else 0.05
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
    count = cuda.device_count()
    names = ", ".join(cuda.get_device_name(i) for i in range(count))
    click.echo(f"cuda available: {count > 0} ({count} devices{': ' + names if names else ''})")


@main.command()
@click.option("--quick", is_flag=True, help="A fast subset of the workloads, fewer samples.")
@click.option("--filter", "pattern", default=None, metavar="TEXT",
              help="Only the workloads whose name contains TEXT (e.g. matmul, conv2d, train).")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Threads for minitorch (numba.set_num_threads) and PyTorch "
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
def bench(quick: bool, pattern: str | None, threads: int | None, cold: bool, no_torch: bool,
          repeats: int | None, as_json: bool, tiny: bool) -> None:
    """Time the same workloads in minitorch, NumPy and PyTorch; print medians and ratios."""
    import json

    from . import bench as benchmarks

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


if __name__ == "__main__":
    main()

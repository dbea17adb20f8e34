"""The ``minitorch`` command line (click).  ``python cli.py`` runs the same group."""

from __future__ import annotations

import click


@click.group()
def main() -> None:
    """minitorch: an educational tensor engine with PyTorch's API."""


@main.command()
def info() -> None:
    """Versions, Numba threads and the Numba cache directory."""
    import numba
    import numpy

    import minitorch
    click.echo(f"minitorch {minitorch.__version__}")
    click.echo(f"numpy {numpy.__version__}, numba {numba.__version__}")
    click.echo(f"numba threads: {numba.get_num_threads()}")
    click.echo(f"numba cache dir: {numba.config.CACHE_DIR or '(next to the sources)'}")


if __name__ == "__main__":
    main()

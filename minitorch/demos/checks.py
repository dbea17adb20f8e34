"""Checks of the user's options, made before any work starts.

A command that trains for ten minutes and then fails to write its plot has
thrown ten minutes away.  So every path a command will write, every device
and every option that depends on an installed package is checked first;
a problem raises :class:`UserError` with one line that names the option,
the value and what to do, and the command line prints it without a
traceback.  Nothing is created or overwritten by the checks themselves
(a writability probe creates and removes a temporary file next to the
target).
"""

from __future__ import annotations

import os
import tempfile

from .. import cuda
from ..backends.cpu.threads import max_num_threads
from ..device import as_device

__all__ = ["UserError", "check_device", "check_output_file", "check_image_output",
           "check_input_file", "check_threads", "image_formats"]


class UserError(ValueError):
    """A mistake in the command line; the message is one line for the user."""


def check_device(text: str) -> str:
    """``text`` if it names a device minitorch can use here, else :class:`UserError`.

    >>> check_device("cpu")
    'cpu'
    >>> check_device("gpu")
    Traceback (most recent call last):
    ...
    minitorch.demos.checks.UserError: --device gpu: unknown device; use cpu or cuda[:N]
    """
    try:
        dev = as_device(text)
    except (RuntimeError, TypeError, ValueError):
        raise UserError(f"--device {text}: unknown device; use cpu or cuda[:N]") from None
    if dev.type == "cuda":
        if not cuda.is_available():
            raise UserError(f"--device {text}: {cuda.unavailable_reason() or cuda.NO_CUDA_MESSAGE}")
        index = dev.index or 0
        if index >= cuda.device_count():
            raise UserError(f"--device {text}: minitorch sees {cuda.device_count()} CUDA "
                            "device(s)")
    return text


def check_input_file(path: str, option: str) -> None:
    """``path`` exists, is a file and can be read."""
    if not os.path.exists(path):
        raise UserError(f"{option} {path}: no such file")
    if os.path.isdir(path):
        raise UserError(f"{option} {path}: is a directory, not a file")
    if not os.access(path, os.R_OK):
        raise UserError(f"{option} {path}: not readable (permission denied)")


def check_output_file(path: str, option: str) -> None:
    """``path`` can be written: its directory exists and accepts files; it is not a directory.

    The probe writes and removes a temporary file in the directory: permission
    bits alone do not tell (root ignores them; a read-only mount does not show
    in them).
    """
    if os.path.isdir(path):
        raise UserError(f"{option} {path}: is a directory; give a file name")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.exists(folder):
        raise UserError(f"{option} {path}: the directory {os.path.dirname(path) or '.'} does "
                        "not exist (create it first)")
    if not os.path.isdir(folder):
        raise UserError(f"{option} {path}: {os.path.dirname(path)} is not a directory")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".minitorch-probe-"):
            pass
    except OSError as e:
        raise UserError(f"{option} {path}: cannot write in {os.path.dirname(path) or '.'} "
                        f"({e.strerror or e})") from None
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise UserError(f"{option} {path}: the file is not writable (permission denied)")


def image_formats() -> list[str]:
    """The file extensions matplotlib can write (``UserError`` when it is not installed)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib.figure import Figure
    except ImportError:
        raise UserError("plots need matplotlib: pip install 'minitorch[plot]' (or pip "
                        "install matplotlib)") from None
    return sorted(Figure().canvas.get_supported_filetypes())


def check_image_output(path: str, option: str) -> None:
    """A figure can be written to ``path``: matplotlib is installed, knows the format, the
    directory accepts files."""
    formats = image_formats()
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext not in formats:
        shown = "no extension" if not ext else f"unknown image format .{ext}"
        raise UserError(f"{option} {path}: {shown}; use .png, .pdf or .svg (or one of "
                        f"{', '.join('.' + f for f in formats)})")
    check_output_file(path, option)


def check_threads(n: int | None) -> None:
    """``--threads n`` fits in Numba's thread pool."""
    if n is None:
        return
    limit = max_num_threads()
    if n > limit:
        raise UserError(f"--threads {n}: minitorch can use at most {limit} threads here "
                        f"(NUMBA_NUM_THREADS={limit}, fixed at start-up; start with "
                        f"NUMBA_NUM_THREADS={n} for more)")

"""Progress that tells the truth on the first run.

Two things make a naive progress bar lie when minitorch starts cold:

* **Compilation.**  The first batch of the first run compiles every Numba
  kernel it touches (tens of seconds); later runs load them from Numba's
  disk cache in a moment.  :class:`SlowStartNotice` prints a line saying so
  when the first batch is still running after a couple of seconds, so the
  bar sitting at 0% does not look like a hang.
* **The ETA.**  ``click.progressbar`` estimates the time left from the mean
  time per item since the start, so a 30-second first batch makes it
  promise half an hour.  :class:`Eta` ignores the first few batches
  (compilation, cache loading, allocator warm-up) and estimates from the
  steady pace after them; until then it shows nothing.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Callable

__all__ = ["Eta", "SlowStartNotice", "COMPILE_SECONDS", "NOTICE_AFTER"]

# A first batch still running after this many seconds is compiling, not loading
# cached kernels (a warm first LeNet step takes well under a second).
NOTICE_AFTER = 2.0

# Rough compile time of the first batch with an empty Numba cache, measured on
# a 2-core machine (LeNet 33 s, MLP ~17 s, November 2026); printed as an order
# of magnitude, not a promise.
COMPILE_SECONDS = {"lenet": 30, "mlp": 15}


class Eta:
    """Time left in an epoch, from the pace after the first ``warmup`` batches.

    Call :meth:`step` after each batch; :meth:`text` is what the bar shows.

    >>> clock = iter([30.0, 30.1, 30.2, 30.3]).__next__
    >>> eta = Eta(total=10, warmup=2, clock=clock)
    >>> eta.step(); eta.text()            # batch 1 took 30 s (compiling): no estimate yet
    ''
    >>> eta.step(); eta.step(); eta.step(); eta.text()   # then 0.1 s a batch, 6 to go
    'eta 00:01'
    """

    def __init__(self, total: int, warmup: int = 3,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.total, self.warmup, self.clock = total, max(warmup, 1), clock
        self.done = 0
        self._mark: tuple[int, float] | None = None   # (batches done, time) after warm-up
        self._now = 0.0

    def step(self) -> None:
        """One more batch is done."""
        self.done += 1
        self._now = self.clock()
        if self.done == self.warmup:
            self._mark = (self.done, self._now)

    def seconds_left(self) -> float | None:
        """Seconds left, or ``None`` while the first batches are still warming up."""
        if self._mark is None or self.done <= self._mark[0]:
            return None
        done, t = self._mark
        per_batch = (self._now - t) / (self.done - done)
        return per_batch * max(self.total - self.done, 0)

    def text(self) -> str:
        """``'eta mm:ss'`` (or ``'eta h:mm:ss'``), empty until there is an honest estimate."""
        left = self.seconds_left()
        if left is None:
            return ""
        minutes, seconds = divmod(int(round(left)), 60)
        hours, minutes = divmod(minutes, 60)
        return f"eta {hours}:{minutes:02d}:{seconds:02d}" if hours else \
            f"eta {minutes:02d}:{seconds:02d}"


class SlowStartNotice:
    """Say "compiling kernels" if the first batch is still running after ``after`` seconds.

    A timer thread prints the line, so it appears while the main thread is
    still busy compiling.  Use it around the first batch of a process::

        with SlowStartNotice(echo, "compiling kernels (first run only, ~30 s)..."):
            train_one_batch()

    :meth:`first` gives a notice only the first time a phase runs in this
    process (a timer thread per batch would cost more than it tells), and a
    null context afterwards: evaluation, which compiles a few kernels of its
    own, is a phase of its own.
    """

    _started: set[str] = set()

    @classmethod
    def first(cls, phase: str, echo: Callable[[str], None], message: str,
              after: float | None = None) -> "SlowStartNotice | contextlib.nullcontext":
        """A notice for the first run of ``phase`` in this process, else a null context."""
        if phase in cls._started:
            return contextlib.nullcontext()
        cls._started.add(phase)
        return cls(echo, message, NOTICE_AFTER if after is None else after)

    def __init__(self, echo: Callable[[str], None], message: str, after: float = 2.0) -> None:
        self.echo, self.message, self.after = echo, message, after
        self._timer: threading.Timer | None = None
        self.fired = False

    def _fire(self) -> None:
        self.fired = True
        # On a new line: a progress bar may be drawn on the current one.
        self.echo("\n" + self.message)

    def __enter__(self) -> "SlowStartNotice":
        self._timer = threading.Timer(self.after, self._fire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

"""Progress that tells the truth on the first run.

Three things make naive progress reports lie when minitorch starts cold:

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
* **The epoch's speed.**  Seconds spent compiling are not seconds spent
  training: :class:`CompileClock` listens to Numba's own events and tells
  how long Numba held its compiler lock (compiling, or loading a kernel
  from the disk cache), so the training loop leaves that time out of the
  epoch's seconds and images per second and reports it on its own line.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Callable

from numba.core import event

__all__ = ["Eta", "SlowStartNotice", "CompileClock", "COMPILE_SECONDS", "COMPILE_CORES",
           "NOTICE_AFTER", "compile_notice", "compile_report"]

# A first batch still running after this many seconds is compiling, not loading
# cached kernels (a warm first LeNet step takes well under a second).
NOTICE_AFTER = 2.0

# What a first run compiles, in all (training and evaluation kernels), with an
# empty Numba cache on a 2-core machine, as the "compiled kernels in ... s" line
# of `minitorch train` measured it (see docs/training.md for the runs).  The
# README and docs/training.md quote the LeNet figure; tests/test_cli.py checks
# that they quote this one.  An order of magnitude, not a promise: a busy or
# slower machine takes longer.
COMPILE_SECONDS = {"lenet": 60, "mlp": 40}
COMPILE_CORES = 2

# Below this, time under Numba's compiler lock is not worth a line of its own.
REPORT_AFTER = 1.0


def compile_notice(model: str) -> str:
    """What the first batch of a first run says while the kernels compile.

    >>> print(compile_notice("lenet"))  # doctest: +ELLIPSIS
    compiling kernels (first run only: about 60 s on 2 cores; later runs load them from ...
    """
    seconds = COMPILE_SECONDS.get(model, max(COMPILE_SECONDS.values()))
    return (f"compiling kernels (first run only: about {seconds} s on {COMPILE_CORES} cores; "
            "later runs load them from Numba's disk cache)...")


def compile_report(compiling: float, locked: float, cpu: float | None = None) -> str | None:
    """The line that reports an epoch's time under Numba's compiler lock (None if small).

    ``compiling`` is the time spent compiling, ``locked`` all the time under
    the lock (compiling and loading cached kernels; never less than
    ``compiling``), ``cpu`` the process's CPU time under the lock.  Numba
    compiles on one thread, so a wall time well above the CPU time means other
    programs had the cores: the line says so, or a 60 s compile reported as
    150 s would look like minitorch's doing.

    >>> compile_report(41.23, 41.9, 41.0)
    'compiled kernels in 41.9 s (first run on this machine; cached for later runs; not counted in the epoch time)'
    >>> compile_report(140.0, 150.2, 60.4)  # doctest: +ELLIPSIS
    'compiled kernels in 150.2 s (60.4 s of CPU time: other programs were using the cores; first run ...'
    >>> compile_report(0.0, 1.52)
    "loaded kernels from Numba's disk cache in 1.5 s (not counted in the epoch time)"
    >>> compile_report(0.1, 0.3) is None
    True
    """
    if compiling >= REPORT_AFTER:
        busy = (f"{cpu:.1f} s of CPU time: other programs were using the cores; "
                if cpu is not None and locked > 1.5 * cpu else "")
        return (f"compiled kernels in {locked:.1f} s ({busy}first run on this machine; cached "
                "for later runs; not counted in the epoch time)")
    if locked >= REPORT_AFTER:
        return (f"loaded kernels from Numba's disk cache in {locked:.1f} s (not counted in "
                "the epoch time)")
    return None


class _Stopwatch(event.Listener):
    """Total time between the outermost start and end of a (possibly nested) Numba event."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.cpu_seconds = 0.0            # the process's CPU time meanwhile (load-independent)
        self._depth = 0
        self._started = (0.0, 0.0)

    def on_start(self, ev: Any) -> None:
        if self._depth == 0:
            self._started = (time.perf_counter(), time.process_time())
        self._depth += 1

    def on_end(self, ev: Any) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._started[0]
            self.cpu_seconds += time.process_time() - self._started[1]

    def now(self) -> float:
        """The total so far, including an event still in progress."""
        if self._depth:
            return self.seconds + time.perf_counter() - self._started[0]
        return self.seconds


class CompileClock:
    """How long Numba held its compiler lock, and how much of it was compiling.

    Numba announces its work through its event API (``numba.core.event``):
    ``"numba:compiler_lock"`` surrounds everything done under its global
    compiler lock (compiling a kernel, or loading a compiled one from the disk
    cache) and ``"numba:compile"`` each compilation proper (a kernel missing
    from the cache).  Calling a kernel that is already loaded fires neither.
    Listening to both tells "this run compiled for 41 s" apart from "this run
    loaded its cached kernels in 0.4 s"::

        with CompileClock() as clock:
            train_one_batch()
        work = elapsed - clock.locked      # the batch's time without Numba's
    """

    def __init__(self) -> None:
        self._lock = _Stopwatch()
        self._compile = _Stopwatch()

    @property
    def locked(self) -> float:
        """Seconds under the compiler lock so far (compiling and loading cached kernels)."""
        return self._lock.now()

    @property
    def compiling(self) -> float:
        """Seconds spent compiling so far (kernels that were not in the disk cache)."""
        return self._compile.now()

    @property
    def locked_cpu(self) -> float:
        """CPU seconds of this process under the lock, finished events only.

        Numba compiles on one thread, so on an idle machine this is the wall
        time; on a busy one it is what the compile would take alone.
        """
        return self._lock.cpu_seconds

    def __enter__(self) -> "CompileClock":
        event.register("numba:compiler_lock", self._lock)
        event.register("numba:compile", self._compile)
        return self

    def __exit__(self, *exc: object) -> None:
        event.unregister("numba:compile", self._compile)
        event.unregister("numba:compiler_lock", self._lock)


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

        with SlowStartNotice(echo, "compiling kernels (first run only)..."):
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
        # No progress bar is on the screen yet: the CLI draws it after the first batch.
        self.echo(self.message)

    def __enter__(self) -> "SlowStartNotice":
        self._timer = threading.Timer(self.after, self._fire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

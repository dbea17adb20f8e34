"""Ctrl-C that never lands in the middle of an update.

Python turns Ctrl-C (SIGINT) into a ``KeyboardInterrupt`` raised at whatever
line is running.  Most of a training step can be abandoned safely: the
forward and backward passes change no weights, so a step cut short is
simply done again after ``--resume``.  But ``optimizer.step()`` changes the
parameters one after another, and the counters that say "batch 17 is done"
are updated on the next lines: an interrupt between them would save a
checkpoint whose weights and position disagree, and the resumed run would
drift from an uninterrupted one.

:class:`InterruptGuard` installs a SIGINT handler that raises at once,
except inside ``with guard.hold():`` blocks, where it only remembers the
signal and raises when the block ends.  Every change of the training state
(weights, optimizer, scheduler, position, running sums) happens inside
such a block, so at any moment a ``KeyboardInterrupt`` can arrive the state
is whole: either a step has happened entirely or not at all.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["InterruptGuard"]


class InterruptGuard:
    """A SIGINT handler that defers ``KeyboardInterrupt`` out of critical blocks.

    Use it as a context manager around the whole loop (it installs and later
    restores the handler), and ``hold()`` around each group of updates that
    must happen together::

        with InterruptGuard() as guard:
            for batch in batches:
                loss = model(batch).sum()      # Ctrl-C here: the step is dropped
                loss.backward()
                with guard.hold():             # Ctrl-C here: raised after the block
                    optimizer.step()
                    done += 1

    Outside the main thread (where Python delivers no signals) it does nothing.
    """

    def __init__(self) -> None:
        self._depth = 0
        self._pending = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> "InterruptGuard":
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False

    def _handle(self, signum: int, frame: Any) -> None:
        if self._depth:
            self._pending = True          # raised when the critical block ends
        else:
            raise KeyboardInterrupt

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Run the block whole: a Ctrl-C during it is raised only after it."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
        if not self._depth and self._pending:
            self._pending = False
            raise KeyboardInterrupt

"""``Work``: the handle of a collective that is still running (``async_op=True``).

An MPI non-blocking collective (``MPI_Iallreduce`` and friends) starts the
operation and returns a *request* at once; the data is only valid once the
request completes.  ``Work.wait()`` blocks until then and ``is_completed()``
asks without blocking, as on PyTorch's ``Work``.  Asking also *progresses*
the operation: most MPI libraries move the bytes of a non-blocking
collective only while the program is inside an MPI call, so a long
computation that never asks delays the collective.

Some collectives have a last step after MPI is done (divide by the world size
for ``AVG``, copy the result back into a non-contiguous tensor); ``Work`` runs
it exactly once, whichever of ``wait`` and ``is_completed`` sees completion.
"""

from __future__ import annotations

import os
import time
from datetime import timedelta
from typing import Any, Callable, Sequence

from .process_group import ProcessGroup

__all__ = ["Work", "wait_all"]


def wait_all(requests: Sequence[Any], pg: ProcessGroup, what: str,
             timeout: timedelta | None = None) -> None:
    """Wait for MPI ``requests``; a ``RuntimeError`` naming ``what`` after ``timeout``.

    Polls ``MPI_Testall`` instead of blocking in ``MPI_Waitall``, which could
    never time out: a rank whose partner died or took another code path
    would wait forever.  The first millisecond spins, yielding the core at
    each poll (a collective among ranks that are all ready takes
    microseconds, and a rank sharing this core may be the one we wait for);
    after that it sleeps a little between polls, leaving the core to the
    other ranks and to the work that overlaps with communication.
    """
    if not requests:
        return
    from mpi4py import MPI
    limit = (timeout if timeout is not None else pg.timeout).total_seconds()
    requests = list(requests)
    start = time.perf_counter()
    nap = 1e-5
    while not MPI.Request.Testall(requests):
        waited = time.perf_counter() - start
        if waited > limit:
            raise RuntimeError(
                f"{what} timed out on rank {pg.rank()} of {pg.size()} after {waited:.1f} s "
                f"(timeout {limit:g} s): another rank has stopped, died, or called a "
                f"different collective")
        if waited < 1e-3:
            os.sched_yield()        # let a rank that shares this core run
        else:
            time.sleep(nap)
            nap = min(nap * 2, 5e-4)


class Work:
    """A running collective: ``wait()``, ``is_completed()``, ``result()``."""

    def __init__(self, requests: Sequence[Any], pg: ProcessGroup, what: str,
                 finish: Callable[[], None] | None = None, result: list | None = None) -> None:
        self._requests = list(requests)
        self._pg = pg
        self._what = what
        self._finish = finish
        self._result = result if result is not None else []
        self._done = False
        self._exception: BaseException | None = None

    def _complete(self) -> None:
        if not self._done:
            self._done = True
            if self._finish is not None:
                self._finish()

    def is_completed(self) -> bool:
        """Has the collective finished?  (Never blocks; progresses the operation.)"""
        if self._done:
            return True
        from mpi4py import MPI
        if MPI.Request.Testall(self._requests):
            self._complete()
        return self._done

    def wait(self, timeout: timedelta | None = None) -> bool:
        """Block until the collective has finished and its results are in place; ``True``.

        ``timeout`` overrides the process group's; on expiry a ``RuntimeError``
        names the operation and this rank.
        """
        if not self._done:
            try:
                wait_all(self._requests, self._pg, self._what, timeout)
            except RuntimeError as e:
                self._exception = e
                raise
            self._complete()
        return True

    def is_success(self) -> bool:
        """Finished without an error."""
        return self.is_completed() and self._exception is None

    def exception(self) -> BaseException | None:
        """The error that ended the wait, if any."""
        return self._exception

    def result(self) -> list:
        """The output tensors (valid after ``wait()``)."""
        return self._result

    def __repr__(self) -> str:
        state = "completed" if self._done else "pending"
        return f"<Work {self._what} {state}>"

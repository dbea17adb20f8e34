"""``minitorch train ... --distributed``: the training loop on several MPI processes.

Run as ``mpiexec -n 2 minitorch train mnist --distributed``.  Every process
runs the same loop (``demos/train.py``); this module supplies the three
places where a data-parallel run differs from a single process:

* **the data**: each epoch's shuffled order is split between the ranks the
  way ``DistributedSampler`` splits a dataset (padded to a multiple of the
  world size, then every ``world_size``-th index from the rank's own offset),
  and each rank takes ``batch_size / world_size`` samples of its share per
  step.  Together the ranks compute exactly the batches of a single process:
  step ``b`` covers the same samples for any number of processes;
* **the model**: wrapped in ``DistributedDataParallel``, which averages the
  gradients over the ranks during ``backward()``, so every rank applies the
  same update and the replicas stay identical;
* **who speaks**: rank 0 alone prints, draws the plot and writes
  checkpoints; the per-batch loss and accuracy are summed over the ranks
  (one tiny all-reduce per step), so the numbers it prints, and the sums a
  checkpoint records, describe the whole global batch.

``--batch-size`` is the *global* batch, the samples of one optimizer step,
and must be a multiple of the number of processes.  (PyTorch's DDP examples
usually give a per-process batch instead; here adding processes changes the
speed of a run and nothing else: ``mpiexec -n 2 minitorch train mnist
--distributed`` prints the numbers of ``minitorch train mnist``, to float
rounding, and its checkpoints resume with any number of processes.)
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, Callable, Iterator

import numpy as np

from ..backends.cpu.threads import max_num_threads, set_num_threads
from ..distributed import (abort, all_gather_object, all_reduce, destroy_process_group,
                           get_rank, get_world_size, init_process_group, is_initialized,
                           is_mpi_available, launcher_rank, launcher_world_size)
from ..nn.modules.module import Module
from ..nn.parallel import DistributedDataParallel
from ..ops.creation import from_numpy
from ..utils.data.distributed import DistributedSampler
from .checks import UserError

__all__ = ["Session", "session_for", "LocalShard", "RankShard", "data_shard"]

#: A rank that waits longer than this for the others has lost them (one step
#: plus rank 0's checkpoint and evaluation take seconds, not minutes).
CLI_TIMEOUT = timedelta(minutes=5)


# ---------------------------------------------------------------------------
# the data: one process's share of each epoch
# ---------------------------------------------------------------------------
class LocalShard:
    """A single process: every batch of the epoch's order is ours."""

    world_size = 1
    rank = 0

    def n_batches(self, n: int, batch_size: int) -> int:
        """Steps per epoch over ``n`` samples."""
        return -(-n // batch_size)

    def batch(self, perm: Any, b: int, batch_size: int) -> Any:
        """The sample indices of step ``b`` of the epoch whose order is ``perm``."""
        return perm[b * batch_size:(b + 1) * batch_size]

    def wrap(self, model: Module) -> Module:
        """The module the loop calls forward on."""
        return model

    def stats(self, loss_sum: float, correct: int, seen: int) -> tuple[float, int, int]:
        """One step's summed loss, correct predictions and samples, over all ranks."""
        return loss_sum, correct, seen


class RankShard(LocalShard):
    """One rank of a data-parallel job (the process group is initialized)."""

    def __init__(self) -> None:
        self.world_size = get_world_size()
        self.rank = get_rank()
        self.ddp: DistributedDataParallel | None = None
        self._perm: Any = None
        self._mine: Any = None
        # (seconds, seconds waiting for the all-reduce) of each step but an epoch's first
        self.steps: list[tuple[float, float]] = []
        self._last: tuple[float, float] | None = None

    def n_batches(self, n: int, batch_size: int) -> int:
        share = DistributedSampler(range(n), self.world_size, self.rank, shuffle=False)
        return -(-len(share) // self._per_rank(batch_size))

    def _per_rank(self, batch_size: int) -> int:
        if batch_size % self.world_size:
            raise UserError(f"--batch-size {batch_size} does not split evenly over "
                            f"{self.world_size} processes: give a multiple of {self.world_size}")
        return batch_size // self.world_size

    def batch(self, perm: Any, b: int, batch_size: int) -> Any:
        if perm is not self._perm:            # a new epoch's order: take our share of it
            order = perm.numpy()
            self._check_same_order(order)
            # The loop has shuffled already: the sampler only pads and strides.
            mine = list(DistributedSampler(order, self.world_size, self.rank, shuffle=False))
            self._perm, self._mine = perm, perm.new_tensor(order[mine])
            self._last = None                 # an epoch's first step may compile: not timed
        k = self._per_rank(batch_size)
        return self._mine[b * k:(b + 1) * k]

    def _check_same_order(self, order: np.ndarray) -> None:
        """Every rank must split the *same* order, or samples would be skipped and repeated."""
        digest = float(np.dot(order.astype(np.float64), np.arange(1, len(order) + 1) % 9973))
        everyone: list = [None] * self.world_size
        all_gather_object(everyone, digest)
        if len(set(everyone)) != 1:
            raise RuntimeError("the ranks drew different epoch orders (their random "
                               "generators diverged): the data split would be wrong")

    def wrap(self, model: Module) -> Module:
        self.ddp = DistributedDataParallel(model)
        return self.ddp

    def stats(self, loss_sum: float, correct: int, seen: int) -> tuple[float, int, int]:
        # Called once a step, after backward: time the step since the previous call.
        now = time.perf_counter()
        waited = self.ddp._get_ddp_logging_data()["comm_wait_s"] if self.ddp else 0.0
        if self._last is not None:
            self.steps.append((now - self._last[0], waited - self._last[1]))
        self._last = (now, waited)
        totals = np.array([loss_sum, correct, seen], dtype=np.float64)
        all_reduce(from_numpy(totals))     # the tensor shares ``totals``'s memory
        return float(totals[0]), int(totals[1]), int(totals[2])


def data_shard(cfg: Any) -> LocalShard:
    """The share of the data this process trains on (``cfg.extra["distributed"]``)."""
    return _register(RankShard()) if cfg.extra.get("distributed") else LocalShard()


# ---------------------------------------------------------------------------
# the command line: who prints, and what a failing rank does
# ---------------------------------------------------------------------------
class Session:
    """The distributed side of one ``minitorch train`` command.

    Made before any work, from the launcher's environment (no MPI yet), so
    that ranks other than 0 are silent from the first line.  MPI starts in
    :meth:`guard`, around the training itself.
    """

    def __init__(self, enabled: bool, threads: int | None = None,
                 batch_size: int | None = None) -> None:
        self.enabled = enabled
        self.threads = threads
        self.rank = (launcher_rank() or 0) if enabled else 0
        self.is_main = self.rank == 0
        self.extra = {"distributed": True} if enabled else {}
        if not enabled:
            return
        problem = None
        world = launcher_world_size() or 1
        if not is_mpi_available():
            problem = ("--distributed needs mpi4py and an MPI library: pip install "
                       "'minitorch[distributed]', then run mpiexec -n N minitorch train ... "
                       "--distributed")
        elif batch_size is not None and batch_size % world:
            problem = (f"--batch-size {batch_size} does not split evenly over {world} "
                       f"processes: give a multiple of {world} (it is the global batch)")
        if problem:
            if self.is_main:
                raise UserError(problem)
            raise SystemExit(1)           # the same mistake on every rank: rank 0 says it

    @staticmethod
    def silent(line: str) -> None:
        """``echo`` for the ranks that do not print."""

    @contextmanager
    def guard(self, echo: Callable[[str], None]) -> Iterator[None]:
        """Join the MPI job for the block; a rank that fails alone ends the whole job.

        Ctrl-C reaches every rank (the launcher forwards it), so an interrupt is
        left to the loop: rank 0 saves, every rank exits.  Any other error may hit
        one rank only, while the others wait in a collective: that rank says
        what happened and aborts the job rather than leave it hanging.
        """
        if not self.enabled:
            yield
            return
        init_process_group("mpi", timeout=CLI_TIMEOUT)
        world = get_world_size()
        if self.threads is None:
            _share_cores(world)
        if self.is_main:
            echo(f"distributed: {world} process{'es' if world > 1 else ''} over MPI, each "
                 f"computing 1/{world} of every batch")
        try:
            yield
        except BaseException as e:
            # Ctrl-C: a KeyboardInterrupt, or the loop's ``Interrupted`` raised (from None)
            # while handling one, after rank 0 saved.  Every rank got it: just leave.
            if isinstance(e, KeyboardInterrupt) or isinstance(e.__context__, KeyboardInterrupt):
                raise
            if world > 1 and not (isinstance(e, SystemExit) and e.code in (0, None)):
                what = str(e) if isinstance(e, (UserError, SystemExit)) else repr(e)
                print(f"Error on rank {self.rank}: {what}", file=sys.stderr, flush=True)
                abort(f"stopped with {type(e).__name__}")
            raise
        else:
            if self.is_main:
                echo(_communication_line(active_shard()))
        finally:
            if is_initialized():
                destroy_process_group()


def session_for(distributed: bool, threads: int | None, batch_size: int | None = None) -> Session:
    """The :class:`Session` of a ``train`` command (a no-op one without --distributed)."""
    return Session(distributed, threads, batch_size)


_ACTIVE: list = []


def active_shard() -> RankShard | None:
    """The :class:`RankShard` of the run in progress in this process, if any."""
    return _ACTIVE[-1] if _ACTIVE else None


def _register(shard: LocalShard) -> LocalShard:
    if isinstance(shard, RankShard):
        _ACTIVE.append(shard)
    return shard


def _share_cores(world: int) -> None:
    """Give each of the ranks on this host its share of the cores (unless --threads)."""
    local = _local_size(world)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    set_num_threads(max(1, min((cores or 1) // local, max_num_threads())))


def _local_size(world: int) -> int:
    """How many ranks share this host, as the launcher says (else: all of them)."""
    for name in ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE"):
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    return world


def _communication_line(shard: RankShard | None) -> str:
    """What the gradient all-reduce cost on rank 0: median step, median wait, share."""
    if shard is None or shard.ddp is None or not shard.steps:
        return "distributed: done"
    data = shard.ddp._get_ddp_logging_data()
    times = np.array(shard.steps)
    kib = sum(data["bucket_sizes"]) / 1024
    share = times[:, 1].sum() / times[:, 0].sum()
    return (f"distributed: median step {1000 * np.median(times[:, 0]):.1f} ms, of which "
            f"{1000 * np.median(times[:, 1]):.1f} ms waiting for the gradient all-reduce "
            f"({kib:.0f} KiB in {len(data['bucket_sizes'])} bucket(s)); all-reduce waits were "
            f"{100 * share:.0f}% of the timed steps")

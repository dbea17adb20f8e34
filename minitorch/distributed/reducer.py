"""Gradient buckets: the machinery under ``DistributedDataParallel``.

After ``loss.backward()`` each rank holds the gradient of *its* slice of the
batch.  Data parallelism needs the gradient of the *whole* batch, which (for
a loss that is a mean over equal slices) is the average of the ranks'
gradients: one ``all_reduce`` per gradient, then a division by the world size.

Doing that one parameter at a time would pay MPI's fixed cost per call (tens
of microseconds, far more between hosts) once per parameter; doing it once
for the whole model at the end would leave the network idle during backward
and the CPU idle during the all-reduce.  PyTorch's answer, copied here:

* **buckets**: parameters are grouped, in the reverse of their registration
  order (roughly the order backward produces their gradients), into flat
  buffers of about ``bucket_cap_mb`` megabytes (the first bucket is smaller,
  1 MiB, so that communication starts early).  Each bucket is one
  ``MPI_Iallreduce``.
* **hooks**: a hook on every parameter copies its gradient into its slot of
  the bucket as soon as autograd computes it; when a bucket's last slot is
  filled, the bucket's all-reduce starts (non-blocking) while backward goes
  on computing the gradients of earlier layers.
* **order**: every rank must start the same collectives in the same order, so
  bucket ``k`` starts only after buckets ``0..k-1`` have started.
* **finish**: when the last parameter's gradient arrives (the end of
  backward), wait for the buckets still in flight and hand every parameter
  its averaged gradient as ``.grad``.

When an optimizer steps after ``backward()`` returns, every rank holds the
same averaged gradients, so every rank's model stays identical.
"""

from __future__ import annotations

import time
import weakref
from typing import Any, Sequence

import numpy as np

from . import _lower
from .process_group import ProcessGroup
from .work import wait_all

__all__ = ["Reducer", "compute_bucket_assignment_by_size", "DEFAULT_FIRST_BUCKET_BYTES"]

#: Size limit of the first bucket to be reduced (PyTorch's ``dist._DEFAULT_FIRST_BUCKET_BYTES``).
DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024


def compute_bucket_assignment_by_size(tensors: Sequence[Any],
                                      bucket_size_limits: Sequence[int]) -> list[list[int]]:
    """Group tensor indices into buckets of one dtype and device each, in the given order.

    A bucket closes as soon as its size reaches its limit (so it may pass the
    limit by one tensor); the ``k``-th bucket of a dtype uses
    ``bucket_size_limits[k]``, the last limit repeating.  Buckets come out in
    the order of their first tensor, as in PyTorch.
    """
    limits = list(bucket_size_limits)
    if not limits or any(limit <= 0 for limit in limits):
        raise ValueError(f"bucket size limits must be positive, but got {limits}")
    open_buckets: dict = {}
    done: list[list[int]] = []
    for i, t in enumerate(tensors):
        key = (str(t.dtype), str(t.device))
        bucket = open_buckets.setdefault(key, {"indices": [], "bytes": 0, "nth": 0})
        bucket["indices"].append(i)
        bucket["bytes"] += t.numel() * t.element_size()
        if bucket["bytes"] >= limits[min(bucket["nth"], len(limits) - 1)]:
            done.append(bucket["indices"])
            open_buckets[key] = {"indices": [], "bytes": 0, "nth": bucket["nth"] + 1}
    done.extend(b["indices"] for b in open_buckets.values() if b["indices"])
    done.sort(key=lambda indices: indices[0])
    return done


def _host(t: Any) -> np.ndarray:
    """The elements of ``t`` as a NumPy array: a view on the CPU, a copy from elsewhere."""
    d = t.detach()
    return d.numpy() if d.device.type == "cpu" else d.numpy(force=True)


class _Bucket:
    """One flat buffer, the slots (shaped views) of its parameters, and its MPI request."""

    def __init__(self, params: list, indices: list[int]) -> None:
        self.indices = indices
        first = params[indices[0]]
        self.device = first.device
        numels = [params[i].numel() for i in indices]
        self.buffer = np.zeros(sum(numels), dtype=_host(first).dtype)
        self.slots: list[np.ndarray] = []
        offset = 0
        for i, n in zip(indices, numels):
            self.slots.append(self.buffer[offset:offset + n].reshape(tuple(params[i].shape)))
            offset += n
        # Tensors over the slots (sharing memory): what .grad becomes.
        self.tensors = [_lower.from_numpy(s) for s in self.slots]
        self.pending = len(indices)
        self.request: Any = None

    @property
    def nbytes(self) -> int:
        return self.buffer.nbytes


class Reducer:
    """Averages the gradients of ``params`` over the ranks of ``pg``, bucket by bucket.

    Used by ``DistributedDataParallel``: it calls :meth:`prepare_for_backward`
    at each forward that should synchronize, and the parameters' hooks do the
    rest during the backward that follows.
    """

    def __init__(self, params: Sequence[Any], bucket_indices: Sequence[Sequence[int]],
                 pg: ProcessGroup, gradient_as_bucket_view: bool = False,
                 find_unused_parameters: bool = False,
                 param_names: Sequence[str] | None = None) -> None:
        self.params = list(params)
        self.pg = pg
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.find_unused_parameters = find_unused_parameters
        self.names = list(param_names) if param_names is not None else [
            f"parameter {i}" for i in range(len(self.params))]
        covered = sorted(i for b in bucket_indices for i in b)
        if covered != list(range(len(self.params))):
            raise ValueError("bucket_indices must hold every parameter index exactly once")
        self.buckets = [_Bucket(self.params, list(b)) for b in bucket_indices]
        self.where = {}
        for b in self.buckets:
            for j, i in enumerate(b.indices):
                self.where[i] = (b, j)
        self._reset()
        self._armed = False
        # Measurements for the curious (DistributedDataParallel._get_ddp_logging_data).
        self.stats = {"iterations": 0, "comm_wait_s": 0.0, "bytes_reduced": 0}
        me = weakref.ref(self)
        self._handles = [p.register_hook(_make_hook(me, i)) for i, p in enumerate(self.params)]

    # -- per-iteration state ------------------------------------------------------
    def _reset(self) -> None:
        self.ready = [False] * len(self.params)
        self.n_ready = 0
        self.next_bucket = 0
        self.used = np.zeros(len(self.params), dtype=np.int32)
        for b in self.buckets:
            b.pending = len(b.indices)
            b.request = None

    def _check_finished(self) -> None:
        if self.n_ready:
            missing = [self.names[i] for i, r in enumerate(self.ready) if not r]
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting "
                "a new one. This error indicates that your module has parameters that were "
                "not used in producing loss. You can enable unused parameter detection by "
                "passing the keyword argument `find_unused_parameters=True` to "
                "`minitorch.nn.parallel.DistributedDataParallel`, and by making sure all "
                "`forward` function outputs participate in calculating loss. Parameters "
                f"that did not receive a gradient on rank {self.pg.rank()}: "
                f"{', '.join(missing)}")

    def prepare_for_backward(self, outputs: Any = None) -> None:
        """Arm the hooks for the next backward (and, with ``find_unused_parameters``,
        mark the parameters that ``outputs`` do not depend on as ready now)."""
        self._check_finished()
        self._reset()
        self._armed = True
        if self.find_unused_parameters:
            reached = _leaves_reached(outputs)
            for i, p in enumerate(self.params):
                if id(p) not in reached:
                    b, j = self.where[i]
                    if p.grad is None:
                        b.slots[j].fill(0)
                    else:
                        np.copyto(b.slots[j], _host(p.grad))
                    self._mark_ready(i)
            if self.n_ready == len(self.params):
                self._finalize(current=-1)     # no hook will fire: this rank used none

    def disarm(self) -> None:
        """The next backward accumulates locally (``no_sync``, or a forward without grad)."""
        self._check_finished()
        self._armed = False

    # -- the hook -----------------------------------------------------------------
    def on_grad(self, i: int, grad: Any) -> Any:
        """Parameter ``i``'s gradient ``grad`` was just computed (before accumulation)."""
        if not self._armed:
            return None
        p = self.params[i]
        if self.ready[i]:
            raise RuntimeError(
                f"Expected to mark a variable ready only once: {self.names[i]} received a "
                f"second gradient in one backward pass on rank {self.pg.rank()} (a second "
                f"backward through the same forward, or reentrant backward, is not "
                f"supported by DistributedDataParallel)")
        b, j = self.where[i]
        slot = b.slots[j]
        old = p.grad
        # The slot gets what .grad would become: earlier (no_sync) accumulation + this one.
        if old is None:
            np.copyto(slot, _host(grad))
        else:
            np.add(_host(old), _host(grad), out=slot)
        self.used[i] = 1
        # Take over .grad: the engine then adopts the tensor we return instead of
        # adding ``grad`` into the old one (work the bucket has already done).
        p.grad = None
        self._mark_ready(i)
        if self.n_ready == len(self.params):
            return self._finalize(current=i)
        return b.tensors[j] if b.device.type == "cpu" else None

    def _mark_ready(self, i: int) -> None:
        self.ready[i] = True
        self.n_ready += 1
        b, _ = self.where[i]
        b.pending -= 1
        if b.pending == 0:
            self._launch_ready_buckets()
        else:
            self._progress()

    def _launch_ready_buckets(self) -> None:
        """Start the all-reduce of every complete bucket whose predecessors have started."""
        from mpi4py import MPI
        world = self.pg.size()
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            b = self.buckets[self.next_bucket]
            # Divide before summing (not after): the same result, and sums of many
            # ranks' gradients stay in range in float16.
            if b.buffer.dtype.kind == "f":
                np.divide(b.buffer, world, out=b.buffer)
            b.request = self.pg._comm.Iallreduce(MPI.IN_PLACE, b.buffer, op=MPI.SUM)
            self.stats["bytes_reduced"] += b.nbytes
            self.next_bucket += 1
        self._progress()

    def _progress(self) -> None:
        """Let MPI move the bytes of the all-reduces in flight (most MPIs only do so
        inside an MPI call); never blocks."""
        requests = [b.request for b in self.buckets[:self.next_bucket]]
        if requests:
            from mpi4py import MPI
            MPI.Request.Testall(requests)

    def _finalize(self, current: int) -> Any:
        """Wait for every bucket, then give each parameter its averaged gradient."""
        start = time.perf_counter()
        wait_all([b.request for b in self.buckets], self.pg,
                 "DistributedDataParallel's gradient all_reduce")
        globally_used = None
        if self.find_unused_parameters:
            from mpi4py import MPI
            req = self.pg._comm.Iallreduce(MPI.IN_PLACE, self.used, op=MPI.MAX)
            wait_all([req], self.pg, "DistributedDataParallel's unused-parameter map")
            globally_used = self.used.copy()
        self.stats["comm_wait_s"] += time.perf_counter() - start
        self.stats["iterations"] += 1
        result = None
        for i, p in enumerate(self.params):
            if globally_used is not None and not globally_used[i]:
                continue                  # no rank used it: .grad stays as it was
            g = self._averaged(i)
            if i == current:
                result = g                # the engine stores it (we are inside its hook)
            else:
                p.grad = g
        self._armed = False
        self._reset()
        return result

    def _averaged(self, i: int) -> Any:
        b, j = self.where[i]
        if self.gradient_as_bucket_view and b.device.type == "cpu":
            return b.tensors[j]
        g = _lower.from_numpy(b.slots[j].copy())
        return g if b.device.type == "cpu" else g.to(b.device)

    def remove_hooks(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []


def _make_hook(reducer_ref: Any, i: int) -> Any:
    """The hook for parameter ``i`` (holds the reducer weakly: a discarded
    DistributedDataParallel must not keep reducing)."""
    def hook(grad: Any) -> Any:
        reducer = reducer_ref()
        return None if reducer is None else reducer.on_grad(i, grad)
    return hook


def _leaves_reached(outputs: Any) -> set:
    """``id``s of the leaf tensors that the autograd graph of ``outputs`` reaches."""
    tensor = _lower.Tensor
    roots, stack = [], [outputs]
    while stack:
        obj = stack.pop()
        if isinstance(obj, tensor):
            roots.append(obj)
        elif isinstance(obj, (list, tuple)):
            stack.extend(obj)
        elif isinstance(obj, dict):
            stack.extend(obj.values())
    reached: set = set()
    nodes, seen = [], set()
    for t in roots:
        if t.grad_fn is not None:
            nodes.append(t.grad_fn)
        elif t.requires_grad:
            reached.add(id(t))
    while nodes:
        node = nodes.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)   # AccumulateGrad: the leaf itself
        if variable is not None:
            reached.add(id(variable))
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen:
                nodes.append(nxt)
    return reached

"""``DistributedDataParallel``: one model per process, gradients averaged over MPI.

``nn.DataParallel`` splits a batch over the devices of *one* process.
``DistributedDataParallel`` (DDP) runs one process per replica, possibly on
several hosts (``mpiexec -n 4 python train.py``), each with its own copy of
the model and its own slice of the data (see
``minitorch.utils.data.distributed.DistributedSampler``):

1. at construction, rank 0's parameters and buffers are broadcast, so every
   replica starts identical;
2. ``ddp(x)`` runs the wrapped module on this rank's slice;
3. ``loss.backward()`` computes this rank's gradients, and hooks on the
   parameters average them over all ranks *during* backward, in buckets
   (see :mod:`minitorch.distributed.reducer`);
4. ``optimizer.step()`` then applies the same averaged gradients on every
   rank, so the replicas stay identical without ever sending parameters.

With a loss that is a mean over the batch and equal slices per rank, this
is the same training as one process running the whole (global) batch.

Differences from PyTorch: CPU tensors go to MPI in place, tensors on a GPU
are staged through host memory; buckets are laid out once, in reverse
registration order, and not rebuilt from the observed gradient order;
``join()`` for uneven inputs, communication hooks, ``static_graph`` and
mixed precision are not implemented (``static_graph`` is accepted and
ignored).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Sequence

from ..autograd import is_grad_enabled
from ..distributed.collectives import all_gather_object, broadcast
from ..distributed.process_group import _resolve
from ..distributed.reducer import (DEFAULT_FIRST_BUCKET_BYTES, Reducer,
                                   compute_bucket_assignment_by_size)
from .modules.module import Module

__all__ = ["DistributedDataParallel"]

_MB = 1024 * 1024


class DistributedDataParallel(Module):
    """Data-parallel training over the processes of a ``minitorch.distributed`` group.

    Call ``minitorch.distributed.init_process_group("mpi")`` first.  Then::

        model = DistributedDataParallel(model)
        for x, y in loader:                 # loader over a DistributedSampler
            optimizer.zero_grad()
            loss_fn(model(x), y).backward() # gradients averaged over all ranks
            optimizer.step()

    ``bucket_cap_mb`` is the size of the gradient buckets (default 25, with a
    first bucket of 1 MiB); ``find_unused_parameters=True`` allows forwards
    that leave some parameters out of the graph (at the cost of a graph walk
    per forward and one more small all-reduce per step);
    ``gradient_as_bucket_view=True`` makes each ``.grad`` a view into its
    bucket (saves one copy per step); ``no_sync()`` accumulates gradients
    locally for gradient accumulation.  ``ddp.module`` is the wrapped model:
    save ``ddp.module.state_dict()`` to get keys without the ``module.`` prefix.
    """

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None,
                 output_device: Any = None, dim: int = 0, broadcast_buffers: bool | None = None,
                 init_sync: bool = True, process_group: Any = None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, delay_all_reduce_named_params: Any = None,
                 param_to_hook_all_reduce: Any = None, mixed_precision: Any = None,
                 device_mesh: Any = None, skip_all_reduce_unused_params: bool = False,
                 bucket_cap_mb_list: list | None = None, batched_grad_copy: bool = False,
                 forward_sync_buffers: bool | None = None) -> None:
        super().__init__()
        for name, value in (("delay_all_reduce_named_params", delay_all_reduce_named_params),
                            ("param_to_hook_all_reduce", param_to_hook_all_reduce),
                            ("mixed_precision", mixed_precision), ("device_mesh", device_mesh)):
            if value is not None:
                raise NotImplementedError(f"DistributedDataParallel: {name} is not supported "
                                          f"by minitorch")
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel expects an nn.Module, but got "
                            f"{type(module).__name__}")
        pg = _resolve(process_group)
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        all_params = list(module.parameters())
        device_types = {p.device.type for p in all_params}
        if len(device_types) != 1:
            raise ValueError(f"DistributedDataParallel's input module must be on the same type "
                             f"of devices, but input module parameters locate in "
                             f"{device_types}.")
        if (device_ids or output_device is not None) and device_types == {"cpu"}:
            raise ValueError(
                f"DistributedDataParallel device_ids and output_device arguments only work "
                f"with single-device/multiple-device GPU modules or CPU modules, but got "
                f"device_ids {device_ids}, output_device {output_device}, and module "
                f"parameters {({p.device for p in all_params})}.")
        self.module = module
        self.process_group = pg
        self.device_ids = list(device_ids) if device_ids else None
        self.output_device = (output_device if output_device is not None else
                              (self.device_ids[0] if self.device_ids else None))
        self.dim = dim
        self.device = all_params[0].device
        if forward_sync_buffers is not None:
            self.forward_sync_buffers, init_sync_buffers = forward_sync_buffers, True
        else:
            self.forward_sync_buffers = broadcast_buffers if broadcast_buffers is not None else True
            init_sync_buffers = self.forward_sync_buffers
        self.broadcast_buffers = self.forward_sync_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        if bucket_cap_mb_list:
            limits = [int(mb * _MB) for mb in bucket_cap_mb_list]
            self.bucket_bytes_cap = max(limits)
        else:
            cap = 25 if bucket_cap_mb is None else bucket_cap_mb
            if cap <= 0:
                raise ValueError(f"bucket_cap_mb must be positive, but got {bucket_cap_mb}")
            self.bucket_bytes_cap = int(cap * _MB)
            # The default gets a small first bucket, so that communication starts early.
            limits = ([min(DEFAULT_FIRST_BUCKET_BYTES, self.bucket_bytes_cap),
                       self.bucket_bytes_cap] if bucket_cap_mb is None else
                      [self.bucket_bytes_cap])

        self._verify_same_model(named, pg)
        if init_sync:
            self._broadcast_state(include_params=True, include_buffers=init_sync_buffers)

        # Gradients arrive roughly in reverse registration order: bucket that way.
        names = [n for n, _ in reversed(named)]
        params = [p for _, p in reversed(named)]
        buckets = compute_bucket_assignment_by_size(params, limits)
        self.reducer = Reducer(params, buckets, pg, gradient_as_bucket_view,
                               find_unused_parameters, names)

    # -- construction helpers -----------------------------------------------------
    def _verify_same_model(self, named: list, pg: Any) -> None:
        """Every rank must wrap the same architecture (else the buckets would not match)."""
        mine = [(n, tuple(p.shape), str(p.dtype)) for n, p in named]
        everyone: list = [None] * pg.size()
        all_gather_object(everyone, mine, group=pg)
        for r, theirs in enumerate(everyone):
            if theirs != mine:
                diff = next(((a, b) for a, b in zip(mine, theirs) if a != b), None)
                detail = (f"{len(mine)} parameters here, {len(theirs)} there" if diff is None
                          else f"here {diff[0]}, there {diff[1]}")
                raise RuntimeError(f"DDP expects the same model on every rank, but rank "
                                   f"{r}'s parameters differ from rank {pg.rank()}'s: {detail}")

    def _broadcast_state(self, include_params: bool, include_buffers: bool) -> None:
        """Copy rank 0's parameters and/or buffers into every rank's module, in place."""
        tensors = []
        if include_params:
            tensors += list(self.module.parameters())
        if include_buffers:
            tensors += [b for b in self.module.buffers() if b is not None]
        works = [broadcast(t, src=0, group=self.process_group, async_op=True)
                 for t in tensors]
        for w in works:
            w.wait()

    # -- the forward pass -----------------------------------------------------------
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        sync = is_grad_enabled() and self.require_backward_grad_sync
        if (self.require_forward_param_sync and self.forward_sync_buffers
                and any(True for _ in self.module.buffers())):
            self._broadcast_state(include_params=False, include_buffers=True)
        output = self.module(*inputs, **kwargs)
        if sync:
            self.require_forward_param_sync = True
            self.reducer.prepare_for_backward(output if self.find_unused_parameters else None)
        else:
            self.require_forward_param_sync = False
            if is_grad_enabled():
                self.reducer.disarm()
        return output

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside this context, backward accumulates gradients locally without communicating;
        the first synchronized backward after it averages the accumulated sums.

        The *forward* must run inside the context: the decision is made there.
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _get_ddp_logging_data(self) -> dict:
        """Counters: synchronized iterations, seconds spent waiting for gradient
        all-reduces after backward (``comm_wait_s``; communication that overlapped
        with backward is not counted), bytes all-reduced, and the bucket layout."""
        data = dict(self.reducer.stats)
        data["bucket_sizes"] = [b.nbytes for b in self.reducer.buckets]
        data["world_size"] = self.process_group.size()
        return data

    def extra_repr(self) -> str:
        return ""

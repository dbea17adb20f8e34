"""``minitorch.distributed``: several processes training one model, over MPI.

Mirrors the part of ``torch.distributed`` that data parallelism needs::

    import minitorch.distributed as dist
    dist.init_process_group(backend="mpi")     # under: mpiexec -n 4 python train.py
    rank, world = dist.get_rank(), dist.get_world_size()
    t = minitorch.ones(3) * rank
    dist.all_reduce(t, op=dist.ReduceOp.SUM)    # every rank: 0 + 1 + 2 + 3
    dist.destroy_process_group()

The transport is MPI (through mpi4py; ``pip install "minitorch[distributed]"``
brings mpi4py and MPICH from PyPI), the engine HPC clusters and Horovod use.
minitorch adds no protocol of its own: each collective is one MPI call on
the tensor's own memory.  See ``docs/distributed.md`` for the ideas
(all-reduce, buckets, samplers) and for running on several hosts.

Layering: this package sits above tensors and autograd and below
``nn.parallel.DistributedDataParallel`` and ``utils.data.distributed``,
which import it when used; it imports neither.
"""

from . import collectives, process_group, reduce_op, work  # noqa: F401  (submodules)
from .collectives import (all_gather, all_gather_into_tensor, all_gather_object, all_reduce,
                          barrier, broadcast, broadcast_object_list, reduce)
from .process_group import (Backend, GroupMember, ProcessGroup, abort, default_pg_timeout,
                            destroy_process_group, get_backend, get_rank, get_world_size, group,
                            init_process_group, is_available, is_initialized, is_mpi_available,
                            launcher_rank, launcher_world_size)
from .reduce_op import ReduceOp
from .work import Work

__all__ = ["init_process_group", "destroy_process_group", "is_available", "is_mpi_available",
           "is_initialized", "get_rank", "get_world_size", "get_backend", "Backend",
           "ProcessGroup", "GroupMember", "group", "default_pg_timeout", "ReduceOp", "Work",
           "barrier", "broadcast", "all_reduce", "reduce", "all_gather",
           "all_gather_into_tensor", "broadcast_object_list", "all_gather_object", "abort",
           "launcher_rank", "launcher_world_size"]

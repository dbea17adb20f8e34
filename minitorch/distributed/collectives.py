"""The collectives: every rank calls the same function, in the same order.

Picture four ranks each holding a tensor ``x_r``:

* ``all_reduce(x)``: every rank ends with ``x_0 + x_1 + x_2 + x_3`` (or the
  max, min, product, average);
* ``reduce(x, dst)``: only rank ``dst`` ends with it;
* ``broadcast(x, src)``: every rank ends with ``x_src``;
* ``all_gather(xs, x)``: every rank ends with the list ``[x_0, x_1, x_2, x_3]``;
* ``barrier()``: nobody continues until everybody has arrived.

A collective is a rendezvous: if one rank skips it, or calls another one,
the others wait (here, up to the process group's timeout).  Each function
starts the matching MPI non-blocking operation on the tensor's own memory
(see :mod:`.buffers`).  With ``async_op=False`` (the default) it waits and
returns ``None``; with ``async_op=True`` it returns a :class:`~.work.Work`
at once, so that computation can overlap the transfer; the tensor must not
be read or written until ``work.wait()``.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np

from . import _lower
from .buffers import as_buffer, check_tensor, check_tensor_list
from .process_group import ProcessGroup, _resolve
from .reduce_op import ReduceOp, mpi_op
from .work import Work

__all__ = ["barrier", "broadcast", "all_reduce", "reduce", "all_gather",
           "all_gather_into_tensor", "broadcast_object_list", "all_gather_object"]


def _finish(work: Work, async_op: bool) -> Work | None:
    if async_op:
        return work
    work.wait()
    return None


def _root(pg: ProcessGroup, rank: int | None, group_rank: int | None, name: str,
          what: str) -> int:
    """Validate a source/destination rank given as ``src``/``dst`` or ``group_src``/..."""
    if rank is not None and group_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank")
    r = rank if rank is not None else group_rank
    if r is None:
        raise ValueError("Must specify global_rank or group_rank")
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)):
        raise TypeError(f"{what}: {name} must be an int rank, but got {type(r).__name__}")
    if not 0 <= r < pg.size():
        raise ValueError(f"{what}: invalid {name} rank {r}; the group has {pg.size()} "
                         f"rank(s), 0 to {pg.size() - 1}")
    return int(r)


def _is_float(arr: np.ndarray) -> bool:
    return arr.dtype.kind in "fc"


def barrier(group: ProcessGroup | None = None, async_op: bool = False,
            device_ids: Any = None) -> Work | None:
    """Wait until every rank of ``group`` has called ``barrier``."""
    pg = _resolve(group)
    return _finish(Work([pg._comm.Ibarrier()], pg, "barrier"), async_op)


def broadcast(tensor: Any, src: int | None = None, group: ProcessGroup | None = None,
              async_op: bool = False, group_src: int | None = None) -> Work | None:
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every rank (same shape and dtype
    everywhere)."""
    pg = _resolve(group)
    root = _root(pg, src, group_src, "src", "broadcast")
    check_tensor(tensor, "tensor")
    buf = as_buffer(tensor)
    req = pg._comm.Ibcast(buf.mpi_array, root=root)
    return _finish(Work([req], pg, "broadcast", buf.writeback, [tensor]), async_op)


def all_reduce(tensor: Any, op: Any = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Combine ``tensor`` across ranks with ``op``; every rank gets the result in place.

    >>> import minitorch as torch, minitorch.distributed as dist   # doctest: +SKIP
    >>> t = torch.tensor([1.0, 2.0]) * (dist.get_rank() + 1)       # doctest: +SKIP
    >>> dist.all_reduce(t)              # with 2 ranks: [1, 2] + [2, 4]  # doctest: +SKIP
    >>> t                                                           # doctest: +SKIP
    tensor([3., 6.])
    """
    pg = _resolve(group)
    check_tensor(tensor, "tensor")
    buf = as_buffer(tensor)
    arr = buf.array
    mop = mpi_op(op, str(tensor.dtype).replace("minitorch.", ""), arr.dtype == np.bool_,
                 _is_float(arr), "all_reduce")
    from mpi4py import MPI
    req = pg._comm.Iallreduce(MPI.IN_PLACE, buf.mpi_array, op=mop)

    def finish() -> None:
        if op == ReduceOp.AVG:
            np.divide(arr, pg.size(), out=arr)
        buf.writeback()
    return _finish(Work([req], pg, "all_reduce", finish, [tensor]), async_op)


def reduce(tensor: Any, dst: int | None = None, op: Any = ReduceOp.SUM,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """Like :func:`all_reduce`, but only rank ``dst`` receives the result (the other ranks'
    tensors are left as they were)."""
    pg = _resolve(group)
    root = _root(pg, dst, group_dst, "dst", "reduce")
    check_tensor(tensor, "tensor")
    buf = as_buffer(tensor)
    arr = buf.array
    mop = mpi_op(op, str(tensor.dtype).replace("minitorch.", ""), arr.dtype == np.bool_,
                 _is_float(arr), "reduce")
    from mpi4py import MPI
    mine = pg.rank() == root
    if mine:
        req = pg._comm.Ireduce(MPI.IN_PLACE, buf.mpi_array, op=mop, root=root)
    else:
        req = pg._comm.Ireduce(buf.mpi_array, None, op=mop, root=root)

    def finish() -> None:
        if mine:
            if op == ReduceOp.AVG:
                np.divide(arr, pg.size(), out=arr)
            buf.writeback()
    return _finish(Work([req], pg, "reduce", finish, [tensor]), async_op)


def _check_same(what: str, tensor: Any, others: list) -> None:
    for i, t in enumerate(others):
        if t.dtype != tensor.dtype:
            raise ValueError(f"Invalid usage of tensors with different dtypes: {what} got "
                             f"{tensor.dtype} as input and {t.dtype} in output {i}")
        if t.device != tensor.device:
            raise RuntimeError(f"{what}: output {i} is on {t.device} but the input is on "
                               f"{tensor.device}")


def all_gather(tensor_list: list, tensor: Any, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Fill ``tensor_list[r]`` with rank ``r``'s ``tensor``, on every rank.

    ``tensor_list`` holds ``world_size`` tensors shaped like ``tensor``.  MPI
    gathers into one contiguous array that is then copied into the list's
    tensors (they need not be contiguous nor adjacent); use
    :func:`all_gather_into_tensor` to receive in place.
    """
    pg = _resolve(group)
    check_tensor_list(tensor_list, "tensor_list")
    check_tensor(tensor, "tensor")
    if len(tensor_list) != pg.size():
        raise RuntimeError(f"all_gather: tensor_list has {len(tensor_list)} tensor(s) but the "
                           f"group has {pg.size()} ranks; it needs one per rank")
    _check_same("all_gather", tensor, tensor_list)
    for i, t in enumerate(tensor_list):
        if tuple(t.shape) != tuple(tensor.shape):
            raise RuntimeError(f"all_gather: tensor_list[{i}] has shape {tuple(t.shape)} but "
                               f"the input tensor has shape {tuple(tensor.shape)}")
    send = as_buffer(tensor)
    recv = np.empty((pg.size(),) + send.array.shape, dtype=send.array.dtype)
    recv_mpi = recv.view(np.uint8) if recv.dtype == np.bool_ else recv
    req = pg._comm.Iallgather(send.mpi_array, recv_mpi)

    def finish() -> None:
        with _lower.no_grad():
            for t, part in zip(tensor_list, recv):
                t.detach().copy_(_lower.from_numpy(part))
    return _finish(Work([req], pg, "all_gather", finish, tensor_list), async_op)


def all_gather_into_tensor(output_tensor: Any, input_tensor: Any,
                           group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:
    """Gather every rank's ``input_tensor`` into ``output_tensor``: rank ``r``'s piece is
    ``output_tensor.view(world_size, -1)[r]`` (the output is either the inputs
    concatenated along dim 0 or stacked in a new first dim)."""
    pg = _resolve(group)
    check_tensor(output_tensor, "output_tensor")
    check_tensor(input_tensor, "input_tensor")
    _check_same("all_gather_into_tensor", input_tensor, [output_tensor])
    if output_tensor.numel() != pg.size() * input_tensor.numel():
        raise RuntimeError(f"all_gather_into_tensor: output tensor size must be equal to "
                           f"world_size ({pg.size()}) times input tensor size "
                           f"({input_tensor.numel()}), but it has {output_tensor.numel()} "
                           f"elements")
    send, recv = as_buffer(input_tensor), as_buffer(output_tensor)
    req = pg._comm.Iallgather(send.mpi_array, recv.mpi_array)
    return _finish(Work([req], pg, "all_gather_into_tensor", recv.writeback, [output_tensor]),
                   async_op)


# -- Python objects (pickled: only ever between the ranks of one job) ---------------
def broadcast_object_list(object_list: list, src: int | None = None,
                          group: ProcessGroup | None = None, device: Any = None,
                          group_src: int | None = None) -> None:
    """Replace ``object_list``'s items on every rank with rank ``src``'s items.

    The objects are pickled, so only use this between the processes of your
    own job: unpickling runs code chosen by the sender.
    """
    pg = _resolve(group)
    root = _root(pg, src, group_src, "src", "broadcast_object_list")
    if not isinstance(object_list, list):
        raise TypeError(f"object_list must be a list, but got {type(object_list).__name__}")
    payload = pickle.dumps(list(object_list)) if pg.rank() == root else b""
    size = np.array([len(payload)], dtype=np.int64)
    Work([pg._comm.Ibcast(size, root=root)], pg, "broadcast_object_list").wait()
    data = (np.frombuffer(payload, dtype=np.uint8).copy() if pg.rank() == root
            else np.empty(int(size[0]), dtype=np.uint8))
    Work([pg._comm.Ibcast(data, root=root)], pg, "broadcast_object_list").wait()
    if pg.rank() != root:
        received = pickle.loads(data.tobytes())
        if len(received) != len(object_list):
            raise RuntimeError(f"broadcast_object_list: rank {root} sent {len(received)} "
                               f"object(s) but this rank's list has {len(object_list)}")
        object_list[:] = received


def all_gather_object(object_list: list, obj: Any, group: ProcessGroup | None = None) -> None:
    """Set ``object_list[r]`` to rank ``r``'s ``obj``, on every rank (pickled, like
    :func:`broadcast_object_list`)."""
    pg = _resolve(group)
    if not isinstance(object_list, list) or len(object_list) != pg.size():
        raise RuntimeError(f"all_gather_object: object_list must be a list of world_size "
                           f"({pg.size()}) items")
    payload = np.frombuffer(pickle.dumps(obj), dtype=np.uint8).copy()
    sizes = np.empty(pg.size(), dtype=np.int64)
    Work([pg._comm.Iallgather(np.array([payload.size], dtype=np.int64), sizes)], pg,
         "all_gather_object").wait()
    data = np.empty(int(sizes.sum()), dtype=np.uint8)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    req = pg._comm.Iallgatherv(payload, [data, (sizes.tolist(), offsets.tolist())])
    Work([req], pg, "all_gather_object").wait()
    for r in range(pg.size()):
        object_list[r] = pickle.loads(data[offsets[r]:offsets[r] + sizes[r]].tobytes())

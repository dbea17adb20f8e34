"""minitorch.distributed: the collectives over real MPI processes, the sampler, the
safety nets (a failing rank ends the job; a stuck collective times out).

The multi-process tests run this file under ``mpiexec`` (see ``__main__`` at
the bottom): each worker checks its own results and prints ``OK rank R``.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

import minitorch as torch
import minitorch.distributed as dist
from minitorch.utils.data import DataLoader, TensorDataset
from minitorch.utils.data.distributed import DistributedSampler

try:
    from mpi_helpers import assert_ok, requires_mpi, run_mpi
except ImportError:          # run as an MPI worker from another directory
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from mpi_helpers import assert_ok, requires_mpi, run_mpi


# ---------------------------------------------------------------------------
# workers (run under mpiexec)
# ---------------------------------------------------------------------------
def _rank_data(r: int, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """What rank ``r`` contributes: known to every rank, different per rank."""
    n = int(np.prod(shape)) if shape else 1
    base = (np.arange(n) % 7 - 3 + 2 * r).reshape(shape)
    if dtype == np.bool_:
        return np.asarray(((np.arange(n) + r) % 3 == 0).reshape(shape))
    if np.issubdtype(dtype, np.floating):
        return np.asarray(base * 0.5 + r * 0.25, dtype=dtype)
    return np.asarray(base, dtype=dtype)


def worker_collectives(quick: bool = False) -> None:
    from minitorch.distributed.buffers import as_buffer
    dist.init_process_group(backend="mpi")
    r, w = dist.get_rank(), dist.get_world_size()
    assert dist.is_initialized() and dist.get_backend() == "mpi"
    assert dist.group.WORLD is not None and dist.group.WORLD.size() == w

    dtypes = {torch.float32: np.float32, torch.float64: np.float64, torch.int64: np.int64}
    if not quick:
        dtypes.update({torch.int32: np.int32, torch.float16: np.float16, torch.bool: np.bool_})
    shapes = [(), (2, 3, 4)] if quick else [(), (5,), (2, 3, 4), (0,)]
    ops = {dist.ReduceOp.SUM: np.sum, dist.ReduceOp.MAX: np.max, dist.ReduceOp.MIN: np.min,
           dist.ReduceOp.PRODUCT: np.prod}
    for tdt, ndt in dtypes.items():
        for shape in shapes:
            everyone = np.stack([_rank_data(k, shape, ndt) for k in range(w)])
            for op, fold in ops.items():
                t = torch.from_numpy(_rank_data(r, shape, ndt).copy())
                dist.all_reduce(t, op=op)
                want = fold(everyone, axis=0)
                if ndt == np.bool_:
                    want = (everyone.any(0) if op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX)
                            else everyone.all(0))
                assert t.dtype == tdt and tuple(t.shape) == shape
                np.testing.assert_allclose(t.numpy(), want.astype(ndt), rtol=1e-3,
                                           err_msg=f"{op!r} {tdt} {shape}")
            if np.issubdtype(ndt, np.floating):
                t = torch.from_numpy(_rank_data(r, shape, ndt).copy())
                dist.all_reduce(t, op=dist.ReduceOp.AVG)
                np.testing.assert_allclose(t.numpy(), everyone.mean(0).astype(ndt), rtol=1e-3)
            # broadcast from the last rank
            t = torch.from_numpy(_rank_data(r, shape, ndt).copy())
            dist.broadcast(t, src=w - 1)
            np.testing.assert_array_equal(t.numpy(), everyone[w - 1])

    # Contiguous CPU tensors go to MPI as their own memory; strided views are staged.
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    buf = as_buffer(x)
    assert not buf.staged and buf.array.ctypes.data == x.data_ptr()
    xt = (torch.arange(12, dtype=torch.float64).reshape(3, 4) * (r + 1)).t()
    assert not xt.is_contiguous() and as_buffer(xt).staged
    dist.all_reduce(xt)
    np.testing.assert_array_equal(
        xt.numpy(), np.arange(12.0).reshape(3, 4).T * sum(k + 1 for k in range(w)))

    # A parameter (requires grad) is reduced in place too.
    p = torch.nn.Parameter(torch.full((3,), float(r)))
    dist.all_reduce(p, op=dist.ReduceOp.MAX)
    assert p.tolist() == [w - 1.0] * 3 and p.requires_grad

    # reduce: only dst gets the result; the others keep their tensor.
    t = torch.full((2, 2), r + 1, dtype=torch.int64)
    dist.reduce(t, dst=1 % w, op=dist.ReduceOp.SUM)
    want = w * (w + 1) // 2 if r == 1 % w else r + 1
    assert t.tolist() == [[want] * 2] * 2, t

    # all_gather into a list (any layout) and into one tensor (in place)
    outs = [torch.zeros(2, 3, dtype=torch.float64).t() for _ in range(w)]
    dist.all_gather(outs, torch.full((3, 2), float(r), dtype=torch.float64))
    assert [o.sum().item() for o in outs] == [6.0 * k for k in range(w)]
    out = torch.zeros(w * 2, dtype=torch.int64)
    dist.all_gather_into_tensor(out, torch.tensor([r, 10 * r]))
    assert out.tolist() == [v for k in range(w) for v in (k, 10 * k)]

    # async: a Work handle
    t = torch.ones(1000) * (r + 1)
    work = dist.all_reduce(t, async_op=True)
    assert isinstance(work, dist.Work)
    while not work.is_completed():
        pass
    assert work.wait() is True and work.is_success() and work.result()[0] is t
    assert t[0].item() == w * (w + 1) / 2
    assert dist.barrier(async_op=True).wait()

    # Python objects
    objs = [{"epoch": 3}, "x"] if r == 0 else [None, None]
    dist.broadcast_object_list(objs, src=0)
    assert objs == [{"epoch": 3}, "x"]
    gathered = [None] * w
    dist.all_gather_object(gathered, ("rank", r, "x" * r))
    assert gathered == [("rank", k, "x" * k) for k in range(w)]

    # mistakes get PyTorch's exception types and name what is wrong
    for call, exc, words in [
            (lambda: dist.broadcast(torch.ones(1), src=w), ValueError, "invalid src rank"),
            (lambda: dist.broadcast(torch.ones(1)), ValueError, "Must specify"),
            (lambda: dist.all_reduce([1.0]), TypeError, "Expected parameter `tensor`"),
            (lambda: dist.all_reduce(torch.ones(1, dtype=torch.int64), dist.ReduceOp.AVG),
             RuntimeError, "needs a floating-point tensor"),
            (lambda: dist.all_reduce(torch.ones(1), op="sum"), TypeError, "ReduceOp"),
            (lambda: dist.all_gather([torch.ones(1)] * (w + 1), torch.ones(1)), RuntimeError,
             "one per rank"),
            (lambda: dist.all_gather([torch.ones(1)] * w, torch.ones(1, dtype=torch.int64)),
             ValueError, "different dtypes"),
            (lambda: dist.all_gather([torch.ones(2)] * w, torch.ones(1)), RuntimeError,
             "shape"),
            (lambda: dist.init_process_group("mpi"), ValueError, "twice")]:
        with pytest.raises(exc, match=words):
            call()

    # leave and join again (MPI itself stays up)
    dist.destroy_process_group()
    assert not dist.is_initialized()
    dist.init_process_group("mpi")
    t = torch.ones(2)
    dist.all_reduce(t)
    assert t.tolist() == [float(w)] * 2
    dist.destroy_process_group()
    print(f"OK rank {r}", flush=True)


def worker_rank_raises() -> None:
    dist.init_process_group("mpi")
    if dist.get_rank() == 1:
        raise ValueError("rank one is broken")
    dist.all_reduce(torch.ones(3))       # rank 0 would wait here forever
    print("rank 0 passed the all_reduce", flush=True)


def worker_timeout() -> None:
    import datetime
    import time
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=1))
    if dist.get_rank() == 0:
        dist.all_reduce(torch.ones(3))   # rank 1 never joins
    else:
        time.sleep(60)


WORKERS = {"collectives": worker_collectives,
           "collectives_quick": lambda: worker_collectives(quick=True),
           "rank_raises": worker_rank_raises,
           "timeout": worker_timeout}


# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------
@requires_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_collectives_on_real_processes(n):
    # Every dtype and shape on 2 ranks; the three main dtypes on 3 (a third
    # process on a 2-core machine makes each collective cost a time slice).
    assert_ok(run_mpi(n, __file__, "collectives" if n == 2 else "collectives_quick"), n)


@requires_mpi
def test_a_rank_that_raises_ends_the_job_with_a_clear_message():
    result = run_mpi(2, __file__, "rank_raises", timeout=60)
    assert result.returncode != 0
    assert "ValueError: rank one is broken" in result.stderr
    assert "rank 1 of 2 raised ValueError: rank one is broken; aborting all 2" in result.stderr
    assert "passed the all_reduce" not in result.stdout
    assert "APPLICATION TIMED OUT" not in result.stderr     # it ended itself: no launcher kill


@requires_mpi
def test_a_collective_that_nobody_joins_times_out():
    result = run_mpi(2, __file__, "timeout", timeout=60)
    assert result.returncode != 0
    assert "all_reduce timed out on rank 0 of 2" in result.stderr
    assert "APPLICATION TIMED OUT" not in result.stderr     # our timeout, not the launcher's


def test_not_initialized_and_unknown_backends():
    assert dist.is_available() and not dist.is_initialized()
    with pytest.raises(ValueError, match="has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="has not been initialized"):
        dist.all_reduce(torch.ones(1))
    with pytest.raises(RuntimeError, match="only the 'mpi' backend"):
        dist.init_process_group("gloo")
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group("carrier-pigeon")
    assert not dist.is_initialized()
    assert int(dist.ReduceOp.SUM) == 0 and dist.ReduceOp.AVG == dist.ReduceOp.RedOpType.AVG


@requires_mpi
def test_environment_that_disagrees_with_mpi_is_refused(monkeypatch):
    # This process is an MPI job of one (no launcher): WORLD_SIZE=2 is a mistake.
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    with pytest.raises(RuntimeError, match="WORLD_SIZE says the world size is 2.*mpiexec"):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()
    monkeypatch.setenv("WORLD_SIZE", "1")
    dist.init_process_group("mpi")
    try:
        assert (dist.get_rank(), dist.get_world_size()) == (0, 1)
        t = torch.tensor([1.5, 2.5])
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        assert t.tolist() == [1.5, 2.5]
    finally:
        dist.destroy_process_group()


# -- DistributedSampler: PyTorch's arithmetic ----------------------------------------
def _reference_split(perm: list, replicas: int, rank: int, drop_last: bool) -> list:
    """torch.utils.data.DistributedSampler's padding and striding, on a given order."""
    n = len(perm)
    if drop_last and n % replicas:
        num = math.ceil((n - replicas) / replicas)
    else:
        num = math.ceil(n / replicas)
    total = num * replicas
    idx = list(perm)
    if not drop_last:
        pad = total - n
        idx += idx[:pad] if pad <= n else (idx * math.ceil(pad / n))[:pad]
    else:
        idx = idx[:total]
    return idx[rank:total:replicas]


@pytest.mark.parametrize("n,replicas", [(10, 3), (2, 5), (7, 7), (9, 2), (1, 4)])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_splits_like_pytorch(n, replicas, drop_last):
    shares = []
    for rank in range(replicas):
        s = DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False,
                               drop_last=drop_last)
        got = list(s)
        assert got == _reference_split(list(range(n)), replicas, rank, drop_last)
        assert len(s) == len(got)
        shares.append(got)
    assert len({len(sh) for sh in shares}) == 1          # every rank runs the same steps
    if not drop_last:
        assert set().union(*map(set, shares)) == set(range(n))
    torch_dist = pytest.importorskip("torch.utils.data.distributed")
    for rank in range(replicas):
        want = list(torch_dist.DistributedSampler(range(n), num_replicas=replicas, rank=rank,
                                                  shuffle=False, drop_last=drop_last))
        assert shares[rank] == want


def test_distributed_sampler_shuffles_the_same_way_on_every_rank():
    n, replicas = 23, 3
    for epoch in (0, 1):
        g = torch.Generator()
        g.manual_seed(5 + epoch)
        perm = torch.randperm(n, generator=g).tolist()
        shares = []
        for rank in range(replicas):
            s = DistributedSampler(range(n), num_replicas=replicas, rank=rank, seed=5)
            s.set_epoch(epoch)
            shares.append(list(s))
            assert shares[-1] == _reference_split(perm, replicas, rank, False)
        assert set().union(*map(set, shares)) == set(range(n))
    s = DistributedSampler(range(n), num_replicas=2, rank=0, seed=5)
    first = list(s)
    assert list(s) == first                   # no set_epoch: the same order again
    s.set_epoch(1)
    assert list(s) != first


def test_distributed_sampler_checks_rank_and_feeds_a_dataloader():
    with pytest.raises(ValueError,
                       match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="has not been initialized"):
        DistributedSampler(range(4))
    ds = TensorDataset(torch.arange(10).float())
    loader = DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, 2, 1, shuffle=False))
    assert [b[0].tolist() for b in loader] == [[1.0, 3.0], [5.0, 7.0], [9.0]]


if __name__ == "__main__":
    WORKERS[sys.argv[1]]()

"""nn.parallel.DistributedDataParallel over real MPI processes.

The central check: training a DDP model for a few steps, each rank on its
slice of the batch, leaves exactly (to float tolerance) the parameters that
one process gets by training on the whole batch.  The reference runs inside
every worker, so each rank checks itself.
"""

from __future__ import annotations

import copy
import sys

import numpy as np
import pytest

import minitorch as torch
import minitorch.distributed as dist
from minitorch import nn

try:
    from mpi_helpers import MISSING, assert_ok, requires_mpi, run_mpi
except ImportError:          # run as an MPI worker from another directory
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from mpi_helpers import MISSING, assert_ok, requires_mpi, run_mpi

DDP = nn.parallel.DistributedDataParallel


class Branchy(nn.Module):
    """A model whose ``extra`` layer only some forwards use (find_unused_parameters)."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
        self.extra = nn.Linear(3, 3)
        self.register_buffer("seen", torch.zeros(2))

    def forward(self, x, use_extra=True):
        y = self.body(x)
        return self.extra(y) if use_extra else y


def _batches(steps: int, per_rank: int, world: int, seed: int):
    g = torch.Generator()
    g.manual_seed(seed)
    return [(torch.randn(per_rank * world, 4, generator=g),
             torch.randn(per_rank * world, 3, generator=g)) for _ in range(steps)]


def _assert_same_params(a: nn.Module, b: nn.Module, what: str, tol: float = 1e-5) -> None:
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        err = float((p.detach() - q.detach()).abs().max()) if p.numel() else 0.0
        assert err < tol, f"{what}: {name} differs from the single-process run by {err}"


def _assert_same_on_every_rank(model: nn.Module) -> None:
    for name, p in model.named_parameters():
        lo, hi = p.detach().clone(), p.detach().clone()
        dist.all_reduce(lo, op=dist.ReduceOp.MIN)
        dist.all_reduce(hi, op=dist.ReduceOp.MAX)
        assert bool((lo == hi).all()), f"{name} differs between ranks"


def _train_and_compare(r: int, w: int, what: str, ddp_kwargs: dict, use_extra=lambda s, k: True,
                       accumulate: int = 1) -> DDP:
    """Train a DDP model and a single-process reference on the same global batches.

    The reference loss is the mean over ranks (and micro-batches) of each
    slice's mean loss: exactly what averaging the gradients computes.
    """
    torch.manual_seed(0)
    ref = Branchy()
    model = copy.deepcopy(ref)
    if r > 0:                      # wrong start on the other ranks: DDP broadcasts rank 0's
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(-2.0).add_(float(r))
    ddp = DDP(model, **ddp_kwargs)
    assert ddp.module is model
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    B = 2
    for step, (x, y) in enumerate(_batches(3, B * accumulate, w, seed=step_seed(what))):
        opt.zero_grad()
        for k in range(accumulate):
            rows = slice((r * accumulate + k) * B, (r * accumulate + k + 1) * B)
            if k < accumulate - 1:
                with ddp.no_sync():
                    loss = ((ddp(x[rows], use_extra(step, r)) - y[rows]) ** 2).mean()
                    (loss / accumulate).backward()
            else:
                loss = ((ddp(x[rows], use_extra(step, r)) - y[rows]) ** 2).mean()
                (loss / accumulate).backward()
        opt.step()
        ref_opt.zero_grad()
        total = 0
        for rr in range(w):
            for k in range(accumulate):
                rows = slice((rr * accumulate + k) * B, (rr * accumulate + k + 1) * B)
                total = total + ((ref(x[rows], use_extra(step, rr)) - y[rows]) ** 2).mean()
        (total / (w * accumulate)).backward()
        ref_opt.step()
    _assert_same_params(model, ref, what)
    _assert_same_on_every_rank(model)
    return ddp


def step_seed(what: str) -> int:
    return sum(map(ord, what))


def worker_ddp() -> None:
    dist.init_process_group("mpi")
    r, w = dist.get_rank(), dist.get_world_size()

    # 1. default buckets; the DDP model equals one process on the global batch
    ddp = _train_and_compare(r, w, "default", {})
    assert len(ddp.reducer.buckets) == 1
    # 2. tiny buckets (one all-reduce per parameter), .grad as views of the buckets
    ddp = _train_and_compare(r, w, "buckets", {"bucket_cap_mb": 1e-5,
                                               "gradient_as_bucket_view": True})
    assert len(ddp.reducer.buckets) == 6         # one per parameter
    # 3. gradient accumulation with no_sync(): two local micro-batches, one all-reduce
    ddp = _train_and_compare(r, w, "no_sync", {"bucket_cap_mb": 1e-4}, accumulate=2)
    assert ddp._get_ddp_logging_data()["iterations"] == 3
    # 4. a layer that only rank 0 uses at step 1, and nobody at the other steps
    _train_and_compare(r, w, "unused", {"find_unused_parameters": True, "bucket_cap_mb": 1e-4},
                       use_extra=lambda step, rank: step == 1 and rank == 0)

    # 5. buffers: rank 0's at construction and again before every forward
    model = Branchy()
    model.seen.fill_(float(r))
    ddp = DDP(model)
    assert model.seen.tolist() == [0.0, 0.0]
    model.seen.fill_(float(r) + 5)
    ddp(torch.zeros(1, 4))
    assert model.seen.tolist() == [5.0, 5.0]
    ddp_local = DDP(Branchy(), broadcast_buffers=False)
    ddp_local.module.seen.fill_(float(r))
    ddp_local(torch.zeros(1, 4))
    assert ddp_local.module.seen.tolist() == [float(r)] * 2

    # 6. a parameter left out of the graph without find_unused_parameters: a clear error
    ddp = DDP(Branchy())
    ddp(torch.zeros(2, 4), use_extra=False).sum().backward()
    with pytest.raises(RuntimeError, match="Expected to have finished reduction.*extra.weight"):
        ddp(torch.zeros(2, 4))

    # 7. different models on different ranks: refused at construction, on every rank
    with pytest.raises(RuntimeError, match="DDP expects the same model on every rank"):
        DDP(nn.Linear(3, 2 + (r == w - 1)))
    dist.destroy_process_group()
    print(f"OK rank {r}", flush=True)


WORKERS = {"ddp": worker_ddp}


def _compile_kernels_here_first() -> None:
    """Train the reference model for a step in this process, before starting the ranks.

    On a fresh machine (an empty Numba cache, as in CI) this compiles the
    step's kernels once, and the ranks then load them from the disk cache.
    Otherwise every rank compiles the same kernels at the same moment, on a
    machine whose cores the ranks already share: with a second test worker
    beside it, that took 118 s of the job's 120.
    """
    ref = Branchy()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    (x, y), = _batches(1, 2, 1, seed=0)
    for use_extra in (True, False):
        opt.zero_grad()
        ((ref(x, use_extra) - y) ** 2).mean().backward()
        opt.step()


@requires_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_ddp_matches_one_process_on_the_global_batch(n):
    _compile_kernels_here_first()
    assert_ok(run_mpi(n, __file__, "ddp"), n)


# -- in one process (an MPI job of one): construction rules and error messages --------
@pytest.fixture
def world_of_one():
    if MISSING:
        pytest.skip(MISSING)
    dist.init_process_group("mpi")
    yield
    dist.destroy_process_group()


def test_ddp_needs_an_initialized_group():
    with pytest.raises(ValueError, match="has not been initialized"):
        DDP(nn.Linear(2, 2))


def test_ddp_construction_rules(world_of_one):
    frozen = nn.Linear(2, 2).requires_grad_(False)
    with pytest.raises(RuntimeError, match="doesn't have any parameter that requires a grad"):
        DDP(frozen)
    with pytest.raises(ValueError, match="device_ids and output_device arguments only work"):
        DDP(nn.Linear(2, 2), device_ids=[0])
    with pytest.raises(ValueError, match="device_ids can only be None or contain a single"):
        DDP(nn.Linear(2, 2), device_ids=[0, 1])
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    ddp = DDP(model)
    assert ddp.module is model and isinstance(ddp, nn.Module)
    assert list(ddp.state_dict()) == ["module." + k for k in model.state_dict()]
    assert nn.DistributedDataParallel is DDP


def test_bucket_assignment_follows_pytorch_rules():
    from minitorch.distributed.reducer import compute_bucket_assignment_by_size
    ts = [torch.zeros(10), torch.zeros(10), torch.zeros(5, dtype=torch.float64),
          torch.zeros(30), torch.zeros(1)]
    # A bucket closes once it reaches its limit; one dtype per bucket; sorted by first index.
    assert compute_bucket_assignment_by_size(ts, [80]) == [[0, 1], [2], [3], [4]]
    assert compute_bucket_assignment_by_size(ts, [40, 1000]) == [[0], [1, 3, 4], [2]]
    with pytest.raises(ValueError, match="positive"):
        compute_bucket_assignment_by_size(ts, [0])


def test_ddp_in_one_process_trains_like_the_module(world_of_one):
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    ref = copy.deepcopy(model)
    ddp = DDP(model, bucket_cap_mb=1e-5)
    x, y = torch.randn(5, 3), torch.randn(5, 2)
    for net in (ddp, ref):
        ((net(x) - y) ** 2).mean().backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)
    with ddp.no_sync():              # accumulate without communicating
        ((ddp(x) - y) ** 2).mean().backward()
    ((ref(x) - y) ** 2).mean().backward()
    ((ddp(x) - y) ** 2).mean().backward()
    ((ref(x) - y) ** 2).mean().backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)
    with torch.no_grad():            # evaluation: no reduction is armed
        ddp(x)
    assert ddp._get_ddp_logging_data()["iterations"] == 2


if __name__ == "__main__":
    WORKERS[sys.argv[1]]()

"""Course module 5, training: optimizers, learning-rate schedules, batching and shuffling.

``minitorch course test 5.4`` runs the tests of one task.
"""

from __future__ import annotations

import pytest

import minitorch as torch
from minitorch.utils.data import BatchSampler, DataLoader, RandomSampler, SequentialSampler, \
    TensorDataset

pytestmark = pytest.mark.data


@pytest.mark.task("5.4")
def test_batch_sampler_groups_indices():
    assert list(BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)) == [
        [0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(SequentialSampler(range(7)), 3, drop_last=True)) == [
        [0, 1, 2], [3, 4, 5]]
    assert list(BatchSampler(SequentialSampler(range(6)), 3, drop_last=False)) == [
        [0, 1, 2], [3, 4, 5]]


@pytest.mark.task("5.4")
def test_data_loader_batches_in_order():
    x = torch.arange(10.0).reshape(5, 2)
    y = torch.arange(5)
    batches = list(DataLoader(TensorDataset(x, y), batch_size=2))
    assert [b[1].tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    assert batches[0][0].shape == (2, 2)
    assert len(DataLoader(TensorDataset(x, y), batch_size=2, drop_last=True)) == 2


@pytest.mark.task("5.5")
def test_random_sampler_is_a_fresh_permutation_each_epoch():
    g = torch.Generator().manual_seed(0)
    sampler = RandomSampler(range(20), generator=g)
    first, second = list(sampler), list(sampler)
    assert sorted(first) == list(range(20)) and sorted(second) == list(range(20))
    assert first != second
    assert first != list(range(20))


@pytest.mark.task("5.5")
def test_random_sampler_replacement_num_samples_and_seeding():
    g = torch.Generator().manual_seed(1)
    drawn = list(RandomSampler(range(5), replacement=True, num_samples=50, generator=g))
    assert len(drawn) == 50 and set(drawn) <= set(range(5))
    longer = list(RandomSampler(range(4), num_samples=10, generator=g))
    assert len(longer) == 10 and sorted(longer[:4]) == [0, 1, 2, 3]
    a = list(RandomSampler(range(10), generator=torch.Generator().manual_seed(3)))
    b = list(RandomSampler(range(10), generator=torch.Generator().manual_seed(3)))
    assert a == b
    torch.manual_seed(0)
    shuffled = [t.item() for (t,) in DataLoader(TensorDataset(torch.arange(8)), shuffle=True)]
    assert sorted(shuffled) == list(range(8)) and shuffled != list(range(8))


@pytest.mark.task("5.1")
def test_step_lr_multiplies_by_gamma_every_step_size_epochs():
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=1.0)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    rates = []
    for _ in range(6):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert rates == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    assert sched.get_last_lr() == [0.125]

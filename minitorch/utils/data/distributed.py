"""``DistributedSampler``: each rank reads its own, disjoint share of the dataset.

Data parallelism only helps if the ranks see *different* examples: with a
plain ``DataLoader(shuffle=True)`` every rank would draw its own permutation
of the whole dataset, the slices would overlap, and an epoch would cost
``world_size`` times more work for the same information.  A
``DistributedSampler`` makes every rank draw the *same* permutation (seeded
with ``seed + epoch``), then keeps every ``num_replicas``-th index starting at
its rank: rank 0 of 2 gets positions 0, 2, 4, ..., rank 1 gets 1, 3, 5, ...

For the ranks to stay in step (every rank must run the same number of
synchronized steps), each gets exactly ``num_samples`` indices: the
permutation is padded by repeating its first indices (``drop_last=False``)
or cut (``drop_last=True``) to a multiple of ``num_replicas``.  The
arithmetic is PyTorch's, line for line.

Call ``sampler.set_epoch(epoch)`` before each epoch, or every epoch repeats
the first one's order.

>>> from minitorch.utils.data.distributed import DistributedSampler
>>> list(DistributedSampler(range(5), num_replicas=2, rank=0, shuffle=False))
[0, 2, 4]
>>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
[1, 3, 0]
>>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False, drop_last=True))
[1, 3]
"""

from __future__ import annotations

import math
from typing import Any, Iterator

from ...distributed.process_group import get_rank, get_world_size
from ...ops.sampling import randperm
from ...random import Generator
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Indices of this rank's share of ``dataset`` (see the module doc).

    ``num_replicas`` and ``rank`` default to the world size and rank of the
    initialized default process group; ``seed`` must be the same on every rank.
    """

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            num_replicas = get_world_size()
        if rank is None:
            rank = get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            # Cut to the nearest length that splits evenly.
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas)
                                         / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        if self.shuffle:
            # The same permutation on every rank: same seed, same epoch.
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            # Pad with the first indices (repeated if needed) to split evenly.
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(f"Number of indices ({len(indices)}) does not match "
                                 f"total_size ({self.total_size})")
        indices = indices[self.rank:self.total_size:self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(f"Number of subsampled indices ({len(indices)}) does not "
                                 f"match num_samples ({self.num_samples})")
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use the permutation of ``epoch`` next (call it at the start of each epoch)."""
        self.epoch = epoch

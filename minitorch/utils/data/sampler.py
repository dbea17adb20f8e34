"""Samplers decide the order in which a DataLoader visits a dataset."""

from __future__ import annotations

from typing import Any, Iterator, Sequence
from ...dtype import float64
from ...ops.creation import as_tensor
from ...ops.sampling import multinomial, randint, randperm

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


class Sampler:
    """Yields dataset indices."""

    def __init__(self, data_source: Any = None) -> None:
        pass

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError  # abstract: samplers define the order


class SequentialSampler(Sampler):
    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A fresh random permutation every epoch (or draws with replacement)."""

    def __init__(self, data_source: Any, replacement: bool = False,
                 num_samples: int | None = None, generator: Any = None) -> None:
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        """The indices of one epoch, in random order.

        Returns:
            An iterator over ``num_samples`` indices in ``range(len(data_source))``.
            Without replacement: a fresh random permutation of all the indices
            each time ``__iter__`` is called (when ``num_samples`` is larger than
            the dataset, permutations follow each other until there are enough).
            With replacement: ``num_samples`` independent uniform draws.  Random
            numbers come from ``self.generator`` (a ``torch.Generator``) or, when
            it is ``None``, from the global generator (``ops.sampling``'s
            ``randperm``/``randint`` take ``generator=``).

        Example: with ``torch.manual_seed(0)``, ``list(RandomSampler(range(4)))``
        might be ``[2, 0, 3, 1]``, and the next epoch another order.
        """
        # Task 5.5: the indices of one epoch in random order, drawn from the sampler's
        # generator: a fresh permutation each epoch, or draws with replacement.
        ### BEGIN SOLUTION
        n = len(self.data_source)
        if self.replacement:
            return iter(randint(0, n, (self.num_samples,), generator=self.generator).tolist())
        out = []
        while len(out) < self.num_samples:
            out.extend(randperm(n, generator=self.generator).tolist())
        return iter(out[:self.num_samples])
        ### END SOLUTION

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices[i] for i in randperm(len(self.indices),
                                                      generator=self.generator).tolist())

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        self.weights = as_tensor(weights, dtype=float64)
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator

    def __iter__(self) -> Iterator[int]:
        return iter(multinomial(self.weights, self.num_samples, self.replacement,
                                generator=self.generator).tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of ``batch_size``."""

    def __init__(self, sampler: Any, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list]:
        """The batches of one epoch: lists of the sampler's indices.

        Returns:
            An iterator (a generator is fine) over lists of ``batch_size``
            consecutive indices from ``self.sampler``, in its order; the last
            list is shorter when the indices run out, and left out when
            ``drop_last``.  The sampler is iterated once per epoch.

        Example: ``list(BatchSampler(range(5), 2, drop_last=False))`` is
        ``[[0, 1], [2, 3], [4]]``.
        """
        # Task 5.4: group the sampler's indices, in order, into lists of batch_size (the
        # last one shorter, or dropped with drop_last).
        ### BEGIN SOLUTION
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch
        ### END SOLUTION

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

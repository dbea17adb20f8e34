"""``DataLoader``: batches of samples, collated into tensors.

For each batch the loader takes a list of indices from its batch sampler,
fetches those samples from the dataset, and *collates* them: a list of
``(image, label)`` pairs becomes a pair ``(images, labels)`` of stacked
tensors.  Collation recurses through tuples, lists and dicts like PyTorch's
``default_collate``.  Loading runs in the main process (``num_workers`` is
accepted and ignored; see docs/differences.md).
"""

from __future__ import annotations

import collections.abc
from typing import Any, Callable, Iterator

import numpy as np

from ...dtype import float64, int64
from ...ops.creation import as_tensor, from_numpy, tensor
from ...ops.views import stack
from ...tensor import Tensor
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert"]


def default_convert(data: Any) -> Any:
    if isinstance(data, np.ndarray):
        return from_numpy(data)
    if isinstance(data, collections.abc.Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(d) for d in data]
    return data


def default_collate(batch: list) -> Any:
    """Stack a list of samples into a batch (tensors, numbers, arrays, tuples, dicts)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "USO":
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, "
                            f"numbers, dicts or lists; found {elem.dtype}")
        return stack([from_numpy(np.ascontiguousarray(b)) for b in batch], 0)
    if isinstance(elem, np.generic):
        return as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return tensor(batch)
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, int):
        return tensor(batch, dtype=int64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return type(elem)({key: default_collate([d[key] for d in batch]) for key in elem}) \
            if not isinstance(elem, dict) or type(elem) is dict else \
            {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        return [default_collate(samples) for samples in transposed]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                    f"or lists; found {type(elem)}")


class DataLoader:
    """Iterate over a dataset in (optionally shuffled) batches."""

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Any = None,
                 multiprocessing_context: Any = None, generator: Any = None, *,
                 prefetch_factor: Any = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        self.dataset = dataset
        self.num_workers = num_workers
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 "option")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else \
                SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_size is not None or batch_sampler is not None \
                else default_convert
        self.collate_fn = collate_fn

    def __iter__(self) -> Iterator[Any]:
        """One epoch of a map-style dataset: its batches (or samples), collated.

        Yields:
            With a batch sampler (``self.batch_sampler``, made from ``batch_size``
            or given): for each list of indices it yields, the collated batch of
            those samples, ``self.collate_fn(samples)``.  A dataset with a
            ``__getitems__(indices)`` method fetches a whole batch at once with it;
            otherwise ``dataset[i]`` for each index.  Without one
            (``batch_size=None``): ``self.collate_fn(dataset[i])`` for each index of
            ``self.sampler`` (no batching).

        Example: ``list(DataLoader(TensorDataset(arange(3)), batch_sampler=[[2, 0], [1]]))``
        is ``[[tensor([2, 0])], [tensor([1])]]``.
        """
        if self._iterable:
            yield from self._iter_stream()
            return
        # Task 5.7: the loader's epoch: each batch of indices from the batch sampler fetched
        # (at once when the dataset can) and collated, or each index alone without batching.
        ### BEGIN SOLUTION
        if self.batch_sampler is None:
            for idx in self.sampler:
                yield self.collate_fn(self.dataset[idx])
            return
        fetch_many = getattr(self.dataset, "__getitems__", None)
        for indices in self.batch_sampler:
            samples = fetch_many(indices) if fetch_many else [self.dataset[i] for i in indices]
            yield self.collate_fn(samples)
        ### END SOLUTION

    def _iter_stream(self) -> Iterator[Any]:
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        # The stream is grouped as a batch sampler groups indices (course task 5.4).
        for batch in BatchSampler(self.dataset, self.batch_size, self.drop_last):
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)

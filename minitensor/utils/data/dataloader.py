"""``DataLoader``: iterate over a dataset in batches, as PyTorch's.

>>> import minitensor as mt
>>> _ = mt.manual_seed(0)
>>> loader = DataLoader(list(range(10)), batch_size=4, shuffle=True, drop_last=True)
>>> [batch.shape for batch in loader]
[(4,), (4,)]

Batches are loaded in this process.  ``num_workers`` > 0 is accepted so that
PyTorch scripts run unchanged, with a warning: minitensor starts no worker
processes (the batches are the same, only not loaded in parallel).
``pin_memory`` is accepted and ignored (there is no GPU to pin memory for).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator

from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


def get_worker_info() -> None:
    """None: minitensor has no worker processes (PyTorch's answer in the main process)."""
    return None


class DataLoader:
    """Batches of ``dataset``, in order or shuffled.

    Args:
        dataset: a map-style dataset (``__getitem__``/``__len__``) or an ``IterableDataset``.
        batch_size: samples per batch; None yields single samples (converted, not collated).
        shuffle: visit in a random order each epoch (a ``RandomSampler``).
        sampler: an iterable of indices (excludes ``shuffle``).
        batch_sampler: an iterable of lists of indices (excludes ``batch_size``,
            ``shuffle``, ``sampler``, ``drop_last``).
        num_workers: accepted for compatibility; loading always happens in this process.
        collate_fn: list of samples -> batch (default: ``default_collate``).
        pin_memory: ignored (no GPU).
        drop_last: drop the last batch if it is smaller than ``batch_size``.
        generator: the ``mt.Generator`` of the shuffling sampler.
    """

    def __init__(
        self,
        dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler=None,
        batch_sampler=None,
        num_workers: int = 0,
        collate_fn: Callable | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable | None = None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"DataLoader: num_workers must be a non-negative int, got {num_workers!r}")
        if num_workers == 0 and (prefetch_factor is not None or persistent_workers):
            raise ValueError("DataLoader: prefetch_factor and persistent_workers need num_workers > 0 (as in PyTorch)")
        if num_workers > 0:
            warnings.warn(
                f"DataLoader: num_workers={num_workers} is accepted, but minitensor loads batches in the main "
                "process (no worker processes; the batches are the same)",
                UserWarning,
                stacklevel=2,
            )
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.num_workers, self.pin_memory, self.generator = num_workers, pin_memory, generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle or sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader: an IterableDataset takes no shuffle, sampler or batch_sampler")
        elif batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "DataLoader: batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                    "and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "DataLoader: batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
            )
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_size is not None or batch_sampler is not None else default_convert
        self.collate_fn = collate_fn

    def __iter__(self) -> Iterator:
        if self._iterable:
            yield from self._iter_stream()
        elif self.batch_sampler is not None:
            for indices in self.batch_sampler:
                yield self.collate_fn(self._fetch(indices))
        else:
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])

    def _fetch(self, indices: list) -> list:
        getitems = getattr(self.dataset, "__getitems__", None)
        return getitems(indices) if getitems is not None else [self.dataset[i] for i in indices]

    def _iter_stream(self) -> Iterator:
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)  # TypeError if the stream has no length, as in PyTorch
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler) if self.batch_sampler is not None else len(self.sampler)

"""Samplers: the order in which a ``DataLoader`` visits a map-style dataset.

A sampler is an iterable of indices (``BatchSampler``: of lists of indices).
``RandomSampler`` draws a fresh seed from minitensor's default generator at the
start of each pass, so ``mt.manual_seed`` makes every epoch's order reproducible
(as in PyTorch), unless a ``generator`` of its own is given.

>>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from ... import random, sampling
from ...tensor import Tensor


class Sampler:
    """Base class: subclasses define ``__iter__`` (and usually ``__len__``)."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _pass_generator(generator) -> random.Generator:
    """The generator of one pass: ``generator``, or one seeded from the default generator."""
    if generator is not None:
        return generator
    seed = int(random.generator().integers(0, 2**63))
    return random.Generator().manual_seed(seed)


class RandomSampler(Sampler):
    """A random order: a permutation (or, with ``replacement``, independent draws).

    Args:
        data_source: the dataset (only its length is used).
        replacement: draw indices with replacement.
        num_samples: how many indices per pass (default: ``len(data_source)``).
        generator: a ``mt.Generator``; by default each pass seeds a new one from the default generator.
    """

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None, generator=None) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement must be a bool, got {type(replacement).__name__}")
        self.data_source, self.replacement, self._num_samples, self.generator = (
            data_source,
            replacement,
            num_samples,
            generator,
        )
        if isinstance(self.num_samples, bool) or not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"RandomSampler: num_samples must be a positive int, got {self.num_samples!r}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, generator = len(self.data_source), _pass_generator(self.generator)
        if self.replacement:  # in chunks of 32, as PyTorch: num_samples may be huge (minGPT passes 1e10)
            for _ in range(self.num_samples // 32):
                yield from sampling.randint(0, n, (32,), generator=generator).tolist()
            yield from sampling.randint(0, n, (self.num_samples % 32,), generator=generator).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from sampling.randperm(n, generator=generator).tolist()
        yield from sampling.randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (a new one each pass)."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        for i in sampling.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probability proportional to ``weights`` (one weight per sample)."""

    def __init__(self, weights, num_samples: int, replacement: bool = True, generator=None) -> None:
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
            raise ValueError(f"WeightedRandomSampler: num_samples must be a positive int, got {num_samples!r}")
        if not isinstance(replacement, bool):
            raise ValueError(f"WeightedRandomSampler: replacement must be a bool, got {replacement!r}")
        weights = np.asarray(weights, dtype=np.float64)
        if weights.ndim != 1:
            raise ValueError(f"WeightedRandomSampler: weights must be a sequence of numbers, got shape {weights.shape}")
        self.weights = Tensor(weights, dtype=np.float64)
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator

    def __iter__(self) -> Iterator[int]:
        drawn = sampling.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size`` (the last may be shorter unless ``drop_last``)."""

    def __init__(self, sampler: Sampler | Iterable[int], batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
            raise ValueError(f"BatchSampler: batch_size must be a positive int, got {batch_size!r}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"BatchSampler: drop_last must be a bool, got {drop_last!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, int(batch_size), drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return -(-len(self.sampler) // self.batch_size)

# ruff: noqa: F401  (this file re-exports)
"""Datasets and data loaders, as PyTorch's ``torch.utils.data``.

- ``dataset.py``: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``Subset``,
  ``ConcatDataset``, ``random_split``;
- ``sampler.py``: the orders in which a loader visits a dataset
  (``SequentialSampler``, ``RandomSampler``, ``SubsetRandomSampler``, ``WeightedRandomSampler``,
  ``BatchSampler``);
- ``collate.py``: ``default_collate`` (a list of samples -> one batch);
- ``dataloader.py``: ``DataLoader`` (batches, shuffling; loads in this process), ``get_worker_info``.

>>> import minitensor as mt
>>> from minitensor.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(mt.arange(10.0).reshape(5, 2), mt.arange(5))
>>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
[[0, 1], [2, 3], [4]]
"""

from .collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

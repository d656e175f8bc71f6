"""``default_collate``: turn a list of samples into one batch, as PyTorch does.

Applied recursively to the structure of the first sample:

- Tensors are stacked along a new dim 0; NumPy arrays too (as Tensors; arrays of strings or
  objects raise TypeError, as in PyTorch);
- Python floats become a float64 Tensor, ints an int64 Tensor, bools a bool Tensor, NumPy
  scalars a Tensor of their dtype;
- strings and bytes (NumPy's ``np.str_`` and ``np.bytes_`` too) stay a list;
- a dict gives a dict of batches, a namedtuple a namedtuple, a tuple or a list a
  *list* of batches (one per position; all samples must have the same length).

>>> import minitensor as mt
>>> batch = default_collate([(mt.tensor([1.0, 2.0]), 0), (mt.tensor([3.0, 4.0]), 1)])
>>> [b.tolist() for b in batch]
[[[1.0, 2.0], [3.0, 4.0]], [0, 1]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ... import dtypes
from ...ops.shape import stack
from ...tensor import Tensor


def default_collate(batch: list):
    """One batch from a list of samples (see the module docstring)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, (str, bytes)):  # (before NumPy scalars: np.str_ is a str)
        return batch
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "SUOaV":
            raise TypeError(
                "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                f"found an array of dtype {elem.dtype}"
            )
        return stack([Tensor(b, dtype=b.dtype) for b in batch], 0)
    if isinstance(elem, np.generic):
        return Tensor(np.array(batch), dtype=elem.dtype)
    if isinstance(elem, float):
        return Tensor(batch, dtype=dtypes.float64)
    if isinstance(elem, int):  # also bool
        return Tensor(batch)
    if isinstance(elem, Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated)
        except TypeError:  # a Mapping type that cannot be built from a dict
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, Sequence):
        if any(len(sample) != len(elem) for sample in batch):
            raise RuntimeError("default_collate: each element in list of batch should be of equal size")
        return [default_collate(samples) for samples in zip(*batch)]
    raise TypeError(
        "default_collate: batch must contain Tensors, NumPy arrays, numbers, dicts or lists; "
        f"found {type(elem).__name__}"
    )


def default_convert(data):
    """NumPy arrays (also inside dicts, tuples, lists) become Tensors; a tuple becomes a list (as
    PyTorch's, whose DataLoader with ``batch_size=None`` yields lists); everything else stays as it is."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "SUOa":
        return Tensor(data, dtype=data.dtype)
    if isinstance(data, Mapping):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return [default_convert(d) for d in data]
    return data

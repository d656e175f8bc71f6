"""``topk``: the k largest (or smallest) values along a dim and their indices.

The values are ``input`` gathered at the indices (``ops/indexing.py``), so
each gets the gradient of its place; the indices are int64 and carry none.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .indexing import gather

_PARTITION_FROM = 256  # elements along dim: below, one stable sort is faster than the partition's steps
TopkResult = namedtuple("topk", ["values", "indices"])


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
    """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) elements along ``dim``.

    Ties are ordered by index.  ``sorted=False`` still returns them sorted (allowed by PyTorch).
    """
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise TypeError(f"topk: k must be an int, got {type(k).__name__}")
    d = _dim(dim, input.ndim)
    size = input.shape[d] if input.ndim else 1
    if not 0 <= k <= size:
        raise ValueError(f"topk: k out of range: expected a value in [0, {size}] (size of dim {d}), got {k}")
    x = input.reshape(1) if input.ndim == 0 else input
    keys = -x._data if largest else x._data
    if x.dtype.kind == "f":  # NaN counts as the largest value, as PyTorch
        keys = np.where(np.isnan(x._data), -np.inf if largest else np.inf, keys)
    select = _smallest if size >= _PARTITION_FROM else _smallest_by_sorting  # (a dozen NumPy calls)
    index = select(keys, k, d).astype(np.int64, copy=False)
    values = gather(x, d, Tensor._make(index, False, None))
    if input.ndim == 0:
        return TopkResult(values.reshape(()), Tensor._make(index.reshape(()), False, None))
    return TopkResult(values, Tensor._make(index, False, None))


def _smallest(keys: np.ndarray, k: int, d: int) -> np.ndarray:
    """Indices of the ``k`` smallest keys along ``d``, sorted by key, ties by index: the first ``k``
    of a stable argsort, found without sorting everything (``_smallest_by_sorting`` is the reference).

    The k-th smallest key ``t`` (``np.partition``, linear time) splits each row: every key below
    ``t`` is in, and of the keys equal to ``t`` the first ones by index, as many as are missing.
    ``np.nonzero`` then lists the chosen positions in index order, and a stable sort of their k
    keys puts them in order.
    """
    if not 0 < k < keys.shape[d]:
        return _smallest_by_sorting(keys, k, d)
    t = np.take(np.partition(keys, k - 1, axis=d), [k - 1], axis=d)
    below, tied = keys < t, keys == t
    missing = k - np.sum(below, axis=d, keepdims=True)
    if np.array_equal(np.sum(tied, axis=d, keepdims=True), missing):  # no tie beyond the k-th: all in
        chosen = below | tied
    else:
        chosen = below | (tied & (np.cumsum(tied, axis=d) <= missing))
    last = np.moveaxis(chosen, d, -1)  # (np.nonzero lists positions row by row, in index order)
    positions = np.moveaxis(np.nonzero(last)[-1].reshape(last.shape[:-1] + (k,)), -1, d)
    order = np.argsort(np.take_along_axis(keys, positions, axis=d), axis=d, kind="stable")
    return np.take_along_axis(positions, order, axis=d)


def _smallest_by_sorting(keys: np.ndarray, k: int, d: int) -> np.ndarray:
    """Reference: the first ``k`` of a stable argsort along ``d``."""
    return np.take(np.argsort(keys, axis=d, kind="stable"), np.arange(k), axis=d)


from ..tensor import Tensor, _dim  # noqa: E402  (tensor.py imports this module)

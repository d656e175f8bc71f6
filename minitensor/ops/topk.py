"""``topk``: the k largest (or smallest) values along a dim and their indices.

The values are ``input`` taken at the indices (``TakeAlongDim``), so each
gets the gradient of its place; the indices are int64 and carry none.

Order (as PyTorch): by value, NaN above every number; values that rank equal
come in index order (PyTorch leaves the order of ties unspecified).  The
selection runs on rows (the dim moved last): a one-pass kernel for small k
(``kernels/topk.py``), ``np.partition`` for larger k (``_by_partition``).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .._args import _dim
from ..kernels.topk import SMALL_K, first_of_stable_sort, topk_indices
from ..tensor import Tensor
from .reduce import TakeAlongDim

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
    moved = d != x.ndim - 1
    last = np.moveaxis(x._data, d, -1) if moved else x._data
    rows = last.reshape(math.prod(last.shape[:-1]), size)  # (a copy when d was moved)
    index = _select(rows, int(k), largest).reshape(last.shape[:-1] + (k,))
    if moved:
        index = np.ascontiguousarray(np.moveaxis(index, -1, d))
    values = TakeAlongDim.apply(x, index=index, dim=d, keepdim=True)
    indices = Tensor._make(index.copy(), False, None)  # (values' backward keeps its own index)
    if input.ndim == 0:
        return TopkResult(values.reshape(()), indices.reshape(()))
    return TopkResult(values, indices)


def _select(rows: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """(rows, k) int64: the k best positions of each row, in PyTorch's order (module docstring)."""
    floats = rows.dtype.kind == "f"
    if floats and k <= SMALL_K:
        return topk_indices(rows, k, largest)
    if floats and np.isnan(rows).any():  # (partition keys cannot rank NaN above inf)
        return first_of_stable_sort(rows, k, largest)
    return _by_partition(rows, k, largest)


def _by_partition(rows: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """``_select`` for rows without NaN, found without sorting everything (the reference:
    ``first_of_stable_sort``).

    On keys that order the values ascending (negated for ``largest``), the k-th smallest key ``t``
    (``np.partition``, linear time) splits each row: every key below ``t`` is in, and of the keys
    equal to ``t`` the first ones by index, as many as are missing.  ``np.nonzero`` lists the chosen
    positions in index order, and a stable sort of their k keys puts them in order.
    """
    if k == 0:
        return np.empty((rows.shape[0], 0), np.int64)
    keys = rows if not largest else np.negative(rows) if rows.dtype.kind == "f" else np.invert(rows)
    t = np.partition(keys, k - 1, axis=1)[:, k - 1 : k]
    below, tied = keys < t, keys == t
    missing = k - np.sum(below, axis=1, keepdims=True)
    if np.array_equal(np.sum(tied, axis=1, keepdims=True), missing):  # no tie beyond the k-th: all in
        chosen = below | tied
    else:
        chosen = below | (tied & (np.cumsum(tied, axis=1) <= missing))
    positions = np.nonzero(chosen)[1].reshape(rows.shape[0], k)
    order = np.argsort(np.take_along_axis(keys, positions, axis=1), axis=1, kind="stable")
    return np.take_along_axis(positions, order, axis=1)

"""``topk``: the k largest (or smallest) values along a dim and their indices.

The values are ``input`` gathered at the indices (``ops/indexing.py``), so
each gets the gradient of its place; the indices are int64 and carry none.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .indexing import gather

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
    order = np.argsort(keys, axis=d, kind="stable")
    index = np.take(order, np.arange(k), axis=d).astype(np.int64, copy=False)
    values = gather(x, d, Tensor._make(index, False, None))
    if input.ndim == 0:
        return TopkResult(values.reshape(()), Tensor._make(index.reshape(()), False, None))
    return TopkResult(values, Tensor._make(index, False, None))


from ..tensor import Tensor, _dim  # noqa: E402  (tensor.py imports this module)

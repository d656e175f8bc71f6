"""``topk``: the k largest (or smallest) values along a dim and their indices.

The values are ``input`` taken at the indices (``TakeAlongDim``), so each
gets the gradient of its place; the indices are int64 and carry none.

Order (as PyTorch): by value, NaN above every number; values that rank equal
come in index order (PyTorch leaves the order of ties unspecified).  The
selection runs on rows (the dim moved last): ``backend.topk_indices``, a one-pass
kernel for small k, ``np.partition`` for larger k (``kernels/topk.py``).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .. import backend
from .._args import _dim
from ..autograd import batching
from ..tensor import Tensor
from .reduce import TakeAlongDim

TopkResult = namedtuple("topk", ["values", "indices"])


@batching.per_example
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
    index = backend.topk_indices(rows, int(k), largest).reshape(last.shape[:-1] + (k,))
    if moved:
        index = np.ascontiguousarray(np.moveaxis(index, -1, d))
    values = TakeAlongDim.apply(x, index=index, dim=d, keepdim=True)
    indices = Tensor._make(index.copy(), False, None)  # (values' backward keeps its own index)
    if input.ndim == 0:
        return TopkResult(values.reshape(()), indices.reshape(()))
    return TopkResult(values, indices)

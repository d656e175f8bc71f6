"""Sorting: ``sort``, ``argsort``, ``msort``, ``unique`` and ``unique_consecutive``.

``sort`` returns the values and their indices along a dim.  The values are ``input``
taken at the indices (``TakeAlongDim``), so each gets the gradient of the place it
came from; the indices are int64 and carry none.  Order as PyTorch: NaN above every
number, and equal values keep their index order (a stable sort, which PyTorch's CPU
sort is; ``stable=True`` asks for it explicitly).

``unique`` is not differentiable (nor is PyTorch's): it returns the sorted distinct
values (each NaN distinct, as PyTorch's), and optionally where each input element went and how
many there were.  ``unique_consecutive`` collapses only runs of equal neighbours, in order.

>>> mt.tensor([3.0, 1.0, 2.0]).sort()
sort(values=tensor([1., 2., 3.]), indices=tensor([1, 2, 0]))
>>> mt.tensor([1, 3, 1, 2]).unique(return_counts=True)
(tensor([1, 2, 3]), tensor([2, 1, 1]))
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

SortResult = namedtuple("sort", ["values", "indices"])


def _order(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """int64 indices that sort ``x`` along ``dim`` stably (NaN largest), shaped like ``x``."""
    last = np.moveaxis(x, dim, -1)
    rows = last.reshape(math.prod(last.shape[:-1]), last.shape[-1])
    if rows.dtype == np.bool_:
        rows = rows.view(np.uint8)
    order = backend.first_of_stable_sort(rows, rows.shape[1], largest=descending).reshape(last.shape)
    return np.ascontiguousarray(np.moveaxis(order, -1, dim)).astype(np.int64, copy=False)


@batching.per_example
def sort(input, dim: int = -1, descending: bool = False, stable: bool = False):  # noqa: A002  (PyTorch's names)
    """``(values, indices)`` of ``input`` sorted along ``dim`` (ascending unless ``descending``).

    Equal values keep their index order whatever ``stable`` says (see the module docstring).
    """
    _check_tensor(input, "sort")
    if input.ndim == 0:
        _dim(dim, 0)
        return SortResult(input.clone(), Tensor._make(np.zeros((), np.int64), False, None))
    d = _dim(dim, input.ndim)
    index = _order(input._data, d, bool(descending))
    values = TakeAlongDim.apply(input, index=index, dim=d, keepdim=True)
    return SortResult(values, Tensor._make(index.copy(), False, None))  # (values' backward keeps its own index)


@batching.per_example
def argsort(input, dim: int = -1, descending: bool = False, stable: bool = False):  # noqa: A002
    """The indices that sort ``input`` along ``dim`` (``sort(...).indices``)."""
    _check_tensor(input, "argsort")
    if input.ndim == 0:
        _dim(dim, 0)
        return Tensor._make(np.zeros((), np.int64), False, None)
    return Tensor._make(_order(input._data, _dim(dim, input.ndim), bool(descending)), False, None)


def msort(input):  # noqa: A002
    """``input`` sorted along dim 0 (the values of ``sort(input, dim=0)``)."""
    return sort(input, dim=0).values


def unique(input, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False, dim=None):  # noqa: A002
    """The distinct values of ``input`` (of its slices along ``dim``), sorted; with ``return_inverse``
    also the index of each element's value among them (shaped like ``input``, or ``(size of dim,)``),
    with ``return_counts`` how often each occurs.  Not differentiable.  ``sorted=False`` still sorts
    (as PyTorch's CPU ``unique``)."""
    _check_tensor(input, "unique")
    data = input._data
    if dim is None:
        values, inverse, counts = np.unique(data, return_inverse=True, return_counts=True, equal_nan=False)
        inverse = inverse.reshape(data.shape)
    else:
        d = _dim(dim, data.ndim)
        values, inverse, counts = np.unique(data, return_inverse=True, return_counts=True, axis=d)
        inverse = inverse.reshape(-1)
    out = [Tensor._make(values, False, None)]
    if return_inverse:
        out.append(Tensor._make(inverse.astype(np.int64, copy=False), False, None))
    if return_counts:
        out.append(Tensor._make(counts.astype(np.int64, copy=False), False, None))
    return out[0] if len(out) == 1 else tuple(out)


def unique_consecutive(input, return_inverse: bool = False, return_counts: bool = False, dim=None):  # noqa: A002
    """``input`` (flattened, or its slices along ``dim``) with each run of equal neighbours collapsed to
    one; with ``return_inverse`` the run of each element (input's shape, or ``(size of dim,)``), with
    ``return_counts`` each run's length.  Not differentiable."""
    _check_tensor(input, "unique_consecutive")
    data = input._data
    if dim is None:
        rows = data.reshape(-1, 1)
    else:
        d = _dim(dim, data.ndim)
        rows = np.moveaxis(data, d, 0).reshape(data.shape[d] if data.ndim else 1, -1)
    starts = np.ones(len(rows), dtype=bool)
    if len(rows) > 1:
        starts[1:] = np.any(rows[1:] != rows[:-1], axis=1)
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), len(rows)))
    if dim is None:
        values = data.reshape(-1)[starts]
        inverse = inverse.reshape(data.shape)
    else:
        values = np.take(data, np.flatnonzero(starts), axis=d)
    out = [Tensor._make(values, False, None)]
    if return_inverse:
        out.append(Tensor._make(inverse.astype(np.int64), False, None))
    if return_counts:
        out.append(Tensor._make(counts.astype(np.int64), False, None))
    return out[0] if len(out) == 1 else tuple(out)


def _check_tensor(input, fn: str) -> None:  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(input).__name__}")

"""Order statistics: ``kthvalue``, ``median``, ``nanmedian``, ``mode``, ``quantile``, ``nanquantile``.

All of them pick what a stable sort of the input would (``sort._order``: NaN above every number, equal
values in index order), so ties resolve as PyTorch's CPU kernels resolve them:

- ``kthvalue(k)``: the k-th smallest (k from 1), its index the k-th of the stable order;
- ``median``: the *lower* median (for an even count the smaller of the two middle values, as
  PyTorch; NumPy averages them); a slice holding NaN gives NaN and the index of its first NaN.
  ``nanmedian`` ignores NaN (all NaN: NaN);
- ``mode``: the most frequent value (the smallest among equally frequent ones) and the index of its
  *last* occurrence;
- ``quantile(q)``: the ``interpolation`` between the sorted values at ``q * (n - 1)``: 'linear',
  'lower', 'higher', 'midpoint' or 'nearest' (half to even); NaN if the slice holds one
  (``nanquantile``: over its other values).

Gradients: the value of ``kthvalue``/``median``/``mode`` along a dim is the input at its index
(``TakeAlongDim``: the whole gradient goes there); ``median()``/``nanmedian()`` of all elements
share it evenly among the elements equal to the result (PyTorch's rule); ``quantile`` is the sorted
values gathered and interpolated, so each of the two neighbours gets its weight's share.

>>> x = mt.tensor([[3.0, 1.0, 4.0, 1.0], [5.0, 9.0, 2.0, 6.0]])
>>> x.median(dim=1)
median(values=tensor([1., 5.]), indices=tensor([3, 0]))
>>> mt.quantile(x, mt.tensor([0.25, 0.5]), dim=1)
tensor([[1.  , 4.25],
        [2.  , 5.5 ]])
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import backend
from .._args import _dim
from ..autograd import batching
from ..autograd.function import Op
from ..tensor import Tensor
from .arguments import bool_arg, choice_arg, int_arg, tensor_input
from .indexing import Gather
from .reduce import TakeAlongDim
from .sort import sort

KthvalueResult = namedtuple("kthvalue", ["values", "indices"])
MedianResult = namedtuple("median", ["values", "indices"])
NanmedianResult = namedtuple("nanmedian", ["values", "indices"])
ModeResult = namedtuple("mode", ["values", "indices"])
INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _along(input, dim, fn: str) -> tuple:  # noqa: A002
    """(the input with at least one dim, the normalised dim) after the checks every reduction here shares."""
    tensor_input(input, fn)
    d = _dim(dim, input.ndim)
    x = input.reshape(1) if input.ndim == 0 else input
    if x.shape[d] == 0:
        raise ValueError(f"{fn}: cannot take it over dim {d}, of size 0 (input shape {input.shape})")
    return x, d


def _pick(input, x, d: int, rank: np.ndarray, keepdim: bool, result):  # noqa: A002
    """The values at sorted position ``rank`` (per slice, dim ``d`` kept) and their original indices."""
    index = _ranked_index(x._data, d, rank)
    values = TakeAlongDim.apply(x, index=index, dim=d, keepdim=keepdim or input.ndim == 0)
    indices = index if keepdim else np.squeeze(index, d)
    if input.ndim == 0:
        values, indices = values.reshape(()), indices.reshape(())
    return result(values, Tensor._make(np.array(indices, order="C"), False, None))


def _ranked_index(data: np.ndarray, d: int, rank: np.ndarray) -> np.ndarray:
    """The index that a stable sort of each slice along ``d`` (NaN last) puts at position ``rank`` (an
    int array shaped like ``data`` with dim ``d`` of size 1): ``take_along_axis(_order(data, d), rank, d)``,
    by partitions instead of a sort (O(n), ~20x faster at 512 a slice): the value ``v`` at the rank, then
    the first element equal to ``v``, or, in a slice with several, the one as many places after the first
    as the rank is after the count of smaller elements."""
    last = _dim_last(data, d)
    rows = last.reshape(-1, last.shape[-1])
    rows = rows.view(np.uint8) if rows.dtype == np.bool_ else rows
    ranks = _dim_last(rank, d).reshape(-1)
    v = _ranked_values(rows, ranks)[:, None]
    equal = rows == v
    nan = np.isnan(v[:, 0]) if rows.dtype.kind == "f" else np.zeros(len(rows), bool)
    if nan.any():  # NaN's rank: after every number, equal to every NaN
        equal[nan] = np.isnan(rows[nan])
    position = np.argmax(equal, axis=1)
    ties = np.flatnonzero(np.count_nonzero(equal, axis=1) > 1)
    if ties.size:  # (the rank among the equal ones: its distance from the count of smaller elements)
        smaller = np.where(nan[ties], (~np.isnan(rows[ties])).sum(1) if nan.any() else 0, (rows[ties] < v[ties]).sum(1))
        offset = (ranks[ties] - smaller)[:, None]
        position[ties] = np.argmax(np.cumsum(equal[ties], axis=1) > offset, axis=1)
    position = position.reshape(last.shape[:-1] + (1,))
    return position if d == data.ndim - 1 else np.moveaxis(position, -1, d)


def _dim_last(a: np.ndarray, d: int) -> np.ndarray:
    """``a`` with dim ``d`` moved last (``a`` itself when it is: NumPy's moveaxis costs ~3 µs)."""
    return a if d == a.ndim - 1 else np.moveaxis(a, d, -1)


def _ranked_values(rows: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Each row's value at sorted position ``ranks[i]`` (NaN last): one partition per distinct rank,
    of the rows that have it (NumPy's partition at several positions at once costs one pass each)."""
    if not ranks.size:
        return np.empty(0, rows.dtype)
    if (ranks == ranks[0]).all():  # (median's: one rank for all; np.unique costs ~4 µs)
        return np.partition(rows, ranks[0], axis=1)[:, ranks[0]]
    distinct = np.unique(ranks)
    values = np.empty(len(rows), rows.dtype)
    for r in distinct:
        which = ranks == r
        values[which] = np.partition(rows[which], r, axis=1)[:, r]
    return values


@batching.per_example  # (reads the values: under vmap, once per example)
def kthvalue(input, k: int, dim: int = -1, keepdim: bool = False):  # noqa: A002
    """``(values, indices)``: the ``k``-th smallest element (k from 1) along ``dim``."""
    x, d = _along(input, dim, "kthvalue")
    size = x.shape[d]
    k = int_arg(k, "kthvalue", "k")
    if not 1 <= k <= size:
        raise ValueError(f"kthvalue: k must be in [1, {size}] (the size of dim {d}), got {k}")
    shape = list(x.shape)
    shape[d] = 1
    return _pick(input, x, d, np.full(shape, k - 1, np.int64), keepdim, KthvalueResult)


def _median_rank(data: np.ndarray, d: int, ignore_nan: bool) -> np.ndarray:
    """The sorted position of the lower median of each slice (dim d kept): of all its values, or of
    its numbers (``ignore_nan``); a slice with NaN (median) takes the position of its first NaN."""
    size = data.shape[d]
    numbers = np.sum(~np.isnan(data), axis=d, keepdims=True) if data.dtype.kind == "f" else np.full(1, size)
    if ignore_nan:
        return np.maximum((numbers - 1) // 2, 0).astype(np.int64)
    return backend.where(numbers < size, numbers, (size - 1) // 2).astype(np.int64)


class SharedMedian(Op):
    """The lower median of all of x (``nan``: of its numbers; a NaN makes ``median`` NaN);  the gradient
    is shared evenly by the elements equal to it (NaN matching NaN), as PyTorch's."""

    @staticmethod
    def forward(ctx, x, ignore_nan=False):
        flat = x.reshape(-1)
        rank = _median_rank(flat, 0, ignore_nan)
        out = np.take(np.sort(flat), rank[0]) if flat.size else np.array(np.nan, x.dtype)
        out = np.asarray(out, dtype=x.dtype)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        x, out = getattr(x, "_data", x), getattr(out, "_data", out)  # (the mask is a constant)
        winners = (x == out) | (np.isnan(x) & np.isnan(out))
        return grad * (winners / np.sum(winners)).astype(x.dtype, copy=False)

    @staticmethod
    def jvp(ctx, dx):  # (the tangents of the elements equal to the median, averaged: PyTorch's evenly_read_jvp)
        x, out = getattr(ctx.inputs[0], "_data", ctx.inputs[0]), getattr(ctx.output, "_data", ctx.output)
        winners = (x == out) | (np.isnan(x) & np.isnan(out))
        return np.sum(dx * (winners / np.sum(winners)).astype(x.dtype, copy=False))


def _median(input, dim, keepdim: bool, ignore_nan: bool, fn: str, result):  # noqa: A002
    if dim is None:
        tensor_input(input, fn)
        if input.numel() == 0:
            raise ValueError(f"{fn}: cannot take the median of an empty tensor (shape {input.shape})")
        return SharedMedian.apply(input, ignore_nan=ignore_nan)
    x, d = _along(input, dim, fn)
    return _pick(input, x, d, _median_rank(x._data, d, ignore_nan), bool_arg(keepdim, fn, "keepdim"), result)


@batching.per_example  # (reads the values: under vmap, once per example)
def median(input, dim=None, keepdim: bool = False):  # noqa: A002
    """The lower median of all elements (a 0-d tensor), or ``(values, indices)`` along ``dim``."""
    return _median(input, dim, keepdim, False, "median", MedianResult)


@batching.per_example  # (reads the values: under vmap, once per example)
def nanmedian(input, dim=None, keepdim: bool = False):  # noqa: A002
    """``median`` of the elements that are not NaN."""
    return _median(input, dim, keepdim, True, "nanmedian", NanmedianResult)


@batching.per_example  # (reads the values: under vmap, once per example)
def mode(input, dim: int = -1, keepdim: bool = False):  # noqa: A002
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest of equally frequent ones)
    and the index of its last occurrence."""
    x, d = _along(input, dim, "mode")
    last = _dim_last(x._data, d)
    rows = last.reshape(-1, last.shape[-1])
    values = np.sort(rows, axis=1)  # (NaN last, each NaN a run of its own below: NaN != NaN)
    starts = np.ones(rows.shape, bool)
    starts[:, 1:] = values[:, 1:] != values[:, :-1]
    run = np.cumsum(starts.reshape(-1)) - 1  # each sorted element's run of equal values, numbered over all rows
    counts = np.bincount(run)
    first = np.argmax(counts[run].reshape(rows.shape), axis=1)  # the first element of the longest run
    mode_values = values[np.arange(len(rows)), first][:, None]
    # its index: the last element equal to it (the last of its run in the stable order); a NaN mode (a
    # slice of NaN only) the first NaN, where the stable order starts
    position = rows.shape[1] - 1 - np.argmax((rows == mode_values)[:, ::-1], axis=1)
    if rows.dtype.kind == "f" and np.isnan(mode_values).any():
        nan = np.isnan(mode_values[:, 0])
        position[nan] = np.argmax(np.isnan(rows[nan]), axis=1)
    index = np.moveaxis(position.reshape(last.shape[:-1] + (1,)), -1, d)
    values = TakeAlongDim.apply(x, index=index, dim=d, keepdim=keepdim or input.ndim == 0)
    indices = index if keepdim else np.squeeze(index, d)
    if input.ndim == 0:
        values, indices = values.reshape(()), indices.reshape(())
    return ModeResult(values, Tensor._make(np.array(indices, order="C"), False, None))


def _quantile(input, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool, fn: str):  # noqa: A002
    tensor_input(input, fn)
    if input.dtype.kind != "f":
        raise TypeError(f"{fn}: input must be a float32 or float64 tensor, got dtype {input.dtype}")
    choice_arg(interpolation, fn, "interpolation", INTERPOLATIONS)
    bool_arg(keepdim, fn, "keepdim")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise ValueError(f"{fn}: q must be a number or a 0-D or 1-D tensor, got shape {q.shape}")
        if q.dtype != input.dtype:
            raise TypeError(f"{fn}: q must have input's dtype {input.dtype}, got {q.dtype}")
        qs, scalar = q._data.reshape(-1).astype(np.float64), q.ndim == 0
    elif isinstance(q, (int, float)) and not isinstance(q, bool):
        qs, scalar = np.array([float(q)]), True
    else:
        raise TypeError(f"{fn}: q must be a number or a Tensor, got {type(q).__name__}")
    if qs.size and not np.all((qs >= 0) & (qs <= 1)):
        raise ValueError(f"{fn}: q values must be in the range [0, 1], got {qs.tolist()}")
    if input.numel() == 0:
        raise ValueError(f"{fn}: input must be a non-empty tensor, got shape {input.shape}")
    x = input.reshape(-1) if dim is None else (input.reshape(1) if input.ndim == 0 else input)
    d = 0 if dim is None else _dim(dim, input.ndim)
    moved = sort(x, dim=d).values
    moved = moved if d == moved.ndim - 1 else moved.permute(*[i for i in range(x.ndim) if i != d], d)
    size = moved.shape[-1]
    data = moved._data
    numbers = np.sum(~np.isnan(data), axis=-1, keepdims=True)  # (NaN sorts last)
    if ignore_nan:
        rank = qs * np.maximum(numbers - 1, 0)
        rank = backend.where(numbers == 0, size - 1, rank)
    else:
        rank = backend.where(numbers < size, size - 1, qs * (size - 1))
    below, above = np.floor(rank).astype(np.int64), np.ceil(rank).astype(np.int64)
    if interpolation == "nearest":
        below = above = np.round(rank).astype(np.int64)  # (half to even, as PyTorch's)
    elif interpolation == "lower":
        above = below
    elif interpolation == "higher":
        below = above
    low = Gather.apply(moved, Tensor._make(below, False, None), dim=moved.ndim - 1)
    out = low
    if interpolation in ("linear", "midpoint"):
        high = Gather.apply(moved, Tensor._make(above, False, None), dim=moved.ndim - 1)
        weight = (rank - below) if interpolation == "linear" else backend.where(above > below, 0.5, 0.0)
        out = low + Tensor._make(weight.astype(data.dtype), False, None) * (high - low)
    out = out.permute(out.ndim - 1, *range(out.ndim - 1))  # (q, *the other dims)
    if keepdim:
        kept = (1,) * input.ndim if dim is None else input.shape[:d] + (1,) + input.shape[d + 1 :]
        out = out.reshape((out.shape[0],) + kept)
    return out.reshape(out.shape[1:]) if scalar else out


@batching.per_example  # (reads the values: under vmap, once per example)
def quantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):  # noqa: A002
    """The ``q``-th quantiles (q a number, or a 1-D tensor: a leading dim of that size) of all elements or along
    ``dim``; NaN where a slice holds NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


@batching.per_example  # (reads the values: under vmap, once per example)
def nanquantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):  # noqa: A002
    """``quantile`` of the elements that are not NaN (NaN for a slice of NaN only)."""
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")

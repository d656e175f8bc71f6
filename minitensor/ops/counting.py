"""Counting and binning (none differentiable, as in PyTorch): ``bincount``, ``histc``, ``histogram``,
``searchsorted``, ``bucketize``.

- ``bincount(input, weights=None, minlength=0)``: how often each non-negative integer occurs (or the
  sum of its weights), int64 (the weights' dtype with weights);
- ``histc(input, bins=100, min=0, max=0)``: counts in ``bins`` equal bins over [min, max] (the data's
  range when min == max), elements outside ignored, in input's dtype;
- ``histogram(input, bins, *, range=None, weight=None, density=False)``: ``(hist, bin_edges)`` with
  ``bins`` a count or the edges (a 1-D tensor), NumPy's rule: bins closed on the left, the last on
  both sides;
- ``searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None)``:
  where each value would go to keep the sequence sorted (the last dim of an N-D sequence, one
  row per row of ``values``); ``bucketize(input, boundaries, *, out_int32=False, right=False)``:
  the same with the arguments the other way round and 1-D boundaries.

>>> mt.bincount(mt.tensor([0, 1, 1, 3]))
tensor([1, 2, 0, 1])
>>> mt.searchsorted(mt.tensor([1, 3, 5, 7]), mt.tensor([3, 6]))
tensor([1, 3])
"""

from __future__ import annotations

import builtins
from collections import namedtuple

import numpy as np

from ..autograd import batching
from ..tensor import Tensor
from .arguments import bool_arg, choice_arg, int_arg, number_arg, tensor_input

HistogramResult = namedtuple("histogram", ["hist", "bin_edges"])


def _constant(array, dtype=None) -> Tensor:
    return Tensor._make(np.asarray(array, dtype=dtype), False, None)


def bincount(input, weights=None, minlength: int = 0):  # noqa: A002
    """The number of occurrences of each value 0, 1, ... max(input) of a 1-D non-negative integer tensor
    (at least ``minlength`` bins); with ``weights`` (input's shape), the sum of the weights instead."""
    tensor_input(input, "bincount")
    if input.ndim != 1 or input.dtype.kind not in "iub":
        raise ValueError(f"bincount: input must be a 1-D tensor of integers, got shape {input.shape} and dtype "
                         f"{input.dtype}")  # fmt: skip
    minlength = int_arg(minlength, "bincount", "minlength", low=0)
    data = input._data.astype(np.int64)
    if data.size and data.min() < 0:
        raise ValueError(f"bincount: input must be non-negative, got a value {data.min()}")
    if weights is None:
        return _constant(np.bincount(data, minlength=minlength), np.int64)
    tensor_input(weights, "bincount", "weights")
    if weights.shape != input.shape:
        raise ValueError(f"bincount: weights must have input's shape {input.shape}, got {weights.shape}")
    dtype = weights.dtype if weights.dtype.kind == "f" else np.float64
    return _constant(np.bincount(data, weights._data.astype(np.float64), minlength=minlength), dtype)


@batching.per_example  # (reads the values: under vmap, once per example)
def histc(input, bins: int = 100, min=0, max=0):  # noqa: A002  (PyTorch's names)
    """Counts of the elements in ``bins`` equal bins between ``min`` and ``max`` (min == max: the data's
    smallest and largest values, widened by 1 on each side if they are equal too)."""
    tensor_input(input, "histc")
    if input.dtype.kind != "f":
        raise TypeError(f"histc: input must be a floating point tensor, got dtype {input.dtype}")
    bins = int_arg(bins, "histc", "bins", low=1)
    low, high = float(number_arg(min, "histc", "min")), float(number_arg(max, "histc", "max"))
    data = input._data.reshape(-1)
    if low == high and data.size:
        low, high = float(data.min()), float(data.max())
    if low == high:
        low, high = low - 1, high + 1
    if low > high:
        raise ValueError(f"histc: max must be larger than min, got min={min} and max={max}")
    counts, _ = np.histogram(data[~np.isnan(data)], bins=bins, range=(low, high))
    return _constant(counts, input.dtype)


def histogram(input, bins, *, range=None, weight=None, density: bool = False):  # noqa: A002
    """``(hist, bin_edges)`` of a float tensor: ``bins`` an int (equal bins over ``range``, default the
    data's) or a 1-D tensor of increasing edges; ``weight`` input's shape; ``density``: a density."""
    tensor_input(input, "histogram")
    if input.dtype.kind != "f":
        raise TypeError(f"histogram: input must be a floating point tensor, got dtype {input.dtype}")
    if isinstance(bins, Tensor):
        if bins.ndim != 1 or bins.numel() < 1:
            raise ValueError(f"histogram: bins must be an int or a 1-D tensor of edges, got shape {bins.shape}")
        edges = bins._data
    else:
        edges = int_arg(bins, "histogram", "bins", low=1)
    if range is not None:
        if not isinstance(range, (tuple, list)) or len(range) != 2:
            raise TypeError(f"histogram: range must be a pair (min, max), got {range!r}")
        range = tuple(float(number_arg(v, "histogram", "range")) for v in range)  # noqa: A001
    w = None
    if weight is not None:
        tensor_input(weight, "histogram", "weight")
        if weight.shape != input.shape:
            raise ValueError(f"histogram: weight must have input's shape {input.shape}, got {weight.shape}")
        w = weight._data.reshape(-1)
    hist, edges = np.histogram(input._data.reshape(-1), bins=edges, range=range, weights=w,
                               density=bool_arg(density, "histogram", "density"))  # fmt: skip
    return HistogramResult(_constant(hist, input.dtype), _constant(edges, input.dtype))


@batching.per_example  # (reads the values: under vmap, once per example)
def searchsorted(sorted_sequence, values, *, out_int32: bool = False, right: bool = False, side=None, sorter=None):
    """For each of ``values``, the index where it would be inserted in ``sorted_sequence`` (along its last
    dim) to keep it sorted: before equal elements, or after them with ``right=True`` / ``side='right'``."""
    tensor_input(sorted_sequence, "searchsorted", "sorted_sequence")
    right = bool_arg(right, "searchsorted", "right")
    if side is not None:
        choice_arg(side, "searchsorted", "side", ("left", "right"))
        if right and side == "left":
            raise ValueError("searchsorted: side='left' and right=True contradict each other")
        right = side == "right"
    sequence = sorted_sequence._data
    if sorter is not None:
        tensor_input(sorter, "searchsorted", "sorter")
        if sorter.shape != sorted_sequence.shape:
            raise ValueError(f"searchsorted: sorter must have sorted_sequence's shape {sorted_sequence.shape}, "
                             f"got {sorter.shape}")  # fmt: skip
        sequence = np.take_along_axis(sequence, sorter._data.astype(np.int64), axis=-1)
    scalar = not isinstance(values, Tensor)
    data = np.asarray(number_arg(values, "searchsorted", "values")) if scalar else values._data
    if sequence.ndim == 0:
        raise ValueError("searchsorted: sorted_sequence must have at least one dimension, got a 0-d tensor")
    side_name = "right" if right else "left"
    if sequence.ndim == 1:
        out = np.searchsorted(sequence, data, side=side_name)
    else:
        if data.ndim != sequence.ndim or data.shape[:-1] != sequence.shape[:-1]:
            raise ValueError(f"searchsorted: values must have sorted_sequence's leading dims {sequence.shape[:-1]}, "
                             f"got shape {data.shape}")  # fmt: skip
        rows, found = sequence.reshape(-1, sequence.shape[-1]), data.reshape(-1, data.shape[-1])
        out = np.stack([np.searchsorted(r, v, side=side_name) for r, v in zip(rows, found)]).reshape(data.shape)
    return _constant(out, np.int32 if bool_arg(out_int32, "searchsorted", "out_int32") else np.int64)


@batching.per_example  # (reads the values: under vmap, once per example)
def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False):  # noqa: A002
    """The bucket of each element among the 1-D increasing ``boundaries``: i with boundaries[i-1] < x <=
    boundaries[i] (``right=True``: boundaries[i-1] <= x < boundaries[i])."""
    tensor_input(boundaries, "bucketize", "boundaries")
    if boundaries.ndim != 1:
        raise ValueError(f"bucketize: boundaries must be 1-D, got shape {boundaries.shape}")
    if not isinstance(input, Tensor) and (isinstance(input, builtins.bool) or not isinstance(input, (int, float))):
        raise TypeError(f"bucketize: input must be a Tensor or a number, got {type(input).__name__}")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)

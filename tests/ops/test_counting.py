"""bincount, histc, histogram, searchsorted, bucketize (ops/counting.py): PyTorch's values and dtypes on edge
cases, and the argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")


def _same(ours, theirs):
    assert ours.shape == tuple(theirs.shape) and ours.numpy().dtype == theirs.numpy().dtype
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_bincount_weights_and_empty_input():
    _same(mt.bincount(mt.tensor([], dtype=mt.int64)), torch.bincount(torch.tensor([], dtype=torch.int64)))
    w = np.array([0.5, 1.0, 2.0])
    _same(mt.bincount(mt.tensor([2, 0, 2]), mt.tensor(w, dtype=mt.float64)),
          torch.bincount(torch.tensor([2, 0, 2]), torch.tensor(w)))  # fmt: skip
    with pytest.raises(ValueError, match="bincount: input must be non-negative, got a value -1"):
        mt.bincount(mt.tensor([1, -1]))
    with pytest.raises(ValueError, match="bincount: input must be a 1-D tensor of integers"):
        mt.bincount(mt.tensor([1.0]))


def test_histc_on_constant_data_and_outliers():
    for data, kwargs in (([2.0, 2.0], {"bins": 4}), ([1.0, 5.0, -3.0, 0.5], {"bins": 3, "min": 0, "max": 2})):
        _same(mt.histc(mt.tensor(data), **kwargs), torch.histc(torch.tensor(data), **kwargs))
    with pytest.raises(ValueError, match="histc: max must be larger than min"):
        mt.histc(mt.tensor([1.0]), min=2, max=1)


def test_histogram_edges_weights_and_density():
    data = np.array([0.0, 1.0, 1.0, 2.5, 4.0])
    ours = mt.histogram(mt.tensor(data, dtype=mt.float64), 4, range=(0.0, 4.0), density=True)
    theirs = torch.histogram(torch.tensor(data), 4, range=(0.0, 4.0), density=True)
    _same(ours.hist, theirs.hist)
    _same(ours.bin_edges, theirs.bin_edges)
    with pytest.raises(TypeError, match="histogram: range must be a pair"):
        mt.histogram(mt.tensor(data), 2, range=1.0)


def test_searchsorted_rows_sorter_and_sides():
    seq = np.array([[1.0, 3.0, 3.0, 7.0], [0.0, 2.0, 4.0, 4.0]])
    vals = np.array([[3.0, 8.0], [4.0, -1.0]])
    for kwargs in ({}, {"right": True}, {"side": "right"}, {"out_int32": True}):
        _same(mt.searchsorted(mt.tensor(seq), mt.tensor(vals), **kwargs),
              torch.searchsorted(torch.tensor(seq), torch.tensor(vals), **kwargs))  # fmt: skip
    unsorted = np.array([7.0, 1.0, 3.0])
    sorter = np.argsort(unsorted)
    _same(mt.searchsorted(mt.tensor(unsorted), mt.tensor([2.0]), sorter=mt.tensor(sorter)),
          torch.searchsorted(torch.tensor(unsorted), torch.tensor([2.0]), sorter=torch.tensor(sorter)))  # fmt: skip
    with pytest.raises(ValueError, match="side='left' and right=True contradict"):
        mt.searchsorted(mt.tensor(seq[0]), mt.tensor([1.0]), right=True, side="left")
    with pytest.raises(ValueError, match="values must have sorted_sequence's leading dims"):
        mt.searchsorted(mt.tensor(seq), mt.tensor([1.0]))


def test_bucketize_numbers_and_tensors():
    b = np.array([1.0, 3.0, 5.0])
    assert mt.bucketize(3, mt.tensor(b)).item() == torch.bucketize(3, torch.tensor(b)).item()
    _same(mt.bucketize(mt.tensor([[1.0, 5.0]]), mt.tensor(b), right=True),
          torch.bucketize(torch.tensor([[1.0, 5.0]]), torch.tensor(b), right=True))  # fmt: skip
    with pytest.raises(ValueError, match="bucketize: boundaries must be 1-D"):
        mt.bucketize(mt.tensor([1.0]), mt.ones(2, 2))

"""ops/topk.py: ``topk`` (function and method): the gradient of the values to second order against
PyTorch, the indices (ties in index order, NaN ranked above inf as PyTorch), integers and empty dims."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

X = np.random.default_rng(2).standard_normal((3, 4))


def test_topk_indices_changed_in_place_leave_the_gradient_alone():
    x = mt.tensor([[1.0, 5.0, 3.0]], requires_grad=True)
    values, indices = x.topk(1)
    indices.zero_()
    values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0]]


@pytest.mark.parametrize("k,dim,largest", [(1, -1, True), (3, 1, False), (2, 0, True), (4, -1, True)])
def test_topk(k, dim, largest):
    torch = pytest.importorskip("torch")
    check_op(lambda x: x.topk(k, dim, largest).values, lambda x: x.topk(k, dim, largest).values, X)
    values, indices = mt.topk(mt.tensor(X), k, dim=dim, largest=largest)
    expected = torch.tensor(X).topk(k, dim=dim, largest=largest)
    np.testing.assert_array_equal(indices.numpy(), expected.indices.numpy())
    assert indices.dtype == mt.int64
    with pytest.raises(ValueError, match="k out of range"):
        mt.topk(mt.tensor(X), 9, dim=dim)


@pytest.mark.parametrize("k", [7, 40])  # the kernel (small k), the partition
def test_topk_on_a_long_dim_keeps_ties_in_index_order(k) -> None:
    rng = np.random.default_rng(1)
    data = rng.integers(0, 20, (3, 400)).astype(np.float32)  # long rows, many ties
    for largest in (True, False):
        values, indices = mt.tensor(data).topk(k, dim=1, largest=largest)
        expected = np.argsort(-data if largest else data, axis=1, kind="stable")[:, :k]
        np.testing.assert_array_equal(indices.numpy(), expected)
        np.testing.assert_array_equal(values.numpy(), np.take_along_axis(data, expected, 1))


@pytest.mark.parametrize("k", [3, 20])
def test_topk_ranks_nan_above_inf_as_pytorch(k) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    data = rng.standard_normal((4, 30)).astype(np.float32)
    for r in range(4):  # one of each per row and per column: no ties (whose order PyTorch leaves open)
        data[r, 3 + r], data[r, 9 + r], data[r, 15 + r] = np.inf, np.nan, -np.inf
    for dim in (0, 1):
        kk = min(k, data.shape[dim])
        for largest in (True, False):
            values, indices = mt.tensor(data).topk(kk, dim=dim, largest=largest)
            expected = torch.tensor(data).topk(kk, dim=dim, largest=largest)
            np.testing.assert_array_equal(values.numpy(), expected.values.numpy())  # (NaN equals NaN here)
            np.testing.assert_array_equal(indices.numpy(), expected.indices.numpy())


def test_topk_of_integers_and_empty_dims() -> None:
    data = np.array([[3, -9, 7, 7, np.iinfo(np.int64).min], [0, 1, 2, 3, 4]], np.int64)
    for k in (2, 5):
        values, indices = mt.tensor(data).topk(k, largest=True)
        np.testing.assert_array_equal(indices.numpy(), np.argsort(-data.astype(float), 1, kind="stable")[:, :k])
        assert values.dtype == mt.int64
    values, indices = mt.zeros(0, 5).topk(2)
    assert values.shape == (0, 2) and indices.shape == (0, 2)
    values, indices = mt.zeros(3, 5).topk(0, dim=0)
    assert values.shape == (0, 5) and indices.dtype == mt.int64

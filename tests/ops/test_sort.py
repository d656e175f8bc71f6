"""ops/sort.py: ``sort``, ``argsort``, ``msort``, ``unique`` against PyTorch (values, indices, order of
ties and NaN), and the gradient of the sorted values to second order."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

torch = pytest.importorskip("torch")

DATA = [[3.0, 1.0, np.nan, 1.0, 2.0], [0.5, -1.0, 0.5, 7.0, -1.0]]


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_sort_and_argsort_equal_pytorchs_stable_sort(dim: int, descending: bool, dtype: str) -> None:
    data = np.nan_to_num(DATA, nan=5.0) if dtype in ("int64", "bool") else np.array(DATA)
    data = data > 1 if dtype == "bool" else data.astype(dtype)
    values, indices = mt.tensor(data).sort(dim=dim, descending=descending)
    expected = torch.tensor(data).sort(dim=dim, descending=descending, stable=True)
    np.testing.assert_array_equal(values.numpy(), expected.values.numpy())
    np.testing.assert_array_equal(indices.numpy(), expected.indices.numpy())
    np.testing.assert_array_equal(mt.tensor(data).argsort(dim, descending).numpy(), expected.indices.numpy())
    assert values.dtype == mt.tensor(data).dtype and indices.dtype == mt.int64


def test_sort_of_a_0d_tensor_and_msort() -> None:
    values, indices = mt.tensor(2.5).sort()
    assert values.item() == 2.5 and indices.item() == 0
    data = np.array([[3.0, 1.0], [2.0, 0.0], [1.0, 5.0]])
    np.testing.assert_array_equal(mt.msort(mt.tensor(data)).numpy(), torch.msort(torch.tensor(data)).numpy())


def test_sorted_values_have_the_gradient_of_their_place() -> None:
    rng = np.random.default_rng(0)
    x = rng.permutation(12).reshape(3, 4) + rng.uniform(0.1, 0.4, (3, 4))  # (no ties)
    check_op(lambda t: mt.sort(t, dim=1, descending=True).values, lambda t: torch.sort(t, 1, True).values, x)


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_unique_equals_pytorchs(dim) -> None:
    data = [[1, 2, 2], [1, 2, 2], [0, 5, 1]]
    got = mt.tensor(data).unique(return_inverse=True, return_counts=True, dim=dim)
    expected = torch.tensor(data).unique(return_inverse=True, return_counts=True, dim=dim)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g.numpy(), e.numpy())
    np.testing.assert_array_equal(mt.unique(mt.tensor(data)).numpy(), torch.unique(torch.tensor(data)).numpy())


def test_unique_is_not_differentiable() -> None:
    assert not mt.tensor([1.0, 1.0], requires_grad=True).unique().requires_grad

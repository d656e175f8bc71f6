"""ops/put.py: ``index_add``, ``index_put``, ``masked_scatter``, ``fill_diagonal_`` (and the in-place
forms) against PyTorch, with float64 gradients to second order; bad arguments raise clearly."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

torch = pytest.importorskip("torch")

INDEX = [0, 2, 0]
MASK = np.array([[True, False, True, False], [False, True, True, False], [True, False, False, True]])


def test_index_add_values_and_gradients() -> None:
    rng = np.random.default_rng(1)
    x, src = rng.standard_normal((3, 4)), rng.standard_normal((3, 3))
    check_op(
        lambda a, s: a.index_add(1, mt.tensor(INDEX), s, alpha=2.0),
        lambda a, s: a.index_add(1, torch.tensor(INDEX), s, alpha=2.0),
        x,
        src,
    )
    got, expected, rows = mt.tensor(x, dtype=mt.float64), torch.tensor(x), rng.standard_normal((3, 4))
    got.index_add_(0, mt.tensor([2, 2, 1]), mt.tensor(rows, dtype=mt.float64))
    expected.index_add_(0, torch.tensor([2, 2, 1]), torch.tensor(rows))
    np.testing.assert_allclose(got.numpy(), expected.numpy())


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_values_and_gradients(accumulate: bool) -> None:
    rng = np.random.default_rng(2)
    x, values = rng.standard_normal((3, 4)), rng.standard_normal(2)
    rows, cols = [0, 2], [1, 3]
    check_op(
        lambda a, v: a.index_put((mt.tensor(rows), mt.tensor(cols)), v, accumulate),
        lambda a, v: a.index_put((torch.tensor(rows), torch.tensor(cols)), v, accumulate),
        x,
        values,
    )
    got = mt.zeros(3).index_put_((mt.tensor([0, 0, 2]),), mt.tensor([1.0, 2.0, 3.0]), accumulate=accumulate)
    expected = torch.zeros(3).index_put_((torch.tensor([0, 0, 2]),), torch.tensor([1.0, 2.0, 3.0]), accumulate)
    if accumulate:  # (without accumulate, which repeated write wins is unspecified)
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("name", ["index_put", "index_put_"])
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_refuses_values_of_another_dtype_as_pytorch(name, accumulate) -> None:
    with pytest.raises(RuntimeError, match=r"values must have input's dtype Float.*got Double"):
        getattr(mt.zeros(3), name)((mt.tensor([0, 2]),), mt.tensor([1.0, 2.0], dtype=mt.float64), accumulate)
    with pytest.raises(RuntimeError, match="dtypes match"):
        values = torch.tensor([1.0, 2.0], dtype=torch.float64)
        getattr(torch.zeros(3), name)((torch.tensor([0, 2]),), values, accumulate)


@pytest.mark.parametrize("mask", [MASK, MASK[1]], ids=["full", "broadcast"])
def test_masked_scatter_values_and_gradients(mask) -> None:
    rng = np.random.default_rng(3)
    x, source = rng.standard_normal((3, 4)), rng.standard_normal(8)
    check_op(
        lambda a, s: a.masked_scatter(mt.tensor(mask), s),
        lambda a, s: a.masked_scatter(torch.tensor(mask), s),
        x,
        source,
    )
    got, expected = mt.tensor(x, dtype=mt.float64), torch.tensor(x)
    got.masked_scatter_(mt.tensor(mask), mt.tensor(source, dtype=mt.float64))
    expected.masked_scatter_(torch.tensor(mask), torch.tensor(source))
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("shape, wrap", [((3, 4), False), ((7, 3), True), ((7, 3), False), ((3, 3, 3), False)])
def test_fill_diagonal_equals_pytorchs(shape: tuple, wrap: bool) -> None:
    got = mt.zeros(*shape).fill_diagonal_(5.0, wrap=wrap)
    expected = torch.zeros(*shape).fill_diagonal_(5.0, wrap=wrap)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_fill_diagonal_in_the_graph_stops_the_gradient_on_the_diagonal() -> None:
    x = mt.ones(3, 3, requires_grad=True)
    y = x * 2
    y.fill_diagonal_(0.0)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * (1 - np.eye(3)))


def test_bad_arguments_raise_naming_them() -> None:
    with pytest.raises(ValueError, match=r"source must have shape \(2, 3\)"):
        mt.zeros(3, 3).index_add(0, mt.tensor([0, 1]), mt.ones(3, 3))
    with pytest.raises(ValueError, match="index out of range"):
        mt.zeros(3).index_add(0, mt.tensor([5]), mt.ones(1))
    with pytest.raises(ValueError, match="fewer than the 4 Trues"):
        mt.zeros(2, 3).masked_scatter(mt.tensor([True, False, True]), mt.ones(3))
    with pytest.raises(TypeError, match="mask must be a bool tensor"):
        mt.zeros(3).masked_scatter(mt.tensor([1, 0, 1]), mt.ones(3))
    with pytest.raises(ValueError, match="all dims of input must be of equal length"):
        mt.zeros(2, 3, 4).fill_diagonal_(1.0)

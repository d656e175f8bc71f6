"""matrix_norm, norm, matrix_power, matrix_rank, cond, vecdot (ops/matrix_functions.py): float64 gradcheck,
second order and PyTorch as the oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

torch = pytest.importorskip("torch")
rng = np.random.default_rng(27)
X = rng.standard_normal((2, 3, 4))
A = rng.standard_normal((3, 3)) + 2 * np.eye(3)


@pytest.mark.parametrize("order", ["fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2])
@pytest.mark.parametrize("dim, keepdim", [((-2, -1), False), ((0, 2), True)])
def test_matrix_norm(order, dim, keepdim):
    check_op(lambda x: mt.linalg.matrix_norm(x, order, dim, keepdim),
             lambda x: torch.linalg.matrix_norm(x, order, dim, keepdim), X)  # fmt: skip


@pytest.mark.parametrize("order, dim", [(None, None), (3, 1), (None, (0, 2)), ("nuc", (1, 2)), (1.5, 0)])
def test_norm(order, dim):
    check_op(lambda x: mt.linalg.norm(x, order, dim), lambda x: torch.linalg.norm(x, order, dim), X)


@pytest.mark.parametrize("n", [-2, 0, 1, 3])
def test_matrix_power(n):
    check_op(lambda a: mt.linalg.matrix_power(a, n), lambda a: torch.linalg.matrix_power(a, n), A)
    check_op(lambda a: a.matrix_power(n), lambda a: a.matrix_power(n), A)


@pytest.mark.parametrize("p", [None, -2])
def test_cond(p):
    check_op(lambda a: mt.linalg.cond(a, p), lambda a: torch.linalg.cond(a, p), A)


def test_cond_rank_and_vecdot():
    for p in ("fro", 1):  # (PyTorch's second derivative fails here: its backward writes in place)
        np.testing.assert_allclose(mt.linalg.cond(mt.tensor(A, dtype=mt.float64), p).numpy(),
                                   torch.linalg.cond(torch.tensor(A), p).numpy())  # fmt: skip
    check_op(lambda x, y: mt.linalg.vecdot(x, y, dim=1), lambda x, y: torch.linalg.vecdot(x, y, dim=1), X, X[0])
    rank = mt.linalg.matrix_rank(mt.tensor(np.outer([1.0, 2.0, 3.0], [1.0, 0.0, 1.0])))
    assert rank.item() == 1 and rank.dtype == mt.int64
    assert mt.linalg.matrix_rank(mt.tensor(A), atol=100.0).item() == 0


def test_errors():
    with pytest.raises(ValueError, match="linalg.matrix_norm: ord must be one of"):
        mt.linalg.matrix_norm(mt.ones(2, 2), 3)
    with pytest.raises(ValueError, match="linalg.matrix_norm: dim must name two different dims"):
        mt.linalg.matrix_norm(mt.ones(2, 2), dim=(0, 0))
    with pytest.raises(ValueError, match="linalg.matrix_power: A must be a batch of square matrices"):
        mt.linalg.matrix_power(mt.ones(2, 3), 2)
    with pytest.raises(ValueError, match="linalg.norm: with ord and no dim the input must be 1-D or 2-D"):
        mt.linalg.norm(mt.ones(2, 2, 2), 2)

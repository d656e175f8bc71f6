"""ops/cumsum.py: ``cumsum`` (function and method): gradients of first and second order against
PyTorch, and the int64 sums of bools."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

X = np.random.default_rng(2).standard_normal((3, 4))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum(dim):
    torch = pytest.importorskip("torch")
    check_op(lambda x: x.cumsum(dim), lambda x: x.cumsum(dim), X)
    check_op(lambda x: mt.cumsum(x, dim=dim), lambda x: torch.cumsum(x, dim=dim), X[:2])
    ints = mt.tensor([[True, False], [True, True]]).cumsum(0)
    assert ints.dtype == mt.int64 and ints.tolist() == [[1, 0], [2, 1]]

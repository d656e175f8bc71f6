"""cumprod, cummax, cummin, logcumsumexp, diff (ops/scan.py): float64 gradcheck, second order and PyTorch as
the oracle, including cumprod through zeros and logcumsumexp on large values."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

rng = np.random.default_rng(17)
X = rng.standard_normal((3, 4))
DISTINCT = (rng.permutation(12).reshape(3, 4) + rng.uniform(0.1, 0.4, (3, 4))) / 3


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumprod_without_and_with_zeros(dim):
    check_op(lambda x: mt.cumprod(x, dim), lambda x: x.cumprod(dim), X)
    zeros = X.copy()
    zeros[1, 1] = zeros[2, 3] = zeros[0, 2] = 0.0
    zeros[2, 1] = 0.0  # (two zeros in one column: the gradient of the first needs the second's neighbours)
    check_op(lambda x: x.cumprod(dim), lambda x: x.cumprod(dim), zeros)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_running_extrema(name):
    check_op(lambda x: getattr(mt, name)(x, 1).values, lambda x: getattr(x, name)(1).values, DISTINCT)
    torch = pytest.importorskip("torch")
    ties = np.array([[1.0, 3.0, 3.0, np.nan, 2.0], [2.0, 1.0, 1.0, 0.0, 0.0]])
    ours, theirs = getattr(mt, name)(mt.tensor(ties, dtype=mt.float64), 1), getattr(torch, name)(torch.tensor(ties), 1)
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    assert ours.indices.tolist() == theirs.indices.tolist()


def test_logcumsumexp_gradients_and_large_values():
    check_op(lambda x: mt.logcumsumexp(x, 1), lambda x: x.logcumsumexp(1), X * 3)
    check_op(lambda x: x.logcumsumexp(0), lambda x: x.logcumsumexp(0), X)
    big = mt.tensor([-1000.0, 0.0, 1000.0, 1000.0], dtype=mt.float64)
    np.testing.assert_allclose(mt.logcumsumexp(big, 0).numpy(), [-1000.0, 0.0, 1000.0, 1000 + np.log(2)])


def test_diff_with_prepend_and_append():
    pre, post = rng.standard_normal((3, 2)), rng.standard_normal((3, 1))
    check_op(lambda x, p, a: mt.diff(x, 2, 1, p, a), lambda x, p, a: x.diff(2, 1, p, a), X, pre, post)
    check_op(lambda x: x.diff(dim=0), lambda x: x.diff(dim=0), X)
    assert mt.diff(mt.tensor([1, 4, 9]), 5).shape == (0,)
    check_op(lambda x: mt.diff(x, 3, 0), lambda x: x.diff(3, 0), X[:2])  # (more than the dim holds: empty)
    ours = mt.func.vmap(lambda v: mt.diff(v, 2))(mt.tensor(X))
    np.testing.assert_allclose(ours.numpy(), np.diff(X.astype(np.float32), 2, axis=1), rtol=1e-6)


def test_integer_and_zero_dim_inputs():
    assert mt.cumprod(mt.tensor([1, 2, 3]), 0).dtype == mt.int64
    assert mt.logcumsumexp(mt.tensor([1, 2]), 0).dtype == mt.float32
    assert mt.cummax(mt.tensor(2.0), 0).indices.shape == ()


def test_bad_arguments():
    with pytest.raises(ValueError, match="diff: input must have at least one dimension"):
        mt.diff(mt.tensor(1.0))
    with pytest.raises(ValueError, match="diff: prepend must have as many dims as input"):
        mt.diff(mt.ones(2, 3), prepend=mt.ones(3))
    with pytest.raises(ValueError, match="n must be at least 0"):
        mt.diff(mt.ones(3), -1)

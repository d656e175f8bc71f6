"""std_mean, var_mean, nansum, nanmean, aminmax, count_nonzero (ops/statistics.py): float64 gradcheck, second
order and PyTorch as the oracle; NaN handling and argument forms as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

rng = np.random.default_rng(18)
X = rng.standard_normal((3, 4))


@pytest.mark.parametrize("name", ["std_mean", "var_mean"])
@pytest.mark.parametrize("kwargs", [{}, {"dim": 1, "correction": 0, "keepdim": True}, {"dim": (0, 1)}])
@pytest.mark.parametrize("part", [0, 1])
def test_spread_and_mean(name, kwargs, part):
    torch = pytest.importorskip("torch")
    check_op(lambda x: getattr(mt, name)(x, **kwargs)[part], lambda x: getattr(torch, name)(x, **kwargs)[part], X)


def test_the_unbiased_overloads():
    x = mt.tensor(X)
    np.testing.assert_allclose(mt.var_mean(x, False)[0].numpy(), np.var(X).astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(mt.std_mean(x, 1, False)[0].numpy(), np.std(X, 1).astype(np.float32), rtol=1e-6)
    with pytest.raises(TypeError, match="give unbiased or correction, not both"):
        mt.var_mean(x, 1, True, correction=0)


def test_nansum_and_nanmean_skip_nan_in_values_and_gradients():
    check_op(lambda x: mt.nansum(x, 1), lambda x: x.nansum(1), X)
    check_op(lambda x: x.nanmean((0, 1), True), lambda x: x.nanmean((0, 1), True), X)
    torch = pytest.importorskip("torch")
    data = np.where(np.eye(3, 4, dtype=bool), np.nan, X)
    x, tx = mt.tensor(data, dtype=mt.float64, requires_grad=True), torch.tensor(data, requires_grad=True)
    (mt.nansum(x, 0) * 2 + mt.nanmean(x, 1).sum()).sum().backward()
    (torch.nansum(tx, 0) * 2 + torch.nanmean(tx, 1).sum()).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    assert mt.nansum(mt.tensor([1, 2])).dtype == mt.int64
    with pytest.raises(TypeError, match="nanmean: input must be a floating point tensor"):
        mt.nanmean(mt.tensor([1, 2]))


def test_aminmax():
    distinct = rng.permutation(12).reshape(3, 4).astype(np.float64)
    check_op(lambda x: mt.aminmax(x, dim=1).min, lambda x: x.aminmax(dim=1).min, distinct)
    check_op(lambda x: x.aminmax(dim=0, keepdim=True).max, lambda x: x.aminmax(dim=0, keepdim=True).max, distinct)
    assert mt.aminmax(mt.tensor(distinct), keepdim=True).min.shape == (1, 1)
    with pytest.raises(ValueError, match="aminmax: cannot reduce an empty tensor"):
        mt.aminmax(mt.ones(0))


def test_count_nonzero():
    x = mt.tensor([[0, 1, 2], [0, 0, 3]])
    assert mt.count_nonzero(x).item() == 3 and x.count_nonzero(0).tolist() == [0, 1, 2]
    assert mt.count_nonzero(x, (0, 1)).dtype == mt.int64

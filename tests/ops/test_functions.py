"""ops/functions.py: all / any / isclose / allclose / equal (functions and methods) against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt

X = np.array([[1.0, 0.0, 2.0], [3.0, 4.0, np.nan]])


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (1, True), (-1, False)])
def test_all_and_any_as_pytorch(name, dim, keepdim):
    torch = pytest.importorskip("torch")
    kwargs = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    ours = getattr(mt, name)(mt.tensor(X), **kwargs)
    theirs = getattr(torch, name)(torch.tensor(X), **kwargs)
    assert ours.dtype == mt.bool and ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    np.testing.assert_array_equal(getattr(mt.tensor(X), name)(**kwargs).numpy(), theirs.numpy())


def test_closeness_and_equality_as_pytorch():
    torch = pytest.importorskip("torch")
    a, b = X, X + np.array([1e-9, 1e-3, 0.0])
    for kwargs in ({}, {"rtol": 1e-2}, {"equal_nan": True}, {"atol": 1e-2, "rtol": 0.0}):
        ours = mt.isclose(mt.tensor(a, dtype=mt.float64), mt.tensor(b, dtype=mt.float64), **kwargs)
        theirs = torch.isclose(torch.tensor(a), torch.tensor(b), **kwargs)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert mt.allclose(mt.tensor(a), mt.tensor(b), **kwargs) == torch.allclose(
            torch.tensor(a, dtype=torch.float32), torch.tensor(b, dtype=torch.float32), **kwargs
        )
    t = mt.tensor([1.0, 2.0])
    assert mt.equal(t, mt.tensor([1.0, 2.0])) is True and t.equal(mt.tensor([1.0, 3.0])) is False
    assert t.equal(mt.tensor([[1.0, 2.0]])) is False  # another shape
    assert t.allclose(t + 1e-9) is True

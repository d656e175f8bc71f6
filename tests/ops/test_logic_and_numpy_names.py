"""all / any / isclose / allclose / equal (functions and methods), and NumPy's argument names of the
reductions (``axis``, ``keepdims``), which PyTorch accepts and lecture code uses: against PyTorch."""

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


@pytest.mark.parametrize("name", ["sum", "mean", "std", "var", "amax", "logsumexp", "argmax", "all"])
def test_reductions_take_numpy_argument_names(name):
    torch = pytest.importorskip("torch")
    data = np.arange(6.0).reshape(2, 3)
    ours = getattr(mt.tensor(data, dtype=mt.float64), name)(axis=1, keepdims=True)
    theirs = getattr(torch.tensor(data), name)(axis=1, keepdims=True)
    np.testing.assert_allclose(np.asarray(ours.numpy(), float), np.asarray(theirs.numpy(), float), rtol=1e-12)
    values, indices = mt.tensor(data).max(axis=0, keepdims=True)
    assert values.shape == (1, 3) and indices.tolist() == [[1, 1, 1]]
    with pytest.raises(TypeError, match="both 'dim' and its alias 'axis'"):
        mt.tensor(data).sum(dim=0, axis=1)

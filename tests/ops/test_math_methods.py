"""ops/math_methods.py: the reductions take NumPy's argument names (``axis``, ``keepdims``) as PyTorch does
(lecture code writes ``counts.sum(1, keepdims=True)``), and refuse a name given twice."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt


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

"""nn/functional/embedding.py: ``one_hot`` against PyTorch, and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F


def test_one_hot():
    torch = pytest.importorskip("torch")
    idx = np.array([[0, 2], [1, 1]])
    out = F.one_hot(mt.tensor(idx))
    assert out.dtype == mt.int64
    np.testing.assert_array_equal(out.numpy(), torch.nn.functional.one_hot(torch.tensor(idx)).numpy())
    assert F.one_hot(mt.tensor([1]), num_classes=4).tolist() == [[0, 1, 0, 0]]
    with pytest.raises(ValueError, match=r"class ids must be < num_classes=2, got 2"):
        F.one_hot(mt.tensor([2]), 2)
    with pytest.raises(TypeError, match="integer Tensor of class ids"):
        F.one_hot(mt.tensor([1.0]))

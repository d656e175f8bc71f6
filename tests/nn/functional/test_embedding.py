"""nn/functional/embedding.py: ``one_hot`` against PyTorch, and its errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import randn_f64

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck


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


# ----------------------------------------------------------------- embedding
def test_embedding_function_gradcheck_and_padding(rng):
    w = randn_f64(rng, 6, 3)
    idx = np.array([[0, 2, 2], [5, 0, 0]])
    assert gradcheck(lambda w: F.embedding(idx, w), [w])
    F.embedding(mt.tensor(idx), w, padding_idx=0).backward(mt.ones(2, 3, 3, dtype=mt.float64))
    assert not w.grad.numpy()[0].any() and w.grad.numpy()[2].tolist() == [2.0, 2.0, 2.0]
    assert w.grad.numpy()[5].tolist() == [1.0, 1.0, 1.0] and not w.grad.numpy()[1].any()


def test_embedding_function_validation(rng):
    w = randn_f64(rng, 4, 2)
    with pytest.raises(ValueError, match=r"index 4 is out of range; indices must be in \[0, 3\]"):
        F.embedding(np.array([4]), w)
    with pytest.raises(TypeError, match="integer"):
        F.embedding(np.array([0.5]), w)
    with pytest.raises(ValueError, match="2-D"):
        F.embedding(np.array([0]), randn_f64(rng, 4))
    with pytest.raises(ValueError, match="padding_idx"):
        F.embedding(np.array([0]), w, padding_idx=9)
    assert F.embedding(np.zeros((0,), dtype=np.int64), w).shape == (0, 2)

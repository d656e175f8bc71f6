"""nn/embedding.py: ``nn.Embedding``: gradcheck with repeated indices, lookup and scatter-add gradient,
the padding row, init, NumPy indices, ``from_pretrained``, and validation."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck


def test_embedding_gradcheck_with_repeated_indices(rng):
    emb = nn.Embedding(6, 3, dtype=mt.float64)
    idx = mt.tensor([[0, 2, 2, 5], [5, 5, 1, 0]])
    assert gradcheck(lambda w: emb(idx), [emb.weight])


# --------------------------------------------------------------------- Embedding
def test_embedding_lookup_and_scatter_add_gradient(rng):
    emb = nn.Embedding(5, 3)
    idx = mt.tensor([[1, 1, 4], [0, 1, 3]])
    y = emb(idx)
    assert y.shape == (2, 3, 3)
    np.testing.assert_array_equal(y.numpy(), emb.weight.numpy()[idx.numpy()])
    g = rng.standard_normal((2, 3, 3)).astype(np.float32)
    y.backward(mt.tensor(g))
    expected = np.zeros((5, 3), np.float32)
    np.add.at(expected, idx.numpy().ravel(), g.reshape(-1, 3))
    np.testing.assert_allclose(emb.weight.grad.numpy(), expected, rtol=1e-6)
    assert emb.weight.grad.numpy()[1].tolist() == pytest.approx((g[0, 0] + g[0, 1] + g[1, 1]).tolist(), rel=1e-6)


def test_embedding_padding_row_is_zero_and_gets_no_gradient():
    emb = nn.Embedding(4, 2, padding_idx=-1)
    assert emb.padding_idx == 3 and not emb.weight.numpy()[3].any()
    assert emb.weight.numpy()[:3].any()
    idx = mt.tensor([3, 0, 3])
    emb(idx).backward(mt.ones(3, 2))
    assert not emb.weight.grad.numpy()[3].any() and emb.weight.grad.numpy()[0].tolist() == [1.0, 1.0]


def test_embedding_init_is_standard_normal():
    mt.manual_seed(3)
    w = nn.Embedding(1000, 50).weight.numpy()
    assert abs(w.mean()) < 0.01 and abs(w.std() - 1) < 0.01


def test_embedding_validation():
    emb = nn.Embedding(5, 2)
    with pytest.raises(ValueError, match=r"\[0, 4\]"):
        emb(mt.tensor([0, 5]))
    with pytest.raises(ValueError, match="out of range"):
        emb(mt.tensor([-1]))
    with pytest.raises(TypeError, match="integer"):
        emb(mt.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(ValueError, match="num_embeddings"):
        nn.Embedding(0, 2)
    with pytest.raises(ValueError, match="embedding_dim"):
        nn.Embedding(3, 0)
    assert repr(nn.Embedding(5, 2, padding_idx=0)) == "Embedding(5, 2, padding_idx=0)"


def test_embedding_accepts_numpy_indices_and_from_pretrained():
    table = mt.tensor(np.arange(6.0).reshape(3, 2))
    emb = nn.Embedding.from_pretrained(table)
    assert not emb.weight.requires_grad
    np.testing.assert_array_equal(emb(np.array([2, 0])).numpy(), [[4.0, 5.0], [0.0, 1.0]])
    assert nn.Embedding.from_pretrained(table, freeze=False).weight.requires_grad

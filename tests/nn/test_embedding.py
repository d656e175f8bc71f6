"""nn/embedding.py: ``nn.Embedding``: gradcheck with repeated indices, lookup and scatter-add gradient,
the padding row, init, NumPy indices, ``from_pretrained``, and validation;
``nn.EmbeddingBag`` and ``F.embedding_bag``: PyTorch's bags (2-D input, offsets, include_last_offset,
empty bags, padding_idx), the three modes, per-sample weights, values and weight gradients (the max's
to the first largest row), second order, defaults, repr, state dict, from_pretrained, bad arguments."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_jvp

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck, gradgradcheck


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


# ---------------------------------------------------------- EmbeddingBag
bag_rng = np.random.default_rng(13)
WEIGHT = bag_rng.standard_normal((10, 4))
INPUT = np.array([1, 2, 4, 5, 4, 3, 2, 9, 2, 2])
OFFSETS = np.array([0, 3, 3, 7])  # bags: [0, 3), [3, 3) (empty), [3, 7), [7, 10)


@pytest.mark.parametrize("include_last_offset", [False, True])
@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_bags_of_a_1d_input_as_pytorch(mode, padding_idx, include_last_offset, torch):
    offsets = np.append(OFFSETS, INPUT.size) if include_last_offset else OFFSETS
    w, tw = mt.tensor(WEIGHT, dtype=mt.float64, requires_grad=True), torch.tensor(WEIGHT, requires_grad=True)
    options = {"mode": mode, "padding_idx": padding_idx, "include_last_offset": include_last_offset}
    y = F.embedding_bag(mt.tensor(INPUT), w, mt.tensor(offsets), **options)
    ty = torch.nn.functional.embedding_bag(torch.tensor(INPUT), tw, torch.tensor(offsets), **options)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    g = bag_rng.standard_normal(ty.shape)
    (y * mt.tensor(g, dtype=mt.float64)).sum().backward()
    (ty * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_bags_of_a_2d_input_and_per_sample_weights_as_pytorch(mode, torch):
    rows = INPUT.reshape(2, 5)
    y = F.embedding_bag(mt.tensor(rows), mt.tensor(WEIGHT, dtype=mt.float64), mode=mode)
    np.testing.assert_allclose(
        y.numpy(), torch.nn.functional.embedding_bag(torch.tensor(rows), torch.tensor(WEIGHT), mode=mode)
    )
    psw = bag_rng.standard_normal(rows.shape)
    p, tp = mt.tensor(psw, dtype=mt.float64, requires_grad=True), torch.tensor(psw, requires_grad=True)
    y = F.embedding_bag(mt.tensor(rows), mt.tensor(WEIGHT, dtype=mt.float64), mode="sum", per_sample_weights=p)
    ty = torch.nn.functional.embedding_bag(torch.tensor(rows), torch.tensor(WEIGHT), mode="sum", per_sample_weights=tp)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_gradcheck_second_order_and_jvp(mode):
    w = mt.tensor(bag_rng.standard_normal((6, 3)), dtype=mt.float64, requires_grad=True)
    psw = mt.tensor(bag_rng.standard_normal(5), dtype=mt.float64, requires_grad=True)
    index, offsets = mt.tensor([0, 5, 5, 2, 3]), mt.tensor([0, 2, 2])
    if mode == "sum":

        def fn(w, p):
            return F.embedding_bag(index, w, offsets, mode=mode, per_sample_weights=p)

        inputs = [w, psw]
    else:

        def fn(w):
            return F.embedding_bag(index, w, offsets, mode=mode)

        inputs = [w]
    assert gradcheck(fn, inputs) and gradgradcheck(fn, inputs)
    # forward mode against differences (PyTorch's embedding_bag has no forward AD)
    check_jvp(fn, None, *[x.detach().numpy() for x in inputs], pytorch_jvp=False)


def test_embedding_bag_layer_as_pytorch(torch):
    for args, kwargs in (((10, 3), {}), ((10, 3), {"mode": "max", "padding_idx": 2, "include_last_offset": True})):
        ours, theirs = nn.EmbeddingBag(*args, **kwargs), torch.nn.EmbeddingBag(*args, **kwargs)
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        if "padding_idx" in kwargs:
            assert not ours.weight.numpy()[2].any()
    layer = nn.EmbeddingBag.from_pretrained(mt.tensor(WEIGHT), mode="sum")
    assert not layer.weight.requires_grad
    expected = torch.nn.functional.embedding_bag(
        torch.tensor(INPUT), torch.tensor(WEIGHT), torch.tensor(OFFSETS), mode="sum"
    )
    np.testing.assert_allclose(layer(mt.tensor(INPUT), mt.tensor(OFFSETS)).numpy(), expected.numpy(), rtol=1e-6)


def test_embedding_bag_bad_arguments_raise_naming_them():
    w = mt.tensor(WEIGHT)
    with pytest.raises(ValueError, match="embedding_bag: a 1-D input needs offsets"):
        F.embedding_bag(mt.tensor(INPUT), w)
    with pytest.raises(ValueError, match="embedding_bag: offsets must be None for a 2-D input"):
        F.embedding_bag(mt.tensor(INPUT.reshape(2, 5)), w, mt.tensor([0, 1]))
    with pytest.raises(ValueError, match="embedding_bag: offsets must start at 0"):
        F.embedding_bag(mt.tensor(INPUT), w, mt.tensor([1, 3]))
    with pytest.raises(ValueError, match="the last offset must be the input's length 10"):
        F.embedding_bag(mt.tensor(INPUT), w, mt.tensor([0, 3, 9]), include_last_offset=True)
    with pytest.raises(ValueError, match="per_sample_weights is only supported for mode='sum', got mode='mean'"):
        F.embedding_bag(mt.tensor(INPUT), w, mt.tensor(OFFSETS), per_sample_weights=mt.ones(10))
    with pytest.raises(ValueError, match=r"embedding_bag: index 12 is out of range; indices must be in \[0, 9\]"):
        F.embedding_bag(mt.tensor([12]), w, mt.tensor([0]))
    with pytest.raises(ValueError, match="embedding_bag: mode must be 'sum', 'mean' or 'max', got 'min'"):
        F.embedding_bag(mt.tensor(INPUT), w, mt.tensor(OFFSETS), mode="min")
    with pytest.raises(ValueError, match="EmbeddingBag: sparse=True is not supported by minitensor"):
        nn.EmbeddingBag(10, 3, sparse=True)

"""ops/embedding_bag.py: EmbeddingBag (sums and means of bags of rows) equals its definition
(``Embedding`` + ``IndexAdd``) in value and gradient, with repeated indices and an empty bag;
gradgradcheck through its create_graph backward; vmap over a stack of tables.
(PyTorch's values: tests/nn/test_embedding.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.ops.embedding_bag import EmbeddingBag, embedding_bag_definition

rng = np.random.default_rng(11)
WEIGHT = rng.standard_normal((6, 4))
SETTINGS = {"indices": np.array([0, 5, 5, 2, 3, 0]), "bags": np.array([0, 0, 0, 2, 2, 3]), "n_bags": 4}  # bag 1 empty


@pytest.mark.parametrize("mean", [False, True])
def test_the_op_equals_its_definition(mean):
    results = []
    for f in (EmbeddingBag.apply, embedding_bag_definition):
        w = mt.tensor(WEIGHT, dtype=mt.float64, requires_grad=True)
        y = f(w, **SETTINGS, mean=mean)
        (y * mt.tensor(np.arange(16.0).reshape(4, 4))).sum().backward()
        results.append((y.numpy(), w.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-15)
    assert not results[0][0][1].any()  # (the empty bag)


@pytest.mark.parametrize("mean", [False, True])
def test_gradients_to_second_order(mean):
    w = mt.tensor(WEIGHT, dtype=mt.float64, requires_grad=True)

    def f(v):
        return EmbeddingBag.apply(v, **SETTINGS, mean=mean) ** 2

    assert gradcheck(f, (w,)) and gradgradcheck(f, (w,))


def test_a_stack_of_tables_under_vmap():
    tables = rng.standard_normal((3, 6, 4))
    got = mt.func.vmap(lambda w: EmbeddingBag.apply(w, **SETTINGS, mean=True))(mt.tensor(tables)).numpy()
    expected = [embedding_bag_definition(mt.tensor(t), **SETTINGS, mean=True).numpy() for t in tables]
    np.testing.assert_allclose(got, np.stack(expected), rtol=1e-6)

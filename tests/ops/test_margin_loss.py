"""ops/margin_loss.py: MultiMarginLoss and MultilabelMarginLoss equal their definitions (the Tensor
formulas ``_multi_plain`` / ``_multilabel_plain``) in value and gradient, with class weights, p = 2,
repeated and empty label lists and every reduction; their create_graph path passes gradgradcheck.
(PyTorch's values and gradients: tests/nn/functional/test_margin_loss.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.ops.margin_loss import MultilabelMarginLoss, MultiMarginLoss, _multi_plain, _multilabel_plain

rng = np.random.default_rng(3)
X = rng.standard_normal((5, 4))
CLASSES = np.array([0, 3, 1, 1, 2])
LABELS = np.array([[1, 1, -1, 0], [-1, 2, 2, 2], [3, 0, 2, 1], [2, -1, 0, 0], [0, 3, -1, -1]])  # repeats, empty
WEIGHT = np.array([0.5, 2.0, 1.0, 1.5])


def _value_and_grad(f):
    x = mt.tensor(X, dtype=mt.float64, requires_grad=True)
    y = f(x)
    (y * mt.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(y.shape))).sum().backward()
    return y.numpy(), x.grad.numpy()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("p, weight", [(1, None), (2, None), (1, WEIGHT), (2, WEIGHT)])
def test_multi_margin_equals_its_definition(p, weight, reduction):
    settings = {"p": p, "margin": 0.7, "weight": weight, "reduction": reduction}
    got = _value_and_grad(lambda x: MultiMarginLoss.apply(x, CLASSES, **settings))
    expected = _value_and_grad(lambda x: _multi_plain(x, CLASSES, **settings))
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_equals_its_definition(reduction):
    got = _value_and_grad(lambda x: MultilabelMarginLoss.apply(x, LABELS, reduction=reduction))
    expected = _value_and_grad(lambda x: _multilabel_plain(x, LABELS, reduction))
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    assert got[0].ndim == (1 if reduction == "none" else 0)


def test_second_order_through_the_definition():
    x = mt.tensor(X, dtype=mt.float64, requires_grad=True)
    assert mt.autograd.gradgradcheck(lambda v: MultiMarginLoss.apply(v, CLASSES, p=2, weight=WEIGHT), (x,))
    assert mt.autograd.gradgradcheck(lambda v: MultilabelMarginLoss.apply(v, LABELS, reduction="sum") ** 2, (x,))

"""nn/activation.py: the activation modules: float64 gradchecks, values, float32 kept, GELU's
``approximate`` checked, and reprs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import gradcheck_module, randn_f64

import minitensor as mt
import minitensor.nn as nn


@pytest.mark.parametrize(
    "layer",
    [nn.ReLU(), nn.GELU(), nn.GELU(approximate="tanh"), nn.Tanh(), nn.Sigmoid(), nn.Softmax(dim=1), nn.LogSoftmax(-1)],
    ids=repr,
)
def test_activation_gradcheck(rng, layer):
    x = randn_f64(rng, 3, 4, 2)
    if isinstance(layer, nn.ReLU):
        with mt.no_grad():
            x.numpy()[np.abs(x.numpy()) < 0.05] = 0.5  # away from the kink
    gradcheck_module(layer, x)


# ------------------------------------------------------------------ activations
def test_activation_values(rng):
    x = mt.tensor(rng.standard_normal((3, 4)), dtype=mt.float64)
    a = x.numpy()
    np.testing.assert_allclose(nn.ReLU()(x).numpy(), np.maximum(a, 0))
    np.testing.assert_allclose(nn.Tanh()(x).numpy(), np.tanh(a))
    np.testing.assert_allclose(nn.Sigmoid()(x).numpy(), 1 / (1 + np.exp(-a)))
    e = np.exp(a - a.max(0))
    np.testing.assert_allclose(nn.Softmax(dim=0)(x).numpy(), e / e.sum(0))
    np.testing.assert_allclose(nn.LogSoftmax(dim=0)(x).numpy(), np.log(e / e.sum(0)))
    gelu = [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in a.ravel()]
    np.testing.assert_allclose(nn.GELU()(x).numpy().ravel(), gelu, rtol=1e-14, atol=1e-15)
    tanh = 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3)))
    np.testing.assert_allclose(nn.GELU("tanh")(x).numpy(), tanh, rtol=1e-14)


def test_activations_keep_float32():
    x = mt.randn(3, 4)
    for layer in (nn.ReLU(), nn.GELU(), nn.GELU("tanh"), nn.Tanh(), nn.Softmax(-1)):
        assert layer(x).dtype == mt.float32, layer


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(ValueError, match="approximate"):
        nn.GELU("fast")


def test_activation_reprs():
    assert repr(nn.GELU("tanh")) == "GELU(approximate='tanh')"
    assert repr(nn.Softmax(dim=-1)) == "Softmax(dim=-1)"
    assert repr(nn.ReLU()) == "ReLU()" and repr(nn.Dropout(0.1)) == "Dropout(p=0.1)"

"""nn/linear.py: ``nn.Linear``: float64 gradcheck w.r.t. input and parameters (also a non-contiguous
input), shapes and formula, PyTorch's default init bounds, and validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import gradcheck_module, randn_f64

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck


# ------------------------------------------------------------------- gradients
@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 3, 5)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_gradcheck(rng, shape, bias):
    layer = nn.Linear(5, 4, bias=bias, dtype=mt.float64)
    gradcheck_module(layer, randn_f64(rng, *shape))


def test_linear_gradcheck_on_non_contiguous_input(rng):
    layer = nn.Linear(3, 2, dtype=mt.float64)
    x = randn_f64(rng, 3, 4)
    assert gradcheck(lambda t, *_: layer(t.transpose(0, 1)), [x, *layer.parameters()])


# ------------------------------------------------------------------------ Linear
def test_linear_shapes_and_formula(rng):
    layer = nn.Linear(4, 3)
    assert layer.weight.shape == (3, 4) and layer.bias.shape == (3,)
    assert layer.weight.dtype == mt.float32
    x = mt.tensor(rng.standard_normal((2, 5, 4)))
    y = layer(x)
    assert y.shape == (2, 5, 3) and y.dtype == mt.float32
    np.testing.assert_allclose(y.numpy(), x.numpy() @ layer.weight.numpy().T + layer.bias.numpy(), rtol=1e-5, atol=1e-6)
    assert nn.Linear(4, 3, bias=False).bias is None


def test_linear_default_init_bounds_and_reproducibility():
    mt.manual_seed(0)
    a = nn.Linear(100, 50)
    bound = 1 / math.sqrt(100)
    assert np.abs(a.weight.numpy()).max() <= bound and np.abs(a.bias.numpy()).max() <= bound
    assert np.abs(a.weight.numpy()).max() > 0.9 * bound  # spread over the whole interval
    assert abs(a.weight.numpy().std() - bound / math.sqrt(3)) < 0.05 * bound
    mt.manual_seed(0)
    b = nn.Linear(100, 50)
    np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())
    np.testing.assert_array_equal(a.bias.numpy(), b.bias.numpy())


def test_linear_validation():
    with pytest.raises(ValueError, match="in_features"):
        nn.Linear(0, 3)
    with pytest.raises(ValueError, match="out_features"):
        nn.Linear(3, -1)
    with pytest.raises(TypeError, match="in_features"):
        nn.Linear(2.5, 3)
    with pytest.raises(TypeError, match="dtype"):
        nn.Linear(2, 3, dtype=mt.int64)
    layer = nn.Linear(4, 3)
    with pytest.raises(ValueError, match=r"in_features=4, got 5"):
        layer(mt.zeros(2, 5))
    with pytest.raises(TypeError, match="float64.*float32"):
        layer(mt.zeros(2, 4, dtype=mt.float64))
    with pytest.raises(TypeError, match="Tensor or a NumPy array, got list"):
        layer([[0.0] * 4] * 2)  # (NumPy arrays are accepted: tests/nn/test_array_inputs.py)

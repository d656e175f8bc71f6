"""nn/normalization.py: ``nn.LayerNorm``: float64 gradcheck (with and without affine and bias),
normalisation over the trailing dims, a constant row, and validation."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import gradcheck_module, randn_f64, randomize_parameters

import minitensor as mt
import minitensor.nn as nn


@pytest.mark.parametrize("normalized_shape", [6, (2, 3)])
@pytest.mark.parametrize("affine, bias", [(True, True), (True, False), (False, True)])
def test_layer_norm_gradcheck(rng, normalized_shape, affine, bias):
    norm = randomize_parameters(
        nn.LayerNorm(normalized_shape, elementwise_affine=affine, bias=bias, dtype=mt.float64), rng
    )
    assert len(list(norm.parameters())) == (2 if affine and bias else 1 if affine else 0)
    gradcheck_module(norm, randn_f64(rng, 2, 2, 6) if normalized_shape == 6 else randn_f64(rng, 4, 2, 3))


# --------------------------------------------------------------------- LayerNorm
def test_layer_norm_normalises_trailing_dims(rng):
    norm = nn.LayerNorm((3, 4))
    x = mt.tensor(rng.standard_normal((2, 3, 4)) * 5 + 3)
    y = norm(x).numpy().reshape(2, -1)
    np.testing.assert_allclose(y.mean(1), 0, atol=1e-5)
    np.testing.assert_allclose(y.var(1), 1, rtol=1e-3)
    assert norm.weight.numpy().tolist() == [[1.0] * 4] * 3 and not norm.bias.numpy().any()


def test_layer_norm_of_a_constant_row_is_finite_with_finite_gradient():
    norm = nn.LayerNorm(4, dtype=mt.float64)
    x = mt.full((2, 4), 3.0, dtype=mt.float64, requires_grad=True)
    y = norm(x)
    assert np.isfinite(y.numpy()).all()
    (y * mt.tensor(np.arange(8.0).reshape(2, 4), dtype=mt.float64)).sum().backward()
    assert np.isfinite(x.grad.numpy()).all() and np.isfinite(norm.weight.grad.numpy()).all()


def test_layer_norm_validation():
    with pytest.raises(ValueError, match="normalized_shape"):
        nn.LayerNorm(0)
    with pytest.raises(ValueError, match="eps"):
        nn.LayerNorm(3, eps=-1.0)
    norm = nn.LayerNorm(4)
    with pytest.raises(ValueError, match=r"normalized_shape=\(4,\)"):
        norm(mt.zeros(2, 5))
    with pytest.raises(TypeError, match="float64"):
        norm(mt.zeros(2, 4, dtype=mt.float64))
    affine_free = nn.LayerNorm(4, elementwise_affine=False)
    assert affine_free.weight is None and affine_free.bias is None
    assert nn.LayerNorm(4, bias=False).bias is None

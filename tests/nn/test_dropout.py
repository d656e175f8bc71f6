"""nn/dropout.py: ``nn.Dropout``: the kept values scaled and about p dropped, the same mask in the
gradient (gradcheck with a fixed mask), eval mode, p = 0 and 1, NumPy and bad probabilities, and the
module's mode inside a model."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import randn_f64

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck


def test_dropout_gradcheck_with_a_fixed_mask(rng):
    drop = nn.Dropout(0.4)
    x = randn_f64(rng, 4, 5)

    def fn(t):
        mt.manual_seed(11)  # the same mask at every evaluation
        return drop(t)

    assert gradcheck(fn, [x])


# ----------------------------------------------------------------------- Dropout
def test_dropout_scales_kept_values_and_drops_about_p():
    mt.manual_seed(1)
    y = nn.Dropout(0.3)(mt.ones(200, 100)).numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)
    assert abs(1 - kept.mean() - 0.3) < 0.01


def test_dropout_gradient_uses_the_same_mask():
    mt.manual_seed(2)
    x = mt.ones(50, 20, requires_grad=True)
    y = nn.Dropout(0.5)(x)
    y.backward(mt.ones(50, 20))
    np.testing.assert_array_equal(x.grad.numpy(), y.numpy())


def test_dropout_eval_p0_p1_and_reproducibility():
    x = mt.randn(10, 10)
    drop = nn.Dropout(0.5)
    assert drop.eval()(x) is x
    assert nn.Dropout(0.0)(x) is x
    one = nn.Dropout(1.0)(x)
    assert not one.numpy().any() and np.isfinite(one.numpy()).all()
    drop.train()
    mt.manual_seed(5)
    a = drop(x).numpy()
    mt.manual_seed(5)
    b = drop(x).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, drop(x).numpy())  # a fresh mask per call


def test_dropout_accepts_numpy_probabilities():
    assert nn.Dropout(np.float32(0.25)).p == 0.25


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan")])
def test_dropout_rejects_bad_p(p):
    with pytest.raises(ValueError, match="p must be a probability"):
        nn.Dropout(p)


@pytest.mark.parametrize("p", ["0.5", True])
def test_dropout_rejects_a_p_that_is_not_a_number(p):
    with pytest.raises(TypeError, match="p must be a probability"):
        nn.Dropout(p)


def test_dropout_follows_module_mode_inside_a_model():
    model = nn.Sequential(nn.Identity(), nn.Dropout(0.9))
    x = mt.ones(100)
    assert (model(x).numpy() == 0).any()
    model.eval()
    assert model(x) is x

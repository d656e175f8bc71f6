"""nn/loss.py: the loss modules call the functions with their options, and keep class weights as a
buffer in the state dict."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F


# -------------------------------------------------------------------- modules
def test_loss_modules_call_the_functions_with_their_options():
    rng = np.random.default_rng(10)
    x, target, weight = rng.normal(scale=1.5, size=(5, 4)), rng.integers(0, 4, size=5), rng.uniform(0.3, 2.0, size=4)
    target[1] = 3
    a, w, t = mt.tensor(x, dtype=mt.float64), mt.tensor(weight, dtype=mt.float64), mt.tensor(target)
    ce = nn.CrossEntropyLoss(w, ignore_index=3, reduction="sum", label_smoothing=0.2)
    want = F.cross_entropy(a, t, weight=w, ignore_index=3, reduction="sum", label_smoothing=0.2)
    assert ce(a, t).item() == want.item()
    nll = nn.NLLLoss(w, ignore_index=3, reduction="none")
    np.testing.assert_array_equal(
        nll(a, t).numpy(), F.nll_loss(a, t, weight=w, ignore_index=3, reduction="none").numpy()
    )
    assert nn.MSELoss(reduction="sum")(a, mt.zeros(5, 4, dtype=mt.float64)).item() == pytest.approx(np.sum(x**2))


def test_class_weights_are_a_buffer_in_the_state_dict():
    ce = nn.CrossEntropyLoss(weight=np.array([1.0, 2.0, 3.0]))
    assert list(ce.state_dict()) == ["weight"] and list(nn.CrossEntropyLoss().state_dict()) == []
    ce.double()
    assert ce.weight.dtype == mt.float64
    with pytest.raises(TypeError):
        nn.CrossEntropyLoss(None, -100)  # options after weight are keyword-only


def test_modules_call_the_functions():
    rng = np.random.default_rng(5)
    x0, t0 = rng.standard_normal((3, 4)) * 2, rng.standard_normal((3, 4))
    x, t = mt.tensor(x0), mt.tensor(t0)
    assert nn.L1Loss()(x, t).item() == pytest.approx(np.abs(x0 - t0).mean(), rel=1e-6)
    d = np.abs(x0 - t0)
    smooth = np.where(d < 0.5, 0.5 * d * d / 0.5, d - 0.25)
    assert nn.SmoothL1Loss(beta=0.5, reduction="sum")(x, t).item() == pytest.approx(smooth.sum(), rel=1e-6)
    huber = np.where(d < 2.0, 0.5 * d * d, 2.0 * (d - 1.0))
    np.testing.assert_allclose(nn.HuberLoss(delta=2.0, reduction="none")(x, t).numpy(), huber, rtol=1e-6)

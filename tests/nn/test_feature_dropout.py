"""Channel dropout and alpha dropout (``nn/feature_dropout.py``, ``functional/feature_dropout.py``):
whole channels dropped and the kept ones scaled, the gradient through the same mask, the alpha
forms' mean and variance kept, identity in eval mode, ``inplace``, PyTorch's reprs and the
probability check."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    "name,shape,lead",
    [
        ("Dropout1d", (4, 6, 5), 2),
        ("Dropout1d", (6, 5), 1),
        ("Dropout2d", (4, 6, 3, 3), 2),
        ("Dropout3d", (6, 2, 2, 2), 1),
    ],
)
def test_channels_drop_whole_and_the_gradient_uses_the_mask(name, shape, lead) -> None:
    mt.manual_seed(0)
    layer = getattr(nn, name)(p=0.4)
    assert repr(layer) == repr(getattr(torch.nn, name)(p=0.4))
    x = mt.ones(*shape, requires_grad=True)
    y = layer(x)
    channels = y.numpy().reshape(int(np.prod(shape[:lead])), -1)
    assert all(len(set(row)) == 1 for row in channels.tolist())  # each channel all 0 or all 1/(1-p)
    assert set(np.unique(channels)) <= {0.0, np.float32(1 / 0.6)}
    y.backward(mt.ones(*shape))
    np.testing.assert_array_equal(x.grad.numpy(), y.numpy())  # dy/dx = the mask
    assert layer.eval()(x) is x


@pytest.mark.parametrize("name", ["AlphaDropout", "FeatureAlphaDropout"])
def test_alpha_dropout_keeps_mean_and_variance(name) -> None:
    mt.manual_seed(1)
    layer = getattr(nn, name)(p=0.2)
    assert repr(layer) == repr(getattr(torch.nn, name)(p=0.2))
    x = (
        mt.randn(400, 50, 4, 4, dtype=mt.float64)
        if name == "FeatureAlphaDropout"
        else mt.randn(200000, dtype=mt.float64)
    )
    y = layer(x).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    alpha, p = 1.7580993408473766, 0.2
    a = ((1 - p) * (1 + p * alpha**2)) ** -0.5
    dropped = np.isclose(y, -alpha * a * (1 - p), rtol=0, atol=1e-12)  # SELU's saturation, scaled and shifted
    assert abs(dropped.mean() - p) < 0.02
    np.testing.assert_allclose(y[~dropped], a * x.numpy()[~dropped] + alpha * a * p, rtol=1e-12)
    assert F.alpha_dropout(x, 0.2) is x  # training defaults to False, as PyTorch


def test_inplace_and_probability_checks() -> None:
    x = mt.ones(2, 3, 4)
    y = F.dropout1d(x, 0.5, inplace=True)
    assert y is x
    assert F.dropout2d(mt.ones(2, 3, 2, 2), 1.0).sum().item() == 0
    for fn in (F.dropout1d, F.dropout2d, F.alpha_dropout, F.feature_alpha_dropout):
        with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
            fn(mt.ones(2, 3, 4), 1.5)
    with pytest.raises(ValueError, match=r"2-D \(C, L\) or 3-D \(N, C, L\), got shape \(1, 2, 3, 4\)"):
        F.dropout1d(mt.ones(1, 2, 3, 4))
    with pytest.warns(UserWarning, match="3D input to dropout2d"):
        F.dropout2d(mt.ones(2, 3, 4))


@pytest.mark.parametrize("name", ["minitensor.nn.feature_dropout", "minitensor.nn.functional.feature_dropout"])
def test_docstring_examples(name) -> None:
    result = doctest.testmod(importlib.import_module(name), extraglobs={"mt": mt, "nn": nn, "F": F, "np": np})
    assert result.attempted > 0 and result.failed == 0

"""nn/fold.py: Unfold and Fold against PyTorch's: repr, no parameters or buffers, outputs and input
gradients, batched and unbatched; settings checked when the layer is made."""

from __future__ import annotations

import re

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn

torch = pytest.importorskip("torch")

SETTINGS = [
    {"kernel_size": 2},
    {"kernel_size": (2, 3), "dilation": (2, 1), "padding": 1, "stride": (1, 2)},
]


@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("shape", [(2, 3, 6, 7), (3, 6, 7)])
def test_unfold_then_fold_equal_pytorchs_with_gradients(settings, shape) -> None:
    x = np.random.default_rng(0).standard_normal(shape)
    layers = [(nn.Unfold(**settings), torch.nn.Unfold(**settings))]
    layers.append((nn.Fold(shape[-2:], **settings), torch.nn.Fold(shape[-2:], **settings)))
    for ours, theirs in layers:
        assert repr(ours) == repr(theirs)
        assert list(ours.parameters()) == [] and list(ours.buffers()) == []
    ours_x, theirs_x = mt.tensor(x, requires_grad=True, dtype=mt.float64), torch.tensor(x, requires_grad=True)
    ours_y = layers[1][0](layers[0][0](ours_x) * 2)
    theirs_y = layers[1][1](layers[0][1](theirs_x) * 2)
    np.testing.assert_allclose(ours_y.numpy(), theirs_y.detach().numpy(), rtol=1e-12)
    g = np.random.default_rng(1).standard_normal(ours_y.shape)
    ours_y.backward(mt.tensor(g, dtype=mt.float64))
    theirs_y.backward(torch.tensor(g))
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: nn.Unfold(0), "kernel_size must be positive, got 0"),
        (lambda: nn.Unfold(2, stride=(1, 2, 3)), "stride must be an int or a tuple of 2 ints, got (1, 2, 3)"),
        (lambda: nn.Fold((4, 4), 2, padding=-1), "padding must be non-negative, got -1"),
        (lambda: nn.Fold(0, 2), "output_size must be positive, got 0"),
    ],
)
def test_bad_settings_raise_when_the_layer_is_made(make, message) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        make()

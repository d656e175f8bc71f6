"""The older nn.utils.weight_norm / remove_weight_norm (nn/utils/weight_norm.py): PyTorch's warning, state
dict keys and shapes, values and gradients with PyTorch's weights, removal, and bad arguments."""

from __future__ import annotations

import doctest
import importlib
import warnings

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn

torch = pytest.importorskip("torch")
old_api = importlib.import_module("minitensor.nn.utils.weight_norm")  # (nn.utils.weight_norm is the function)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_as_pytorch(dim):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        theirs = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3, dtype=torch.float64), dim=dim)
    with pytest.warns(FutureWarning, match="`torch.nn.utils.weight_norm` is deprecated"):
        ours = nn.utils.weight_norm(nn.Linear(4, 3, dtype=mt.float64), dim=dim)
    assert [(k, v.shape) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in theirs.state_dict().items()
    ]
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(2).standard_normal((5, 4))
    y, ty = ours(mt.tensor(x, dtype=mt.float64)), theirs(torch.tensor(x))
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    y.sum().backward()
    ty.sum().backward()
    for name in ("weight_g", "weight_v", "bias"):
        np.testing.assert_allclose(getattr(ours, name).grad.numpy(), getattr(theirs, name).grad.numpy(), rtol=1e-10)
    nn.utils.remove_weight_norm(ours)
    torch.nn.utils.remove_weight_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(ours.weight.numpy(), theirs.weight.detach().numpy(), rtol=1e-12)
    assert isinstance(ours.weight, nn.Parameter) and ours._hooks is None


def test_bad_arguments_raise_naming_them():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        layer = nn.utils.weight_norm(nn.Linear(2, 2))
        with pytest.raises(RuntimeError, match="cannot register two weight_norm hooks on the same parameter"):
            nn.utils.weight_norm(layer)
        with pytest.raises(ValueError, match="weight_norm: module Linear has no parameter named 'kernel'"):
            nn.utils.weight_norm(nn.Linear(2, 2), "kernel")
    with pytest.raises(ValueError, match="remove_weight_norm: weight_norm of 'bias' not found"):
        nn.utils.remove_weight_norm(layer, "bias")


def test_docstring_examples_run():
    result = doctest.testmod(old_api, extraglobs={"mt": mt, "nn": nn}, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0

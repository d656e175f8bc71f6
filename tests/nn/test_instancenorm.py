"""Instance norm layers (``nn/instancenorm.py``): PyTorch's defaults (no affine, no running
statistics), state and repr; batched and unbatched input, training and evaluation with running
statistics, against PyTorch's layers; the channel-count rule (an error with ``affine``, else
PyTorch's warning)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from helpers import assert_module_matches_torch

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.nn import instancenorm

torch = pytest.importorskip("torch")

CONFIGS = [{}, {"affine": True}, {"affine": True, "track_running_stats": True, "momentum": 0.3}]


@pytest.mark.parametrize("kwargs", CONFIGS, ids=str)
@pytest.mark.parametrize("name,shape", [("InstanceNorm1d", (2, 3, 5)), ("InstanceNorm2d", (2, 3, 3, 4))])
def test_matches_pytorch(name, shape, kwargs) -> None:
    ours, theirs = getattr(nn, name)(3, **kwargs).double(), getattr(torch.nn, name)(3, **kwargs).double()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal(shape) * 3 + 1
    assert_module_matches_torch(ours.train(), theirs.train(), x, torch, steps=2)
    assert_module_matches_torch(ours, theirs, x[0], torch)  # unbatched
    assert_module_matches_torch(ours.eval(), theirs.eval(), x, torch)


def test_channel_count() -> None:
    x = mt.randn(2, 4, 5)
    with pytest.raises(ValueError, match=r"num_features=3.*\(2, 4, 5\)"):
        nn.InstanceNorm1d(3, affine=True)(x)
    with pytest.warns(UserWarning, match="does not match num_features=3"):
        y = nn.InstanceNorm1d(3)(x)
    assert y.shape == x.shape


def test_docstring_examples() -> None:
    result = doctest.testmod(instancenorm, extraglobs={"mt": mt, "nn": nn, "F": F, "np": np})
    assert result.attempted > 0 and result.failed == 0

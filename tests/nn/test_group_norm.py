"""``nn/group_norm.py``: ``GroupNorm`` and ``LocalResponseNorm`` (PyTorch's state, reprs and
attributes, outputs and all gradients against PyTorch's layers); the docstring examples of the
module and of ``F.group_norm``'s file."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
from helpers import assert_module_matches_torch

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F


@pytest.mark.parametrize("kwargs", [{}, {"affine": False}, {"bias": False, "eps": 1e-3}], ids=str)
@pytest.mark.parametrize("groups,shape", [(2, (2, 4, 3)), (1, (3, 4)), (4, (2, 4, 2, 3))])
def test_group_norm_matches_pytorch(groups, shape, kwargs) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = nn.GroupNorm(groups, 4, **kwargs).double(), torch.nn.GroupNorm(groups, 4, **kwargs).double()
    assert repr(ours) == repr(theirs) and list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal(shape) * 2 - 1
    assert_module_matches_torch(ours, theirs, x, torch)
    assert_module_matches_torch(ours.float(), theirs.float(), x.astype(np.float32), torch)


@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 6, 2, 3), (1, 3, 2, 2, 2)], ids=str)
def test_local_response_norm_matches_pytorch(shape) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = nn.LocalResponseNorm(3, alpha=0.3, beta=0.6, k=1.5), torch.nn.LocalResponseNorm(3, 0.3, 0.6, 1.5)
    assert repr(ours) == repr(theirs)
    assert_module_matches_torch(ours, theirs, np.random.default_rng(1).standard_normal(shape), torch)


@pytest.mark.parametrize("name", ["minitensor.nn.group_norm", "minitensor.nn.functional.group_norm"])
def test_docstring_examples(name) -> None:
    result = doctest.testmod(importlib.import_module(name), extraglobs={"mt": mt, "nn": nn, "F": F, "np": np})
    assert result.attempted > 0 and result.failed == 0

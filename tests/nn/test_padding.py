"""The padding layers (``nn/padding.py``): PyTorch's attributes and reprs, and the same outputs and
gradients as PyTorch's layers, batched and unbatched, with cropping (negative amounts)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from helpers import assert_module_matches_torch

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.nn import padding

torch = pytest.importorskip("torch")

LAYERS = [
    ("ZeroPad1d", (2,)),
    ("ZeroPad2d", ((1, 2, 0, 3),)),
    ("ConstantPad1d", ((1, -1), 2.5)),
    ("ConstantPad2d", (1, -0.5)),
    ("ReflectionPad1d", (2,)),
    ("ReflectionPad2d", ((1, 2, 3, 0),)),
    ("ReplicationPad1d", ((3, -1),)),
    ("ReplicationPad2d", (2,)),
    ("CircularPad1d", ((1, 3),)),
    ("CircularPad2d", ((2, 0, -1, 1),)),
]


@pytest.mark.parametrize("name,args", LAYERS, ids=lambda v: v if isinstance(v, str) else str(v))
def test_matches_pytorch(name, args) -> None:
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert {k: v for k, v in vars(ours).items() if not k.startswith("_") and k != "training"} == {
        k: v for k, v in vars(theirs).items() if not k.startswith("_") and k != "training"
    }
    x = np.random.default_rng(0).standard_normal((2, 3, 4) if name.endswith("1d") else (2, 3, 4, 5))
    assert_module_matches_torch(ours, theirs, x, torch)
    assert_module_matches_torch(ours, theirs, x[0], torch)


def test_docstring_examples() -> None:
    result = doctest.testmod(padding, extraglobs={"mt": mt, "nn": nn, "F": F, "np": np})
    assert result.attempted > 0 and result.failed == 0

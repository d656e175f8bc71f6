"""``Upsample``, ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d`` (``nn/upsampling.py``), and
``PixelShuffle``/``PixelUnshuffle`` (``nn/pixelshuffle.py``): PyTorch's attributes and reprs, the
same outputs and gradients as PyTorch's layers, the docstring examples of both modules and of
``F.interpolate``'s file."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
from helpers import assert_module_matches_torch

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

torch = pytest.importorskip("torch")

LAYERS = [
    ("Upsample", (), {"scale_factor": 2}),
    ("Upsample", (), {"size": (5, 7), "mode": "bilinear", "align_corners": True}),
    ("Upsample", (), {"scale_factor": (1.5, 2.5), "mode": "bicubic"}),
    ("Upsample", (), {"size": 3, "mode": "nearest-exact"}),
    ("UpsamplingNearest2d", (), {"scale_factor": 3}),
    ("UpsamplingBilinear2d", ((4, 9),), {}),
    ("PixelShuffle", (2,), {}),
    ("PixelUnshuffle", (2,), {}),
]


@pytest.mark.parametrize("name,args,kwargs", LAYERS, ids=lambda v: v if isinstance(v, str) else str(v))
def test_matches_pytorch(name, args, kwargs) -> None:
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert {k: v for k, v in vars(ours).items() if not k.startswith("_") and k != "training"} == {
        k: v for k, v in vars(theirs).items() if not k.startswith("_") and k != "training"
    }
    x = np.random.default_rng(0).standard_normal((2, 4, 4, 6))
    assert_module_matches_torch(ours, theirs, x, torch)
    assert_module_matches_torch(ours, theirs, x.astype(np.float32), torch)


def test_upsample_1d_input() -> None:
    x = np.random.default_rng(1).standard_normal((2, 3, 5))
    for kwargs in ({"scale_factor": 2.5, "mode": "linear"}, {"size": 8}):
        assert_module_matches_torch(nn.Upsample(**kwargs), torch.nn.Upsample(**kwargs), x, torch)


@pytest.mark.parametrize(
    "name",
    [
        "minitensor.nn.upsampling",
        "minitensor.nn.pixelshuffle",
        "minitensor.nn.functional.interpolation",
        "minitensor.ops.resample",
    ],
)
def test_docstring_examples(name) -> None:
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(
        importlib.import_module(name), extraglobs={"mt": mt, "nn": nn, "F": F, "np": np}, optionflags=flags
    )
    assert result.attempted > 0 and result.failed == 0

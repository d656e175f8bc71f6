"""``Flatten`` and ``Unflatten`` (``nn/flatten.py``): PyTorch's reprs, shapes and gradients, a -1 in
``unflattened_size``, and the errors for dims that do not fit."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from helpers import assert_module_matches_torch

import minitensor as mt
import minitensor.nn as nn
from minitensor.nn import flatten

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    "name,args",
    [
        ("Flatten", ()),
        ("Flatten", (0, 2)),
        ("Flatten", (-2,)),
        ("Unflatten", (1, (2, -1))),
        ("Unflatten", (-1, (5, 1))),
    ],
)
def test_matches_pytorch(name, args) -> None:
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert_module_matches_torch(ours, theirs, np.random.default_rng(0).standard_normal((3, 4, 5)), torch)


def test_errors_name_the_sizes() -> None:
    with pytest.raises(ValueError, match=r"\[2, 2\].*dim 1 \(3\)"):
        nn.Unflatten(1, (2, 2))(mt.ones(2, 3))
    with pytest.raises(TypeError, match="tuple of ints.*float at position 1"):
        nn.Unflatten(1, (2, 2.0))
    with pytest.raises(ValueError, match="start_dim \\(2\\) must not come after end_dim \\(1\\)"):
        nn.Flatten(2, 1)(mt.ones(2, 3, 4))


def test_docstring_examples() -> None:
    result = doctest.testmod(flatten, extraglobs={"mt": mt, "nn": nn, "np": np})
    assert result.attempted > 0 and result.failed == 0

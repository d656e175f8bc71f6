"""nn/functional/shuffle.py: ``F.channel_shuffle`` against PyTorch (values, gradients, second
order, JVP; 3-D and 4-D inputs), its errors, and its docstring example."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.nn.functional import shuffle as module


@pytest.mark.parametrize("shape,groups", [((2, 6, 3), 2), ((1, 6, 2, 2), 3), ((2, 4, 1), 1)], ids=str)
def test_against_pytorch_to_second_order(shape, groups, torch):
    x = np.random.default_rng(0).standard_normal(shape)
    check_op(lambda t: F.channel_shuffle(t, groups), lambda t: torch.nn.functional.channel_shuffle(t, groups), x)


def test_bad_arguments_raise_naming_them():
    with pytest.raises(ValueError, match=r"channel_shuffle: input must have more than 2 dims \(N, C, \*\), got"):
        F.channel_shuffle(mt.ones(4, 3), 1)
    with pytest.raises(ValueError, match="channel_shuffle: the channels \\(5\\) must be divisible by groups \\(2\\)"):
        F.channel_shuffle(mt.ones(1, 5, 2), 2)
    with pytest.raises(ValueError, match="channel_shuffle: groups must be a positive int, got 0"):
        F.channel_shuffle(mt.ones(1, 4, 2), 0)


def test_docstring_examples_run():
    assert doctest.testmod(module, extraglobs={"mt": mt, "F": F}).failed == 0

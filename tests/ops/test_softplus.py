"""ops/softplus.py: ``softplus`` (with ``beta`` and ``threshold``) and ``silu``, functions and
modules: gradients of first and second order against PyTorch, and no overflow for large inputs."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import torch_functional
from op_checks import check_op

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4))


@pytest.mark.parametrize("beta,threshold", [(1.0, 20.0), (2.0, 1.0), (0.5, 3.0)])
def test_softplus(beta, threshold):
    x = X * 4
    check_op(lambda t: mt.softplus(t, beta, threshold), lambda t: torch_functional().softplus(t, beta, threshold), x)
    check_op(lambda t: nn.Softplus(beta, threshold)(t), lambda t: torch_functional().softplus(t, beta, threshold), x)


def test_softplus_large_input_does_not_overflow():
    x = mt.tensor([-1000.0, 0.0, 1000.0])
    np.testing.assert_allclose(mt.softplus(x).numpy(), [0.0, np.log(2.0), 1000.0])
    with pytest.raises(TypeError, match="beta must be a number"):
        mt.softplus(x, beta="1")


def test_silu():
    check_op(F.silu, lambda t: torch_functional().silu(t), X)
    check_op(lambda t: nn.SiLU()(t), lambda t: torch_functional().silu(t), X)

"""ops/norms.py: ``norm`` and ``linalg.vector_norm`` (every order, dims, keepdim): gradients of first
and second order against PyTorch, the zero gradient at zero, and the refused ``'nuc'``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

X = np.random.default_rng(2).standard_normal((3, 4))


@pytest.mark.parametrize(
    "p,dim,keepdim", [("fro", None, False), (2, 1, True), (1, 0, False), (math.inf, 1, False), (3, (0, 1), False)]
)
def test_norm(p, dim, keepdim):
    torch = pytest.importorskip("torch")
    check_op(lambda x: x.norm(p, dim, keepdim), lambda x: x.norm(p, dim, keepdim), X)
    check_op(
        lambda x: mt.linalg.vector_norm(x, 2 if p == "fro" else p, dim, keepdim),
        lambda x: torch.linalg.vector_norm(x, 2 if p == "fro" else p, dim, keepdim),
        X,
    )


def test_norm_of_zero_has_zero_gradient():
    x = mt.zeros(3, requires_grad=True)
    x.norm().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="'nuc' is not supported"):
        x.norm("nuc")

"""tan, asin, acos, atan, atan2 and the arc* aliases (ops/trig.py): float64 gradcheck, second order and
PyTorch as the oracle (value, gradient, second derivative); integers computed in the default float dtype."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

rng = np.random.default_rng(11)
INSIDE = rng.uniform(-0.8, 0.8, (2, 3))  # (asin, acos: away from ±1, where the slope is infinite)


@pytest.mark.parametrize("name", ["tan", "asin", "acos", "atan", "arcsin", "arccos", "arctan"])
def test_unary_functions_and_methods(name):
    check_op(lambda x: getattr(mt, name)(x), lambda x: getattr(x, name)(), INSIDE)
    check_op(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), INSIDE)


@pytest.mark.parametrize("name", ["atan2", "arctan2"])
def test_atan2_broadcasts_and_differentiates_both_operands(name):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3,)) + 2.0
    check_op(lambda x, y: getattr(mt, name)(x, y), lambda x, y: getattr(x, name)(y), a, b)


def test_atan2_quadrants_and_integers():
    y, x = mt.tensor([1, 1, -1, -1]), mt.tensor([1, -1, -1, 1])
    out = mt.atan2(y, x)
    assert out.dtype == mt.float32
    np.testing.assert_allclose(out.numpy(), np.arctan2([1, 1, -1, -1], [1, -1, -1, 1]), rtol=1e-6)


def test_in_place_forms_change_the_tensor_and_join_the_graph():
    w = mt.tensor([0.1, 0.2], dtype=mt.float64, requires_grad=True)
    h = w * 1.0
    h.tan_()
    h.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 1 / np.cos([0.1, 0.2]) ** 2)
    with pytest.raises(RuntimeError, match="can't be cast"):
        mt.tensor([1, 2]).asin_()


def test_bad_input_names_the_argument():
    with pytest.raises(TypeError, match="tan: input must be a Tensor, got list"):
        mt.tan([1.0])
    with pytest.raises(ValueError, match="atan2: shapes"):
        mt.atan2(mt.ones(2), mt.ones(3))

"""ops/trig.py: ``sin``, ``cos``, ``tan``, ``asin``, ``acos``, ``atan``, ``atan2`` and the arc* aliases
(functions and methods): float64 gradcheck, second order and PyTorch as the oracle, integer inputs computed
in the default float dtype, and the float32 sin/cos kernels' accuracy."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

X = np.random.default_rng(0).standard_normal((3, 4))


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos(name):
    check_op(lambda x: getattr(mt, name)(x), lambda x: getattr(x, name)(), X)
    check_op(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), X)


def test_sin_cos_of_integers_give_default_floats():
    pos = mt.arange(0, 4)
    for fn in (mt.sin, mt.cos, lambda t: t.sin()):
        out = fn(pos)
        assert out.dtype == mt.float32
    np.testing.assert_allclose(mt.sin(pos).numpy(), np.sin(np.arange(4)), rtol=1e-6)
    with mt.no_grad():
        assert mt.cos(mt.tensor([0.0], dtype=mt.float64)).dtype == mt.float64


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_float32_forward_and_backward_by_the_kernels(name, rng):
    x = rng.uniform(-50, 50, 2000).astype(np.float32)
    g = rng.standard_normal(2000).astype(np.float32)
    t = mt.tensor(x, requires_grad=True)
    y = getattr(mt, name)(t)
    y.backward(mt.tensor(g))
    x64 = x.astype(np.float64)
    value, slope = (np.sin(x64), np.cos(x64)) if name == "sin" else (np.cos(x64), -np.sin(x64))
    assert y.dtype == mt.float32 and t.grad.dtype == mt.float32
    np.testing.assert_allclose(y.numpy(), value, rtol=0, atol=1.5 * np.spacing(np.float32(1)))
    np.testing.assert_allclose(t.grad.numpy(), g * slope, rtol=0, atol=4 * np.spacing(np.float32(4)))


RNG = np.random.default_rng(11)
INSIDE = RNG.uniform(-0.8, 0.8, (2, 3))  # (asin, acos: away from ±1, where the slope is infinite)


@pytest.mark.parametrize("name", ["tan", "asin", "acos", "atan", "arcsin", "arccos", "arctan"])
def test_unary_functions_and_methods(name):
    check_op(lambda x: getattr(mt, name)(x), lambda x: getattr(x, name)(), INSIDE)
    check_op(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), INSIDE)


@pytest.mark.parametrize("name", ["atan2", "arctan2"])
def test_atan2_broadcasts_and_differentiates_both_operands(name):
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3,)) + 2.0
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

"""sin, cos, pow (integer exponents by multiplication), softplus, silu: gradients of first and
second order, and PyTorch as the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4))


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


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 3.0, 5, -1, -2.0, 0.5, 2.5])
def test_pow_scalar_exponent(exponent):
    x = np.abs(X) + 0.5 if exponent not in (0, 1, 2, 3, 3.0, 5) else X
    check_op(lambda t: mt.pow(t, exponent), lambda t: t.pow(exponent), x)
    check_op(lambda t: t.pow(exponent), lambda t: t.pow(exponent), x)
    check_op(lambda t: t**exponent, lambda t: t**exponent, x)


def test_pow_tensor_exponent_and_scalar_base():
    a, b = np.abs(X) + 0.5, rng.standard_normal((3, 4))
    check_op(lambda s, e: mt.pow(s, e), lambda s, e: s.pow(e), a, b)
    check_op(lambda e: mt.pow(2.0, e), lambda e: 2.0**e, b)


def test_pow_integer_exponent_matches_numpy_and_keeps_dtype():
    x32 = mt.randn(64, 64)
    for n in (2, 3, 4, 7, -3):
        out = mt.pow(x32, float(n))
        assert out.dtype == mt.float32
        np.testing.assert_allclose(out.numpy(), np.power(x32.numpy(), float(n)), rtol=2e-6)
    i = mt.tensor([1, 2, 3])
    assert mt.pow(i, 2).dtype == mt.int64 and mt.pow(i, 2).tolist() == [1, 4, 9]
    assert mt.pow(i, 2.0).dtype == mt.float32
    with pytest.raises(ValueError, match="negative integer powers"):
        mt.pow(i, -1)
    assert mt.pow(mt.zeros(3), 0).tolist() == [1.0, 1.0, 1.0]


def test_pow_of_zero_base_gradient_like_torch():
    torch = pytest.importorskip("torch")
    for n in (0, 1, 2, 3):
        x = mt.zeros(3, dtype=mt.float64, requires_grad=True)
        tx = torch.zeros(3, dtype=torch.float64, requires_grad=True)
        x.pow(n).sum().backward()
        tx.pow(n).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_pow_pow_inplace():
    x = mt.tensor([1.0, 2.0, 3.0])
    assert x.pow_(2) is x and x.tolist() == [1.0, 4.0, 9.0]


@pytest.mark.parametrize("beta,threshold", [(1.0, 20.0), (2.0, 1.0), (0.5, 3.0)])
def test_softplus(beta, threshold):
    x = X * 4
    check_op(lambda t: mt.softplus(t, beta, threshold), lambda t: _tF().softplus(t, beta, threshold), x)
    check_op(lambda t: nn.Softplus(beta, threshold)(t), lambda t: _tF().softplus(t, beta, threshold), x)


def test_softplus_large_input_does_not_overflow():
    x = mt.tensor([-1000.0, 0.0, 1000.0])
    np.testing.assert_allclose(mt.softplus(x).numpy(), [0.0, np.log(2.0), 1000.0])
    with pytest.raises(TypeError, match="beta must be a number"):
        mt.softplus(x, beta="1")


def test_silu():
    check_op(F.silu, lambda t: _tF().silu(t), X)
    check_op(lambda t: nn.SiLU()(t), lambda t: _tF().silu(t), X)


def _tF():
    torch = pytest.importorskip("torch")
    return torch.nn.functional


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_float32_forward_and_backward_by_the_kernels(name):
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


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "tanh", "sigmoid"])
def test_float_functions_of_integers_and_bools_give_default_floats(name):
    for t in (mt.tensor([1, 2]), mt.tensor([True, False])):
        for out in (getattr(mt, name)(t), getattr(t, name)()):
            assert out.dtype == mt.float32  # (as PyTorch; NumPy would give float64, or int for sigmoid)
    expected = getattr(np, name)(np.array([1.0, 2.0])) if name != "sigmoid" else 1 / (1 + np.exp(-np.array([1.0, 2.0])))
    np.testing.assert_allclose(getattr(mt, name)(mt.tensor([1, 2])).numpy(), expected, rtol=1e-6)
    assert getattr(mt, name)(mt.tensor([1.0], dtype=mt.float64)).dtype == mt.float64

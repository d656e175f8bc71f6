"""ops/trig.py: ``sin`` and ``cos`` (functions and methods): gradients of first and second order
against PyTorch, integer inputs computed in the default float dtype, and the float32 kernels' accuracy."""

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

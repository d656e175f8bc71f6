"""log1p, expm1, log2, log10, exp2, rsqrt, square, reciprocal, neg, frac (functions and methods):
float64 gradcheck, second order and PyTorch as the oracle; sign, floor, ceil, round, trunc: PyTorch's
values and zero gradients; integer inputs computed in the default float dtype."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

rng = np.random.default_rng(7)
POSITIVE = rng.random((3, 4)) + 0.3
SIGNED = rng.standard_normal((3, 4)) * 2 + 0.05  # away from integers' neighbourhood at 0


@pytest.mark.parametrize("name", ["log1p", "log2", "log10", "rsqrt", "reciprocal"])
def test_functions_of_positive_inputs(name):
    check_op(lambda x: getattr(mt, name)(x), lambda x: getattr(x, name)(), POSITIVE)
    check_op(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), POSITIVE)


@pytest.mark.parametrize("name", ["expm1", "exp2", "square", "neg", "frac"])
def test_functions_of_signed_inputs(name):
    data = SIGNED if name != "frac" else SIGNED + 0.013  # (frac: away from integers, where it jumps)
    check_op(lambda x: getattr(mt, name)(x), lambda x: getattr(x, name)(), data)
    check_op(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), data)


def test_log1p_and_expm1_keep_precision_near_zero():
    tiny = mt.tensor([1e-12, -1e-12], dtype=mt.float64)
    np.testing.assert_allclose(mt.log1p(tiny).numpy(), [1e-12, -1e-12], rtol=1e-12)
    np.testing.assert_allclose(mt.expm1(tiny).numpy(), [1e-12, -1e-12], rtol=1e-12)


@pytest.mark.parametrize("name", ["sign", "floor", "ceil", "round", "trunc"])
def test_piecewise_constant_functions_have_zero_gradient(name):
    torch = pytest.importorskip("torch")
    data = np.array([-2.5, -1.5, -0.4, 0.0, 0.5, 1.5, 2.7])
    x = mt.tensor(data, dtype=mt.float64, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    y, ty = getattr(mt, name)(x), getattr(torch, name)(tx)
    np.testing.assert_array_equal(y.numpy(), ty.detach().numpy())
    (y * 3).sum().backward()
    (ty * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert not x.grad.numpy().any()


def test_integer_inputs_give_default_floats():
    ints = mt.tensor([1, 2, 4])
    assert mt.log2(ints).tolist() == [0.0, 1.0, 2.0] and mt.log2(ints).dtype == mt.float32
    assert mt.reciprocal(ints).dtype == mt.float32 and mt.sign(mt.tensor([-3, 0, 2])).tolist() == [-1, 0, 1]

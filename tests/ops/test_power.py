"""ops/power.py: ``pow`` / ``**`` / ``pow_`` with a number exponent (integer exponents by
multiplication): gradients of first and second order against PyTorch, dtypes, and the gradient at a zero base."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

X = np.random.default_rng(0).standard_normal((3, 4))


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 3.0, 5, -1, -2.0, 0.5, 2.5])
def test_pow_scalar_exponent(exponent):
    x = np.abs(X) + 0.5 if exponent not in (0, 1, 2, 3, 3.0, 5) else X
    check_op(lambda t: mt.pow(t, exponent), lambda t: t.pow(exponent), x)
    check_op(lambda t: t.pow(exponent), lambda t: t.pow(exponent), x)
    check_op(lambda t: t**exponent, lambda t: t**exponent, x)


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

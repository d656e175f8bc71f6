"""ops/power.py: ``pow`` / ``**`` / ``pow_`` with a number exponent (integer exponents by
multiplication): gradients of first and second order against PyTorch, dtypes, and the gradient at a zero base."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

X = np.random.default_rng(0).standard_normal((3, 4))


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 3.0, 5, -1, -2.0, 0.5, -0.5, 2.5])
def test_pow_scalar_exponent(exponent):
    x = np.abs(X) + 0.5 if exponent not in (0, 1, 2, 3, 3.0, 5) else X
    check_op(lambda t: mt.pow(t, exponent), lambda t: t.pow(exponent), x)
    check_op(lambda t: t.pow(exponent), lambda t: t.pow(exponent), x)
    check_op(lambda t: t**exponent, lambda t: t**exponent, x)


@pytest.mark.parametrize("exponent", [0.5, -0.5])
def test_pow_of_a_half_is_sqrt_and_rsqrt_as_in_pytorch(exponent) -> None:
    """``x ** 0.5`` and ``x ** -0.5`` of float tensors are PyTorch's sqrt and rsqrt: -0.0, -inf and NaN
    as there (``np.power`` gives 0.0 and inf at -0.0, 0.0 at -inf), and the gradient at 0."""
    torch = pytest.importorskip("torch")
    values = [-0.0, 0.0, -np.inf, np.inf, -1.0, 4.0, np.nan, 0.25]
    for dtype in ("float32", "float64"):
        got = (mt.tensor(values, dtype=dtype) ** exponent).numpy()
        expected = (torch.tensor(values, dtype=getattr(torch, dtype)) ** exponent).numpy()
        np.testing.assert_array_equal(got, expected)
        numbers = ~np.isnan(expected)  # (a NaN's sign bit is nobody's promise)
        np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(expected[numbers]))
    x = mt.tensor([0.0, 4.0, 0.25], requires_grad=True)
    tx = torch.tensor([0.0, 4.0, 0.25], requires_grad=True)
    mt.pow(x, exponent).sum().backward()
    tx.pow(exponent).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    assert mt.pow(mt.tensor([4, 9]), exponent).dtype == mt.float32  # (integers: the float path)


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

"""The tanh kernels (kernels/tanh.py): the forward within 3 ulp of the exact value (long double)
also for tiny arguments (where 1 - exp(-2|x|) would cancel), special values and signed zero as
NumPy's; the one-pass backward equal to grad * (1 - y^2)."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import assert_same_values, jitted, reference, tolerance, ulps

from minitensor.kernels.tanh import tanh, tanh_backward

r = np.random.default_rng(0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_within_three_ulp_of_the_exact_value(dtype) -> None:
    x = np.concatenate([r.uniform(-20, 20, 200_000), r.uniform(-1, 1, 100_000), 10.0 ** r.uniform(-30, 0, 100_000)])
    x = np.concatenate([x, -x]).astype(dtype)
    exact = np.tanh(x.astype(np.longdouble))
    assert ulps(jitted(lambda: tanh(x)), exact).max() <= 3.0
    assert ulps(reference(lambda: tanh(x)), exact).max() <= 3.0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_values_and_signed_zero(dtype) -> None:
    tiny = np.finfo(dtype).smallest_subnormal
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 30.0, -400.0, tiny, -tiny], dtype)
    assert_same_values(jitted(lambda: tanh(x)), np.tanh(x))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_backward_in_one_pass_is_grad_times_one_minus_y_squared(dtype) -> None:
    y = np.tanh(r.standard_normal((40, 30))).astype(dtype)
    grad = r.standard_normal((40, 30)).astype(dtype)
    got = jitted(lambda: tanh_backward(grad, y))
    np.testing.assert_allclose(got, grad * (1 - y * y), **tolerance(dtype))
    np.testing.assert_allclose(reference(lambda: tanh_backward(grad, y)), got, **tolerance(dtype))
    broadcast = tanh_backward(grad[:1], y)  # (shapes differ: the plain formula)
    np.testing.assert_allclose(broadcast, grad[:1] * (1 - y * y), **tolerance(dtype))

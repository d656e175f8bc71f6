"""The float32 asin/acos/atan/atan2 kernels (kernels/inverse_trig.py) against the exact values (the float64
C library): within 1 ulp (0.58, 0.58, 0.82, 0.82 measured; NumPy's own 0.84-1.26) near 0, near ±1 and, for
atan and atan2, up to the largest floats; the special values as NumPy; float64 keeps NumPy's; the ops'
gradients on them."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import assert_same_values, assert_strided_input_as_its_copy, jitted, reference, ulps

import minitensor as mt
from minitensor.kernels import inverse_trig

FUNCTIONS = {
    "asin": (inverse_trig.asin, np.arcsin),
    "acos": (inverse_trig.acos, np.arccos),
    "atan": (inverse_trig.atan, np.arctan),
}


def _samples(name: str) -> np.ndarray:
    """[-1, 1] throughout, near 0 (down to 1e-30), near ±1 and around 1/2 (the methods' switch); atan also
    around its switches (tan π/8, tan 3π/8) and up to 1e38."""
    r = np.random.default_rng(0)
    sign = r.choice([-1, 1], 20_000)
    parts = [
        r.uniform(-1, 1, 100_000),
        10 ** r.uniform(-30, 0, 20_000) * sign,
        (1 - 10 ** r.uniform(-7, -1, 20_000)) * sign,
    ]
    parts.append(r.uniform(0.49, 0.51, 10_000) * sign[:10_000])
    if name == "atan":
        parts += [r.uniform(-100, 100, 50_000), 10 ** r.uniform(0, 38, 20_000) * sign, r.uniform(0.40, 0.43, 5000)]
        parts.append(r.uniform(2.40, 2.43, 5000))
    return np.concatenate(parts).astype(np.float32)


@pytest.mark.parametrize("name", ["asin", "acos", "atan"])
def test_within_one_ulp_of_the_exact_value(name) -> None:
    kernel, exact_fn = FUNCTIONS[name]
    x = _samples(name)
    exact = exact_fn(x.astype(np.float64))
    got = jitted(lambda: kernel(x))
    assert got.dtype == np.float32 and got.shape == x.shape
    assert ulps(got, exact).max() <= 1.0
    assert ulps(reference(lambda: kernel(x)), exact).max() <= 1.0  # (NumPy's own float32 function)


@pytest.mark.parametrize("name", ["asin", "acos", "atan"])
def test_special_values_as_numpy(name) -> None:
    kernel, numpy_fn = FUNCTIONS[name]
    x = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.0, np.inf, -np.inf, np.nan], np.float32)
    with np.errstate(invalid="ignore"):
        expected = numpy_fn(x)
    got = jitted(lambda: kernel(x))
    assert_same_values(got[np.isnan(expected) | (x == 0)], expected[np.isnan(expected) | (x == 0)])  # (-0.0 kept)
    assert ulps(got[~np.isnan(expected)], numpy_fn(x.astype(np.float64))[~np.isnan(expected)]).max() <= 1.0


@pytest.mark.parametrize("name", ["asin", "acos", "atan"])
def test_float64_keeps_numpy_and_shapes_and_strides_are_kept(name) -> None:
    kernel, numpy_fn = FUNCTIONS[name]
    x64 = np.linspace(-1, 1, 101)
    np.testing.assert_array_equal(kernel(x64), numpy_fn(x64))
    assert_strided_input_as_its_copy(kernel, -1, 1)


@pytest.mark.parametrize(
    "op, derivative",
    [
        (mt.asin, lambda x: 1 / np.sqrt(1 - x * x)),
        (mt.acos, lambda x: -1 / np.sqrt(1 - x * x)),
        (mt.atan, lambda x: 1 / (1 + x * x)),
    ],
)
def test_the_ops_run_on_the_kernels_and_their_gradients_hold(op, derivative) -> None:
    x = np.linspace(-0.95, 0.95, 64, dtype=np.float32)
    t = mt.tensor(x, requires_grad=True)
    y = jitted(lambda: op(t))
    jitted(lambda: y.sum().backward())
    np.testing.assert_allclose(t.grad.numpy(), derivative(x.astype(np.float64)), rtol=2e-6)


def test_atan2_within_one_ulp_over_every_quadrant_and_scale() -> None:
    r = np.random.default_rng(1)
    y = (r.standard_normal(100_000) * 10 ** r.uniform(-20, 20, 100_000)).astype(np.float32)
    x = (r.standard_normal(100_000) * 10 ** r.uniform(-20, 20, 100_000)).astype(np.float32)
    exact = np.arctan2(y.astype(np.float64), x.astype(np.float64))
    got = jitted(lambda: inverse_trig.atan2(y, x))
    assert got.dtype == np.float32 and ulps(got, exact).max() <= 1.0  # (measured 0.82; NumPy's 1.26)


def test_atan2_zeros_infinities_and_nan_as_numpy() -> None:
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0], np.float32)
    y, x = (a.ravel() for a in np.meshgrid(special, special))
    assert_same_values(jitted(lambda: inverse_trig.atan2(y, x)), np.arctan2(y, x))  # (signed zeros, ±π, ±π/4)


def test_atan2_broadcasts_and_keeps_numpy_for_float64() -> None:
    y, x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(3, 2, 1), np.linspace(-3, 3, 4, dtype=np.float32)
    got = jitted(lambda: inverse_trig.atan2(y, x))
    assert got.shape == (3, 2, 4)
    assert ulps(got, np.arctan2(y.astype(np.float64), x.astype(np.float64))).max() <= 1.0
    np.testing.assert_array_equal(inverse_trig.atan2(y.astype(np.float64), x), np.arctan2(y.astype(np.float64), x))


def test_atan2_op_runs_on_the_kernel_and_its_gradients_hold() -> None:
    r = np.random.default_rng(2)
    a, b = (mt.tensor(r.standard_normal(32).astype(np.float32), requires_grad=True) for _ in range(2))
    jitted(lambda: mt.atan2(a, b).sum().backward())
    r2 = a.detach().numpy().astype(np.float64) ** 2 + b.detach().numpy().astype(np.float64) ** 2
    np.testing.assert_allclose(a.grad.numpy(), b.detach().numpy() / r2, rtol=2e-6)
    np.testing.assert_allclose(b.grad.numpy(), -a.detach().numpy() / r2, rtol=2e-6)

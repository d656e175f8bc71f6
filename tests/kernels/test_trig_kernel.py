"""The float32 sin/cos/tan kernels (kernels/trig.py) against the exact values (the float64 C library):
within 1.5 ulp (tan 2.5), also where x is nearest a multiple of π/2 (where the reduction needs its fused
multiply-adds), the C library beyond the reduction's range, special values as NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import assert_same_values, assert_strided_input_as_its_copy, jitted, reference, ulps

from minitensor.kernels import trig

FUNCTIONS = {"sin": (trig.sin, np.sin), "cos": (trig.cos, np.cos), "tan": (trig.tan, np.tan)}
MOST_ULPS = {"sin": 1.5, "cos": 1.5, "tan": 2.5}  # (tan measured: 2.37, its sin and cos in float64 then one rounding)


def _samples() -> np.ndarray:
    """Random float32 over the reduction's whole range and near 0, and the float32 nearest to each
    multiple of π/2 below 2^17 with its two neighbours (r there is down to ~1e-9)."""
    r = np.random.default_rng(0)
    nearest = (np.arange(1, 83_000) * (np.pi / 2)).astype(np.float32)
    neighbours = np.concatenate([nearest, np.nextafter(nearest, np.inf), np.nextafter(nearest, 0)])
    spread = [r.uniform(-131072, 131072, 100_000), r.uniform(-10, 10, 100_000), r.uniform(-1e-3, 1e-3, 1000)]
    return np.concatenate([np.concatenate(spread).astype(np.float32), neighbours, -neighbours])


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_within_a_few_ulp_of_the_exact_value(name) -> None:
    kernel, exact_fn = FUNCTIONS[name]
    x = _samples()
    exact = exact_fn(x.astype(np.float64))
    got = jitted(lambda: kernel(x))
    assert got.dtype == np.float32 and ulps(got, exact).max() <= MOST_ULPS[name]
    assert ulps(reference(lambda: kernel(x)), exact).max() <= 2.0  # (NumPy's own float32 function)


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_beyond_the_range_and_special_values_as_the_c_library(name) -> None:
    kernel, exact_fn = FUNCTIONS[name]
    x = np.array([131072.0, -131072.0, 1e6, -3e38, 3.4028235e38, np.inf, -np.inf, np.nan, 0.0, -0.0], np.float32)
    with np.errstate(invalid="ignore"):  # (inf: NaN)
        expected = exact_fn(x.astype(np.float64)).astype(np.float32)
    assert_same_values(jitted(lambda: kernel(x)), expected)  # (sin(-0.0) is -0.0)
    inside = np.nextafter(np.float32(131072.0), np.float32(0), dtype=np.float32) * np.array([1, -1], np.float32)
    assert ulps(jitted(lambda: kernel(inside)), exact_fn(inside.astype(np.float64))).max() <= MOST_ULPS[name]


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_float64_keeps_numpy_and_shapes_and_strides_are_kept(name) -> None:
    kernel, exact_fn = FUNCTIONS[name]
    x64 = np.linspace(-20, 20, 101)
    np.testing.assert_array_equal(kernel(x64), exact_fn(x64))
    assert_strided_input_as_its_copy(kernel, -20, 20)

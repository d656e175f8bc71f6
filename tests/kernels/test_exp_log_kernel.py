"""The exp and log kernels (kernels/exp_log.py) against the exact values (long double): within
2 ulp over the whole range of each dtype, subnormal results and arguments included (NumPy's
float32 functions, the references: within 4), and the special values as NumPy's (silently)."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import assert_same_values, jitted, reference, ulps

from minitensor.kernels.exp_log import exp, log, log2, log10

r = np.random.default_rng(0)
# The arguments whose exp is finite and not 0 (the subnormal results included), per dtype.
EXP_RANGE = {"float32": (-103.9, 88.72), "float64": (-745.1, 709.78)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exp_within_two_ulp_of_the_exact_value(dtype) -> None:
    low, high = EXP_RANGE[dtype]
    x = np.concatenate([r.uniform(low, high, 200_000), r.uniform(-1, 1, 100_000), r.uniform(-1e-6, 1e-6, 1000)])
    x = x.astype(dtype)
    exact = np.exp(x.astype(np.longdouble))
    got = jitted(lambda: exp(x))
    assert got.dtype == x.dtype and ulps(got, exact).max() <= 2.0
    assert ulps(reference(lambda: exp(x)), exact).max() <= 4.0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_within_two_ulp_of_the_exact_value(dtype) -> None:
    info = np.finfo(dtype)
    decades = np.log10(float(info.max)) - 1
    x = np.concatenate([10.0 ** r.uniform(-decades, decades, 200_000), r.uniform(0.5, 2.0, 100_000)]).astype(dtype)
    edges = np.array([info.smallest_subnormal, 3 * info.smallest_subnormal, 0.7 * info.tiny, info.tiny, info.max])
    x = np.concatenate([x, edges.astype(dtype)])
    exact = np.log(x.astype(np.longdouble))
    got = jitted(lambda: log(x))
    assert got.dtype == x.dtype and ulps(got, exact).max() <= 2.0
    assert ulps(reference(lambda: log(x)), exact).max() <= 4.0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_values_and_overflow_as_numpy(dtype) -> None:
    low, high = EXP_RANGE[dtype]
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, high + 1, low - 1, 1e4, -1e4], dtype)
    with np.errstate(all="ignore"):
        expected_exp, expected_log = np.exp(x), np.log(x)
    assert_same_values(jitted(lambda: exp(x)), expected_exp)
    with np.errstate(over="raise", divide="raise", invalid="raise"):  # (silent, as PyTorch)
        assert_same_values(jitted(lambda: log(x)), expected_log)
        reference(lambda: (exp(x), log(x)))


def test_a_strided_input_gives_what_its_contiguous_copy_gives() -> None:
    x = np.linspace(0.1, 30, 60, dtype=np.float32).reshape(6, 10)[:, ::3]
    contiguous = np.ascontiguousarray(x)
    np.testing.assert_array_equal(jitted(lambda: exp(x)), jitted(lambda: exp(contiguous)))
    np.testing.assert_array_equal(jitted(lambda: log(x)), jitted(lambda: log(contiguous)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log2_and_log10_exact_on_powers_and_within_two_ulp(dtype) -> None:
    info = np.finfo(dtype)
    twos = np.arange(-info.nmant - 126 if dtype == "float32" else -1074, info.maxexp)
    tens = np.arange(-37 if dtype == "float32" else -307, 38 if dtype == "float32" else 308)
    np.testing.assert_array_equal(jitted(lambda: log2((2.0**twos).astype(dtype))), twos)
    np.testing.assert_array_equal(jitted(lambda: log10((10.0**tens).astype(dtype))), tens)
    decades = np.log10(float(info.max)) - 1
    x = np.concatenate([10.0 ** r.uniform(-decades, decades, 200_000), r.uniform(0.5, 2.0, 100_000)]).astype(dtype)
    wide = x.astype(np.longdouble)
    assert ulps(jitted(lambda: log2(x)), np.log2(wide)).max() <= 2.0
    assert ulps(jitted(lambda: log10(x)), np.log10(wide)).max() <= 2.0
    special = np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, info.smallest_subnormal], dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.log2(special), np.log10(special)
    with np.errstate(over="raise", divide="raise", invalid="raise"):  # (silent, as PyTorch)
        assert_same_values(jitted(lambda: log2(special)), expected[0])
        assert_same_values(jitted(lambda: log10(special)), expected[1])
        assert_same_values(reference(lambda: log2(special)), expected[0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log2_and_log10_references_agree_with_the_exact_values(dtype) -> None:
    x = np.concatenate([10.0 ** r.uniform(-30, 30, 50_000), r.uniform(0.5, 2.0, 50_000)]).astype(dtype)
    wide = x.astype(np.longdouble)
    for fn, exact in ((log2, np.log2(wide)), (log10, np.log10(wide))):
        assert ulps(reference(lambda fn=fn: fn(x)), exact).max() <= 4.0  # (NumPy's float32 log10: ~2)
        assert ulps(jitted(lambda fn=fn: fn(x)), exact).max() <= 2.0

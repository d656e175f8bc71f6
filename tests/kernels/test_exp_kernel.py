"""The SIMD exp of ``kernels/_exp.py`` against float64 ``np.exp``: within one float32 ulp over the
whole argument range, subnormal results included, and exact at the ends (0, -inf, NaN); the
float64 version to float64 precision; ``exp_rows`` (shifted rows and their sums)."""

from __future__ import annotations

import numpy as np
import pytest

from minitensor.kernels import _exp

TINY32 = np.finfo(np.float32).tiny  # the smallest normal float32, 1.18e-38
SUBNORMAL32 = np.float32(1.4e-45)  # the smallest subnormal float32


def _exact(x: np.ndarray) -> np.ndarray:
    with np.errstate(under="ignore", invalid="ignore"):
        return np.exp(x.astype(np.float64))


def _all_paths(x: np.ndarray) -> np.ndarray:
    """exp(x) by exp_into, checked equal to exp_inplace and to exp_rows on a one-row view."""
    out = np.full_like(x, 7.0)
    _exp.exp_into(x, out)
    inplace = x.copy()
    _exp.exp_inplace(inplace)
    np.testing.assert_array_equal(inplace, out)
    if x.size:
        rows, total = np.full((1, x.size), 7.0, x.dtype), np.zeros(1)
        _exp.exp_rows(x.reshape(1, -1), np.zeros(1, x.dtype), rows, total)
        np.testing.assert_array_equal(rows[0], out)
    return out


def test_float32_is_within_one_ulp_over_the_whole_range() -> None:
    """Every 1e-4 step of [-110, 0] (1.1 million arguments): the normal results within 1.2e-7 of
    the exact exp (one ulp; the polynomial alone is good to 3e-9), the subnormal ones (below
    -87.3) within one subnormal step, and from -104 on exactly 0, as float64's exp rounded."""
    x = np.arange(-110.0, 0.0, 1e-4).astype(np.float32)
    out = _all_paths(x)
    exact = _exact(x)
    normal = exact >= TINY32
    np.testing.assert_allclose(out[normal], exact[normal], rtol=1.2e-7, atol=0)
    np.testing.assert_allclose(out[~normal], exact[~normal], rtol=0, atol=SUBNORMAL32)
    assert np.all(out[x <= -104] == 0) and np.all(out[(x > -103.9) & (x < -87.4)] > 0)  # no flush to zero
    assert out.dtype == np.float32


def test_float32_near_zero_and_the_special_values() -> None:
    x = np.array([0.0, -0.0, -1e-45, -1e-8, -1e-3, -np.inf, np.nan, -1e30, -87.33655, -103.9], np.float32)
    out = _all_paths(x)
    assert out[0] == out[1] == out[2] == out[3] == 1.0
    np.testing.assert_allclose(out[4], np.exp(-1e-3), rtol=1.2e-7)
    assert out[5] == 0 and np.isnan(out[6]) and out[7] == 0
    assert out[8] >= TINY32 * 0.99 and 0 < out[9] < TINY32


@pytest.mark.parametrize("size", [1, 13, 16, 17, 5000])  # shorter and longer than a SIMD vector, with tails
def test_float32_random_arguments_of_every_scale(rng, size) -> None:
    x = -(10.0 ** rng.uniform(-8, 2, size)).astype(np.float32)
    out = _all_paths(x)
    np.testing.assert_allclose(out, _exact(x), rtol=1.2e-7, atol=SUBNORMAL32)


def test_float64_is_exact_to_float64_precision(rng) -> None:
    x = np.concatenate([[0.0, -700.0, -708.0, -1e4, -np.inf, np.nan], -(10.0 ** rng.uniform(-10, 2.85, 20000))])
    out = _all_paths(x)
    exact = _exact(x)
    normal = x >= -708
    np.testing.assert_allclose(out[normal], exact[normal], rtol=4e-16)
    assert np.all(out[x < -708] == 0)  # (below -708 the result is subnormal or 0: flushed to 0)
    assert np.isnan(out[5]) and out[4] == 0 and out.dtype == np.float64


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exp_rows_shifts_each_row_and_sums_it(rng, dtype) -> None:
    x = (5 * rng.standard_normal((7, 33))).astype(dtype)
    shift = x.max(axis=1)
    out, total = np.empty_like(x), np.empty(7)
    _exp.exp_rows(x, shift, out, total)
    exact = _exact(x - shift[:, None])  # (the difference rounded to the dtype, as in the kernel)
    np.testing.assert_allclose(out, exact, rtol=1.2e-7 if dtype == "float32" else 4e-16)
    np.testing.assert_allclose(total, out.astype(np.float64).sum(axis=1), rtol=1e-15)
    assert out.dtype == np.dtype(dtype) and total.dtype == np.float64

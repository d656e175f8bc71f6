"""kernels/logit.py: the logit kernel and its gradient agree with the NumPy references (the value within
2 ulp of the exact logit, through the same quotient; the gradient exactly), inside and outside [0, 1],
at 0, 1, NaN and the infinities, clamped by eps or not, both dtypes, for a strided input and a
gradient that is one value throughout."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import assert_same_values, both_paths, jitted, ulps

from minitensor.kernels import logit as K

SPECIAL = [0.0, 1.0, -0.0, 0.5, 1e-30, 1 - 1e-7, -0.25, 1.25, np.nan, np.inf, -np.inf]


def _inputs(dtype):
    grid = np.linspace(-0.3, 1.3, 4001)
    return np.concatenate([grid, SPECIAL]).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("eps", [None, 0.05])
def test_logit_equals_the_reference_within_two_ulp(dtype, eps) -> None:
    x = _inputs(dtype)
    got, ref = both_paths(lambda: K.logit(x, eps))
    assert got.dtype == ref.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(got[~finite], ref[~finite])  # (the infinities, and NaN where NaN)
    z = x if eps is None else np.clip(x, *K._bounds(eps, x.dtype))
    with np.errstate(divide="ignore", invalid="ignore"):
        exact = np.log((z / (1 - z)).astype(np.longdouble))  # (the quotient in x's dtype, as both compute it)
    assert ulps(got[finite], exact[finite]).max() <= 2


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("eps", [None, 0.05])
def test_logit_gradient_equals_the_reference(dtype, eps) -> None:
    x = _inputs(dtype)
    grad = np.random.default_rng(0).standard_normal(x.size).astype(dtype)
    for g in (grad, np.broadcast_to(np.asarray(1.5, dtype), x.shape)):  # (a gradient of one value: y.sum())
        got, ref = both_paths(lambda: K.logit_backward(g, x, eps))  # noqa: B023
        assert_same_values(got, ref)
    outside = (x < 0) | (x > 1)
    got = jitted(lambda: K.logit_backward(grad, x, eps))
    if eps is None:
        assert np.isnan(got[outside]).all()
    else:
        assert (got[outside | (x < 0.05) | (x > 0.95)] == 0).all()


def test_a_strided_input_as_its_copy() -> None:
    x = np.linspace(0.01, 0.99, 60, dtype=np.float32).reshape(6, 10)[:, ::2]
    got = jitted(lambda: K.logit(x, None))
    assert got.shape == (6, 5)
    np.testing.assert_array_equal(got, jitted(lambda: K.logit(np.ascontiguousarray(x), None)))

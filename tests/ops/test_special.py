"""ops/special.py: ``erf`` within 1e-15 of ``math.erf`` on a wide grid and where it is tiny, its special
values, float32, and a hypothesis property."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitensor.ops.special import erf


# ----------------------------------------------------------------------- erf
def test_erf_matches_math_erf_on_a_wide_grid():
    xs = np.concatenate([np.linspace(-30, 30, 60001), np.geomspace(1e-300, 1e-3, 50), [0.46875, 4.0, -4.0, -0.0]])
    ref = np.array([math.erf(v) for v in xs])
    np.testing.assert_allclose(erf(xs), ref, rtol=0, atol=1e-15)
    # relative accuracy too, where erf is tiny
    small = np.abs(xs) < 1e-3
    np.testing.assert_allclose(erf(xs[small]), ref[small], rtol=1e-14, atol=0)


def test_erf_special_values_and_float32():
    out = erf(np.array([np.inf, -np.inf, np.nan, 0.0]))
    assert out[0] == 1 and out[1] == -1 and np.isnan(out[2]) and out[3] == 0
    x32 = np.linspace(-5, 5, 1001, dtype=np.float32)
    y32 = erf(x32)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32, [math.erf(v) for v in x32.astype(np.float64)], atol=2e-7)


@given(st.floats(-40, 40, allow_nan=False))
def test_erf_property_against_math_erf(v):
    assert erf(np.array([v]))[0] == pytest.approx(math.erf(v), abs=1e-15)

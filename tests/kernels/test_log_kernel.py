"""kernels/_log.py: ``log1p_unit`` against NumPy's ``log1p``, to the last unit of float32 and float64."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import ulps

from minitensor.kernels._log import log1p_unit_into


def unit_inputs(dtype) -> np.ndarray:
    """Uniform in [0, 1], exp(-|x|) of every magnitude (the softplus arguments), the range's
    boundaries and both sides of the switch at sqrt 2 - 1."""
    rng = np.random.default_rng(0)
    edge = np.sqrt(2.0) - 1
    values = [
        rng.random(200_000),
        np.exp(-rng.random(200_000) * 100),
        np.linspace(0, 1, 100_001),
        [0.0, 1.0, 5e-324, 1e-300, 1e-45, 1e-30, edge, np.nextafter(edge, 1), np.nextafter(edge, 0)],
    ]
    return np.concatenate(values).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log1p_unit_within_one_ulp(dtype) -> None:
    y = unit_inputs(dtype)
    out = np.empty_like(y)
    log1p_unit_into(y, out)
    exact = np.log1p(y.astype(np.float64))  # (float64's log1p: within 1 ulp; exact for float32's purpose)
    assert out.dtype == dtype
    assert ulps(out, exact).max() <= 1.0
    assert out[y == 0].tolist() == [0.0] * int((y == 0).sum())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log1p_unit_propagates_nan_and_takes_odd_sizes(dtype) -> None:
    y = np.array([0.25, np.nan, 0.5], dtype)
    out = np.empty_like(y)
    log1p_unit_into(y, out)
    assert np.isnan(out[1]) and np.allclose(out[[0, 2]], np.log1p(y[[0, 2]]), rtol=2e-7)
    empty = np.empty(0, dtype)
    log1p_unit_into(empty, empty.copy())  # nothing to do, no error

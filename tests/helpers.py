"""Helpers shared by the test files (imported as ``from helpers import ...``; tests/ is on the path)."""

from __future__ import annotations

import numpy as np


def assert_same_numbers(actual, expected, err_msg: str = "") -> None:
    """Two paths that compute the same thing in different ways (a fused node and the composite it
    replaces): equal up to rounding, 1e-10 relative in float64 and 2e-5 in float32; None matches None."""
    if actual is None or expected is None:
        assert actual is None and expected is None, err_msg
        return
    actual, expected = np.asarray(actual), np.asarray(expected)
    tight = actual.dtype == np.float64
    np.testing.assert_allclose(actual, expected, rtol=1e-10 if tight else 2e-5, atol=1e-12 if tight else 2e-6,
                               err_msg=err_msg)  # fmt: skip


def away_from(values, points, margin: float = 0.1):
    """``values`` (an array) with every element within ``margin`` of one of ``points`` (kinks, jumps)
    moved ``2 * margin`` up, so that finite differences around each element see one smooth piece."""
    values = np.array(values, dtype=np.float64)
    for point in points:
        near = np.abs(values - point) < margin
        values[near] = point + 2 * margin
    return values

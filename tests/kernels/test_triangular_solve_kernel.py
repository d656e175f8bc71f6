"""kernels/triangular_solve.py: substitution (the kernel) and np.linalg.solve on the triangle (the
reference) give the same X, lower and upper, unit diagonal or not, both dtypes, broadcast batch dims,
and X solves the system; the other triangle is never read."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import both_paths, tolerance

from minitensor.kernels import triangular_solve as K


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_substitution_equals_reference_and_solves_the_system(dtype, upper, unit) -> None:
    rng = np.random.default_rng(0)
    t = (rng.standard_normal((2, 1, 5, 5)) + 4 * np.eye(5)).astype(dtype)  # (batch dims broadcast against b's)
    b = rng.standard_normal((3, 5, 4)).astype(dtype)
    got, ref = both_paths(lambda: K.solve_triangular(t, b, upper, unit))
    assert got.shape == ref.shape == (2, 3, 5, 4) and got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, ref, **tolerance(dtype))
    tri = np.triu(t) if upper else np.tril(t)
    if unit:
        tri = tri.copy()
        np.einsum("...ii->...i", tri)[...] = 1
    np.testing.assert_allclose(tri @ got, np.broadcast_to(b, got.shape), rtol=1e-4 if dtype == "float32" else 1e-12,
                               atol=1e-4 if dtype == "float32" else 1e-12)  # fmt: skip
    other = (t + (np.tril(np.full((5, 5), np.nan), -1) if upper else np.triu(np.full((5, 5), np.nan), 1))).astype(dtype)
    np.testing.assert_array_equal(both_paths(lambda: K.solve_triangular(other, b, upper, unit))[0], got)


def test_empty_systems() -> None:
    assert K.solve_triangular(np.eye(3), np.zeros((3, 0)), False, False).shape == (3, 0)
    assert K.solve_triangular(np.zeros((0, 2, 2)), np.zeros((0, 2, 1)), True, False).shape == (0, 2, 1)

"""RMS norm kernels (``kernels/rms_norm.py``): forward and backward, numba (serial and parallel) against
the NumPy reference and the formulas, on rows of several pieces and blocks, with and without weight,
constant and all-zero rows."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from kernel_paths import MODES, jitted, reference, tolerance

from minitensor.kernels import rms_norm

# (rows, D): one row, a few rows, rows beyond one block of the parallel kernels (BLOCK = 64) and one
# piece of rows (PIECE = 16384 elements), a long row
SHAPES = [(1, 7), (5, 33), (130, 200), (3, 5000)]


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("weighted", [True, False])
def test_kernels_match_reference_and_the_formulas(kernel, rng, dtype, shape, weighted) -> None:
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    x[0, :] = 2.0  # (a constant row)
    g = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal(shape[1]).astype(dtype) if weighted else None

    def run():
        y, rstd = rms_norm.rms_norm_forward(x, w, 1e-5)
        return (y, rstd, *rms_norm.rms_norm_backward(g, x, rstd, w))

    for got, expected in zip(jitted(run), reference(run), strict=True):
        np.testing.assert_allclose(got, expected, **tolerance(dtype))
    y, rstd, dx, dw = reference(run)
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    w64 = np.ones(shape[1]) if w is None else w.astype(np.float64)
    r = 1 / np.sqrt((x64 * x64).mean(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(rstd, r[:, 0], rtol=1e-12)
    np.testing.assert_allclose(y, x64 * r * w64, **tolerance(dtype))
    h = g64 * w64
    np.testing.assert_allclose(dx, r * (h - x64 * r * r * (h * x64).mean(axis=1, keepdims=True)), **tolerance(dtype))
    np.testing.assert_allclose(dw, (g64 * x64 * r).sum(axis=0), rtol=1e-4, atol=1e-4 * shape[0])


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
def test_a_zero_row_with_zero_eps_gives_nan_as_the_reference(kernel, dtype) -> None:
    """0 / sqrt(0): NaN in y and dx on both paths (as PyTorch's), the other rows untouched."""
    x = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 2.0]], dtype)
    g = np.ones_like(x)

    def run():
        y, rstd = rms_norm.rms_norm_forward(x, None, 0.0)
        return (y, rstd, *rms_norm.rms_norm_backward(g, x, rstd, None))

    for got, expected in zip(jitted(run), reference(run), strict=True):
        np.testing.assert_allclose(got, expected, **tolerance(dtype), equal_nan=True)
    y = jitted(run)[0]
    assert np.isnan(y[0]).all() and np.allclose(y[1], [1 / np.sqrt(3), 2 / np.sqrt(3), 2 / np.sqrt(3)], rtol=1e-6)


def test_docstring_examples() -> None:
    result = doctest.testmod(rms_norm, extraglobs={"np": np})
    assert result.attempted > 0 and result.failed == 0

"""Batch norm kernels (``kernels/batch_norm.py``): per-channel statistics, the affine pass and the
backward, numba (serial and parallel) against the NumPy reference, for both loop layouts (L > 1:
rows per (sample, channel); L = 1: one row of channels per sample), and the statistics' precision
on channels with a large mean."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from kernel_paths import MODES, jitted, reference, tolerance

from minitensor.kernels import batch_norm

# (N, C, L): rows layout, several blocks of samples in the columns layout (SAMPLES = 64), odd sizes
SHAPES = [(4, 3, 10), (2, 5, 33), (150, 7, 1), (3, 2, 1), (1, 4, 6)]


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("training", [True, False])
def test_kernels_match_reference(kernel, rng, dtype, shape, training) -> None:
    x = (rng.standard_normal(shape) * 3 + 2).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    w, b = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])

    def run():
        mean, var = batch_norm.batch_norm_stats(x)
        invstd = 1 / np.sqrt(var + 1e-5)
        y = batch_norm.batch_norm_forward(x, mean, invstd, w, b)
        return (mean, var, y, *batch_norm.batch_norm_backward(g, x, mean, invstd, w, training))

    for got, expected in zip(jitted(run), reference(run)):
        np.testing.assert_allclose(got, expected, **tolerance(dtype))
    mean, var, y, dx, dw, db = reference(run)
    assert y.dtype == dx.dtype == np.dtype(dtype)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(mean, x64.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(var, x64.var(axis=(0, 2)), rtol=1e-10)


def test_statistics_keep_their_digits_for_a_large_mean(kernel) -> None:
    """Shifted sums: a float32 channel around 1e4 with spread 1e-2 still gets its variance right."""
    rng = np.random.default_rng(0)
    x = (1e4 + 1e-2 * rng.standard_normal((64, 2, 50))).astype(np.float32)
    mean, var = jitted(lambda: batch_norm.batch_norm_stats(x))
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(var, x64.var(axis=(0, 2)), rtol=1e-6)
    np.testing.assert_allclose(mean, x64.mean(axis=(0, 2)), rtol=1e-12)


def test_docstring_examples() -> None:
    result = doctest.testmod(batch_norm, extraglobs={"np": np})
    assert result.attempted > 0 and result.failed == 0

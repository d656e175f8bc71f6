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


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize(("shape", "groups"), [((4, 6, 10), 3), ((2, 4, 1), 2), ((3, 4, 7), 1), ((1, 4, 5), 4)])
def test_group_norm_kernels_match_reference_and_the_definition(kernel, rng, dtype, shape, groups) -> None:
    """Statistics per sample and group (each sample around a mean of its own), the affine pass with a
    coefficient per sample and channel, and the backward."""
    x = (rng.standard_normal(shape) * 3 + rng.standard_normal((shape[0], 1, 1)) * 10).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    w, b = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])

    def run():
        y, mean, invstd = batch_norm.group_norm_forward(x, groups, w, b, 1e-5)
        return (y, mean, invstd, *batch_norm.group_norm_backward(g, x, mean, invstd, w))

    for got, expected in zip(jitted(run), reference(run)):
        np.testing.assert_allclose(got, expected, **tolerance(dtype))
    y, mean, invstd, dx, dw, db = reference(run)
    rows = x.astype(np.float64).reshape(shape[0], groups, -1)
    np.testing.assert_allclose(mean, rows.mean(axis=2), rtol=1e-12)
    np.testing.assert_allclose(invstd, 1 / np.sqrt(rows.var(axis=2) + 1e-5), rtol=1e-6 if dtype == "float32" else 1e-10)
    xhat = ((rows - rows.mean(axis=2, keepdims=True)) / np.sqrt(rows.var(axis=2, keepdims=True) + 1e-5)).reshape(shape)
    expected_y = xhat * w[:, None] + b[:, None]
    np.testing.assert_allclose(
        y, expected_y, rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-4 if dtype == "float32" else 1e-10
    )
    np.testing.assert_allclose(db, g.astype(np.float64).sum(axis=(0, 2)), rtol=1e-10)
    np.testing.assert_allclose(dw, (g * xhat).sum(axis=(0, 2)), rtol=1e-4, atol=1e-4)


def test_docstring_examples() -> None:
    result = doctest.testmod(batch_norm, extraglobs={"np": np})
    assert result.attempted > 0 and result.failed == 0

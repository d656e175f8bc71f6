"""Group norm kernels (``kernels/group_norm.py``): statistics per sample and group, the coefficients
per sample and channel, the affine pass and the backward, numba (serial and parallel) against the
NumPy reference and the definition."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from kernel_paths import MODES, jitted, reference, tolerance

from minitensor.kernels import group_norm


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize(("shape", "groups"), [((4, 6, 10), 3), ((2, 4, 1), 2), ((3, 4, 7), 1), ((1, 4, 5), 4)])
def test_group_norm_kernels_match_reference_and_the_definition(kernel, rng, dtype, shape, groups) -> None:
    """Statistics per sample and group (each sample around a mean of its own), the affine pass with a
    coefficient per sample and channel, and the backward."""
    x = (rng.standard_normal(shape) * 3 + rng.standard_normal((shape[0], 1, 1)) * 10).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    w, b = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])

    def run():
        y, mean, invstd = group_norm.group_norm_forward(x, groups, w, b, 1e-5)
        return (y, mean, invstd, *group_norm.group_norm_backward(g, x, mean, invstd, w))

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


@pytest.mark.parametrize("affine", [True, False])
def test_coefficient_kernels_match_their_references(rng, affine) -> None:
    """The (N, C) coefficients of both directions, numba's one loop against NumPy's calls: 3 samples,
    12 channels in 4 groups."""
    n, c, groups, length = 3, 12, 4, 7
    mean, invstd = rng.standard_normal((n, groups)), rng.random((n, groups)) + 0.5
    weight, bias = (rng.standard_normal(c), rng.standard_normal(c)) if affine else (np.ones(c), np.zeros(c))
    sums, dots = rng.standard_normal((n, c)), rng.standard_normal((n, c))
    for numba_kernel, numpy_kernel in (
        (group_norm._forward_coefficients, group_norm._forward_coefficients_numpy),
        (group_norm._backward_coefficients, group_norm._backward_coefficients_numpy),
    ):
        forward = numba_kernel is group_norm._forward_coefficients
        args = (mean, invstd, weight, bias) if forward else (sums, dots, mean, invstd, weight, length)
        outputs = [
            [np.full((n, c), np.nan) for _ in range(2 if forward else 3)] + ([] if forward else [np.full(c, np.nan)])
            for _ in range(2)
        ]
        numba_kernel(*args, *outputs[0])
        numpy_kernel(*args, *outputs[1])
        for got, expected in zip(*outputs, strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15)


def test_docstring_examples() -> None:
    result = doctest.testmod(group_norm, extraglobs={"np": np})
    assert result.attempted > 0 and result.failed == 0

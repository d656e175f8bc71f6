"""Resampling kernels (``kernels/resample.py``): a sparse map of taps per dim and its transpose,
numba (serial and parallel) against the NumPy reference, with and without weights (interpolation
and the padding modes), repeated taps (whose gradients add up) included."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from kernel_paths import MODES, jitted, reference, tolerance

from minitensor.kernels import resample


def _taps(rng, out: int, n: int, count: int, weighted: bool) -> tuple:
    index = rng.integers(0, n, (out, count))
    return index, rng.standard_normal((out, count)) if weighted else None


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize("taps", [(1, 1, False, False), (2, 2, True, True), (4, 4, True, True), (1, 3, False, True),
                                  (2, 1, True, False)])  # fmt: skip
def test_resample_and_transpose_match_reference(kernel, rng, dtype, taps) -> None:
    """One tap of weight 1 per dim (a plain gather), taps with weights, and the two mixed."""
    t, s, weighted_rows, weighted_cols = taps
    h, w, ho, wo = 5, 7, 9, 4
    rows, cols = _taps(rng, ho, h, t, weighted_rows), _taps(rng, wo, w, s, weighted_cols)
    x = rng.standard_normal((6, h, w)).astype(dtype)
    g = rng.standard_normal((6, ho, wo)).astype(dtype)

    def run():
        return resample.resample(x, rows, cols), resample.resample_transpose(g, rows, cols, (h, w))

    for got, expected in zip(jitted(run), reference(run)):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, expected, **tolerance(dtype))
    y, xt = reference(run)  # the transpose is the adjoint
    np.testing.assert_allclose((y * g).sum(), (x * xt).sum(), rtol=1e-4 if dtype == "float32" else 1e-12)


def test_docstring_examples() -> None:
    result = doctest.testmod(resample, extraglobs={"np": np})
    assert result.attempted > 0 and result.failed == 0

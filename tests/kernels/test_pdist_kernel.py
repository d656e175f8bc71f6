"""kernels/pdist.py: the pairs' distances (serial and parallel kernels, both dtypes, odd row counts)
equal the NumPy reference, and the backward equals the gradient of the definition, 0 where two rows
are equal (as PyTorch's pdist)."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import MODES, both_paths, tolerance

from minitensor.kernels import pdist as K


@pytest.mark.parametrize(("kernel", "dtype"), MODES, indirect=["kernel"])
@pytest.mark.parametrize("shape", [(2, 3), (7, 5), (16, 33), (1, 4)])
def test_forward_equals_reference(kernel, dtype, shape) -> None:
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    got, ref = both_paths(lambda: K.pdist_forward(x))
    assert got.dtype == ref.dtype == np.dtype(dtype) and got.shape == (shape[0] * (shape[0] - 1) // 2,)
    np.testing.assert_allclose(got, ref, **tolerance(dtype))
    i, j = np.triu_indices(shape[0], k=1)
    np.testing.assert_allclose(ref, np.linalg.norm(x[i].astype(np.float64) - x[j], axis=1), rtol=1e-6)


def test_rows_without_features_are_at_distance_zero() -> None:
    np.testing.assert_array_equal(K.pdist_forward(np.ones((4, 0), np.float32)), np.zeros(6, np.float32))


def test_backward_is_the_definitions_gradient_and_zero_for_equal_rows() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 4))
    x[4] = x[1]  # (a zero distance)
    y = K.pdist_forward(x)
    g = rng.standard_normal(y.shape)
    i, j = np.triu_indices(6, k=1)
    expected = np.zeros_like(x)
    for k, (a, b) in enumerate(zip(i, j)):
        if y[k] > 0:
            expected[a] += g[k] * (x[a] - x[b]) / y[k]
            expected[b] -= g[k] * (x[a] - x[b]) / y[k]
    np.testing.assert_allclose(K.pdist_backward(g, x, y), expected, rtol=1e-12, atol=1e-12)

"""kernels/triangle.py: the tril/triu kernel equals np.tril/np.triu on every diagonal, for stacks of
matrices, NaN and inf outside the triangle (zeroed) and non-contiguous inputs."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.kernels import triangle as K


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape", [(5, 7), (7, 5), (3, 4, 4), (2, 1, 3, 9), (1, 1)])
def test_kernel_equals_numpy_on_every_diagonal(dtype, upper, shape) -> None:
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    x.reshape(-1)[::5] = np.nan
    x.reshape(-1)[1::7] = -np.inf
    m, n = shape[-2:]
    for diagonal in range(-m - 1, n + 2):
        kernel = np.empty_like(x)
        K._triangle(x.reshape(-1, m, n), kernel.reshape(-1, m, n), diagonal, upper)
        expected = np.triu(x, diagonal) if upper else np.tril(x, diagonal)
        np.testing.assert_array_equal(kernel, expected)
        reference = np.empty_like(x)
        K._triangle_numpy(x.reshape(-1, m, n), reference.reshape(-1, m, n), diagonal, upper)
        np.testing.assert_array_equal(reference, expected)


def test_public_function_on_both_paths() -> None:
    x = np.random.default_rng(1).standard_normal((3, 6, 10)).astype(np.float32)[:, :, ::2]  # not contiguous
    mt.set_jit_enabled(True)
    jitted = K.triangle(x, 1, False)
    with mt.jit_disabled():
        reference = K.triangle(x, 1, False)
    np.testing.assert_array_equal(jitted, reference)
    np.testing.assert_array_equal(jitted, np.tril(x, 1))
    assert K.triangle(np.zeros((0, 3, 3), np.float32), 0, True).shape == (0, 3, 3)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape", [(5, 7), (2, 4, 3)])
def test_matrices_stored_transposed_take_the_flipped_triangle_of_their_transpose(upper, shape) -> None:
    x = np.ascontiguousarray(np.random.default_rng(2).standard_normal(shape[:-2] + shape[:-3:-1])).swapaxes(-1, -2)
    assert x.shape == shape and not x.flags.c_contiguous
    for diagonal in (-2, 0, 3):
        got = K.triangle(x, diagonal, upper)
        np.testing.assert_array_equal(got, np.triu(x, diagonal) if upper else np.tril(x, diagonal))
        assert got.swapaxes(-1, -2).flags.c_contiguous  # (the transposed path: the transpose of a new array)

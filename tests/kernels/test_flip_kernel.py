"""kernels/flip.py: the row-reversing kernel equals its reference, and ``flip`` equals ``np.flip``
for every combination of dims, dtypes, odd sizes and non-contiguous inputs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import minitensor as mt
from minitensor.kernels import flip as K


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (3, 17), (5, 64), (2, 33)])
def test_kernel_equals_reference(dtype, shape) -> None:
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    x[0, 0] = np.nan
    kernel, reference = np.empty_like(x), np.empty_like(x)
    K._reverse_rows(x, kernel)
    K._reverse_rows_numpy(x, reference)
    np.testing.assert_array_equal(kernel, reference)
    np.testing.assert_array_equal(kernel, x[:, ::-1])


@pytest.mark.parametrize("jit", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_every_combination_of_dims(jit, dtype) -> None:
    x = (np.random.default_rng(1).standard_normal((3, 4, 10)) * 10).astype(dtype)[:, :, ::2]  # strided
    mt.set_jit_enabled(jit)
    try:
        for r in range(1, 4):
            for dims in itertools.combinations(range(3), r):
                out = K.flip(x, dims)
                np.testing.assert_array_equal(out, np.flip(x, dims))
                assert out.flags.c_contiguous and not np.shares_memory(out, x)
    finally:
        mt.set_jit_enabled(True)

"""kernels/cross.py: the cross product's kernel equals np.cross (its reference) along every dim, for
contiguous, transposed and broadcast operands, in both dtypes, with inf and NaN."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import assert_same_values, both_paths

from minitensor.kernels import cross as K


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("shape", "dim"), [((3,), 0), ((5, 3), 1), ((3, 4), 0), ((2, 3, 7), 1), ((4, 2, 3), -1)])
def test_kernel_equals_reference(dtype, shape, dim) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    a.flat[0], b.flat[-1] = np.inf, np.nan
    got, ref = both_paths(lambda: K.cross(a, b, dim))
    assert got.dtype == np.dtype(dtype) and got.shape == a.shape
    assert_same_values(got, ref)
    np.testing.assert_array_equal(ref, np.cross(a, b, axis=dim))


def test_non_contiguous_and_broadcast_operands() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 6)).astype(np.float32).T[::2]  # (3, 3), strided
    b = np.broadcast_to(rng.standard_normal(3).astype(np.float32), (3, 3))
    got, ref = both_paths(lambda: K.cross(a, b, 1))
    np.testing.assert_array_equal(got, np.cross(a, b))
    np.testing.assert_array_equal(ref, np.cross(a, b))

"""kernels/constant_pad.py: the padding and cropping kernels equal their NumPy references (serial and
parallel, both dtypes, margins of 0 on some sides, NaN and -0. kept as they are) and the slicing
they stand for."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import MODES, both_paths

from minitensor.kernels import constant_pad as K

AMOUNTS = [(1, 1, 1, 1), (0, 2, 3, 0), (2, 0, 0, 1), (0, 0, 0, 0)]


def _planes(dtype, shape=(3, 4, 5, 7)) -> np.ndarray:
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    x[0, 0, 0, 0], x[-1, -1, -1, -1] = np.nan, -0.0
    return x


@pytest.mark.parametrize(("kernel", "dtype"), MODES, indirect=["kernel"])
@pytest.mark.parametrize("amounts", AMOUNTS)
def test_pad_equals_reference_and_slicing(kernel, dtype, amounts) -> None:
    x = _planes(dtype)
    top, bottom, left, right = amounts
    got, ref = both_paths(lambda: K.pad_planes(x, top, bottom, left, right, -2.5))
    expected = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=-2.5)
    for out in (got, ref):
        assert out.dtype == x.dtype and out.flags.c_contiguous
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(np.signbit(out), np.signbit(expected))


@pytest.mark.parametrize(("kernel", "dtype"), MODES, indirect=["kernel"])
@pytest.mark.parametrize("amounts", AMOUNTS)
def test_crop_equals_reference_and_slicing(kernel, dtype, amounts) -> None:
    g = _planes(dtype, (2, 3, 9, 8))[:, :, ::-1]  # (a non-contiguous gradient)
    top, bottom, left, right = amounts
    got, ref = both_paths(lambda: K.crop_planes(g, top, bottom, left, right))
    expected = g[:, :, top : g.shape[2] - bottom, left : g.shape[3] - right]
    for out in (got, ref):
        assert out.dtype == g.dtype and out.flags.c_contiguous and not np.shares_memory(out, g)
        np.testing.assert_array_equal(out, expected)


def test_other_dtypes_take_the_reference() -> None:
    x = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(K.pad_planes(x, 1, 0, 0, 2, 7), np.pad(x, ((1, 0), (0, 2)), constant_values=7))
    np.testing.assert_array_equal(K.crop_planes(x, 1, 1, 0, 1), x[1:2, :3])

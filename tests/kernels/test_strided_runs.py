"""``_strided``'s copies of contiguous runs in vector blocks (``copy_run``, and ``gather`` / ``scatter``
with a stride of 1, which take it) against NumPy's slice assignment, for every run length around
the block sizes (8, 16) and at offsets that are not multiples of them."""

import numpy as np
import pytest

from minitensor.kernels._strided import copy_run, gather, scatter

LENGTHS = list(range(0, 41)) + [63, 64, 65]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_copy_run_matches_slice_assignment_for_every_length(dtype):
    rng = np.random.default_rng(0)
    src = rng.standard_normal(200).astype(dtype)
    for n in LENGTHS:
        for d0, s0 in ((0, 0), (3, 7), (11, 1)):
            dst = np.full(120, -1.0, dtype)
            expected = dst.copy()
            expected[d0 : d0 + n] = src[s0 : s0 + n]
            copy_run(dst, d0, src, s0, n)
            np.testing.assert_array_equal(dst, expected, err_msg=f"n={n} d0={d0} s0={s0}")


def test_gather_and_scatter_with_stride_one_copy_the_run_only():
    rng = np.random.default_rng(1)
    src = rng.standard_normal(100)
    for n in (5, 10, 16, 28, 33):
        dst = np.zeros(60)
        gather(dst, 2, src, 9, 1, n)
        expected = np.zeros(60)
        expected[2 : 2 + n] = src[9 : 9 + n]
        np.testing.assert_array_equal(dst, expected)
        back = np.zeros(100)
        scatter(back, 9, 1, dst, 2, n)
        np.testing.assert_array_equal(back[9 : 9 + n], src[9 : 9 + n])
        assert not back[:9].any() and not back[9 + n :].any()

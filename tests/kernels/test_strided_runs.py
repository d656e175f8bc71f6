"""``_strided.copy_run`` (a contiguous run copied in vector blocks) against NumPy's slice assignment,
for every run length around the block sizes (8, 16) and at offsets that are not multiples of them."""

import numpy as np
import pytest

from minitensor.kernels._strided import copy_run

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

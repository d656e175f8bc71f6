"""kernels/topk.py: the one-pass kernel gives the first k of a stable sort (its reference): NaN
ranked above every number, ties in index order, for every k, both directions, both dtypes."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.kernels import topk as K


def _rows(rng, shape, dtype, ties: bool) -> np.ndarray:
    x = rng.integers(0, 4, shape).astype(dtype) if ties else rng.standard_normal(shape).astype(dtype)
    x[rng.random(shape) < 0.15] = np.nan
    x[rng.random(shape) < 0.1] = np.inf
    x[rng.random(shape) < 0.1] = -np.inf
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("largest", [True, False])
def test_kernel_equals_reference(dtype, largest) -> None:
    rng = np.random.default_rng(0)
    for trial in range(150):
        shape = (int(rng.integers(1, 5)), int(rng.integers(1, 40)))
        x = _rows(rng, shape, dtype, ties=trial % 2 == 0)
        k = int(rng.integers(1, shape[1] + 1))
        kernel, reference = np.empty((shape[0], k), np.int64), np.empty((shape[0], k), np.int64)
        K._topk_rows(x, k, largest, kernel)
        K._topk_numpy(x, k, largest, reference)
        np.testing.assert_array_equal(kernel, reference, err_msg=f"{x}, k={k}")


@pytest.mark.parametrize("largest", [True, False])
def test_rows_sorted_either_way_and_all_equal(largest) -> None:
    up = np.tile(np.arange(50, dtype=np.float32), (3, 1))
    for x in (up, up[:, ::-1].copy(), np.zeros((3, 50), np.float32), np.full((3, 50), np.nan, np.float32)):
        kernel = np.empty((3, 6), np.int64)
        K._topk_rows(x, 6, largest, kernel)
        np.testing.assert_array_equal(kernel, K.first_of_stable_sort(x, 6, largest))


def test_public_function_on_both_paths() -> None:
    x = np.random.default_rng(1).standard_normal((8, 300)).astype(np.float32)[:, ::2]  # not contiguous
    mt.set_jit_enabled(True)
    jitted = K.topk_indices(x, 5, True)
    with mt.jit_disabled():
        reference = K.topk_indices(x, 5, True)
    np.testing.assert_array_equal(jitted, reference)
    np.testing.assert_array_equal(jitted, np.argsort(-x, axis=1)[:, :5])  # (no ties in random data)
    assert K.topk_indices(x, 0, True).shape == (8, 0)


def test_topk_partition_equals_a_stable_sort() -> None:
    """The partition-based selection (``_by_partition``, for k above the kernel's)
    gives the first k of a stable sort: the same indices, ties in index order, for every k."""
    rng = np.random.default_rng(0)
    for trial in range(200):
        shape = tuple(int(n) for n in rng.integers(1, 9, 2))
        rows = rng.integers(0, 3 if trial % 2 else 1000, shape).astype(np.float32)  # many ties, or few
        if trial % 4 == 1:
            rows = rows.astype(np.int64) - 500  # integer keys (negated by bitwise not)
        elif trial % 3 == 0:
            rows[..., 0] = -np.inf if trial % 2 else np.inf
        k = int(rng.integers(0, shape[1] + 1))
        for largest in (True, False):
            np.testing.assert_array_equal(
                K._by_partition(rows, k, largest), K.first_of_stable_sort(rows, k, largest), err_msg=f"{rows}, {k}"
            )


@pytest.mark.parametrize("largest", [False, True])
def test_first_of_stable_sort_is_numpys_stable_order_with_ties_nan_and_signed_zeros(rng, largest, monkeypatch) -> None:
    """The fast path (an unstable SIMD sort where a row has no two equal values) gives the stable sort's
    order: rows of distinct values, with ties, NaN (sorted as +inf), ±inf, -0.0 beside 0.0, both float dtypes."""
    monkeypatch.setattr(K, "FAST_SORT_FROM", 0)  # (the fast path on these small rows)
    few = np.array([-np.inf, -1.0, -0.0, 0.0, 2.0, np.inf, np.nan])
    for dtype in (np.float32, np.float64):
        distinct = rng.standard_normal((6, 9)).astype(dtype)
        tied = rng.choice(few, size=(6, 9)).astype(dtype)
        with_nan = np.where(rng.random((6, 9)) < 0.3, np.nan, distinct).astype(dtype)
        for rows in (distinct, tied, with_nan, np.concatenate([distinct, tied, with_nan])):
            expected = (9 - 1 - np.argsort(rows[:, ::-1], axis=1, kind="stable")[:, ::-1] if largest
                        else np.argsort(rows, axis=1, kind="stable"))  # fmt: skip
            np.testing.assert_array_equal(K.first_of_stable_sort(rows, 9, largest), expected)

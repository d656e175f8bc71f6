"""kernels/scatter.py: ``index_add`` (kernel and NumPy reference) equals ``np.add.at``."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import jitted, reference

import minitensor as mt
from minitensor.kernels import scatter


def index_add_results(out_shape: tuple, key, values: np.ndarray, dtype) -> tuple:
    """(kernel result, reference result, np.add.at result) of adding ``values`` at ``key`` into zeros."""

    def add():
        out = np.zeros(out_shape, dtype)
        scatter.index_add(out, key, values)
        return out

    plain = np.zeros(out_shape, dtype)
    np.add.at(plain, key, values)
    return jitted(add), reference(add), plain


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_with_repeats_and_negative_indices(dtype) -> None:
    rng = np.random.default_rng(0)
    idx = rng.integers(-7, 7, size=(5, 9))  # repeats, negatives
    values = rng.standard_normal((5, 9, 3, 4)).astype(dtype)
    kernel, reference, plain = index_add_results((7, 3, 4), (idx,), values, dtype)
    np.testing.assert_allclose(kernel, plain, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(reference, plain, rtol=1e-6, atol=1e-6)
    assert np.count_nonzero(kernel) > 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_of_one_value_throughout_add_the_same_sums(dtype) -> None:
    """A stride-0 view of one value (the gradient ``sum`` hands an embedding back) is read once per row
    added: the same sums as np.add.at, in the same order (equal, not just close)."""
    idx = np.random.default_rng(2).integers(-7, 7, size=(5, 9))
    values = np.broadcast_to(np.asarray(0.1, dtype), (5, 9, 3, 4))
    kernel, reference, plain = index_add_results((7, 3, 4), (idx,), values, dtype)
    np.testing.assert_array_equal(kernel, plain)
    np.testing.assert_array_equal(reference, plain)
    assert kernel.max() > 0.1  # (a row added more than once)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gather_style_keys_on_every_dim(dtype) -> None:
    rng = np.random.default_rng(1)
    index = rng.integers(0, 6, size=(4, 5))
    key = (index, np.arange(5)[None, :])  # gather along dim 0
    values = rng.standard_normal((4, 5)).astype(dtype)
    kernel, reference, plain = index_add_results((6, 5), key, values, dtype)
    np.testing.assert_allclose(kernel, plain, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(reference, plain)


def test_broadcast_and_strided_values() -> None:
    rng = np.random.default_rng(2)
    values = rng.standard_normal((4, 6)).astype(np.float32).T  # (6, 4), not contiguous
    kernel, _, plain = index_add_results((3, 4), (np.array([0, 1, 2, 0, 1, 2]),), values, np.float32)
    np.testing.assert_allclose(kernel, plain, rtol=1e-6)
    kernel, _, plain = index_add_results((3, 4), (np.array([2, 2]),), np.float32(1.5), np.float32)  # a scalar value
    np.testing.assert_array_equal(kernel, plain)


def test_other_keys_and_dtypes_fall_back_to_add_at() -> None:
    rng = np.random.default_rng(3)
    for key, values in [
        ((slice(None), np.array([1, 1, 0])), rng.standard_normal((4, 3))),  # a slice first
        (np.array([True, False, True, True]), rng.standard_normal((3, 5))),  # a bool mask
    ]:
        kernel, reference, plain = index_add_results(
            (4, 5) if values.shape[-1] == 5 else (4, 3), key, values, np.float64
        )
        np.testing.assert_array_equal(kernel, plain)
        np.testing.assert_array_equal(reference, plain)
    kernel, _, plain = index_add_results((3,), (np.array([0, 0, 2]),), np.array([1, 2, 3]), np.int64)  # ints
    np.testing.assert_array_equal(kernel, plain)


def test_empty_index_adds_nothing() -> None:
    out = np.ones((3, 2), np.float32)
    scatter.index_add(out, (np.zeros(0, np.int64),), np.zeros((0, 2), np.float32))
    np.testing.assert_array_equal(out, 1)


def test_a_non_contiguous_out_is_written_in_place() -> None:
    base = np.zeros((4, 6))
    view = base[:, ::2]  # (4, 3), strided: reshaping would copy, so np.add.at is used
    scatter.index_add(view, (np.array([1, 1]),), np.ones((2, 3)))
    assert base[1, 0] == 2 and base[1, 1] == 0


def test_embedding_and_gather_gradients_use_it() -> None:
    """Through the ops: repeated ids add up, on both paths."""
    rng = np.random.default_rng(4)
    ids = mt.tensor(rng.integers(0, 5, (6, 3)))
    grads = []
    for jit in (True, False):
        mt.set_jit_enabled(jit)
        w = mt.tensor(rng.standard_normal((5, 4)).astype(np.float32), requires_grad=True)
        w.grad = None
        (w[ids] * mt.arange(4.0)).sum().backward()
        grads.append(w.grad.numpy())
    mt.set_jit_enabled(True)
    counts = np.bincount(ids.numpy().ravel(), minlength=5)
    np.testing.assert_allclose(grads[0], counts[:, None] * np.arange(4.0), rtol=1e-6)
    np.testing.assert_array_equal(grads[0], grads[1])


def test_out_of_range_indices_raise() -> None:
    with pytest.raises(IndexError, match="index out of range for dim of size 3"):
        scatter.index_add(np.zeros((3, 2)), (np.array([0, 3]),), np.ones((2, 2)))
    with pytest.raises(IndexError, match="index out of range"):
        scatter.index_add(np.zeros((3, 2)), (np.array([-4]),), np.ones((1, 2)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_picked_rows_added_as_add_at_of_the_picked_rows(dtype) -> None:
    """``add_picked_rows``: out[rows] += source[picked], repeats on both sides adding up, as the
    reference (``np.add.at``) in the same order; nothing happens for no rows or empty rows."""
    rng = np.random.default_rng(4)
    source = rng.standard_normal((7, 5)).astype(dtype)
    rows, picked = np.array([2, 0, 2, 2, 4]), np.array([6, 6, 0, 3, 1])

    def run():
        out = np.ones((5, 5), dtype)
        scatter.add_picked_rows(out, rows, source, picked)
        return out

    got, expected = jitted(run), reference(run)
    np.testing.assert_array_equal(got, expected)
    manual = np.ones((5, 5), dtype)
    for r, p in zip(rows, picked):
        manual[r] += source[p]
    np.testing.assert_array_equal(got, manual)
    out = np.zeros((3, 0), dtype)
    scatter.add_picked_rows(out, np.array([1]), np.zeros((2, 0), dtype), np.array([0]))
    assert out.shape == (3, 0)
    empty = np.zeros((3, 5), dtype)
    scatter.add_picked_rows(empty, np.array([], np.int64), source, np.array([], np.int64))
    assert not empty.any()

"""``kernels/runtime/row_split.py``: a serial kernel's arrays split by rows over NumPy's BLAS threads
(``Kernel.map``'s and ``Kernel.rows``' two-thread path): the serial kernel's values, bit for bit, in
one region of two shares, for flat arrays with one and two inputs, for row kernels on (R, D) arrays
with (R,) row values, and both dtypes; short work and one thread stay serial, and no split is made
for what is no numba kernel, for arrays of two dtypes, of other row counts or not C-contiguous."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import jitted

from minitensor.kernels import softmax, tanh, trig
from minitensor.kernels.runtime import blas_threads, dispatch, row_split


@pytest.fixture
def regions(monkeypatch) -> list:
    """The record rows of each region run on BLAS's threads."""
    calls, real = [], blas_threads.run
    monkeypatch.setattr(blas_threads, "run", lambda task, r, **kw: (calls.append(len(r)), real(task, r, **kw))[1])
    return calls


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_long_map_splits_into_two_shares_with_the_serial_values(rng, two_blas_threads, regions, monkeypatch, dtype):
    monkeypatch.setattr(dispatch, "SPLIT_NS", 0.0)  # (any work splits: small arrays suffice)
    x = rng.standard_normal(1001).astype(dtype)
    y = np.tanh(x)
    grad = rng.standard_normal(1001).astype(dtype)
    got = jitted(lambda: tanh.tanh_backward(grad, y))  # (two inputs)
    assert regions == [2]
    expected = np.empty_like(y)
    tanh._tanh_backward(grad, y, expected)
    np.testing.assert_array_equal(got, expected)
    if dtype == "float32":  # (one input: tan's kernel is float32 only)
        got = jitted(lambda: trig.tan(x))
        assert regions == [2, 2]
        trig._tan(x, expected)
        np.testing.assert_array_equal(got, expected)


def test_short_work_and_one_thread_stay_serial(rng, two_blas_threads, regions, monkeypatch) -> None:
    x = rng.standard_normal(1001).astype(np.float32)
    jitted(lambda: trig.tan(x))  # (1001 elements: far below SPLIT_NS)
    assert regions == []
    monkeypatch.setattr(dispatch, "SPLIT_NS", 0.0)
    monkeypatch.setattr(blas_threads, "shares", lambda work: 1)
    expected = np.empty_like(x)
    trig._tan(x, expected)
    np.testing.assert_array_equal(jitted(lambda: trig.tan(x)), expected)
    assert regions == []


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_row_kernel_splits_its_rows_with_the_serial_values(rng, two_blas_threads, regions, monkeypatch, dtype):
    """softmax's kernel on (R, D) rows and its (R,) row values (shift, log_total), log_softmax's
    backward on three (R, D) arrays: two shares, each row's values those of the serial kernel."""
    monkeypatch.setattr(dispatch, "SPLIT_NS", 0.0)
    x = (rng.standard_normal((37, 19)) * 3).astype(dtype)
    x[5, 3], x[20] = np.inf, -np.inf  # (rows the kernel redoes the slow way, in either share)
    p, shift, log_total = jitted(lambda: softmax.softmax_parts(x))
    assert regions == [2]
    expected = np.empty_like(x), np.empty(37, dtype), np.empty(37, dtype)
    softmax._softmax_block(x, *expected)
    for got, want in zip((p, shift, log_total), expected):
        np.testing.assert_array_equal(got, want)
    y, g = softmax.log_softmax_forward(x[6:10], -1), rng.standard_normal((4, 19)).astype(dtype)
    got = jitted(lambda: softmax.log_softmax_backward(y, g, -1))
    assert regions[-1] == 2
    want = np.empty_like(y)
    softmax._log_softmax_backward_block(y, g, want)
    np.testing.assert_array_equal(got, want)


def test_no_split_for_what_is_no_numba_kernel_or_other_arrays(two_blas_threads, regions) -> None:
    x, out = np.ones(8), np.empty(8)
    assert not row_split.split_rows(None, (x, out))
    assert not row_split.split_rows(trig._sin_numpy, (x, out))  # (not a numba kernel)
    assert not row_split.split_rows(trig._tan, (x.astype(np.float32), out))  # (two dtypes)
    assert not row_split.split_rows(trig._tan, (x, np.empty(9)))  # (other row counts)
    rows = np.ones((8, 6))
    assert not row_split.split_rows(softmax._log_softmax_block, (rows[:, ::2], np.empty((8, 3))))  # (strided)
    assert not row_split.split_rows(tanh._tanh, (x,))  # (one array: no output)
    assert regions == []


def test_docstring_examples() -> None:
    import doctest

    result = doctest.testmod(row_split)
    assert result.attempted > 0 and result.failed == 0

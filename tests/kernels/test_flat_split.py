"""``kernels/runtime/flat_split.py``: an elementwise kernel's flat arrays split over NumPy's BLAS threads
(``Kernel.map``'s two-thread path): the serial kernel's values, bit for bit, in one region of two
shares, for one and two inputs and both dtypes; short work and one thread stay serial, and no split
is made for what is no numba kernel or for arrays of two dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import jitted

from minitensor.kernels import tanh, trig
from minitensor.kernels.runtime import blas_threads, dispatch, flat_split


@pytest.fixture
def regions(monkeypatch) -> list:
    """The record rows of each region run on BLAS's threads."""
    calls, real = [], blas_threads.run
    monkeypatch.setattr(blas_threads, "run", lambda task, r: (calls.append(len(r)), real(task, r))[1])
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


def test_no_split_for_what_is_no_numba_kernel_or_mixed_dtypes(two_blas_threads, regions) -> None:
    x, out = np.ones(8), np.empty(8)
    assert not flat_split.split_map(None, (x, out))
    assert not flat_split.split_map(trig._sin_numpy, (x, out))  # (not a numba kernel)
    assert not flat_split.split_map(trig._tan, (x.astype(np.float32), out))  # (two dtypes)
    assert regions == []


def test_docstring_examples() -> None:
    import doctest

    result = doctest.testmod(flat_split)
    assert result.attempted > 0 and result.failed == 0

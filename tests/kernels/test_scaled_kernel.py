"""kernels/scaled.py: an array times one value per row or per column, the numba kernels against the
NumPy references (both dtypes, NaN and ±inf), and ``multiply`` equal to ``np.multiply`` bit for bit on
the patterns it takes (either operand order, more dims) and on those it leaves to NumPy."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from kernel_paths import assert_same_values, both_paths

from minitensor.kernels import scaled

rng = np.random.default_rng(3)


def _with_specials(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    flat = a.reshape(-1)
    flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return a


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("shape", "other"),
    [((64, 100), (64, 1)), ((100,), (64, 100)), ((64, 100), (1, 100)), ((4, 16, 100), (4, 16, 1)),
     ((4, 16, 100), (100,)), ((1, 1, 100), (4, 16, 100))],
    ids=str,
)  # fmt: skip
def test_kernels_equal_the_references_and_numpy(dtype, shape, other) -> None:
    a = _with_specials(rng.standard_normal(shape).astype(dtype))
    b = _with_specials(rng.standard_normal(other).astype(dtype))
    got, expected = both_paths(lambda: scaled.multiply(a, b))
    assert_same_values(got, expected)
    with np.errstate(invalid="ignore"):
        assert_same_values(got, np.multiply(a, b))
    assert got.dtype == np.dtype(dtype) and got.flags.c_contiguous


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (np.ones((64, 100), np.float32), np.ones((64, 1), np.float64)),  # two dtypes
        (np.ones((64, 100), np.float32).T, np.ones((100, 1), np.float32)),  # not C-contiguous
        (np.ones((64, 100), np.float32), np.ones((64, 100), np.float32)),  # one shape
        (np.ones((8, 8), np.float32), np.ones((8, 1), np.float32)),  # small
        (np.ones((64, 100), np.int64), np.ones((64, 1), np.int64)),  # integers
        (np.ones((64, 100), np.float32), np.float32(2.0)),  # a scalar
    ],
    ids=["dtypes", "transposed", "same-shape", "small", "int", "scalar"],
)
def test_other_operands_are_numpys(a, b, monkeypatch) -> None:
    """What the kernels do not take goes to ``np.multiply`` (the kernels refused here)."""
    for kernel in (scaled._ROWS, scaled._COLUMNS):
        monkeypatch.setattr(kernel, "serial", None)
    assert_same_values(scaled.multiply(a, b), np.multiply(a, b))


def test_docstring_example() -> None:
    assert doctest.testmod(scaled).failed == 0

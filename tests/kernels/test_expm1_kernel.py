"""The expm1 kernel (kernels/expm1.py) against its NumPy reference (Kahan's form) and against
``np.expm1``, on every range, at the special values, and where float64's exp64 stops (x > 708)."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import assert_same_values, jitted, reference, ulps

from minitensor.kernels.expm1 import expm1


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kernel_and_reference_within_a_few_ulp_of_the_exact_value(dtype) -> None:
    r = np.random.default_rng(0)
    tiny = 10 ** r.uniform(-40, 0, 5000) * r.choice([-1, 1], 5000)
    x = np.concatenate([r.uniform(-1, 1, 5000), r.uniform(-110, 88, 5000), tiny, [np.log(2.0), -np.log(2.0)]])
    x = x.astype(dtype)
    with np.errstate(all="ignore"):
        exact = np.expm1(x.astype(np.float64))
    finite = np.isfinite(exact)
    # measured over 5 million samples: kernel 3.1 / 2.5 ulp, reference (Kahan's form) 5.0 / 2.4
    for run, most in ((jitted, 3.5 if dtype == "float32" else 3.0), (reference, 5.5 if dtype == "float32" else 3.0)):
        got = run(lambda: expm1(x))
        assert got.dtype == x.dtype and got.shape == x.shape
        assert ulps(got[finite], exact[finite]).max() <= most


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_values(dtype) -> None:
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 200.0, -200.0, 800.0], dtype)
    with np.errstate(all="ignore"):
        expected = np.expm1(x)
    for got in (jitted(lambda: expm1(x)), reference(lambda: expm1(x))):
        assert_same_values(got, expected)


def test_float64_beyond_where_exp64_stops() -> None:
    x = np.array([700.0, 708.0, 708.5, 709.5, 709.78, 709.8, 750.0])
    with np.errstate(over="ignore"):
        expected = np.expm1(x)
    got = jitted(lambda: expm1(x))
    finite = np.isfinite(expected)
    assert ulps(got[finite], expected[finite]).max() <= 4.0
    np.testing.assert_array_equal(got[~finite], expected[~finite])


def test_a_strided_input_gives_what_its_contiguous_copy_gives() -> None:
    x = np.linspace(-3, 3, 40, dtype=np.float32)[::2]
    np.testing.assert_array_equal(jitted(lambda: expm1(x)), jitted(lambda: expm1(np.ascontiguousarray(x))))

"""kernels/erf.py: the reference erfc_numpy against Python's ``math`` with its relative precision in the
tail; the kernels erf and erfc and their one-pass gradients equal to the references on a wide range and on
the special values (NaN, ±inf, ±0, tiny, huge, the range boundaries), in float32 and float64; with the JIT
off the references run.  (erf against ``math.erf``: tests/ops/test_special.py.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
from kernel_paths import assert_kernel_equals_reference, both_paths, jitted, reference_only

from minitensor.kernels import erf as erf_module
from minitensor.kernels.erf import erf_backward, erfc, erfc_backward, erfc_numpy

rng = np.random.default_rng(28)
WIDE = np.concatenate([rng.uniform(-30, 30, 2000), 10 ** rng.uniform(-8, 2, 500)])
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-45, 1e-38, 0.46875, -0.46875, 4.0, -4.0, 9.0, 26.0,
           -27.0, 1e30, -3e38]  # fmt: skip


def _inputs(dtype: str) -> np.ndarray:
    return np.concatenate([WIDE, -WIDE[:500], SPECIAL]).astype(dtype)


@pytest.mark.parametrize("function", [erfc, erfc_numpy], ids=["kernel", "reference"])
def test_erfc_against_math_with_relative_precision_in_the_tail(function):
    x = np.concatenate([WIDE[np.abs(WIDE) < 26], [0.0, -0.0, 0.46875, -0.46875, 4.0, 26.0]])
    expected = np.array([math.erfc(v) for v in x])
    np.testing.assert_allclose(function(x), expected, rtol=1e-13, atol=0)
    np.testing.assert_array_equal(function(np.array([np.inf, -np.inf, np.nan])), [0.0, 2.0, np.nan])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_kernels_equal_the_references(name, dtype):
    x = _inputs(dtype)
    function = getattr(erf_module, name)
    got, expected = both_paths(lambda: function(x))
    assert_kernel_equals_reference(got, expected, dtype)


def test_float32_erfc_within_an_ulp_of_the_float64_reference():
    """The fitted float32 kernel against Cody's float64 values: within 0.51 float32 ulp (the rounding
    of an error below 4e-11) on a dense grid through the subnormal tail (|x| to 10.06), the rounded
    reference itself on >= 99.9 %."""
    x = np.concatenate([np.linspace(-10.5, 10.5, 200_001), 10 ** rng.uniform(-8, 1.02, 20_000)]).astype(np.float32)
    expected = erfc_numpy(x.astype(np.float64))
    got = jitted(lambda: erfc(x))
    ulp = np.spacing(np.maximum(np.abs(expected.astype(np.float32)), np.float32(1e-45)))
    assert np.max(np.abs(got - expected) / ulp) <= 0.51
    assert np.mean(got == expected.astype(np.float32)) >= 0.999


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("backward", [erf_backward, erfc_backward], ids=["erf", "erfc"])
def test_one_pass_gradients_equal_the_formulas(backward, dtype):
    x = _inputs(dtype)[:3000].reshape(60, 50)
    grad = rng.standard_normal(x.shape).astype(dtype)
    got, expected = both_paths(lambda: backward(grad, x))
    assert_kernel_equals_reference(got, expected, dtype)
    broadcast = backward(grad[:1], x)  # (shapes differ: the plain formula)
    np.testing.assert_allclose(broadcast, reference_only(lambda: backward(np.broadcast_to(grad[:1], x.shape), x)))


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_jit_off_runs_the_references(name):
    x = _inputs("float32")
    function, numpy_version = getattr(erf_module, name), getattr(erf_module, f"{name}_numpy")
    np.testing.assert_array_equal(reference_only(lambda: function(x), erf_module), numpy_version(x))
    np.testing.assert_array_equal(function(np.arange(3)), numpy_version(np.arange(3)))  # (integers: float64)

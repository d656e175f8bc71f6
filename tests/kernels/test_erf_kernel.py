"""kernels/erf.py: the references erfc_numpy and erfinv_numpy against Python's ``math`` (erfc's relative
precision in the tail) and PyTorch; the kernels erf, erfc, erfinv and their one-pass gradients equal to the
references on a wide range and on the special values (NaN, ±inf, ±0, tiny, huge, ±1 for erfinv), in float32
and float64; with the JIT off the references run.  (erf against ``math.erf``: tests/ops/test_special.py.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
from kernel_paths import both_paths, reference_only, tolerance

from minitensor.kernels import erf as erf_module
from minitensor.kernels.erf import (
    erf_backward,
    erf_numpy,
    erfc,
    erfc_backward,
    erfc_numpy,
    erfinv,
    erfinv_backward,
    erfinv_numpy,
)

rng = np.random.default_rng(28)
WIDE = np.concatenate([rng.uniform(-30, 30, 2000), 10 ** rng.uniform(-8, 2, 500)])
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-45, 1e-38, 0.46875, -0.46875, 4.0, -4.0, 9.0, 26.0,
           -27.0, 1e30, -3e38]  # fmt: skip
UNIT_SPECIAL = [0.0, -0.0, 1.0, -1.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 1e-30, -1e-45, 0.5, -0.5, 0.9999999]


def _inputs(dtype: str) -> np.ndarray:
    return np.concatenate([WIDE, -WIDE[:500], SPECIAL]).astype(dtype)


def _unit_inputs(dtype: str) -> np.ndarray:
    near_one = 1 - 2.0 ** -np.arange(1, 53 if dtype == "float64" else 24)
    return np.concatenate([rng.uniform(-1, 1, 3000), near_one, -near_one, UNIT_SPECIAL]).astype(dtype)


def _assert_kernel_equals_reference(got: np.ndarray, expected: np.ndarray, dtype: str) -> None:
    assert got.dtype == expected.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, expected, **tolerance(dtype))  # (NaN where NaN, the same infinities)
    zeros = expected == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(expected[zeros]))


def test_erfc_reference_against_math_with_relative_precision_in_the_tail():
    x = np.concatenate([WIDE[np.abs(WIDE) < 26], [0.0, -0.0, 0.46875, -0.46875, 4.0, 26.0]])
    expected = np.array([math.erfc(v) for v in x])
    np.testing.assert_allclose(erfc_numpy(x), expected, rtol=1e-13, atol=0)
    np.testing.assert_allclose(erfc(x), expected, rtol=1e-13, atol=0)
    np.testing.assert_array_equal(erfc_numpy(np.array([np.inf, -np.inf, np.nan])), [0.0, 2.0, np.nan])


@pytest.mark.parametrize("inverse", [erfinv, erfinv_numpy], ids=["kernel", "reference"])
def test_erfinv_inverts_erf_and_equals_pytorch(inverse):
    torch = pytest.importorskip("torch")
    p = np.concatenate([rng.uniform(-1, 1, 2000), 1 - 10.0 ** -np.arange(1, 16), -(1 - 10.0 ** -np.arange(1, 16))])
    y = inverse(p)
    np.testing.assert_allclose(erf_numpy(y), p, rtol=2e-15, atol=2e-16)
    np.testing.assert_allclose(y, torch.special.erfinv(torch.tensor(p)).numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(inverse(np.array([1.0, -1.0, 1.5, np.nan])), [np.inf, -np.inf, np.nan, np.nan])
    assert inverse(np.float32([0.5])).dtype == np.float32


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_erf_and_erfc_kernels_equal_the_references(name, dtype):
    x = _inputs(dtype)
    function = getattr(erf_module, name)
    got, expected = both_paths(lambda: function(x))
    _assert_kernel_equals_reference(got, expected, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erfinv_kernel_equals_the_reference_to_its_last_digits(dtype):
    u = _unit_inputs(dtype)
    got, expected = both_paths(lambda: erfinv(u))
    _assert_kernel_equals_reference(got, expected, dtype)
    if dtype == "float32":  # (one Newton step from Giles' estimate: float32 correctly rounded but for ties)
        assert np.mean((got == expected) | np.isnan(expected)) > 0.999


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv"])
def test_one_pass_gradients_equal_the_formulas(name, dtype):
    x = (_unit_inputs(dtype) if name == "erfinv" else _inputs(dtype))[:3000].reshape(60, 50)
    y = erfinv_numpy(x) if name == "erfinv" else x  # (erfinv's gradient takes its output)
    grad = rng.standard_normal(x.shape).astype(dtype)
    backward = {"erf": erf_backward, "erfc": erfc_backward, "erfinv": erfinv_backward}[name]
    got, expected = both_paths(lambda: backward(grad, y))
    _assert_kernel_equals_reference(got, expected, dtype)
    broadcast = backward(grad[:1], y)  # (shapes differ: the plain formula)
    np.testing.assert_allclose(broadcast, reference_only(lambda: backward(np.broadcast_to(grad[:1], y.shape), y)))


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv"])
def test_jit_off_runs_the_references(name):
    x = _unit_inputs("float32") if name == "erfinv" else _inputs("float32")
    function, numpy_version = getattr(erf_module, name), getattr(erf_module, f"{name}_numpy")
    np.testing.assert_array_equal(reference_only(lambda: function(x), erf_module), numpy_version(x))
    np.testing.assert_array_equal(function(np.arange(3)), numpy_version(np.arange(3)))  # (integers: float64)

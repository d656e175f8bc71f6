"""kernels/erfinv.py: erfinv (kernel and reference) inverts erf and equals PyTorch; the kernel and its
one-pass gradient equal to the reference on a wide range, next to ±1 and on the special values (NaN, ±inf,
±0, ±1, outside [-1, 1], tiny), in float32 (bit for bit but for ties) and float64; with the JIT off the
reference runs."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import assert_kernel_equals_reference, both_paths, reference_only

from minitensor.kernels import erfinv as erfinv_module
from minitensor.kernels.erf import erf_numpy
from minitensor.kernels.erfinv import erfinv, erfinv_backward, erfinv_numpy

rng = np.random.default_rng(28)
SPECIAL = [0.0, -0.0, 1.0, -1.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 1e-30, -1e-45, 0.5, -0.5, 0.9999999]


def _inputs(dtype: str) -> np.ndarray:
    near_one = 1 - 2.0 ** -np.arange(1, 53 if dtype == "float64" else 24)
    return np.concatenate([rng.uniform(-1, 1, 3000), near_one, -near_one, SPECIAL]).astype(dtype)


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
def test_kernel_equals_the_reference_to_its_last_digits(dtype):
    u = _inputs(dtype)
    got, expected = both_paths(lambda: erfinv(u))
    assert_kernel_equals_reference(got, expected, dtype)
    if dtype == "float32":  # (Giles' double-precision polynomials: float32 correctly rounded but for ties)
        assert np.mean((got == expected) | np.isnan(expected)) > 0.999


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_one_pass_gradient_equals_the_formula(dtype):
    y = erfinv_numpy(_inputs(dtype)[:3000].reshape(60, 50))  # (the gradient takes erfinv's output)
    grad = rng.standard_normal(y.shape).astype(dtype)
    got, expected = both_paths(lambda: erfinv_backward(grad, y))
    assert_kernel_equals_reference(got, expected, dtype)
    broadcast = erfinv_backward(grad[:1], y)  # (shapes differ: the plain formula)
    expected = reference_only(lambda: erfinv_backward(np.broadcast_to(grad[:1], y.shape), y))
    np.testing.assert_allclose(broadcast, expected)


def test_jit_off_runs_the_reference():
    u = _inputs("float32")
    np.testing.assert_array_equal(reference_only(lambda: erfinv(u), erfinv_module), erfinv_numpy(u))
    np.testing.assert_array_equal(erfinv(np.arange(-1, 2)), erfinv_numpy(np.arange(-1, 2)))  # (integers: float64)

"""kernels/gamma.py: the references against Python's ``math`` (lgamma, at its poles) and PyTorch and their
recurrence (polygamma); the kernels equal to the references on a wide range and on the special values (NaN,
±inf, ±0, the poles, tiny, huge, negative), in float32 and float64, for n = 0 (digamma), 1 (its own
branch-free loop) and higher n; with the JIT off the references run."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kernel_paths import assert_kernel_equals_reference, both_paths, reference_only

from minitensor.kernels import gamma

rng = np.random.default_rng(28)
WIDE = np.concatenate([rng.uniform(-30, 30, 2000), 10 ** rng.uniform(-8, 2, 500)])
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 2.0, -1.0, -2.0, -7.0, -0.5, -2.5, 1e-300, 1e-45, -1e-8, 1e-8,
           1.4616321449683622, 9.999999, 10.0, 1e30, -1e30, 3e38, -3.3e38]  # fmt: skip


def _inputs(dtype: str) -> np.ndarray:
    return np.concatenate([WIDE, -WIDE[:500], rng.uniform(0.5, 2, 300), SPECIAL]).astype(dtype)


@pytest.mark.parametrize("lgamma", [gamma.lgamma, gamma.lgamma_numpy], ids=["kernel", "reference"])
def test_lgamma_against_math_and_at_the_poles(lgamma):
    x = np.concatenate([np.abs(WIDE) + 1e-3, -np.abs(WIDE[:500]) - 0.5 * rng.uniform(0.1, 0.9, 500)])
    np.testing.assert_allclose(lgamma(x), [math.lgamma(v) for v in x], rtol=1e-15, atol=1e-15)
    edges = lgamma(np.array([0.0, -1.0, -np.inf, np.inf, np.nan, 1e308]))
    np.testing.assert_array_equal(edges, [np.inf, np.inf, np.inf, np.inf, np.nan, np.inf])


@pytest.mark.parametrize("polygamma", [gamma.polygamma, gamma.polygamma_numpy], ids=["kernel", "reference"])
@pytest.mark.parametrize("n", [0, 1, 2, 4])
def test_polygamma_against_pytorch_and_its_recurrence(n, polygamma):
    torch = pytest.importorskip("torch")
    x = np.concatenate([rng.uniform(0.05, 40, 500), -rng.uniform(0.05, 0.95, 200) - rng.integers(0, 20, 200)])
    ours = polygamma(n, x)
    # (PyTorch's digamma and trigamma are themselves ~1e-12 and ~1e-9 relative off in places)
    np.testing.assert_allclose(ours, torch.polygamma(n, torch.tensor(x)).numpy(), rtol=1e-8 if n else 1e-10, atol=1e-12)
    step = (-1) ** (n + 1) * math.factorial(n) / x ** (n + 1)  # psi_n(x + 1) = psi_n(x) + (-1)^n n! / x^(n+1)
    np.testing.assert_allclose(polygamma(n, x + 1), ours - step, rtol=1e-8, atol=1e-10)  # (near poles: 1e-9)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lgamma_kernel_equals_the_reference(dtype):
    x = _inputs(dtype)
    got, expected = both_paths(lambda: gamma.lgamma(x))
    assert_kernel_equals_reference(got, expected, dtype)
    assert got[np.isin(x, [1.0, 2.0])].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [0, 1, 3])
def test_polygamma_kernel_equals_the_reference(n, dtype):
    x = _inputs(dtype)
    got, expected = both_paths(lambda: gamma.polygamma(n, x))
    assert_kernel_equals_reference(got, expected, dtype)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_jit_off_runs_the_references(n):
    x = _inputs("float32")
    np.testing.assert_array_equal(reference_only(lambda: gamma.polygamma(n, x), gamma), gamma.polygamma_numpy(n, x))
    np.testing.assert_array_equal(reference_only(lambda: gamma.lgamma(x), gamma), gamma.lgamma_numpy(x))
    np.testing.assert_array_equal(gamma.polygamma(n, np.arange(1, 4)), gamma.polygamma_numpy(n, np.arange(1, 4)))

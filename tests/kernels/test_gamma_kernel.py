"""kernels/gamma.py (NumPy functions: no numba kernel, so no JIT path): lgamma against Python's ``math`` and at
its poles, polygamma against PyTorch and its recurrence."""

from __future__ import annotations

import math

import numpy as np
import pytest

from minitensor.kernels import gamma

rng = np.random.default_rng(28)
WIDE = np.concatenate([rng.uniform(-30, 30, 2000), 10 ** rng.uniform(-8, 2, 500)])


def test_lgamma_against_math_and_at_the_poles():
    x = np.concatenate([np.abs(WIDE) + 1e-3, -np.abs(WIDE[:500]) - 0.5 * rng.uniform(0.1, 0.9, 500)])
    np.testing.assert_allclose(gamma.lgamma(x), [math.lgamma(v) for v in x], rtol=1e-15, atol=1e-15)
    edges = gamma.lgamma(np.array([0.0, -1.0, -np.inf, np.inf, np.nan, 1e308]))
    np.testing.assert_array_equal(edges, [np.inf, np.inf, np.inf, np.inf, np.nan, np.inf])


@pytest.mark.parametrize("n", [0, 1, 2, 4])
def test_polygamma_against_pytorch_and_its_recurrence(n):
    torch = pytest.importorskip("torch")
    x = np.concatenate([rng.uniform(0.05, 40, 500), -rng.uniform(0.05, 0.95, 200) - rng.integers(0, 20, 200)])
    ours = gamma.polygamma(n, x)
    # (PyTorch's digamma and trigamma are themselves ~1e-12 and ~1e-9 relative off in places)
    np.testing.assert_allclose(ours, torch.polygamma(n, torch.tensor(x)).numpy(), rtol=1e-8 if n else 1e-10, atol=1e-12)
    step = (-1) ** (n + 1) * math.factorial(n) / x ** (n + 1)  # psi_n(x + 1) = psi_n(x) + (-1)^n n! / x^(n+1)
    np.testing.assert_allclose(gamma.polygamma(n, x + 1), ours - step, rtol=1e-8, atol=1e-10)  # (near poles: 1e-9)

"""The special functions of the backend (kernels/erf.py's erfc and erfinv, kernels/gamma.py, kernels/bessel.py):
NumPy functions (no numba kernel, so no JIT path), against Python's ``math`` where it has the function and
against PyTorch elsewhere, over wide ranges, at their special values, in float32 and float64."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

from minitensor.kernels import bessel, gamma
from minitensor.kernels.erf import erf, erfc, erfinv

rng = np.random.default_rng(28)
WIDE = np.concatenate([rng.uniform(-30, 30, 2000), 10 ** rng.uniform(-8, 2, 500)])


def test_erfc_against_math_with_relative_precision_in_the_tail():
    x = np.concatenate([WIDE[np.abs(WIDE) < 26], [0.0, -0.0, 0.46875, -0.46875, 4.0, 26.0]])
    expected = np.array([math.erfc(v) for v in x])
    np.testing.assert_allclose(erfc(x), expected, rtol=1e-13, atol=0)
    np.testing.assert_array_equal(erfc(np.array([np.inf, -np.inf, np.nan])), [0.0, 2.0, np.nan])


def test_erfinv_inverts_erf_and_equals_pytorch():
    torch = pytest.importorskip("torch")
    p = np.concatenate([rng.uniform(-1, 1, 2000), 1 - 10.0 ** -np.arange(1, 16), -(1 - 10.0 ** -np.arange(1, 16))])
    y = erfinv(p)
    np.testing.assert_allclose(erf(y), p, rtol=2e-15, atol=2e-16)
    np.testing.assert_allclose(y, torch.special.erfinv(torch.tensor(p)).numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(erfinv(np.array([1.0, -1.0, 1.5, np.nan])), [np.inf, -np.inf, np.nan, np.nan])
    assert erfinv(np.float32([0.5])).dtype == np.float32


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


def test_i0_and_i1_against_pytorch_and_their_symmetry():
    torch = pytest.importorskip("torch")
    x = np.concatenate([rng.uniform(-50, 50, 1000), [0.0, 29.9, 30.0, 30.1, 700.0]])
    np.testing.assert_allclose(bessel.i0(x), torch.i0(torch.tensor(x)).numpy(), rtol=1e-14)
    np.testing.assert_allclose(bessel.i1(x), torch.special.i1(torch.tensor(x)).numpy(), rtol=5e-15, atol=1e-300)
    np.testing.assert_array_equal(bessel.i1(-x), -bessel.i1(x))
    assert bessel.i0(np.float32([1.0])).dtype == np.float32 and bessel.i1(np.array([np.inf]))[0] == np.inf


@pytest.mark.parametrize("module", [gamma, bessel], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0

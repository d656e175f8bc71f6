"""kernels/erf.py's erfc and erfinv (NumPy functions: no numba kernel, so no JIT path): erfc against Python's
``math`` with its relative precision in the tail, erfinv against erf and PyTorch, their special values.
(erf itself: tests/ops/test_special.py.)"""

from __future__ import annotations

import math

import numpy as np
import pytest

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

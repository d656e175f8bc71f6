"""kernels/bessel.py (NumPy functions: no numba kernel, so no JIT path): i0 and i1 against PyTorch over a wide
range and their symmetry."""

from __future__ import annotations

import numpy as np
import pytest

from minitensor.kernels import bessel

rng = np.random.default_rng(28)


def test_i0_and_i1_against_pytorch_and_their_symmetry():
    torch = pytest.importorskip("torch")
    x = np.concatenate([rng.uniform(-50, 50, 1000), [0.0, 29.9, 30.0, 30.1, 700.0]])
    np.testing.assert_allclose(bessel.i0(x), torch.i0(torch.tensor(x)).numpy(), rtol=1e-14)
    np.testing.assert_allclose(bessel.i1(x), torch.special.i1(torch.tensor(x)).numpy(), rtol=5e-15, atol=1e-300)
    np.testing.assert_array_equal(bessel.i1(-x), -bessel.i1(x))
    assert bessel.i0(np.float32([1.0])).dtype == np.float32 and bessel.i1(np.array([np.inf]))[0] == np.inf

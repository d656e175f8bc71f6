"""kernels/bessel.py: i0 and i1 (kernels and references) against PyTorch over a wide range and their
symmetry; the kernels equal to the references on a wide range and on the special values (NaN, ±inf, ±0,
tiny, the range boundary 8, the overflow at 709.78), in float32 and float64; with the JIT off the
references run."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import assert_kernel_equals_reference, both_paths, reference_only

from minitensor.kernels import bessel

rng = np.random.default_rng(28)
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, 1e-45, -1e-30, 8.0, -8.0, 8.000001, 88.0, -89.0, 700.0,
           709.78, 709.79, -713.0, 1e30]  # fmt: skip


@pytest.mark.parametrize("path", ["kernel", "reference"])
def test_i0_and_i1_against_pytorch_and_their_symmetry(path):
    torch = pytest.importorskip("torch")
    i0, i1 = (bessel.i0, bessel.i1) if path == "kernel" else (bessel.i0_numpy, bessel.i1_numpy)
    x = np.concatenate([rng.uniform(-50, 50, 1000), [0.0, 29.9, 30.0, 30.1, 700.0]])
    np.testing.assert_allclose(i0(x), torch.i0(torch.tensor(x)).numpy(), rtol=1e-14)
    np.testing.assert_allclose(i1(x), torch.special.i1(torch.tensor(x)).numpy(), rtol=5e-15, atol=1e-300)
    np.testing.assert_array_equal(i1(-x), -i1(x))
    assert i0(np.float32([1.0])).dtype == np.float32 and i1(np.array([np.inf]))[0] == np.inf


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["i0", "i1"])
def test_kernels_equal_the_references(name, dtype):
    x = np.concatenate([rng.uniform(-50, 50, 2000), rng.standard_normal(1000), rng.uniform(-709, 709, 500), SPECIAL])
    x = x.astype(dtype)
    function = getattr(bessel, name)
    got, expected = both_paths(lambda: function(x))
    assert_kernel_equals_reference(got, expected, dtype)


def test_jit_off_runs_the_references():
    x = np.concatenate([rng.uniform(-50, 50, 500), SPECIAL]).astype(np.float32)
    np.testing.assert_array_equal(reference_only(lambda: bessel.i0(x), bessel), bessel.i0_numpy(x))
    np.testing.assert_array_equal(reference_only(lambda: bessel.i1(x), bessel), bessel.i1_numpy(x))
    np.testing.assert_array_equal(bessel.i1(np.arange(-2, 3)), bessel.i1_numpy(np.arange(-2, 3)))

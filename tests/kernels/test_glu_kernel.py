"""kernels/glu.py: the GLU kernels equal their NumPy references (float32 and float64, every dim,
large |b| where the sigmoid saturates, ±inf and NaN), with full and one-value (``sum``'s)
gradients and non-contiguous inputs."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import both_paths

from minitensor.kernels import glu

TOL = {"float32": dict(rtol=2e-6, atol=1e-30), "float64": dict(rtol=1e-14, atol=1e-300)}


def inputs(dtype) -> np.ndarray:
    x = np.random.default_rng(0).standard_normal((3, 4, 10)) * 5
    x.reshape(-1)[:8] = [0.0, -0.0, 100.0, -100.0, np.inf, -np.inf, np.nan, 1e-30]
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_forward_and_backward_equal_references(dtype, dim) -> None:
    x = inputs(dtype)[:2] if dim == 0 else inputs(dtype)  # (an even size along dim)
    kernel, reference = both_paths(lambda: glu.glu(x, dim, keep=True))
    for got, expected in zip(kernel, reference):
        assert got.dtype == expected.dtype == np.dtype(dtype) and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, equal_nan=True, **TOL[dtype])
    s = reference[1]
    full = np.random.default_rng(1).standard_normal(s.shape).astype(dtype)
    for g in (full, np.broadcast_to(full[(0,) * full.ndim], s.shape)):
        kernel, expected = both_paths(lambda g=g: glu.glu_backward(g, x, s, dim))
        assert kernel.shape == x.shape and kernel.dtype == np.dtype(dtype)
        np.testing.assert_allclose(kernel, expected, equal_nan=True, **TOL[dtype])


def test_a_transposed_input_gives_what_its_copy_gives() -> None:
    x = inputs("float32").transpose(2, 0, 1)  # (10, 3, 4), not contiguous
    out, s = glu.glu(x, 0, keep=True)
    out_copy, s_copy = glu.glu(x.copy(), 0, keep=True)
    np.testing.assert_array_equal(out, out_copy)
    np.testing.assert_array_equal(glu.glu_backward(out, x, s, 0), glu.glu_backward(out, x.copy(), s_copy, 0))
    assert glu.glu(x, 0, keep=False)[1] is None

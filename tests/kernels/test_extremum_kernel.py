"""The SIMD row max/min of ``_rows.py`` and the amax/amin kernels of ``extremum.py``: numba against
the NumPy references (ties, NaN, +-inf, odd sizes), and the ops against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import jitted, reference

import minitensor as mt
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.kernels import _rows, extremum

SHAPES = [(1, 1), (3, 5), (7, 16), (4, 17), (2, 1000), (50, 33)]


def rows_with_specials(rng, shape, dtype) -> np.ndarray:
    """Random rows with ties (rounded values), and a NaN, a +inf and a -inf row when there is room."""
    x = np.round(3 * rng.standard_normal(shape)).astype(dtype)
    if shape[0] >= 3:
        x[0, rng.integers(shape[1])] = np.nan
        x[1, rng.integers(shape[1])] = np.inf
        x[2] = -np.inf
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_row_max_and_min_match_numpy_and_propagate_nan(rng, dtype, shape) -> None:
    x = rows_with_specials(rng, shape, dtype)
    for kernel, expected in ((_rows.row_max, x.max(axis=1)), (_rows.row_min, x.min(axis=1))):
        out = np.full(shape[0], 7.0, dtype)
        kernel(x, out)
        np.testing.assert_array_equal(out, expected)  # (NaN where NumPy has NaN)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_row_nanmax_skips_nan(rng, dtype, shape) -> None:
    x = rows_with_specials(rng, shape, dtype)
    x[-1] = np.nan  # all NaN: NaN
    out = np.full(shape[0], 7.0, dtype)
    _rows.row_nanmax(x, out)
    np.testing.assert_array_equal(out, np.fmax.reduce(x, axis=1))
    assert np.isnan(out[-1]) and (shape[0] < 3 or np.isfinite(out[0]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_kernels_match_the_references(rng, dtype, shape) -> None:
    x = rows_with_specials(rng, shape, dtype)
    g = rng.standard_normal(shape[0]).astype(dtype)
    for forward in (extremum.amax_rows, extremum.amin_rows):

        def run(f=forward):
            m = f(x)
            return m, extremum.extremum_backward_rows(x, m, g)

        (m, dx), (m_ref, dx_ref) = jitted(run), reference(run)
        assert m.dtype == dx.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(m, m_ref)
        np.testing.assert_allclose(dx, dx_ref, rtol=1e-6 if dtype == "float32" else 1e-15)
        np.testing.assert_array_equal(np.isnan(dx), np.isnan(dx_ref))


def test_ties_share_the_gradient_and_a_nan_row_gets_nan() -> None:
    x = np.array([[1.0, 3.0, 3.0, 3.0], [2.0, np.nan, 0.0, 1.0], [-np.inf, -np.inf, -np.inf, -np.inf]])
    g = np.array([3.0, 1.0, 2.0])
    dx = jitted(lambda: extremum.extremum_backward_rows(x, extremum.amax_rows(x), g))
    np.testing.assert_array_equal(dx, [[0.0, 1.0, 1.0, 1.0], [np.nan] * 4, [0.5] * 4])


# ------------------------------------------------------------------ the ops (both paths)
@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("shape", [(3, 4, 5), (4, 4)])  # (square: rows moved back must not look in place)
@pytest.mark.parametrize("dim, keepdim", [(-1, False), (0, True), (1, False)])
def test_ops_match_torch_with_ties_and_nan(jit_path, rng, op, dim, keepdim, shape) -> None:
    torch = pytest.importorskip("torch")
    x = np.round(rng.standard_normal(shape))  # many ties
    x[0, 1] = np.nan
    x[2, 3] = np.inf
    g = rng.standard_normal(np.max(x, axis=dim, keepdims=keepdim).shape)
    a = mt.tensor(x, dtype=mt.float64, requires_grad=True)
    out = getattr(a, op)(dim, keepdim=keepdim)
    out.backward(mt.tensor(g, dtype=mt.float64))
    b = torch.tensor(x, requires_grad=True)
    want = getattr(b, op)(dim, keepdim=keepdim)
    want.backward(torch.tensor(g))
    np.testing.assert_array_equal(out.numpy(), want.detach().numpy())
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-15, atol=0)
    np.testing.assert_array_equal(np.isnan(a.grad.numpy()), np.isnan(b.grad.numpy()))


@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_ops_gradcheck_and_gradgradcheck(jit_path, rng, op, dim) -> None:
    x = mt.tensor(rng.standard_normal((3, 4, 5)), dtype=mt.float64, requires_grad=True)  # distinct: differentiable
    assert gradcheck(lambda t: getattr(t, op)(dim).tanh(), x)
    assert gradgradcheck(lambda t: getattr(t, op)(dim).tanh(), x)


def test_float32_stays_float32(jit_path, rng) -> None:
    x = mt.tensor(rng.standard_normal((4, 6)), dtype=mt.float32, requires_grad=True)
    y = x.amax(1)
    y.backward(mt.ones(4))
    assert y.dtype == x.grad.dtype == mt.float32

"""kernels/gelu.py (``F.gelu``): the flat GELU kernels equal their NumPy references (float32 and
float64, exact and tanh, odd sizes, non-contiguous inputs, extremes and NaN), the arrays kept for
the backward are what they claim, and the op's gradients pass gradcheck on the jitted path and
match PyTorch's in float32."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kernel_paths import both_paths, jitted

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.kernels import gelu

EXTREMES = [0.0, -0.0, 2e38, -3e38, 1e4, -1e4, 60.0, -60.0, 88.0, np.inf, -np.inf, np.nan]
# float32: 1 + erf(x / sqrt 2) cancels for x < -3 (in PyTorch's float32 GELU as well): a few 1e-7 absolute
TOL = {np.float32: dict(rtol=2e-6, atol=1e-6), np.float64: dict(rtol=1e-14, atol=1e-15)}


def inputs(dtype, n: int = 4099) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.concatenate([rng.standard_normal(n) * 4, EXTREMES]).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_kernels_equal_references(dtype, approximate) -> None:
    x = inputs(dtype)
    g = np.random.default_rng(1).standard_normal(x.shape).astype(dtype)
    for keep in (False, True):
        (y, kept), (y_ref, kept_ref) = both_paths(lambda k=keep: gelu.gelu(x, approximate, keep=k))
        assert y.dtype == dtype and (kept is None) == (not keep)
        np.testing.assert_allclose(y, y_ref, equal_nan=True, **TOL[dtype])
        if keep:
            np.testing.assert_allclose(kept, kept_ref, equal_nan=True, **TOL[dtype])
    dx, dx_ref = both_paths(lambda: gelu.gelu_backward(g, x, kept_ref, approximate))
    np.testing.assert_allclose(dx, dx_ref, equal_nan=True, **TOL[dtype])
    assert np.isnan(y[-1]) and y[-3] == np.inf and np.isnan(y[-2])  # NaN; inf; -inf * 0, as in PyTorch
    assert np.isfinite(dx[:-3]).all()  # (beyond |x| = 50 the tanh form's slope is exactly 0 or 1)


def test_kept_arrays_and_exact_values() -> None:
    x = np.linspace(-6, 6, 1001)
    y, cdf = jitted(lambda: gelu.gelu(x, "none", keep=True))
    exact_cdf = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(cdf, exact_cdf, rtol=1e-12, atol=1e-15)  # (1 + erf cancels for x < 0)
    np.testing.assert_allclose(y, x * exact_cdf, rtol=1e-12, atol=1e-15)
    _, e = jitted(lambda: gelu.gelu(x, "tanh", keep=True))
    u = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
    np.testing.assert_allclose(e, np.exp(-2 * np.abs(u)), rtol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_on_strided_inputs(dtype) -> None:
    x = inputs(dtype, 4 * 6 * 5 - len(EXTREMES)).reshape(4, 6, 5).transpose(2, 0, 1)[:, ::2]
    g = np.random.default_rng(2).standard_normal(x.shape).astype(dtype)[..., ::-1]
    for approximate in ("none", "tanh"):
        (y, kept), (y_ref, _) = both_paths(lambda a=approximate: gelu.gelu(x, a, keep=True))
        assert y.shape == x.shape
        np.testing.assert_allclose(y, y_ref, equal_nan=True, **TOL[dtype])
        dx, dx_ref = both_paths(lambda a=approximate, k=kept: gelu.gelu_backward(g, x, k, a))
        np.testing.assert_allclose(dx, dx_ref, equal_nan=True, **TOL[dtype])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_op_gradients_on_the_jit_path(approximate) -> None:
    rng = np.random.default_rng(3)
    x = mt.tensor(rng.standard_normal((3, 5)) * 2, dtype=mt.float64, requires_grad=True)
    weights = mt.tensor(rng.standard_normal((3, 5)), dtype=mt.float64)

    def fn(t):
        return F.gelu(t, approximate=approximate) * weights

    assert jitted(lambda: gradcheck(lambda t: fn(t).sum(), x))
    assert jitted(lambda: gradgradcheck(fn, x))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_matches_pytorch_in_float32(approximate) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((67, 31)) * 3).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    mx, tx = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = F.gelu(mx, approximate=approximate), torch.nn.functional.gelu(tx, approximate=approximate)
    y.backward(mt.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=2e-6)

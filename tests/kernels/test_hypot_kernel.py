"""kernels/hypot.py: hypot and its gradients equal their NumPy references (float32 and float64,
zeros, huge and tiny values that would overflow or underflow a plain sum of squares, ±inf beside
NaN), with full and one-value (``sum``'s) gradients; the op matches PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import both_paths

import minitensor as mt
from minitensor.kernels import hypot

SPECIAL = [0.0, -0.0, 1.0, -3.0, 1e-30, 1e30, 3e38, -3e38, 1e-300, 1e300, np.inf, -np.inf, np.nan]
TOL = {"float32": dict(rtol=1e-7, atol=0), "float64": dict(rtol=4e-16, atol=0)}


def operands(dtype) -> tuple:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(500) * 10.0 ** rng.integers(-5, 5, 500) for _ in range(2))
    sa, sb = np.meshgrid(SPECIAL, SPECIAL)
    with np.errstate(over="ignore"):
        return np.concatenate([a, sa.ravel()]).astype(dtype), np.concatenate([b, sb.ravel()]).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_forward_equals_reference(dtype) -> None:
    a, b = operands(dtype)
    kernel, reference = both_paths(lambda: hypot.hypot(a, b))
    assert kernel.dtype == reference.dtype == np.dtype(dtype)
    np.testing.assert_allclose(kernel, reference, equal_nan=True, **TOL[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("uniform", [False, True])
@pytest.mark.parametrize("need", [(True, True), (True, False), (False, True)])
def test_backward_equals_reference(dtype, uniform, need) -> None:
    a, b = operands(dtype)
    with np.errstate(all="ignore"):
        out = np.hypot(a, b)
    g = np.random.default_rng(1).standard_normal(a.shape).astype(dtype)
    g = np.broadcast_to(g[:1], a.shape) if uniform else g
    kernel, reference = both_paths(lambda: hypot.hypot_backward(g, a, b, out, *need))
    for got, expected, needed in zip(kernel, reference, need):
        assert (got is None) == (expected is None) == (not needed)
        if needed:
            np.testing.assert_allclose(got, expected, equal_nan=True, **TOL[dtype])


def test_op_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 37, 5)).astype(np.float32)
    g = rng.standard_normal((37, 5)).astype(np.float32)
    ma, mb = mt.tensor(a, requires_grad=True), mt.tensor(b, requires_grad=True)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    y, ty = mt.hypot(ma, mb), torch.hypot(ta, tb)
    y.backward(mt.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(ma.grad.numpy(), ta.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(mb.grad.numpy(), tb.grad.numpy(), rtol=1e-6)

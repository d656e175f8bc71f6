"""kernels/pointwise.py: the sigmoid kernels equal their NumPy references."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.kernels import pointwise

TOL = {np.float32: dict(rtol=4e-7, atol=1e-30), np.float64: dict(rtol=2e-15, atol=1e-300)}


def inputs(dtype, n: int = 1001) -> np.ndarray:
    """Random values of every magnitude, the extremes, and a non-contiguous layout."""
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(n) * 10, [0.0, -0.0, 88.0, -88.0, 750.0, -750.0, np.inf, -np.inf]])
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_kernel_equals_reference(dtype) -> None:
    x = inputs(dtype)
    mt.set_jit_enabled(True)
    kernel = pointwise.sigmoid(x)
    with mt.jit_disabled():
        reference = pointwise.sigmoid(x)
    assert kernel.dtype == dtype and kernel.shape == x.shape
    np.testing.assert_allclose(kernel, reference, **TOL[dtype])
    assert kernel[-2] == 1 and kernel[-1] == 0 and np.isnan(pointwise.sigmoid(np.array([np.nan], dtype)))[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_kernel_on_strided_and_shaped_inputs(dtype) -> None:
    x = inputs(dtype, 4 * 6 * 5 - 8).reshape(4, 6, 5).transpose(2, 0, 1)[:, ::2]  # not contiguous
    mt.set_jit_enabled(True)
    kernel = pointwise.sigmoid(x)
    with mt.jit_disabled():
        reference = pointwise.sigmoid(x)
    assert kernel.shape == x.shape
    np.testing.assert_allclose(kernel, reference, **TOL[dtype])
    np.testing.assert_allclose(kernel, 1 / (1 + np.exp(-x.astype(np.float64))), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_backward_kernel_equals_reference(dtype) -> None:
    rng = np.random.default_rng(1)
    y = pointwise.sigmoid(inputs(dtype))
    g = rng.standard_normal(y.shape).astype(dtype)
    mt.set_jit_enabled(True)
    kernel = pointwise.sigmoid_backward(g, y)
    with mt.jit_disabled():
        reference = pointwise.sigmoid_backward(g, y)
    np.testing.assert_allclose(kernel, reference, **TOL[dtype])
    broadcast = pointwise.sigmoid_backward(g[:1], y)  # another shape: the plain formula
    np.testing.assert_allclose(broadcast, g[:1] * y * (1 - y), **TOL[dtype])


def test_sigmoid_op_gradients_on_both_paths() -> None:
    """First order through the op (kernel and reference), and gradcheck on a random weighting."""
    rng = np.random.default_rng(2)
    weights = mt.tensor(rng.standard_normal((3, 4)), dtype=mt.float64)
    x = mt.tensor(rng.standard_normal((3, 4)) * 3, dtype=mt.float64, requires_grad=True)
    grads = []
    for jit in (True, False):
        mt.set_jit_enabled(jit)
        x.grad = None
        (x.sigmoid() * weights).sum().backward()
        grads.append(x.grad.numpy())
        assert mt.autograd.gradcheck(lambda t: (t.sigmoid() * weights).sum(), (x,))
    mt.set_jit_enabled(True)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-14)
    s = 1 / (1 + np.exp(-x.numpy()))
    np.testing.assert_allclose(grads[0], weights.numpy() * s * (1 - s), rtol=1e-12)

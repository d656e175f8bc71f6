"""kernels/product.py: the product along the last dim of a C-contiguous array (kernel: partial
products in SIMD lanes, in float64) equals the reference (NumPy's product in float64) and NumPy's
own product to rounding, with keepdims, zeros, infinities and NaN; other dims and layouts are
NumPy's reduction, unchanged; ``prod(dim)``'s gradients stay right on the kernel."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import MODES, both_paths, jitted, reference

import minitensor as mt
from minitensor.kernels import product


@pytest.mark.parametrize(("kernel", "dtype"), MODES, indirect=["kernel"])
@pytest.mark.parametrize(("shape", "keepdims"), [((5, 7), False), ((3, 4, 33), True), ((9, 1), False), ((40,), False)])
def test_kernel_equals_reference_and_numpys_product(kernel, dtype, shape, keepdims) -> None:
    x = np.random.default_rng(0).uniform(0.5, 1.8, shape).astype(dtype)
    x.reshape(-1)[::5] *= -1
    got = jitted(lambda: product.product(x, x.ndim - 1, keepdims))
    expected = reference(lambda: product.product(x, x.ndim - 1, keepdims))
    assert got.dtype == expected.dtype == dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6 if dtype == "float32" else 1e-13)
    np.testing.assert_allclose(got, np.multiply.reduce(x, axis=-1, keepdims=keepdims), rtol=1e-5)


def test_zeros_infinities_and_nan_as_numpy() -> None:
    x = np.array([[0.0, 2.0, 3.0], [np.inf, 2.0, -1.0], [0.0, np.inf, 1.0], [np.nan, 1.0, 2.0]], np.float32)
    for got in both_paths(lambda: product.product(x, 1, keepdims=False)):
        np.testing.assert_array_equal(got, np.multiply.reduce(x, axis=1))


def test_a_product_that_overflows_only_on_the_way_is_finite() -> None:
    """Multiplied in float64 and rounded once: large factors whose running product passes float32's
    range but whose product does not give that product."""
    x = np.array([[1e30, 1e30, 1e-30, 1e-30]], np.float32)
    for got in both_paths(lambda: product.product(x, 1, keepdims=False)):
        np.testing.assert_allclose(got, [1.0], rtol=1e-5)


def test_other_dims_and_layouts_are_numpys() -> None:
    x = np.random.default_rng(1).uniform(0.5, 1.5, (6, 8)).astype(np.float32)
    np.testing.assert_array_equal(product.product(x, 0, keepdims=True), np.multiply.reduce(x, axis=0, keepdims=True))
    np.testing.assert_array_equal(product.product(x.T, 1, keepdims=False), np.multiply.reduce(x.T, axis=1))
    assert product.product(x[:0], 1, keepdims=False).shape == (0,)


def test_prod_gradients_on_the_kernel() -> None:
    x = mt.tensor([[1.0, 2.0, 3.0], [0.5, 0.0, 4.0]], dtype=mt.float64, requires_grad=True)
    y = jitted(lambda: x.prod(-1))
    np.testing.assert_allclose(y.detach().numpy(), [6.0, 0.0])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[6.0, 3.0, 2.0], [0.0, 2.0, 0.0]])

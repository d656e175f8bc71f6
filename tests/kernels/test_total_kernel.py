"""kernels/total.py: the sum and mean of all elements of a float32 array, and over its last dims
(kernels: float64 lanes), equal the reference (NumPy's sum in float64) and the exact sum to float32
rounding, in any layout (all elements) and with keepdims; other reductions and dtypes are NumPy's
own, unchanged.  The dot products of rows (``row_dots``) equal the reference in both dtypes and
layouts, with special values and empty shapes."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import both_paths

import minitensor as mt
from minitensor.kernels import total


def test_kernel_equals_reference_and_the_exact_sum() -> None:
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((37, 41)) * 10.0 ** rng.integers(-3, 4, (37, 41))).astype(np.float32)
    exact = np.sum(x.astype(np.float64))
    kernel, reference = both_paths(lambda: total.total_sum(x, (0, 1), keepdims=False))
    assert type(kernel) is type(reference) is np.float32
    assert kernel == reference == np.float32(exact)


@pytest.mark.parametrize("layout", ["transposed", "sliced", "empty"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_layouts_and_keepdims(layout, keepdims) -> None:
    base = np.random.default_rng(1).standard_normal((6, 8, 10)).astype(np.float32)
    x = {"transposed": base.transpose(2, 0, 1), "sliced": base[:, ::3], "empty": base[:0]}[layout]
    for fn, numpy_fn in ((total.total_sum, np.sum), (total.total_mean, np.mean)):
        if layout == "empty" and fn is total.total_mean:
            continue  # (the op answers NaN before asking: ops/reduce.py's _mean)
        for got in both_paths(lambda fn=fn: fn(x, (0, 1, 2), keepdims)):
            expected = numpy_fn(x.astype(np.float64), keepdims=keepdims).astype(np.float32)
            assert got.dtype == np.float32 and np.shape(got) == np.shape(expected)
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kernel", ["serial", "parallel"], indirect=True)
@pytest.mark.parametrize(
    ("shape", "axis"), [((5, 7), (1,)), ((3, 4, 6), (1, 2)), ((3, 4, 6), (-1,)), ((9, 1), (1,)), ((300, 5), (1,))]
)
@pytest.mark.parametrize("keepdims", [False, True])
def test_sums_over_the_last_dims_equal_reference_and_the_exact_sums(kernel, shape, axis, keepdims, monkeypatch) -> None:
    monkeypatch.setattr(total, "ROWS_FROM", 1)  # (the kernel for few rows too)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(np.float32)
    exact = np.sum(x.astype(np.float64), axis=axis, keepdims=keepdims)
    for fn, expected in ((total.total_sum, exact), (total.total_mean, exact / (x.size // exact.size))):
        got, reference = both_paths(lambda fn=fn: fn(x, axis, keepdims))
        assert got.dtype == reference.dtype == np.float32 and got.shape == reference.shape == expected.shape
        np.testing.assert_array_equal(got, reference)
        np.testing.assert_array_equal(got, expected.astype(np.float32))


def test_few_rows_keep_numpys_sums() -> None:
    """Below ``ROWS_FROM`` rows NumPy's sum costs less than the kernel's call: it is NumPy's, bit for bit."""
    x = np.random.default_rng(5).standard_normal((total.ROWS_FROM - 1, 300)).astype(np.float32)
    np.testing.assert_array_equal(total.total_sum(x, (1,), keepdims=False), np.sum(x, axis=1))
    np.testing.assert_array_equal(total.total_mean(x, (1,), keepdims=True), np.mean(x, axis=1, keepdims=True))


def test_other_reductions_are_numpys() -> None:
    x = np.random.default_rng(2).standard_normal((5, 7)).astype(np.float32)
    np.testing.assert_array_equal(total.total_sum(x, (0,), keepdims=True), np.sum(x, axis=0, keepdims=True))
    np.testing.assert_array_equal(total.total_mean(x, (0,), keepdims=False), np.mean(x, axis=0))
    np.testing.assert_array_equal(total.total_sum(x.T, (1,), keepdims=False), np.sum(x.T, axis=1))  # (not C-contiguous)
    x64 = x.astype(np.float64)
    assert total.total_sum(x64, (0, 1), keepdims=False) == np.sum(x64)
    np.testing.assert_array_equal(total.total_sum(x64, (1,), keepdims=False), np.sum(x64, axis=1))


def test_tensor_sum_and_mean_on_the_kernel_keep_their_gradients() -> None:
    x = mt.tensor(np.arange(12, dtype=np.float32).reshape(3, 4), requires_grad=True)
    y = x.sum() + x.mean()
    y.backward()
    assert y.item() == 66 + 5.5
    np.testing.assert_array_equal(x.grad.numpy(), np.full((3, 4), 1 + 1 / 12, np.float32))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(37, 41), (2, 3, 300), (5,), (0, 4), (3, 0)])
def test_row_dots_kernel_equals_reference(dtype, shape) -> None:
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dtype)
    b = rng.standard_normal(shape).astype(dtype)
    if a.ndim == 2 and a.size:
        a[0, 0], b[1, 1], a[2, 2], b[2, 3] = np.inf, np.nan, np.inf, 0.0  # (inf, NaN, inf * 0 = NaN)
        a = a.T.copy().T  # (a column-major operand: copied to rows)
    kernel, reference = both_paths(lambda: total.row_dots(a, b))
    assert kernel.dtype == reference.dtype == a.dtype and kernel.shape == reference.shape == shape[:-1]
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(kernel, reference, rtol=tol, atol=tol)
    with np.errstate(invalid="ignore"):
        exact = np.einsum("...i,...i->...", a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(kernel, exact.astype(dtype), rtol=tol, atol=tol)

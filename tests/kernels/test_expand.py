"""``expand`` (a reduction's gradient broadcast back to its input's shape) equals ``np.broadcast_to``
on both sides of ``SMALL``: a fresh contiguous array below it, the read-only view from it on; and
``negative`` keeps such a view a view, and x - y, -x pass it on with the right values; ``copy``
fills a one-value view by its kernel (both paths) and copies anything else as NumPy does."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import both_paths

import minitensor as mt
from minitensor.kernels.expand import SMALL, broadcast, copy, expand, negative


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("grad_shape", "shape"),
    [
        ((), ()),
        ((1, 1), (16, 16)),
        ((4, 1), (4, 8)),
        ((1, 3, 1), (2, 3, 5)),
        ((1,), (SMALL,)),
        ((1, 1), (SMALL // 64, 64)),
        ((SMALL // 64, 1), (SMALL // 64, 64)),
        ((1, 64), (SMALL // 64, 64)),
        ((2, 1, 3), (2, SMALL, 3)),
    ],
)
def test_equals_numpy_broadcast(dtype, grad_shape, shape) -> None:
    grad = np.random.default_rng(0).standard_normal(grad_shape).astype(dtype)
    got, expected = expand(grad, shape), np.broadcast_to(grad, shape)
    assert got.shape == shape and got.dtype == grad.dtype
    np.testing.assert_array_equal(got, expected)
    if got.size >= SMALL:  # (the view itself, with NumPy's strides)
        assert got.strides == expected.strides and not got.flags.writeable


def test_small_results_are_fresh_contiguous_arrays_and_large_ones_views() -> None:
    grad = np.ones((1, 1), np.float32)
    small = expand(grad, (16, 16))
    assert small.flags.c_contiguous and small.flags.writeable and not np.shares_memory(small, grad)
    large = expand(grad, (SMALL // 64, 64))
    assert np.shares_memory(large, grad) and not large.flags.writeable


def test_a_tensor_under_create_graph_stays_differentiable() -> None:
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=mt.float64, requires_grad=True)
    (g,) = mt.autograd.grad((x * x).sum(), x, create_graph=True)
    (gg,) = mt.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), np.full((2, 2), 2.0))


@pytest.mark.parametrize(
    "grad", [np.full((3, 4), 2.5), np.broadcast_to(np.float32(2.5), (SMALL, 2)), np.broadcast_to(np.float32(1), (0, 2))]
)
def test_negative_keeps_a_broadcast_view_a_view(grad) -> None:
    got = negative(grad)
    np.testing.assert_array_equal(got, -np.asarray(grad))
    assert got.shape == grad.shape and got.dtype == grad.dtype
    assert any(grad.strides) or not any(got.strides)  # (a stride-0 view stays one)


def test_minus_passes_a_sum_gradient_to_its_leaves() -> None:
    x = mt.tensor(np.ones((SMALL, 2), np.float32), requires_grad=True)
    y = mt.tensor(np.ones((SMALL, 2), np.float32), requires_grad=True)
    ((x - y).sum() + (-y).sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), 1.0)
    np.testing.assert_array_equal(y.grad.numpy(), -2.0)
    y.grad.numpy()[0, 0] = 7.0  # (the leaf owns a writable array, not the read-only view)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_copy_fills_a_one_value_view_on_both_paths(dtype) -> None:
    view = np.broadcast_to(np.array(2.5, dtype), (SMALL // 64, 64))
    for out in both_paths(lambda: copy(view, np.dtype(dtype))):
        assert out.flags.c_contiguous and out.flags.writeable and out.dtype == dtype
        assert not np.shares_memory(out, view)
        np.testing.assert_array_equal(out, view)


@pytest.mark.parametrize(
    "array",
    [
        np.broadcast_to(np.float32(1.5), (4, 4)),  # (a small one)
        np.arange(SMALL * 2, dtype=np.float32).reshape(-1, 64).T,  # (transposed: the copy stays so)
        np.broadcast_to(np.arange(SMALL // 64, dtype=np.float32)[:, None], (SMALL // 64, 64)),
        np.ones(SMALL, np.float64),  # (cast to float32)
    ],
)
def test_copy_of_anything_else_is_numpys(array) -> None:
    got, expected = copy(array, np.dtype(np.float32)), np.array(array, dtype=np.float32, copy=True)
    assert got.dtype == expected.dtype and got.strides == expected.strides and not np.shares_memory(got, array)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    ("x", "shape"),
    [
        (np.arange(3.0), (4, 3)),
        (np.arange(6.0).reshape(2, 1, 3), (5, 2, 4, 3)),
        (np.array(2.5), (2, 2)),
        (np.arange(6.0).reshape(2, 3).T, (2, 3, 2)),  # (not C-contiguous: NumPy's own)
        (np.zeros((0, 1)), (3, 0, 4)),
    ],
)
def test_broadcast_is_numpys_read_only_view(x, shape) -> None:
    got, expected = broadcast(x, shape), np.broadcast_to(x, shape)
    assert got.shape == expected.shape and got.strides == expected.strides and not got.flags.writeable
    assert np.shares_memory(got, x) or x.size == 0
    np.testing.assert_array_equal(got, expected)

"""``expand`` (a reduction's gradient broadcast back to its input's shape) equals ``np.broadcast_to``
on both sides of ``SMALL``: a fresh contiguous array below it, the read-only view from it on; and
``negative`` keeps such a view a view, and x - y, -x pass it on with the right values."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.kernels.expand import SMALL, expand, negative


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
    ],
)
def test_equals_numpy_broadcast(dtype, grad_shape, shape) -> None:
    grad = np.random.default_rng(0).standard_normal(grad_shape).astype(dtype)
    got = expand(grad, shape)
    assert got.shape == shape and got.dtype == grad.dtype
    np.testing.assert_array_equal(got, np.broadcast_to(grad, shape))


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

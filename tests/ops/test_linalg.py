"""ops/linalg.py's ``Matmul`` behind ``matmul``/``@``, ``mm`` and ``bmm``: gradient checks (float64) of
matmul (2-D, batched with broadcast batch dims, 1-D operands on either side, 1-D @ 1-D), and mm and
bmm against PyTorch to second order, with their shape errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from op_checks import check_op
from strategies import broadcast_pairs, layouts, leaf, seeds

import minitensor as mt
from minitensor.autograd import gradcheck, gradgradcheck

sides = st.integers(1, 4)


def _check(a, b):
    out = a @ b
    np.testing.assert_allclose(out.numpy(), np.matmul(a.numpy(), b.numpy()), rtol=1e-12, atol=1e-14)
    assert out.grad_fn is not None and type(out.grad_fn).__name__ == "MatmulBackward"
    assert gradcheck(lambda p, q: p @ q, (a, b))
    assert gradgradcheck(lambda p, q: p @ q, (a, b))
    assert gradcheck(lambda p, q: mt.matmul(p, q), (a, b))
    assert gradgradcheck(lambda p, q: mt.matmul(p, q), (a, b))


@given(m=sides, k=sides, n=sides, seed=seeds, layout_a=layouts, layout_b=layouts)
def test_matmul_2d_gradcheck(m, k, n, seed, layout_a, layout_b):
    _check(leaf(seed, (m, k), layout_a), leaf(seed + 1, (k, n), layout_b))


@given(batch=broadcast_pairs(max_dims=2, max_side=3), m=sides, k=sides, n=sides, seed=seeds, la=layouts, lb=layouts)
def test_matmul_batched_broadcast_gradcheck(batch, m, k, n, seed, la, lb):
    _check(leaf(seed, batch[0] + (m, k), la), leaf(seed + 1, batch[1] + (k, n), lb))


@given(batch=st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple), m=sides, k=sides, n=sides, seed=seeds)
def test_matmul_batched_times_matrix_gradcheck(batch, m, k, n, seed):
    """A batch against a shared 2-D weight (the weight's gradient sums over the batch)."""
    _check(leaf(seed, batch + (m, k), "strided"), leaf(seed + 1, (k, n), "transposed"))
    _check(leaf(seed, (m, k), "transposed"), leaf(seed + 1, batch + (k, n), "contiguous"))


@given(batch=st.lists(st.integers(1, 3), max_size=2).map(tuple), k=sides, n=sides, seed=seeds, layout=layouts)
def test_matmul_vector_left_gradcheck(batch, k, n, seed, layout):
    _check(leaf(seed, (k,), layout), leaf(seed + 1, batch + (k, n), layout))


@given(batch=st.lists(st.integers(1, 3), max_size=2).map(tuple), m=sides, k=sides, seed=seeds, layout=layouts)
def test_matmul_vector_right_gradcheck(batch, m, k, seed, layout):
    _check(leaf(seed, batch + (m, k), layout), leaf(seed + 1, (k,), layout))


@given(k=sides, seed=seeds, layout=layouts)
def test_matmul_dot_gradcheck(k, seed, layout):
    a, b = leaf(seed, (k,), layout), leaf(seed + 1, (k,), layout)
    assert (a @ b).shape == ()
    _check(a, b)


def test_matmul_gradients_by_hand():
    a = mt.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=mt.float64, requires_grad=True)
    b = mt.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, -2.0]], dtype=mt.float64, requires_grad=True)
    g = np.arange(6.0).reshape(2, 3)
    (a @ b).backward(g)
    np.testing.assert_allclose(a.grad.numpy(), g @ b.numpy().T, rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), a.numpy().T @ g, rtol=1e-12)


def test_matmul_with_numpy_array_on_either_side():
    a = mt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w = np.array([[1.0, 0.0], [0.0, 2.0]], dtype=np.float32)
    np.testing.assert_allclose((a @ w).numpy(), a.numpy() @ w)
    left = w @ a
    assert isinstance(left, mt.Tensor)
    np.testing.assert_allclose(left.numpy(), w @ a.numpy())
    left.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), w.T @ np.ones((2, 2)))


@pytest.mark.parametrize(
    "sa, sb",
    [((2, 3), (4, 5)), ((3,), (4,)), ((2, 3), (4,)), ((3,), (4, 2)), ((2, 2, 3), (3, 3, 4))],
)
def test_matmul_bad_shapes_name_both(sa, sb):
    with pytest.raises(ValueError) as info:
        mt.zeros(sa) @ mt.zeros(sb)
    assert str(sa) in str(info.value) and str(sb) in str(info.value)


def test_matmul_of_0d_raises():
    with pytest.raises(ValueError, match="at least 1 dim"):
        mt.matmul(mt.tensor(2.0), mt.zeros(2))


def test_bmm(rng):
    torch = pytest.importorskip("torch")
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    check_op(mt.bmm, torch.bmm, a, b)
    check_op(lambda s, t: s.bmm(t), torch.bmm, a, b)
    with pytest.raises(ValueError, match="must be a 3-D Tensor"):
        mt.bmm(mt.ones(3, 4), mt.ones(4, 5))
    with pytest.raises(ValueError, match="do not fit"):
        mt.bmm(mt.ones(2, 3, 4), mt.ones(3, 4, 5))


def test_mm(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    check_op(lambda x, y: x.mm(y), lambda x, y: x.mm(y), a, b)
    check_op(lambda x, y: mt.mm(x, y), lambda x, y: x.mm(y), a, b)
    with pytest.raises(ValueError, match="mm: mat2 must be a 2-D Tensor"):
        mt.ones(2, 3).mm(mt.ones(2, 3, 4))
    with pytest.raises(ValueError, match="do not fit"):
        mt.mm(mt.ones(2, 3), mt.ones(2, 3))

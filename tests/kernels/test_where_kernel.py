"""kernels/where.py: the where / masked_fill kernels and the gradient split equal NumPy's ``where``
(float32 and float64, odd sizes, non-contiguous operands), the cases that do not line up take
``np.where`` (broadcasting, mixed dtypes, integers, 0-d values), and the ops keep their dtypes and
gradients."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import jitted, reference

import minitensor as mt
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.kernels import where


def operands(dtype, shape=(37, 29)) -> tuple:
    """(cond, a, b) with enough elements for the kernels (fewer take np.where)."""
    assert np.prod(shape) >= where._SMALL
    rng = np.random.default_rng(0)
    cond = rng.random(shape) < 0.5
    a, b = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
    a.flat[:3] = [np.nan, np.inf, -0.0]
    return cond, a, b


def assert_equal(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_where_kernels_equal_numpy(dtype) -> None:
    cond, a, b = operands(dtype)
    cases = [(a, b), (2.5, b), (a, -1), (a[:, ::-1], b.T.copy().T)]  # (last: strided and Fortran-ordered)
    for x, y in cases:
        assert_equal(jitted(lambda x=x, y=y: where.where(cond, x, y)), np.where(cond, x, y))
        assert_equal(reference(lambda x=x, y=y: where.where(cond, x, y)), np.where(cond, x, y))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("need", [(True, True), (True, False), (False, True)])
def test_where_backward_kernel_equals_numpy(dtype, need) -> None:
    cond, grad, _ = operands(dtype, (5, 211))
    zero = np.zeros((), dtype)
    expected = (np.where(cond, grad, zero), np.where(cond, zero, grad))
    for path in (jitted, reference):
        got = path(lambda: where.where_backward(cond, grad, need))
        for g, e, n in zip(got, expected, need):
            assert (g is None) == (not n)
            if n:
                assert_equal(g, e)


def test_operands_that_do_not_line_up_take_numpy_where() -> None:
    """Broadcasting, mixed or integer dtypes, bools, 0-d arrays and small arrays: np.where decides
    shape and dtype."""
    cond, a, b = operands(np.float32)
    a64 = a.astype(np.float64)
    cases = [(cond[:1], a, b), (cond, a, b[:1]), (cond, a64, b), (cond, np.arange(a.size).reshape(a.shape), 1),
             (cond, True, b), (cond, np.asarray(2.0), b), (cond, 1.0, 2.0), (cond[:3, :3], a[:3, :3], 0.5)]  # fmt: skip
    for c, x, y in cases:
        expected = np.where(c, x, y)
        assert_equal(jitted(lambda c=c, x=x, y=y: where.where(c, x, y)), expected)
    grad = np.ones((2, 3), np.float32)
    ga, gb = jitted(lambda: where.where_backward(np.array([True, False, True]), grad, (True, True)))
    np.testing.assert_array_equal(ga + gb, grad)
    assert ga.shape == (2, 3) and ga[:, 1].tolist() == [0, 0]


def test_where_and_masked_fill_ops_gradients_and_dtypes() -> None:
    rng = np.random.default_rng(1)
    cond = mt.tensor(rng.random((4, 5)) < 0.5)
    a, b = (mt.tensor(rng.standard_normal((4, 5)), dtype=mt.float64, requires_grad=True) for _ in range(2))
    assert gradcheck(lambda x, y: mt.where(cond, x, y), [a, b])
    assert gradgradcheck(lambda x, y: mt.where(cond, x, y), [a, b])
    assert gradcheck(lambda x: x.masked_fill(cond, 2.0), [a])
    assert mt.where(cond, a.float(), b.float()).dtype == mt.float32
    assert mt.where(cond, a.float(), b).dtype == mt.float64  # (PyTorch's promotion)
    assert mt.where(cond, a.float(), 1.5).dtype == mt.float32
    assert a.float().masked_fill(cond, 7).dtype == mt.float32
    assert mt.where(cond, mt.arange(20).reshape(4, 5), 0).dtype == mt.int64


def test_where_and_masked_fill_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    c = rng.random((64, 33)) < 0.3
    x, y = (rng.standard_normal((64, 33)).astype(np.float32) for _ in range(2))
    g = rng.standard_normal((64, 33)).astype(np.float32)
    mx, my = (mt.tensor(v, requires_grad=True) for v in (x, y))
    tx, ty = (torch.tensor(v, requires_grad=True) for v in (x, y))
    out = mt.where(mt.tensor(c), mx, my) + mx.masked_fill(mt.tensor(c), -2.0)
    tout = torch.where(torch.tensor(c), tx, ty) + tx.masked_fill(torch.tensor(c), -2.0)
    out.backward(mt.tensor(g))
    tout.backward(torch.tensor(g))
    np.testing.assert_array_equal(out.numpy(), tout.detach().numpy())
    np.testing.assert_array_equal(mx.grad.numpy(), tx.grad.numpy())
    np.testing.assert_array_equal(my.grad.numpy(), ty.grad.numpy())

"""Stacked matrix products on BLAS calls from numba (kernels/matmul.py) against np.matmul."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import jitted, reference, tolerance

import minitensor as mt
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.kernels import matmul

SHAPES = [
    ((8, 32, 40), (8, 40, 36)),  # a batch of products
    ((2, 3, 40, 50), (50, 36)),  # a 2-D right operand shared by the batch
    ((40, 50), (2, 3, 50, 36)),  # a 2-D left operand
    ((2, 1, 40, 50), (1, 3, 50, 36)),  # batch dims that broadcast each other
    ((3, 2, 2, 40, 33), (2, 1, 33, 40)),  # three batch dims
]


def _transposed(x):
    """x with the same values, stored transposed (a view whose matrices have unit row stride)."""
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("stored", ["plain", "a transposed", "b transposed", "strided"])
def test_products_equal_the_reference(dtype, shapes, stored) -> None:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    if stored == "a transposed":
        a = _transposed(a)
    elif stored == "b transposed":
        b = _transposed(b)
    elif stored == "strided":  # rows further apart than their length: BLAS reads them in place
        a = np.concatenate([a, a], axis=-1)[..., : a.shape[-1]]
    got = jitted(lambda: matmul.batched_matmul(a, b))
    expected = reference(lambda: matmul.batched_matmul(a, b))
    exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert got.shape == expected.shape == exact.shape and got.dtype == expected.dtype == a.dtype
    np.testing.assert_allclose(got, expected, **tolerance(dtype))
    np.testing.assert_allclose(got, exact, rtol=1e-4 if dtype == "float32" else 1e-12, atol=1e-4)


def test_the_kernel_runs_for_large_matrices_only(monkeypatch) -> None:
    calls = []
    kernel = matmul._PRODUCTS.serial
    monkeypatch.setattr(matmul._PRODUCTS, "serial", lambda *args: calls.append(1) or kernel(*args))
    rng = np.random.default_rng(1)
    big = rng.standard_normal((2, 32, 32)).astype(np.float32)
    small = rng.standard_normal((2, 31, 32)).astype(np.float32)
    jitted(lambda: matmul.batched_matmul(big, big))
    assert len(calls) == 1
    for a, b in [(small, big), (big[0], big[0]), (big, big.astype(np.float64)), (big[:0], big[:0])]:
        result = jitted(lambda a=a, b=b: matmul.batched_matmul(a, b))
        np.testing.assert_allclose(result, np.matmul(a, b), rtol=1e-5, atol=1e-5)
    assert len(calls) == 1


@pytest.mark.parametrize("shapes", [((5, 40, 50), (50,)), ((50,), (5, 50, 40)), ((3, 40, 0), (3, 0, 40))], ids=str)
def test_vectors_and_empty_inner_dims_as_numpy(shapes) -> None:
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal(s) for s in shapes)
    np.testing.assert_allclose(jitted(lambda: matmul.batched_matmul(a, b)), np.matmul(a, b), rtol=1e-12, atol=1e-12)


def test_matmul_op_gradients_on_the_kernel() -> None:
    """Forward and both gradients of ``@`` on stacked float64 operands (the backward's transposed
    operands reach the kernel with transpose flags), second order too."""
    rng = np.random.default_rng(3)
    a = mt.tensor(rng.standard_normal((2, 32, 33)), dtype=mt.float64, requires_grad=True)
    b = mt.tensor(rng.standard_normal((33, 34)), dtype=mt.float64, requires_grad=True)
    weight = mt.tensor(rng.standard_normal((2, 32, 34)), dtype=mt.float64)

    def f(x, y):
        return ((x @ y) * weight).sum()

    assert jitted(lambda: gradcheck(f, (a, b)))
    assert jitted(lambda: gradgradcheck(f, (a, b)))


@pytest.mark.parametrize(
    "a_shape, b_matrix, b_batch",
    [
        ((64, 1, 40), (40, 30), (64,)),  # vmap's per-example rows through a shared weight
        ((4, 3, 7, 40), (40, 30), (4, 1)),  # batch dims broadcast and of size 1
        ((5, 2, 40), (30, 40), (5,)),  # the shared weight stored transposed (a view)
        ((2, 6, 1), (1, 9), (2,)),  # a shared matrix with k = 1
    ],
    ids=str,
)
def test_a_matrix_shared_over_the_batch_is_one_gemm_equal_to_numpy(a_shape, b_matrix, b_batch) -> None:
    rng = np.random.default_rng(7)
    a = rng.standard_normal(a_shape).astype(np.float32)
    matrix = rng.standard_normal(b_matrix).astype(np.float32)
    if b_matrix[0] != a_shape[-1]:  # stored transposed
        matrix = matrix.T
    b = np.broadcast_to(matrix, b_batch + matrix.shape)  # stride 0 over the batch: the same matrix
    got = matmul.batched_matmul(a, b)
    assert got.flags.owndata and got.shape == np.matmul(a, b).shape
    np.testing.assert_allclose(got, np.matmul(a, np.ascontiguousarray(b)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shapes", [((8, 5, 1), (8, 1, 7)), ((3, 1, 4, 1), (2, 1, 6)), ((0, 4, 1), (0, 1, 3))], ids=str)
def test_stacked_outer_products_are_exact_broadcast_products(shapes) -> None:
    rng = np.random.default_rng(8)
    a, b = (rng.standard_normal(s) for s in shapes)
    got = matmul.batched_matmul(a, b)
    np.testing.assert_array_equal(got, np.matmul(a, b))


def test_empty_batch_of_a_broadcast_matrix_as_numpy() -> None:
    a = np.zeros((0, 2, 3))
    b = np.broadcast_to(np.ones((3, 4)), (0, 3, 4))
    assert matmul.batched_matmul(a, b).shape == (0, 2, 4)


def test_operands_blas_cannot_read_are_copied_and_give_numpys_products() -> None:
    """A broadcast (stride 0) or reversed (negative stride) matrix or vector: the same product as
    NumPy's, through BLAS on a contiguous copy (``_blas_ready``); what BLAS reads is left alone."""
    rng = np.random.default_rng(7)
    m = rng.standard_normal((6, 5)).astype(np.float32)
    v = rng.standard_normal(5).astype(np.float32)
    operands = [
        (np.broadcast_to(np.float32(1.5), (6, 5)), v),
        (m[::-1], v[::-1]),
        (m, np.broadcast_to(np.float32(2.0), (5,))),
        (np.broadcast_to(v, (6, 5)), m.T),
    ]
    for a, b in operands:
        np.testing.assert_allclose(matmul.batched_matmul(a, b), np.matmul(a, b), rtol=1e-6)
    for x in (np.broadcast_to(v, (6, 5)), m[::-1], np.broadcast_to(np.float32(2.0), (5,))):
        assert matmul._blas_ready(x).flags.c_contiguous  # (copied)
    assert matmul._blas_ready(m) is m
    assert matmul._blas_ready(m.T).base is m  # (a transposed view: BLAS's flag, no copy)

"""``column_sums`` (a bias's gradient as one BLAS matrix-vector product) against NumPy's ``sum(axis=0)``."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from kernel_paths import both_paths

import minitensor as mt
from minitensor.kernels.column_sums import column_sums, middle_sums, sum_to_shape


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (512, 64), (1024, 193), (3, 1000), (0, 4), (5, 0)])
def test_equals_the_sum_over_rows(dtype, shape):
    g = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    got = column_sums(g)
    exact = g.astype(np.float64).sum(axis=0)
    assert got.dtype == g.dtype and got.shape == (shape[1],)
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(got, exact, rtol=tol, atol=tol * max(1, shape[0]) ** 0.5)
    np.testing.assert_allclose(got, g.sum(axis=0), rtol=50 * tol, atol=50 * tol * max(1, shape[0]) ** 0.5)


def test_strided_and_special_values_as_numpy():
    g = np.random.default_rng(1).standard_normal((6, 8)).astype(np.float32)
    g[2, 1], g[4, 3], g[0, 5], g[1, 5] = np.nan, np.inf, np.inf, -np.inf
    for a in (g, g[:, ::2], g.T, g[::2]):
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(column_sums(a), a.sum(axis=0), rtol=1e-6, atol=1e-6)


def test_other_inputs_fall_back_to_sum():
    ints = np.arange(6).reshape(3, 2)
    assert column_sums(ints).tolist() == [6, 9] and column_sums(ints).dtype == ints.dtype
    cube = np.ones((2, 3, 4))
    assert column_sums(cube).shape == (3, 4)
    t = mt.tensor(np.ones((3, 2)), requires_grad=True)
    assert isinstance(column_sums(t), mt.Tensor)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bias_gradients_through_the_engine_and_the_ops(dtype):
    """The engine's broadcast reduction and the fused ops' bias gradients use it; they equal a float64 sum."""
    rng = np.random.default_rng(2)
    x = mt.tensor(rng.standard_normal((4, 5, 6)), dtype=getattr(mt, dtype), requires_grad=True)
    b = mt.tensor(rng.standard_normal(6), dtype=getattr(mt, dtype), requires_grad=True)
    linear = mt.nn.Linear(6, 3).to(getattr(mt, dtype))
    w = rng.standard_normal((4, 5, 3))
    (((x + b) * 2).sum() + (linear(x) * mt.tensor(w, dtype=getattr(mt, dtype))).sum()).backward()
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(b.grad.numpy(), np.full(6, 40.0), rtol=tol)
    np.testing.assert_allclose(linear.bias.grad.numpy(), w.sum(axis=(0, 1)), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_sum_to_shape_equals_numpy_for_every_broadcast_pattern(dtype) -> None:
    """Leading dims added, any dims stretched (trailing ones by a product with ones), C and F order."""
    rng = np.random.default_rng(2)
    for grad_shape in itertools.product([1, 2, 3], repeat=3):
        for lead in range(4):
            for stretched in itertools.product([False, True], repeat=3 - lead):
                shape = tuple(1 if s else n for n, s in zip(grad_shape[lead:], stretched))
                axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(stretched) if s)
                g = (rng.standard_normal(grad_shape) * 4).astype(dtype)
                for a in (g, np.asfortranarray(g), g.transpose(2, 1, 0).copy().transpose(2, 1, 0)):
                    got = sum_to_shape(a, shape)
                    assert got.shape == shape and got.dtype == a.dtype
                    np.testing.assert_allclose(got, a.sum(axis=axes).reshape(shape), rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sum_to_shape_of_a_transposed_matrix_reads_it_in_place(dtype, monkeypatch) -> None:
    """A transposed 2-D gradient (column by column in memory), summed along either dim into each
    target shape that broadcasts to it, equals NumPy's sum, and is never copied into row order."""
    rng = np.random.default_rng(3)
    g = (rng.standard_normal((33, 17)) * 4).astype(dtype).T  # (17, 33), F-contiguous
    copies = []
    real = np.ascontiguousarray
    monkeypatch.setattr(np, "ascontiguousarray", lambda a, *args, **kw: copies.append(a.shape) or real(a, *args, **kw))
    for shape, axes in (((17, 1), (1,)), ((1, 33), (0,)), ((33,), (0,)), ((17, 33), ())):
        got = sum_to_shape(g, shape)
        assert got.shape == shape and got.dtype == g.dtype
        np.testing.assert_allclose(got, g.sum(axis=axes).reshape(shape), rtol=1e-5, atol=1e-5)
    assert copies == []


def test_sum_to_shape_over_stretched_leading_dims_is_one_matrix_vector_product(monkeypatch) -> None:
    """A (1, N) or (1, 1, N) target (a bias kept 2-D or 3-D) sums the gradient's rows as ``column_sums``
    does, not by NumPy's row-by-row sum."""
    from minitensor.kernels import column_sums as module

    rng = np.random.default_rng(4)
    calls = []
    monkeypatch.setattr(module, "column_sums", lambda g: calls.append(g.shape) or column_sums(g))
    for grad_shape, shape in (((64, 48), (1, 48)), ((5, 6, 48), (1, 1, 48)), ((5, 6, 48), (1, 6, 48))):
        g = rng.standard_normal(grad_shape).astype(np.float32)
        axes = tuple(i for i, n in enumerate(shape) if n == 1 and grad_shape[i] != 1)
        np.testing.assert_allclose(sum_to_shape(g, shape), g.sum(axis=axes, keepdims=True), rtol=1e-5, atol=1e-5)
    assert calls == [(64, 48), (30, 48), (5, 288)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(1, 1, 1), (8, 3, 4), (64, 6, 784), (5, 16, 1), (3, 2, 1000)])
def test_middle_sums_kernel_equals_its_reference(dtype, shape) -> None:
    """The numba sums over the first and last dims of (A, B, K) against the NumPy reference (a float64
    sum), with an inf, a NaN and a -inf where they meet another channel's values."""
    g = (np.random.default_rng(5).standard_normal(shape) * 4).astype(dtype)
    if shape[1] >= 3:
        g[0, 0, 0], g[-1, 1, -1], g[0, 2, 0], g[-1, 2, -1] = np.inf, np.nan, np.inf, -np.inf
    got, expected = both_paths(lambda: middle_sums(g))
    assert got.dtype == expected.dtype == g.dtype and got.shape == (shape[1],)
    np.testing.assert_allclose(got, expected, rtol=1e-6 if dtype == "float32" else 1e-13, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sum_to_shape_over_leading_and_trailing_dims_reads_the_array_once(dtype, monkeypatch) -> None:
    """A bias's gradient from images, (N, C, H, W) -> (C, 1, 1) (also (N, C, L) -> (C, 1) and a kept
    block of two dims), runs ``middle_sums`` on the array as (A, B, K) and equals NumPy's sum; a
    non-contiguous gradient, and one of ``MIDDLE_UNTIL`` values or more, take the BLAS products."""
    from minitensor.kernels import column_sums as module

    rng = np.random.default_rng(6)
    calls, real = [], module.middle_sums
    monkeypatch.setattr(module, "middle_sums", lambda g: calls.append(g.shape) or real(g))

    def check(g, shape):
        axes = tuple(i for i, n in enumerate((1,) * (g.ndim - len(shape)) + shape) if n == 1 and g.shape[i] != 1)
        np.testing.assert_allclose(sum_to_shape(g, shape), g.sum(axis=axes).reshape(shape), rtol=1e-5, atol=1e-5)

    for grad_shape, shape in (((4, 6, 5, 7), (6, 1, 1)), ((4, 6, 9), (6, 1)), ((2, 3, 4, 5), (3, 4, 1))):
        check((rng.standard_normal(grad_shape) * 4).astype(dtype), shape)
    assert calls == [(4, 6, 35), (4, 6, 9), (2, 12, 5)]
    check(rng.standard_normal((4, 7, 6, 5)).astype(dtype).transpose(0, 2, 1, 3), (6, 1, 1))
    monkeypatch.setattr(module, "MIDDLE_UNTIL", 4 * 6 * 35)
    check(rng.standard_normal((4, 6, 5, 7)).astype(dtype), (6, 1, 1))
    assert len(calls) == 3

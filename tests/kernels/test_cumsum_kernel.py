"""kernels/cumsum.py: the row and inner-axis kernels (sums and products) equal their NumPy reference
bit for bit, and float32 results equal PyTorch's (both accumulate in float64)."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.kernels import cumsum as K


def _data(rng, shape, dtype, product: bool = False) -> np.ndarray:
    x = (rng.uniform(0.5, 1.6, shape) if product else rng.standard_normal(shape) * 10).astype(dtype)
    flat = x.reshape(-1)
    if flat.size > 8:
        flat[3], flat[5], flat[-2] = np.nan, np.inf, -np.inf
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reverse, kind", [(False, K.SUM), (True, K.SUM), (False, K.PRODUCT), (False, K.LOG_SUM_EXP)])
@pytest.mark.parametrize("shape", [(7, 13), (1, 1), (4, 300), (9, 1)])
def test_rows_kernel_equals_reference(dtype, reverse, kind, shape) -> None:
    x = _data(np.random.default_rng(0), shape, dtype, kind == K.PRODUCT)
    kernel, reference = np.empty_like(x), np.empty_like(x)
    K._cumsum_rows(x, kernel, reverse, kind)
    K._cumsum_numpy(x, reference, reverse, kind)
    _equal(kernel, reference, kind)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reverse, kind", [(False, K.SUM), (True, K.SUM), (False, K.PRODUCT), (False, K.LOG_SUM_EXP)])
@pytest.mark.parametrize("shape", [(3, 5, 7), (1, 1, 2), (2, 200, 33)])
def test_inner_kernel_equals_reference(dtype, reverse, kind, shape) -> None:
    x = _data(np.random.default_rng(1), shape, dtype, kind == K.PRODUCT)
    kernel, reference = np.empty_like(x), np.empty_like(x)
    K._cumsum_inner(x, kernel, reverse, kind)
    K._cumsum_numpy(x, reference, reverse, kind)
    _equal(kernel, reference, kind)


def _equal(kernel, reference, kind) -> None:
    """Bit for bit; log-sum-exps to a rounding of float64 (numba's log1p and exp, NumPy's logaddexp)."""
    if kind == K.LOG_SUM_EXP and kernel.dtype == np.float64:
        np.testing.assert_allclose(kernel, reference, rtol=1e-14)
    else:
        np.testing.assert_array_equal(kernel, reference)


def test_reference_accumulates_in_float64() -> None:
    x = np.full((1, 3), np.float32(1e8))
    x[0, 1] = 1.0  # lost in a float32 accumulator (1e8 + 1 rounds to 1e8), kept in float64
    out = np.empty_like(x)
    K._cumsum_numpy(x, out, False, K.SUM)
    assert out[0, 2] == np.float32(2e8 + 1)


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("reverse", [False, True])
def test_both_paths_of_the_public_function(axis, reverse) -> None:
    x = np.random.default_rng(2).standard_normal((5, 6, 7)).astype(np.float32)[:, ::-1]  # not contiguous
    mt.set_jit_enabled(True)
    jitted = K.cumsum(x, axis, reverse)
    with mt.jit_disabled():
        reference = K.cumsum(x, axis, reverse)
    np.testing.assert_array_equal(jitted, reference)
    flipped = np.flip(np.cumsum(np.flip(x, axis), axis, dtype=np.float64), axis) if reverse else None
    expected = flipped if reverse else np.cumsum(x, axis, dtype=np.float64)
    np.testing.assert_array_equal(jitted, expected.astype(np.float32))


def test_float32_results_equal_pytorch() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((16, 1000)).astype(np.float32)
    for dim in (0, 1):
        t = mt.tensor(x, requires_grad=True)
        g = np.random.default_rng(4).standard_normal(x.shape).astype(np.float32)
        t.cumsum(dim).backward(mt.tensor(g))
        tt = torch.tensor(x, requires_grad=True)
        out = tt.cumsum(dim)
        out.backward(torch.tensor(g))
        np.testing.assert_array_equal(t.cumsum(dim).numpy(), out.detach().numpy())
        np.testing.assert_array_equal(t.grad.numpy(), tt.grad.numpy())


def test_float32_products_equal_pytorch() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(5).uniform(0.5, 1.6, (16, 300)).astype(np.float32)
    for dim in (0, 1):
        np.testing.assert_array_equal(mt.tensor(x).cumprod(dim).numpy(), torch.tensor(x).cumprod(dim).numpy())
        np.testing.assert_array_equal(K.cumprod(x, dim), torch.tensor(x).cumprod(dim).numpy())


def test_log_sum_exps_keep_infinities_as_numpy() -> None:
    x = np.array([[-np.inf, -np.inf, 0.0, np.inf, np.inf, 1.0], [np.nan, 0.0, 1.0, 2.0, 3.0, 4.0]])
    for f32 in (False, True):
        data = x.astype(np.float32) if f32 else x
        got, expected = K.logcumsumexp(data, 1), np.logaddexp.accumulate(x, axis=1).astype(data.dtype)
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, axis", [((12, 40), 1), ((3, 9, 40), 2), ((5, 40, 6), 1), ((7, 40), 1)])
def test_log_sum_exps_across_rows_equal_the_reference(dtype, shape, axis) -> None:
    """From ``LSE_ACROSS_FROM`` rows the scan along them runs across them on a transposed copy (and
    along an inner axis, across it): both equal the reference, with NaN and infinities among the terms."""
    x = _data(np.random.default_rng(6), shape, dtype)
    mt.set_jit_enabled(True)
    got = K.logcumsumexp(x, axis)
    with mt.jit_disabled():
        expected = K.logcumsumexp(x, axis)
    assert got.dtype == x.dtype and got.flags.c_contiguous
    _equal(got, expected, K.LOG_SUM_EXP)


def test_integers_take_the_reference() -> None:
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int64)
    np.testing.assert_array_equal(K.cumsum(x, 1, reverse=True), [[6, 5, 3], [15, 11, 6]])

"""Softmax and log-softmax kernels: numba (serial and parallel) against the NumPy reference,
and float64 gradchecks of the ops on the jitted path."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from kernel_paths import MODES, jitted, reference, tolerance

import minitensor as mt
from minitensor import backend
from minitensor.autograd import gradcheck
from minitensor.kernels import softmax

SHAPES = [
    ((3, 5), -1),
    ((4, 7, 9), 1),
    ((2, 3, 33, 65), -1),
    ((129,), 0),
    ((5, 1), -1),
    ((6, 4, 3), 0),
    ((40, 1000), -1),  # several pieces of rows (``_rows.piece_rows``), the last one shorter
    ((2, 17000), 1),  # rows longer than a piece
    ((5, 5), 0),  # square: the moved rows have x's shape, and must still be moved back
]
FUNCTIONS = [
    (softmax.softmax_forward, softmax.softmax_backward),
    (softmax.log_softmax_forward, softmax.log_softmax_backward),
]


def logits(rng, shape, dtype, dim) -> np.ndarray:
    """Random logits with some -inf entries (never a whole row along ``dim``)."""
    x = (3 * rng.standard_normal(shape)).astype(dtype)
    x[rng.random(shape) < 0.15] = -np.inf
    np.moveaxis(x, dim, -1)[..., 0] = 1.0
    return x


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize("shape,dim", SHAPES)
@pytest.mark.parametrize("forward,backward", FUNCTIONS, ids=["softmax", "log_softmax"])
def test_kernel_matches_reference(kernel, rng, dtype, shape, dim, forward, backward) -> None:
    x = logits(rng, shape, dtype, dim)
    g = rng.standard_normal(shape).astype(dtype)
    y = jitted(lambda: forward(x, dim))
    dx = jitted(lambda: backward(y, g, dim))
    y_ref = reference(lambda: forward(x, dim))
    dx_ref = reference(lambda: backward(y_ref, g, dim))
    assert y.dtype == dx.dtype == np.dtype(dtype) and y.shape == dx.shape == shape
    np.testing.assert_allclose(y, y_ref, **tolerance(dtype))
    np.testing.assert_allclose(dx, dx_ref, **tolerance(dtype))


def test_softmax_rows_sum_to_one_and_match_float64_math(kernel, rng) -> None:
    x = rng.standard_normal((40, 257)).astype(np.float32) * 5
    y = jitted(lambda: softmax.softmax_forward(x, -1))
    exact = np.exp(x.astype(np.float64) - x.max(-1, keepdims=True))
    exact /= exact.sum(-1, keepdims=True)
    np.testing.assert_allclose(y, exact, rtol=2e-6, atol=1e-9)


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
def test_non_finite_rows_follow_numpy(kernel, dtype) -> None:
    """All -inf -> NaN (0/0, as PyTorch), +inf -> NaN there and 0 elsewhere, NaN -> NaN, huge values exact."""
    x = np.array(
        [[-np.inf, 1, 2, -np.inf], [-np.inf] * 4, [np.inf, 1, 2, 3], [np.nan, 1, 2, 3], [1e4, -1e4, 0, 5e3]], dtype
    )
    for forward in (softmax.softmax_forward, softmax.log_softmax_forward):
        y = jitted(lambda f=forward: f(x, -1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            y_ref = reference(lambda f=forward: f(x, -1))
        np.testing.assert_array_equal(np.isnan(y), np.isnan(y_ref))
        np.testing.assert_allclose(y, y_ref, **tolerance(dtype))


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
def test_softmax_parts_give_the_shift_and_the_log_sum(kernel, rng, dtype) -> None:
    """``softmax_parts``: p, the shift (the row max; 0 where it is not finite) and log(sum(exp(x -
    shift))), kernel against reference, on finite rows and on the non-finite rows of the test above."""
    x = np.concatenate([logits(rng, (37, 70), dtype, -1), np.full((4, 70), 1.0, dtype)])
    x[-4, :] = -np.inf
    x[-3, 5] = np.inf
    x[-2, 7] = np.nan
    x[-1, 9] = 1e4
    parts = jitted(lambda: softmax.softmax_parts(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        parts_ref = reference(lambda: softmax.softmax_parts(x))
    for a, b in zip(parts, parts_ref):
        assert a.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, **tolerance(dtype))
    p, shift, log_total = parts
    np.testing.assert_array_equal(shift[:37], x[:37].max(axis=1))
    assert shift[-4] == shift[-3] == 0 and shift[-2] == 1 and shift[-1] == 1e4  # (the NaN row: its max skipping NaN)
    assert log_total[-4] == -np.inf and log_total[-3] == np.inf and np.isnan(log_total[-2])


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize("shape,dim", SHAPES[:4])
def test_logsumexp_forward_gives_the_reduction_and_the_softmax(kernel, rng, dtype, shape, dim) -> None:
    x = logits(rng, shape, dtype, dim)
    lse, p = jitted(lambda: softmax.logsumexp_forward(x, dim))
    x64 = x.astype(np.float64)
    m = x64.max(axis=dim, keepdims=True)
    exact = np.log(np.exp(x64 - m).sum(axis=dim)) + np.squeeze(m, dim)
    assert lse.shape == exact.shape and lse.dtype == p.dtype == np.dtype(dtype)
    np.testing.assert_allclose(lse, exact, rtol=1e-6 if dtype == "float32" else 1e-14)
    y = jitted(lambda: softmax.softmax_forward(x, dim))
    np.testing.assert_array_equal(p, softmax.as_rows(y, dim)[0])  # (rows, D): the backward's state
    g = rng.standard_normal(lse.shape).astype(dtype)
    dx = jitted(lambda: softmax.logsumexp_backward(p, g, dim, x))
    dx_ref = reference(lambda: softmax.logsumexp_backward(p, g, dim, x))
    assert dx.shape == shape and dx.dtype == np.dtype(dtype)
    np.testing.assert_allclose(dx, dx_ref, **tolerance(dtype))
    np.testing.assert_allclose(dx, np.expand_dims(g, dim) * y, **tolerance(dtype))


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
def test_scaled_rows_takes_the_one_hot_off(kernel, rng, dtype) -> None:
    p = rng.random((9, 13)).astype(dtype)
    scale, at = rng.standard_normal(9).astype(dtype), rng.standard_normal(9).astype(dtype)
    index = rng.integers(0, 13, 9)
    want = p * scale[:, None] - at[:, None] * np.eye(13, dtype=dtype)[index]
    for run in (jitted, reference):
        np.testing.assert_allclose(run(lambda: softmax.scaled_rows(p, scale, index, at)), want, **tolerance(dtype))
        np.testing.assert_allclose(run(lambda: softmax.scaled_rows(p, scale)), p * scale[:, None], **tolerance(dtype))


@pytest.mark.parametrize("dim", [0, 1])
def test_square_inputs_along_either_dim_match_the_formula(kernel, rng, dim) -> None:
    """On a square array the rows moved for the kernel have x's shape: they must still be moved back."""
    x = rng.standard_normal((6, 6))
    g = rng.standard_normal((6, 6))
    y = jitted(lambda: softmax.softmax_forward(x, dim))
    exact = np.exp(x - x.max(axis=dim, keepdims=True))
    exact /= exact.sum(axis=dim, keepdims=True)
    np.testing.assert_allclose(y, exact, rtol=1e-12)
    dx = jitted(lambda: softmax.softmax_backward(y, g, dim))
    np.testing.assert_allclose(dx, exact * (g - (g * exact).sum(axis=dim, keepdims=True)), rtol=1e-10, atol=1e-14)
    ly = jitted(lambda: softmax.log_softmax_forward(x, dim))
    np.testing.assert_allclose(ly, np.log(exact), rtol=1e-12)
    dlx = jitted(lambda: softmax.log_softmax_backward(ly, g, dim))
    np.testing.assert_allclose(dlx, g - exact * g.sum(axis=dim, keepdims=True), rtol=1e-10, atol=1e-14)


def test_empty_inputs(kernel) -> None:
    for shape, dim in (((0, 3), 0), ((0, 3), 1), ((2, 0), 1)):
        x = np.zeros(shape, np.float32)
        assert softmax.softmax_forward(x, dim).shape == shape
        assert softmax.log_softmax_backward(x, x, dim).shape == shape


@pytest.mark.parametrize("kernel", ["serial"], indirect=True)
@pytest.mark.parametrize("dim", [-1, 0, 1])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_gradcheck_on_the_jit_path(kernel, rng, op, dim) -> None:
    x = mt.tensor(rng.standard_normal((3, 4, 5)), dtype=mt.float64, requires_grad=True)
    assert jitted(lambda: gradcheck(lambda t: getattr(t, op)(dim), x))


@pytest.mark.parametrize("kernel", ["serial"], indirect=True)
def test_a_wrong_backward_fails_gradcheck(kernel, rng, monkeypatch) -> None:
    """The gradcheck above can fail: a softmax backward without the row-sum term is caught."""

    def wrong_backward(y, grad, dim):
        return y * grad

    monkeypatch.setattr(backend, "softmax_backward", wrong_backward)  # (the name the op calls)
    x = mt.tensor(rng.standard_normal((3, 4)), dtype=mt.float64, requires_grad=True)
    assert not gradcheck(lambda t: t.softmax(-1), x, raise_exception=False)


def test_float32_stays_float32(kernel, rng) -> None:
    x = mt.tensor(rng.standard_normal((4, 6)), dtype=mt.float32, requires_grad=True)
    y = jitted(lambda: x.log_softmax(-1))
    y.backward(mt.ones(4, 6))
    assert y.dtype == x.grad.dtype == mt.float32

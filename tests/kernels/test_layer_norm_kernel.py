"""Layer norm kernels (plain, and fused with a residual sum and its dropout): numba (serial and
parallel) against the NumPy reference, and float64 gradchecks of the ops on the jitted path."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import MODES, jitted, reference, tolerance

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck
from minitensor.kernels import layer_norm
from minitensor.ops.fused.add_norm import AddLayerNorm

# (37, 129), (150, 257): rows past a chunk of 128 elements; (150, 257): several pieces of rows;
# (300, 7): several groups of 64 rows for the float32 partial sums of dweight and dbias.
SHAPES = [(3, 5), (37, 129), (5, 1), (1, 300), (150, 257), (300, 7)]


def case(rng, shape, dtype, affine: bool, residual: str) -> dict:
    """Keyword arguments of layer_norm_forward: weight/bias or None, residual none/plain/dropout."""
    args = {"weight": None, "bias": None}
    if affine:
        args["weight"] = rng.standard_normal(shape[1]).astype(dtype)
        args["bias"] = rng.standard_normal(shape[1]).astype(dtype)
    if residual != "none":
        args["residual"] = rng.standard_normal(shape).astype(dtype)
    if residual == "dropout":
        args["keep"] = rng.random(shape) > 0.3
        args["scale"] = 1 / 0.7
    return args


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("residual", ["none", "plain", "dropout"])
def test_kernel_matches_reference(kernel, rng, dtype, shape, affine, residual) -> None:
    x = (3 * rng.standard_normal(shape) + 1).astype(dtype)
    args = case(rng, shape, dtype, affine, residual)
    g = rng.standard_normal(shape).astype(dtype)

    def run():
        out = layer_norm.layer_norm_forward(x, eps=1e-5, **args)
        s = x if residual == "none" else out[1]
        return out, layer_norm.layer_norm_backward(g, s, out[-2], out[-1], args["weight"])

    (out, grads), (out_ref, grads_ref) = jitted(run), reference(run)
    for a, b in zip(out + grads, out_ref + grads_ref):
        assert a.dtype == np.dtype(dtype)
        np.testing.assert_allclose(a, b, **tolerance(dtype))


def test_normalised_rows_have_mean_zero_and_variance_one(kernel, rng) -> None:
    x = (rng.standard_normal((50, 77)) * 4 + 3).astype(np.float32)
    y, mean, rstd = jitted(lambda: layer_norm.layer_norm_forward(x, None, None, 1e-5))
    np.testing.assert_allclose(y.mean(-1), 0.0, atol=1e-6)
    np.testing.assert_allclose(y.astype(np.float64).var(-1), 1.0, rtol=1e-4)
    np.testing.assert_allclose(mean, x.astype(np.float64).mean(-1), rtol=1e-6)
    np.testing.assert_allclose(rstd, 1 / np.sqrt(x.astype(np.float64).var(-1) + 1e-5), rtol=1e-5)


@pytest.mark.parametrize("value", [0.0, -7.5, 1e30])
def test_constant_rows_give_the_bias_not_nan(kernel, value) -> None:
    x = np.full((4, 6), value, np.float32)
    b = np.arange(6, dtype=np.float32)
    y, mean, rstd = jitted(lambda: layer_norm.layer_norm_forward(x, None, b, 1e-5))
    np.testing.assert_array_equal(y, np.broadcast_to(b, y.shape))
    dx, dw, db = jitted(lambda: layer_norm.layer_norm_backward(np.ones_like(x), x, mean, rstd, None))
    assert np.isfinite(dx).all() and np.isfinite(dw).all()


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nan_and_inf_rows_match_the_reference(kernel, rng, dtype, value) -> None:
    """A NaN or an infinity makes its row NaN (forward and dx), as in NumPy and PyTorch; the other
    rows keep their values; dweight and dbias are NaN in every column (the bad row adds to each)."""
    x = rng.standard_normal((70, 33)).astype(dtype)
    x[5, 7] = value
    w, b, g = (
        rng.standard_normal(33).astype(dtype),
        rng.standard_normal(33).astype(dtype),
        rng.standard_normal((70, 33)).astype(dtype),
    )

    def run():
        y, mean, rstd = layer_norm.layer_norm_forward(x, w, b, 1e-5)
        return (y, mean, rstd) + layer_norm.layer_norm_backward(g, x, mean, rstd, w)

    out, out_ref = jitted(run), reference(run)
    y, dx, dw = out[0], out[3], out[4]
    assert np.isnan(y[5]).all() and np.isnan(dx[5]).all() and np.isnan(dw).all()
    assert np.isfinite(np.delete(y, 5, axis=0)).all() and np.isfinite(np.delete(dx, 5, axis=0)).all()
    for a, ref in zip(out, out_ref):
        np.testing.assert_allclose(a, ref, **tolerance(dtype))  # (NaN where the reference has NaN)


def test_weight_and_bias_gradients_are_summed_in_float64(kernel, rng) -> None:
    """dweight and dbias of float32 over 100000 rows: float64 column sums (of the float32 products)
    stay within a float32 rounding of the exact sums (one float32 sum down all the rows would be
    ~4e-6 off here, the gradients being all positive)."""
    x = rng.standard_normal((100000, 4)).astype(np.float32)
    g = (1 + rng.random((100000, 4))).astype(np.float32)
    w = np.ones(4, np.float32)
    y, mean, rstd = jitted(lambda: layer_norm.layer_norm_forward(x, w, None, 1e-5))
    _, dw, db = jitted(lambda: layer_norm.layer_norm_backward(g, x, mean, rstd, w))
    xhat = (x - mean[:, None]) * rstd[:, None]  # (float32, as in the kernel)
    np.testing.assert_allclose(db, g.astype(np.float64).sum(0), rtol=3e-7)
    terms = (g * xhat).astype(np.float64)
    np.testing.assert_allclose(dw, terms.sum(0), rtol=3e-7, atol=3e-7 * np.abs(terms).sum(0).max())


@pytest.mark.parametrize(
    "dtype, mean, spread",
    [("float32", 1e4, 1e-2), ("float32", -3e3, 1.0), ("float32", 0.0, 1e-3), ("float64", 1e8, 1e-3)],
)
def test_rows_far_from_zero_keep_their_variance(kernel, rng, dtype, mean, spread) -> None:
    """The variance comes from one pass of s - s[0]: no cancellation where the mean is large and the
    spread small (an unshifted sum of squares would lose everything at 1e4 +- 1e-2 in float32)."""
    x = (mean + spread * rng.standard_normal((9, 300))).astype(dtype)
    y, m, rstd = jitted(lambda: layer_norm.layer_norm_forward(x, None, None, 1e-30))
    x64 = x.astype(np.float64)
    exact_rstd = 1 / np.sqrt(x64.var(axis=1) + 1e-30)
    exact_y = (x64 - m[:, None]) * exact_rstd[:, None]  # (the mean as saved, rounded to the dtype)
    rtol = 2e-5 if dtype == "float32" else 1e-9
    np.testing.assert_allclose(rstd, exact_rstd, rtol=rtol)
    np.testing.assert_allclose(m, x64.mean(axis=1), rtol=1e-7 if dtype == "float32" else 1e-15)
    np.testing.assert_allclose(y, exact_y, rtol=rtol * 10, atol=rtol * 10)


@pytest.mark.parametrize("kernel", ["serial"], indirect=True)
@pytest.mark.parametrize("n_dims", [1, 2])
def test_layer_norm_gradcheck_on_the_jit_path(kernel, rng, n_dims) -> None:
    x = mt.tensor(rng.standard_normal((3, 4, 5)), dtype=mt.float64, requires_grad=True)
    shape = x.shape[3 - n_dims :]
    w = mt.tensor(rng.standard_normal(shape), dtype=mt.float64, requires_grad=True)
    b = mt.tensor(rng.standard_normal(shape), dtype=mt.float64, requires_grad=True)
    assert jitted(lambda: gradcheck(lambda x, w, b: F.layer_norm(x, shape, w, b), [x, w, b]))


@pytest.mark.parametrize("kernel", ["serial"], indirect=True)
@pytest.mark.parametrize("dropout", [False, True])
def test_add_layer_norm_gradcheck_on_the_jit_path(kernel, rng, dropout) -> None:
    x, r = (mt.tensor(rng.standard_normal((2, 3, 6)), dtype=mt.float64, requires_grad=True) for _ in range(2))
    w, b = (mt.tensor(rng.standard_normal(6), dtype=mt.float64, requires_grad=True) for _ in range(2))
    keep = rng.random((2, 3, 6)) > 0.3 if dropout else None

    def fn(x, r, w, b):
        return AddLayerNorm.apply(x, r, w, b, eps=1e-5, keep=keep, scale=1 / 0.7)

    assert jitted(lambda: gradcheck(fn, [x, r, w, b]))
    y = jitted(lambda: fn(x, r, w, b))
    r_dropped = r.numpy() if keep is None else r.numpy() * keep / 0.7
    expected = F.layer_norm(mt.tensor(x.numpy() + r_dropped, dtype=mt.float64), (6,), w, b)
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)

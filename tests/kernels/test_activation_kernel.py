"""ReLU / GELU kernels fused with bias and dropout: numba (serial and parallel) against the NumPy
reference, and float64 gradchecks of the ops (``FeedForward``, ``F.gelu``) on the jitted path."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from kernel_paths import MODES, jitted, reference, tolerance

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck
from minitensor.kernels import activation
from minitensor.ops.fused.feed_forward import FeedForward

SHAPES = [(3, 5), (37, 129), (1, 1)]


def run_relu(z, bias, keep, grad):
    scale = 1.5 if keep is not None else 1.0  # (relu_backward sees only the output: scale 1 without dropout)
    out = activation.relu_forward(z.copy(), bias, keep, scale)
    return (out, *activation.relu_backward(out, grad, scale))


def run_gelu(approximate):
    def run(z, bias, keep, grad):
        pre, out = activation.gelu_forward(z.copy(), bias, keep, 1.5, approximate)
        return (pre, out, *activation.gelu_backward(pre, grad, keep, 1.5, approximate))

    return run


RUNS = {"relu": run_relu, "gelu": run_gelu("none"), "gelu_tanh": run_gelu("tanh")}


@pytest.mark.parametrize("kernel,dtype", MODES, indirect=["kernel"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("with_dropout", [True, False])
@pytest.mark.parametrize("name", list(RUNS))
def test_kernel_matches_reference(kernel, rng, dtype, shape, with_bias, with_dropout, name) -> None:
    z = (3 * rng.standard_normal(shape)).astype(dtype)
    bias = rng.standard_normal(shape[1]).astype(dtype) if with_bias else None
    keep = rng.random(shape) > 0.3 if with_dropout else None
    grad = rng.standard_normal(shape).astype(dtype)
    results = jitted(lambda: RUNS[name](z, bias, keep, grad))
    expected = reference(lambda: RUNS[name](z, bias, keep, grad))
    # float32: the NumPy formulas lose digits to cancellation (1 + t with t near -1); the kernels avoid it
    tol = {"rtol": 2e-5, "atol": 2e-5} if dtype == "float32" else tolerance(dtype)
    for a, b in zip(results, expected):
        assert a.dtype == np.dtype(dtype)
        np.testing.assert_allclose(a, b, **tol)


@pytest.mark.parametrize("name", list(RUNS))
def test_extremes_and_nan(kernel, name) -> None:
    """Huge values stay finite (tanh GELU clips at ±50), NaN propagates as in NumPy, also through dropout."""
    z = np.array([[2e38, -3e38, 1e4, -1e4, 88.0, np.nan, 0.5]], np.float32)  # (2e38 * 1.5 < float32 max)
    keep = np.array([[True, True, True, True, True, False, True]])
    grad = np.ones_like(z)
    results = jitted(lambda: RUNS[name](z, None, keep, grad))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = reference(lambda: RUNS[name](z, None, keep, grad))
    for a, b in zip(results[:-1], expected[:-1]):  # (dbias: NaN in both)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, rtol=1e-6)
        assert np.isfinite(np.delete(a, 5)).all()


@pytest.mark.parametrize("kernel", ["serial"], indirect=True)
def test_exact_gelu_matches_the_erf_formula(kernel, rng) -> None:
    x = rng.standard_normal((7, 11)) * 4
    _, out = jitted(lambda: activation.gelu_forward(x, None, None, 1.0, "none"))
    from math import erf

    expected = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))))(x)
    np.testing.assert_allclose(out, expected, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("kernel", ["serial"], indirect=True)
@pytest.mark.parametrize("name", ["relu", "gelu", "gelu_tanh"])
@pytest.mark.parametrize("with_dropout", [False, True])
def test_feed_forward_gradcheck_on_the_jit_path(kernel, rng, name, with_dropout) -> None:
    x = mt.tensor(rng.standard_normal((2, 3, 4)), dtype=mt.float64, requires_grad=True)
    w1, w2 = (mt.tensor(rng.standard_normal(s), dtype=mt.float64, requires_grad=True) for s in ((5, 4), (4, 5)))
    b1, b2 = (mt.tensor(rng.standard_normal(s), dtype=mt.float64, requires_grad=True) for s in (5, 4))
    keep = rng.random((2, 3, 5)) > 0.3 if with_dropout else None

    def fn(x, w1, b1, w2, b2):
        return FeedForward.apply(x, w1, b1, w2, b2, activation=name, keep=keep, scale=1 / 0.7)

    pre = x.numpy() @ w1.numpy().T + b1.numpy()
    assert np.abs(pre).min() > 1e-4  # away from ReLU's kink
    assert jitted(lambda: gradcheck(fn, [x, w1, b1, w2, b2]))
    act = {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh")}[name]
    h = act(F.linear(x, w1, b1)) * (1.0 if keep is None else mt.tensor(keep / 0.7, dtype=mt.float64))
    expected = F.linear(h, w2, b2).numpy()
    np.testing.assert_allclose(jitted(lambda: fn(x, w1, b1, w2, b2)).numpy(), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kernel", ["serial"], indirect=True)
def test_feed_forward_without_biases(kernel, rng) -> None:
    x = mt.tensor(rng.standard_normal((3, 4)), dtype=mt.float64, requires_grad=True)
    w1, w2 = (mt.tensor(rng.standard_normal(s), dtype=mt.float64, requires_grad=True) for s in ((5, 4), (4, 5)))
    for name in ("relu", "gelu"):
        assert jitted(
            lambda n=name: gradcheck(lambda x, a, b: FeedForward.apply(x, a, None, b, None, activation=n), [x, w1, w2])
        )


@pytest.mark.parametrize("kernel", ["serial"], indirect=True)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradcheck_on_the_jit_path(kernel, rng, approximate) -> None:
    x = mt.tensor(rng.standard_normal((3, 5)) * 2, dtype=mt.float64, requires_grad=True)
    assert jitted(lambda: gradcheck(lambda t: F.gelu(t, approximate=approximate), x))


def test_gelu_does_not_write_over_its_input(kernel, rng) -> None:
    x = rng.standard_normal((4, 5)).astype(np.float32)
    before = x.copy()
    jitted(lambda: F.gelu(mt.from_numpy(x)))
    np.testing.assert_array_equal(x, before)

"""kernels/lstm.py: the numba recurrence (forward and backward) equals its NumPy reference, and its
sigmoid/tanh from the SIMD exp are exact to a few ulps (near 0, at the Taylor switch, saturated,
+-inf, NaN)."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.kernels import _blas
from minitensor.kernels import lstm as K

TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-12, atol=1e-13)}


@pytest.fixture
def jit_only(monkeypatch):
    """The JIT on and the NumPy references refused: a result really comes from the kernels."""
    if not _blas.available():
        pytest.skip("numba finds no BLAS here: the references run")

    def refused(*args):
        raise AssertionError("the NumPy reference ran on the JIT path")

    monkeypatch.setattr(K, "_forward_numpy", refused)
    monkeypatch.setattr(K, "_backward_numpy", refused)
    previous = mt.jit_enabled()
    mt.set_jit_enabled(True)
    yield
    mt.set_jit_enabled(previous)


def _problem(dtype, steps=7, rows=3, size=5, seed=0) -> tuple:
    """(xg, w_hh, h0, c0, grad) with gate inputs large enough to saturate some gates."""
    rng = np.random.default_rng(seed)
    xg = rng.standard_normal((steps, rows, 4 * size)) * 3
    w_hh = rng.standard_normal((4 * size, size))
    h0, c0 = rng.standard_normal((rows, size)), rng.standard_normal((rows, size))
    grad = rng.standard_normal((steps + 1, rows, size))
    return tuple(a.astype(dtype) for a in (xg, w_hh, h0, c0, grad))


def _both_paths(run, request) -> tuple:
    """(run() on the kernels only, run() on the references)."""
    with mt.jit_disabled():
        reference = run()
    request.getfixturevalue("jit_only")
    return run(), reference


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape", [(7, 3, 5), (1, 1, 1), (4, 2, 17)])
def test_forward_kernel_equals_reference(dtype, reverse, shape, request):
    xg, w_hh, h0, c0, _ = _problem(dtype, *shape)

    def run():
        gates = xg.copy()
        return (gates, *K.lstm_forward(gates, w_hh, h0, c0, reverse))

    kernel, reference = _both_paths(run, request)
    for name, a, b in zip(("gates", "out", "c", "tanh_c"), kernel, reference):
        assert a.dtype == dtype and a.shape == b.shape, name
        np.testing.assert_allclose(a, b, **TOL[dtype], err_msg=name)
    out, c = kernel[1], kernel[2]
    last = 0 if reverse else -1
    np.testing.assert_array_equal(out[-1], c[last])  # the final c rides in the last row


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape", [(7, 3, 5), (1, 1, 1), (4, 2, 17)])
def test_backward_kernel_equals_reference(dtype, reverse, shape, request):
    xg, w_hh, h0, c0, grad = _problem(dtype, *shape, seed=1)
    gates = xg.copy()
    with mt.jit_disabled():
        _, c, tanh_c = K.lstm_forward(gates, w_hh, h0, c0, reverse)
    kernel, reference = _both_paths(lambda: K.lstm_backward(grad, gates, c, tanh_c, c0, w_hh, reverse), request)
    for name, a, b in zip(("dgates", "dh0", "dc0"), kernel, reference):
        assert a.dtype == dtype and a.shape == b.shape, name
        np.testing.assert_allclose(a, b, **TOL[dtype], err_msg=name)


def test_reference_backward_is_the_chain_rule():
    """The reference backward against finite differences of the reference forward (float64): the
    kernels are held to the reference above, the reference to calculus here."""
    xg, w_hh, h0, c0, grad = _problem(np.float64, 3, 2, 2, seed=2)
    with mt.jit_disabled():

        def loss(x):
            out = K.lstm_forward(x.copy(), w_hh, h0, c0, False)[0]
            return float(np.sum(out * grad))

        gates = xg.copy()
        _, c, tanh_c = K.lstm_forward(gates, w_hh, h0, c0, False)
        dgates = K.lstm_backward(grad, gates, c, tanh_c, c0, w_hh, False)[0]
    numeric = np.zeros_like(xg)
    for index in np.ndindex(xg.shape):
        step = np.zeros_like(xg)
        step[index] = 1e-6
        numeric[index] = (loss(xg + step) - loss(xg - step)) / 2e-6
    np.testing.assert_allclose(dgates, numeric, rtol=1e-6, atol=1e-8)


SPECIAL = [0.0, -0.0, 1e-300, -1e-12, 1e-7, 0.01, -1 / 32, 1 / 32, 0.031, 0.032, 0.5, -3.0, 20.0, 400.0, -800.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activations_are_exact_to_a_few_ulps(dtype, request):
    """One step from h0 = 0, W_hh = 0: the gates are sigmoid/tanh of the inputs themselves."""
    request.getfixturevalue("jit_only")
    z = np.array(SPECIAL + [np.inf, -np.inf, np.nan], dtype)
    size = z.size
    xg = np.tile(z, 4)[None, None].copy()  # every gate block gets every special value
    zeros = np.zeros((1, size), dtype)
    K.lstm_forward(xg, np.zeros((4 * size, size), dtype), zeros, zeros, False)
    with np.errstate(over="ignore", invalid="ignore"):
        sigmoid = 1 / (1 + np.exp(-z.astype(np.float64)))
    ulp = np.finfo(dtype).eps
    i, f, g, o = np.split(xg[0, 0], 4)
    for name, got, want in (("i", i, sigmoid), ("f", f, sigmoid), ("g", g, np.tanh(z.astype(np.float64)))):
        np.testing.assert_allclose(got[:-1], want[:-1], rtol=8 * ulp, atol=0, err_msg=name)
        assert np.isnan(got[-1]), name
    np.testing.assert_array_equal(o, i)

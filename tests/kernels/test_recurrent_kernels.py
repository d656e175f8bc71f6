"""kernels/lstm.py and kernels/gru.py: the numba recurrences (forward and backward) equal their NumPy
references; the references' backward is the chain rule (finite differences); the gate activations
from the SIMD exp are exact to a few ulps (near 0, at the Taylor switch, saturated, +-inf, NaN)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import minitensor as mt
from minitensor.kernels import _gates, gru, lstm
from minitensor.kernels.runtime import blas

TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-12, atol=1e-13)}
GATES = {"lstm": 4, "gru": 3}
SHAPES = [(7, 3, 5), (1, 1, 1), (4, 2, 17)]  # (L, N, H)


@pytest.fixture
def jit_only(monkeypatch):
    """The JIT on and the NumPy references refused: a result really comes from the kernels."""
    if not blas.available():
        pytest.skip("numba finds no BLAS here: the references run")

    def refused(*args):
        raise AssertionError("the NumPy reference ran on the JIT path")

    for module in (lstm, gru):
        monkeypatch.setattr(module, "_forward_numpy", refused)
        monkeypatch.setattr(module, "_backward_numpy", refused)
    previous = mt.jit_enabled()
    mt.set_jit_enabled(True)
    yield
    mt.set_jit_enabled(previous)


def _problem(kind, dtype, steps=7, rows=3, size=5, seed=0) -> dict:
    """Gate inputs large enough to saturate some gates, W_hh, h0, c0 (LSTM) or b_hh (GRU), and the
    gradient of the kernel's output."""
    rng = np.random.default_rng(seed)
    width = GATES[kind] * size
    p = dict(xg=rng.standard_normal((steps, rows, width)) * 3, w_hh=rng.standard_normal((width, size)))
    p.update(h0=rng.standard_normal((rows, size)), c0=rng.standard_normal((rows, size)))
    p.update(b_hh=rng.standard_normal(width), grad=rng.standard_normal((steps + (kind == "lstm"), rows, size)))
    return {k: v.astype(dtype) for k, v in p.items()}


def _forward(kind, p, reverse) -> tuple:
    """(activated gates, *what the forward kernel returns)."""
    gates = p["xg"].copy()
    if kind == "lstm":
        return (gates, *lstm.lstm_forward(gates, p["w_hh"], p["h0"], p["c0"], reverse))
    return (gates, *gru.gru_forward(gates, p["w_hh"], p["b_hh"], p["h0"], reverse))


def _backward(kind, p, state, reverse) -> tuple:
    """What the backward kernel returns, given ``state`` = _forward(...)."""
    if kind == "lstm":
        gates, _, c, tanh_c = state
        return lstm.lstm_backward(p["grad"], gates, c, tanh_c, p["c0"], p["w_hh"], reverse)
    gates, out, hg = state
    return gru.gru_backward(p["grad"], gates, hg, out, p["h0"], p["w_hh"], reverse)


def _both_paths(run, request) -> tuple:
    """(run() on the kernels only, run() on the references)."""
    with mt.jit_disabled():
        reference = run()
    request.getfixturevalue("jit_only")
    return run(), reference


@pytest.mark.parametrize("kind", GATES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_forward_kernel_equals_reference(kind, dtype, reverse, shape, request):
    p = _problem(kind, dtype, *shape)
    kernel, reference = _both_paths(lambda: _forward(kind, p, reverse), request)
    assert len(kernel) == len(reference) == (4 if kind == "lstm" else 3)
    for i, (a, b) in enumerate(zip(kernel, reference)):
        assert a.dtype == dtype and a.shape == b.shape, i
        np.testing.assert_allclose(a, b, **TOL[dtype], err_msg=f"result {i}")
    if kind == "lstm":  # the final c rides in the last row of out
        np.testing.assert_array_equal(kernel[1][-1], kernel[2][0 if reverse else -1])


@pytest.mark.parametrize("kind", GATES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_backward_kernel_equals_reference(kind, dtype, reverse, shape, request):
    p = _problem(kind, dtype, *shape, seed=1)
    with mt.jit_disabled():
        state = _forward(kind, p, reverse)
    kernel, reference = _both_paths(lambda: _backward(kind, p, state, reverse), request)
    assert len(kernel) == 3
    for i, (a, b) in enumerate(zip(kernel, reference)):
        assert a.dtype == dtype and a.shape == b.shape, i
        np.testing.assert_allclose(a, b, **TOL[dtype], err_msg=f"result {i}")


@pytest.mark.parametrize("kind", GATES)
@pytest.mark.parametrize("reverse", [False, True])
def test_reference_backward_is_the_chain_rule(kind, reverse):
    """The references' backward against central differences of their forward (float64) in the gate
    inputs, h0, and c0 (LSTM) or the hidden bias (GRU): the kernels are held to the references above, the
    references to calculus here."""
    p = _problem(kind, np.float64, 3, 2, 2, seed=2)
    with mt.jit_disabled():
        state = _forward(kind, p, reverse)
        grads = _backward(kind, p, state, reverse)

        def loss(name, value):
            return float(np.sum(_forward(kind, {**p, name: value}, reverse)[1] * p["grad"]))

        if kind == "lstm":  # (dgates, dh0, dc0)
            analytic = {"xg": grads[0], "h0": grads[1], "c0": grads[2]}
        else:  # (dgx, dgh, dh0)
            analytic = {"xg": grads[0], "b_hh": grads[1].sum(axis=(0, 1)), "h0": grads[2]}
        for name, want in analytic.items():
            numeric = np.zeros_like(p[name])
            for index in np.ndindex(numeric.shape):
                step = np.zeros_like(p[name])
                step[index] = 1e-6
                numeric[index] = (loss(name, p[name] + step) - loss(name, p[name] - step)) / 2e-6
            np.testing.assert_allclose(want, numeric, rtol=1e-6, atol=1e-8, err_msg=name)


# around 0, the Taylor bounds of tanh (1/8 for float64, 1/4 for float32), saturation and the exp's range
SPECIAL = [0.0, -0.0, 1e-300, -1e-12, 1e-7, 0.01, -0.125, 0.1249, 0.1251, -0.25, 0.2499, 0.2501, 0.5]
SPECIAL += [-3.0, 20.0, 400.0, -800.0]
ULPS = {np.float32: 3, np.float64: 4}  # measured: 2.01 and 3.00 over [-1.2, 1.2]


@pytest.mark.parametrize("kind", GATES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activations_are_exact_to_a_few_ulps(kind, dtype, request):
    """One step from h0 = 0, W_hh = 0 (b_hh = 0), H = 1: the gates are sigmoid/tanh of the inputs themselves,
    here special values and a dense sweep of [-1.2, 1.2] down the batch."""
    request.getfixturevalue("jit_only")
    z = np.concatenate([SPECIAL, np.linspace(-1.2, 1.2, 4001), [np.inf, -np.inf, np.nan]]).astype(dtype)
    count = GATES[kind]
    p = {"xg": np.repeat(z[:, None], count, axis=1)[None].copy(), "w_hh": np.zeros((count, 1), dtype)}
    zeros = np.zeros((z.size, 1), dtype)
    p.update(h0=zeros, c0=zeros, b_hh=np.zeros(count, dtype))
    gates = _forward(kind, p, False)[0][0].T  # (gates, N)
    exact = z.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        sigmoid = 1 / (1 + np.exp(-exact))
    tanh = np.tanh(exact)
    wanted = (sigmoid, sigmoid, tanh, sigmoid) if kind == "lstm" else (sigmoid, sigmoid, tanh)
    for k, (got, want) in enumerate(zip(gates, wanted)):
        assert np.isnan(got[-1]), k
        got, want = got[:-1].astype(np.float64), want[:-1]
        ulps = np.abs(got - want) / np.spacing(np.abs(want).astype(dtype)).astype(np.float64)
        assert ulps.max() <= ULPS[dtype], (k, ulps.max(), z[ulps.argmax()])


@pytest.mark.parametrize("module", [_gates, lstm, gru], ids=lambda m: m.__name__)
def test_docstring_examples(module) -> None:
    result = doctest.testmod(module, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0

"""ops/special.py: ``erf`` within 1e-15 of ``math.erf`` on a wide grid and where it is tiny, its special
values, float32, and a hypothesis property; erfc, erfinv, logit (with and without eps), xlogy, sinc and i0:
float64 gradcheck, second order and PyTorch as the oracle, their values at the edges."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from op_checks import check_op

import minitensor as mt
from minitensor.ops.special import erf


# ----------------------------------------------------------------------- erf
def test_erf_matches_math_erf_on_a_wide_grid():
    xs = np.concatenate([np.linspace(-30, 30, 60001), np.geomspace(1e-300, 1e-3, 50), [0.46875, 4.0, -4.0, -0.0]])
    ref = np.array([math.erf(v) for v in xs])
    np.testing.assert_allclose(erf(xs), ref, rtol=0, atol=1e-15)
    # relative accuracy too, where erf is tiny
    small = np.abs(xs) < 1e-3
    np.testing.assert_allclose(erf(xs[small]), ref[small], rtol=1e-14, atol=0)


def test_erf_special_values_and_float32():
    out = erf(np.array([np.inf, -np.inf, np.nan, 0.0]))
    assert out[0] == 1 and out[1] == -1 and np.isnan(out[2]) and out[3] == 0
    x32 = np.linspace(-5, 5, 1001, dtype=np.float32)
    y32 = erf(x32)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32, [math.erf(v) for v in x32.astype(np.float64)], atol=2e-7)


@given(st.floats(-40, 40, allow_nan=False))
def test_erf_property_against_math_erf(v):
    assert erf(np.array([v]))[0] == pytest.approx(math.erf(v), abs=1e-15)


# ------------------------------------------------- the rest of special.py
rng = np.random.default_rng(13)
DOMAINS = {"erf": 1.5 * rng.standard_normal((2, 3)), "erfc": 1.5 * rng.standard_normal((2, 3)),
           "erfinv": rng.uniform(-0.9, 0.9, (2, 3)), "logit": rng.uniform(0.1, 0.9, (2, 3)),
           "sinc": rng.uniform(0.2, 2.5, (2, 3)) * rng.choice([-1, 1], (2, 3)),
           "i0": 2 * rng.standard_normal((2, 3))}  # fmt: skip


@pytest.mark.parametrize("name", list(DOMAINS))
def test_functions_and_methods(name):
    check_op(lambda x: getattr(mt, name)(x), lambda x: getattr(x, name)(), DOMAINS[name])
    check_op(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), DOMAINS[name])


def test_logit_with_eps_clamps_and_has_no_gradient_outside():
    x = np.array([0.05, 0.3, 0.6, 0.97])  # (two outside [0.1, 0.9], away from its ends)
    check_op(lambda t: mt.logit(t, eps=0.1), lambda t: t.logit(eps=0.1), x)
    outside = mt.tensor([-0.5, 1.5], dtype=mt.float64, requires_grad=True)
    mt.logit(outside).sum().backward()  # without eps: NaN outside [0, 1], as PyTorch
    assert np.isnan(outside.grad.numpy()).all()


def test_logit_of_a_0d_tensor():
    x = mt.tensor(0.25, dtype=mt.float64, requires_grad=True)
    y = mt.logit(x)
    y.backward()
    assert y.shape == () and y.item() == pytest.approx(math.log(1 / 3))
    assert x.grad.item() == pytest.approx(1 / (0.25 * 0.75))


@pytest.mark.parametrize("eps", [None, 0.1])
def test_logit_gradient_at_its_edges_is_pytorchs(eps):
    """NaN outside [0, 1] without eps (0 outside [eps, 1 - eps] with it), inf at 0 and 1, NaN for NaN."""
    torch = pytest.importorskip("torch")
    values = [-0.5, 0.0, 0.05, 0.3, 1.0, 1.5, float("nan")]
    x = mt.tensor(values, dtype=mt.float64, requires_grad=True)
    mt.logit(x, eps=eps).backward(mt.ones(len(values), dtype=mt.float64))
    tx = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    torch.logit(tx, eps=eps).backward(torch.ones(len(values), dtype=torch.float64))
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_xlogy_both_operands_and_zero_first_operand():
    x, y = rng.standard_normal((2, 3)), rng.uniform(0.2, 2.0, (3,))
    check_op(mt.xlogy, lambda a, b: a.xlogy(b), x, y)
    torch = pytest.importorskip("torch")
    a, b = np.array([0.0, 0.0, 1.0, 0.0]), np.array([0.0, -1.0, 2.0, np.nan])
    ours = mt.xlogy(mt.tensor(a, dtype=mt.float64), mt.tensor(b, dtype=mt.float64)).numpy()
    np.testing.assert_array_equal(ours, torch.xlogy(torch.tensor(a), torch.tensor(b)).numpy())
    assert mt.xlogy(mt.tensor([2.0]), 3).item() == pytest.approx(2 * math.log(3))


def test_sinc_at_zero_is_one_with_zero_slope():
    x = mt.tensor([0.0, 1.0], dtype=mt.float64, requires_grad=True)
    y = mt.sinc(x)
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), [1.0, 0.0], atol=1e-16)
    np.testing.assert_allclose(x.grad.numpy(), [0.0, -1.0])
    for sign in (1.0, -1.0):  # +0, as PyTorch, for either sign of the gradient
        x.grad = None
        mt.sinc(x).backward(mt.tensor([sign, 1.0], dtype=mt.float64))
        assert not np.signbit(x.grad.numpy()[0])


@pytest.mark.parametrize("dtype, rtol", [("float32", 2e-6), ("float64", 1e-13)])
def test_sinc_slope_keeps_its_precision_near_zero(dtype, rtol):
    """Near 0 the slope's formula cancels (float32 lost a quarter of it at x = 2e-4): against its Taylor
    series summed to 30 terms in float64, from 1e-6 to 1 / pi on both sides, and on to 1.2 (below the slope's
    first zero) against the formula."""
    x = np.concatenate([np.geomspace(1e-6, 1 / math.pi, 300), np.linspace(0.33, 1.2, 30)])
    x = np.concatenate([x, -x]).astype(dtype)
    p = x.astype(np.float64) * math.pi
    terms = [(-1) ** k * p ** (2 * k - 1) * (2 * k / math.factorial(2 * k + 1)) for k in range(1, 31)]
    exact = np.where(np.abs(p) <= 1, np.sum(terms, axis=0), (p * np.cos(p) - np.sin(p)) / p**2) * math.pi
    t = mt.tensor(x, dtype=getattr(mt, dtype), requires_grad=True)
    mt.sinc(t).sum().backward()
    assert t.grad.dtype == t.dtype
    np.testing.assert_allclose(t.grad.numpy(), exact, rtol=rtol, atol=0)


def test_sinc_second_order_through_the_series_and_the_formula():
    x = np.array([1e-3, -0.02, 0.07, 0.2, -0.9, 1.7])  # |pi x| on both sides of both dtypes' switch
    check_op(mt.sinc, lambda t: t.sinc(), x)


def test_erfinv_inverts_erf_to_its_ends():
    p = np.concatenate([np.linspace(-0.999999, 0.999999, 101), 1 - 10.0 ** -np.arange(2, 16)])
    y = mt.erfinv(mt.tensor(p, dtype=mt.float64))
    np.testing.assert_allclose(mt.erf(y).numpy(), p, rtol=1e-15, atol=1e-15)
    edges = mt.erfinv(mt.tensor([1.0, -1.0, 1.5, np.nan], dtype=mt.float64)).numpy()
    np.testing.assert_array_equal(edges, [np.inf, -np.inf, np.nan, np.nan])


def test_erfc_keeps_its_relative_precision_in_the_tail():
    x = np.array([5.0, 10.0, 20.0, -3.0])
    np.testing.assert_allclose(mt.erfc(mt.tensor(x, dtype=mt.float64)).numpy(), [math.erfc(v) for v in x], rtol=1e-13)


def test_erf_on_an_array_is_the_backend_function():
    assert isinstance(erf(np.array([0.5])), np.ndarray)
    assert isinstance(erf(mt.tensor([0.5])), mt.Tensor)


def test_bad_arguments_name_themselves():
    with pytest.raises(TypeError, match="logit: eps must be a number, got str"):
        mt.logit(mt.tensor([0.5]), eps="x")
    with pytest.raises(TypeError, match="erfinv: input must be a Tensor"):
        mt.erfinv(0.5)

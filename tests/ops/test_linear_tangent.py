"""ops/nn_ops.py's LinearTangent, Linear's tangent when its input and its weight both carry one
(float64): its value, gradients to second order (gradcheck, gradgradcheck), its own tangent against
central differences, that Linear's JVP rule uses it (and a single Linear otherwise), and its vmap rule
with shared and with batched weights.  The oracle table's ``linear`` case checks it against PyTorch's
forward AD (tests/oracle/test_torch_jvp.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import f64

import minitensor as mt
import minitensor.func as mf
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.ops.nn_ops import LinearTangent

fw = mt.autograd.forward_ad


def _inputs(rng, bias: bool, lead=(2, 3)) -> tuple:
    x, dx = f64(rng.standard_normal((*lead, 4))), f64(rng.standard_normal((*lead, 4)))
    w, dw = f64(rng.standard_normal((5, 4))), f64(rng.standard_normal((5, 4)))
    return (x, dx, w, dw, f64(rng.standard_normal(5))) if bias else (x, dx, w, dw)


def _formula(x, dx, w, dw, db=None):
    return dx @ w.T + x @ dw.T + (0 if db is None else db)


@pytest.mark.parametrize("bias", [True, False])
def test_linear_tangent_value_and_gradients_to_second_order(bias, rng):
    inputs = _inputs(rng, bias)
    expected = _formula(*(t.numpy() for t in inputs))
    np.testing.assert_allclose(LinearTangent.apply(*inputs).numpy(), expected, rtol=1e-13)
    assert gradcheck(LinearTangent.apply, inputs)
    assert gradgradcheck(LinearTangent.apply, inputs)


@pytest.mark.parametrize("bias", [True, False])
def test_linear_tangent_own_tangent_matches_differences(bias, rng):
    inputs = _inputs(rng, bias)
    directions = [rng.standard_normal(t.shape) for t in inputs]
    with fw.dual_level():
        out = LinearTangent.apply(*(fw.make_dual(t, f64(d)) for t, d in zip(inputs, directions)))
        tangent = fw.unpack_dual(out).tangent.numpy()
    h = 1e-6
    ahead, behind = (_formula(*(t.numpy() + s * d for t, d in zip(inputs, directions))) for s in (h, -h))
    np.testing.assert_allclose(tangent, (ahead - behind) / (2 * h), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize(
    "carry, node",
    [
        ((True, True, True), "LinearTangentBackward"),
        ((True, False, True), "LinearBackward"),
        ((False, True, False), "LinearBackward"),
    ],
)
def test_linear_jvp_is_one_op(carry, node, rng):
    """Linear's tangent is one recorded op whichever of x, W, b carry a tangent."""
    x, w, b = f64(rng.standard_normal((3, 4))), f64(rng.standard_normal((5, 4))), f64(rng.standard_normal(5))
    with fw.dual_level():
        duals = [fw.make_dual(t, f64(rng.standard_normal(t.shape))) if c else t for t, c in zip((x, w, b), carry)]
        tangent = fw.unpack_dual(mt.nn.functional.linear(*duals)).tangent
    assert tangent.grad_fn.name() == node


@pytest.mark.parametrize("shared", [True, False])
def test_linear_tangent_under_vmap(shared, rng):
    """jacfwd of a layer in its input and weight: the tangent batched over the basis (weights
    shared), and that over examples of weights (an ensemble: weights batched); no loop fallback."""
    x, w, b = rng.standard_normal((3, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal(5)

    def layer(x, w):
        return mt.nn.functional.linear(x, w, mt.tensor(b, dtype=mt.float64)).tanh().sum()

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (the loop fallback warns)
        if shared:
            got = [mf.jacfwd(layer, argnums=(0, 1))(f64(x, False), f64(w[0], False))]
        else:
            got = list(zip(*mf.vmap(mf.jacfwd(layer, argnums=(0, 1)), in_dims=(None, 0))(f64(x, False), f64(w, False))))
    for k, (jx, jw) in enumerate(got):
        xk, wk = f64(x), f64(w[k])
        gx, gw = mt.autograd.grad(layer(xk, wk), (xk, wk))
        np.testing.assert_allclose(jx.numpy(), gx.numpy(), rtol=1e-12)
        np.testing.assert_allclose(jw.numpy(), gw.numpy(), rtol=1e-12)

"""ops/loss.py's CrossEntropyTangent, cross-entropy's JVP rule as one op (float64): its value is the
loss's gradient dotted with the tangent, for every option (reductions, class weights, ignored targets,
label smoothing, the class axis inside (N, C, d)); its gradients to second order (gradcheck,
gradgradcheck) and its own tangent; CrossEntropy hands it its tangent; and it runs under vmap
(jacfwd of per-example losses) without the loop fallback."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import f64

import minitensor as mt
import minitensor.func as mf
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.ops.loss import CrossEntropyTangent

WEIGHT = np.array([0.5, 1.0, 2.0])
OPTIONS = {
    "mean": ((4, 3), [2, 0, 1, 2], {}),
    "sum": ((4, 3), [2, 0, 1, 2], {"reduction": "sum"}),
    "none": ((4, 3), [2, 0, 1, 2], {"reduction": "none"}),
    "weighted_ignored_smoothed": (
        (4, 3),
        [2, -100, 1, 0],
        {"weight": WEIGHT, "ignore_index": -100, "label_smoothing": 0.1},
    ),
    "classes_inside": ((2, 3, 2), [[0, 2], [1, 1]], {"reduction": "none", "label_smoothing": 0.2}),
    "one_sample": ((3,), 1, {"weight": WEIGHT}),
    "all_ignored": ((2, 3), [-100, -100], {}),
}


def _case(name: str, rng) -> tuple:
    shape, target, settings = OPTIONS[name]
    x, t = f64(rng.standard_normal(shape)), f64(rng.standard_normal(shape))
    return x, t, np.array(target), settings


def _loss(x, target, settings):
    weight = settings.get("weight")
    kw = {k: v for k, v in settings.items() if k != "weight"}
    return mt.nn.functional.cross_entropy(x, mt.tensor(target), weight=None if weight is None else f64(weight), **kw)


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_cross_entropy_tangent_is_the_gradient_along_the_tangent(name, rng):
    x, t, target, settings = _case(name, rng)
    out = CrossEntropyTangent.apply(x, target, t, **settings).numpy()
    xs = x.detach().requires_grad_()
    loss = _loss(xs, target, settings)
    for i in np.ndindex(loss.shape):  # each output's gradient, dotted with the tangent
        (g,) = mt.autograd.grad(loss[i] if loss.ndim else loss, xs, retain_graph=True)
        np.testing.assert_allclose(out[i], (g.numpy() * t.numpy()).sum(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_cross_entropy_tangent_gradients_to_second_order(name, rng):
    x, t, target, settings = _case(name, rng)

    def op(x, t):
        return CrossEntropyTangent.apply(x, target, t, **settings)

    assert gradcheck(op, (x, t))
    assert gradgradcheck(op, (x, t))


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_cross_entropy_tangent_own_tangent_matches_differences(name, rng):
    x, t, target, settings = _case(name, rng)
    dx, dt = rng.standard_normal(x.shape), rng.standard_normal(x.shape)
    fw = mt.autograd.forward_ad
    with fw.dual_level():
        out = CrossEntropyTangent.apply(fw.make_dual(x, f64(dx)), target, fw.make_dual(t, f64(dt)), **settings)
        tangent = fw.unpack_dual(out).tangent.numpy()
    h = 1e-6

    def at(step):
        moved_x, moved_t = f64(x.numpy() + step * dx), f64(t.numpy() + step * dt)
        return CrossEntropyTangent.apply(moved_x, target, moved_t, **settings).numpy()

    np.testing.assert_allclose(tangent, (at(h) - at(-h)) / (2 * h), rtol=1e-7, atol=1e-9)


def test_cross_entropy_hands_its_tangent_to_the_op(rng):
    x, t = f64(rng.standard_normal((4, 3))), f64(rng.standard_normal((4, 3)))
    fw = mt.autograd.forward_ad
    with fw.dual_level():
        out = _loss(fw.make_dual(x.detach().requires_grad_(), t), np.array([2, 0, 1, 2]), {})
        tangent = fw.unpack_dual(out).tangent
    assert tangent.grad_fn.name() == "CrossEntropyTangentBackward"


def test_cross_entropy_tangent_under_vmap_has_a_batching_rule(rng):
    """jacfwd of each example's loss (vmap over the examples, of vmap over the tangents' basis)."""
    x = f64(rng.standard_normal((5, 2, 3)))
    target = mt.tensor(np.array([[0, 2], [1, 1], [2, 0], [0, 0], [1, 2]]))

    def loss(x, y):
        return mt.nn.functional.cross_entropy(x, y, label_smoothing=0.1)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (the loop fallback warns)
        jac = mf.vmap(mf.jacfwd(loss))(x, target).numpy()
    for k in range(5):
        xk = x[k].detach().requires_grad_()
        (g,) = mt.autograd.grad(loss(xk, target[k]), xk)
        np.testing.assert_allclose(jac[k], g.numpy(), rtol=1e-12, atol=1e-14)

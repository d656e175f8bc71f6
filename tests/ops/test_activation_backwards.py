"""ops/activation_backwards.py: tanh's and the sigmoid's backwards as ops (float64): their values,
gradients to second order, their tangents against central differences and against PyTorch's
``aten.tanh_backward`` / ``aten.sigmoid_backward`` (forward AD, first and second derivatives), and
that ``Tanh`` and ``Sigmoid`` hand them their backward beyond first order."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import f64

import minitensor as mt
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.ops.activation_backwards import SigmoidBackward, TanhBackward

ACTIVATION_BACKWARDS = {
    "tanh": (TanhBackward, lambda g, y: g * (1 - y * y), np.tanh),
    "sigmoid": (SigmoidBackward, lambda g, y: g * y * (1 - y), lambda x: 1 / (1 + np.exp(-x))),
}


@pytest.mark.parametrize("name", sorted(ACTIVATION_BACKWARDS))
def test_activation_backward_op_is_the_backward_beyond_first_order(name, rng):
    op, formula, activation = ACTIVATION_BACKWARDS[name]
    g = f64(rng.standard_normal((3, 4)))
    y = f64(activation(rng.standard_normal((3, 4))))
    np.testing.assert_allclose(op.apply(g, y).numpy(), formula(g.numpy(), y.numpy()), rtol=1e-14)
    assert gradcheck(op.apply, (g, y))
    assert gradgradcheck(op.apply, (g, y))
    x = f64(rng.standard_normal(5))  # beyond first order, the activation's backward is this op
    (d1,) = mt.autograd.grad(getattr(x, name)().sum(), x, create_graph=True)
    assert d1.grad_fn.name() == f"{op.__name__}Backward"


@pytest.mark.parametrize("name", sorted(ACTIVATION_BACKWARDS))
def test_activation_backward_op_tangent_matches_differences(name, rng):
    op, formula, activation = ACTIVATION_BACKWARDS[name]
    g, y = rng.standard_normal((3, 4)), activation(rng.standard_normal((3, 4)))
    dg, dy = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    with mt.autograd.forward_ad.dual_level():
        out = op.apply(
            mt.autograd.forward_ad.make_dual(f64(g, False), f64(dg, False)),
            mt.autograd.forward_ad.make_dual(f64(y, False), f64(dy, False)),
        )
        tangent = mt.autograd.forward_ad.unpack_dual(out).tangent.numpy()
    h = 1e-6
    expected = (formula(g + h * dg, y + h * dy) - formula(g - h * dg, y - h * dy)) / (2 * h)
    np.testing.assert_allclose(tangent, expected, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", sorted(ACTIVATION_BACKWARDS))
def test_activation_backward_op_against_pytorch_forward_ad(name, rng):
    torch = pytest.importorskip("torch")
    op = ACTIVATION_BACKWARDS[name][0]
    theirs = getattr(torch.ops.aten, f"{name}_backward")
    g, y, dg, dy = (rng.standard_normal((3, 4)) for _ in range(4))
    with mt.autograd.forward_ad.dual_level():
        out = op.apply(
            mt.autograd.forward_ad.make_dual(f64(g, False), f64(dg, False)),
            mt.autograd.forward_ad.make_dual(f64(y, False), f64(dy, False)),
        )
        ours = mt.autograd.forward_ad.unpack_dual(out)
    tfw = torch.autograd.forward_ad
    with tfw.dual_level():
        t = tfw.unpack_dual(
            theirs(tfw.make_dual(torch.tensor(g), torch.tensor(dg)), tfw.make_dual(torch.tensor(y), torch.tensor(dy)))
        )
    np.testing.assert_allclose(ours.primal.numpy(), t.primal.numpy(), rtol=1e-14)
    np.testing.assert_allclose(ours.tangent.numpy(), t.tangent.numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", sorted(ACTIVATION_BACKWARDS))
def test_activation_backward_op_gradients_to_second_order_against_pytorch(name, rng):
    torch = pytest.importorskip("torch")
    op = ACTIVATION_BACKWARDS[name][0]
    theirs = getattr(torch.ops.aten, f"{name}_backward")
    g, y, w = rng.standard_normal((3, 4)), rng.uniform(-0.9, 0.9, (3, 4)), rng.standard_normal((3, 4))
    ours_in, their_in = (f64(g), f64(y)), (torch.tensor(g, requires_grad=True), torch.tensor(y, requires_grad=True))
    ours_first = mt.autograd.grad((op.apply(*ours_in) * f64(w, False)).sum(), ours_in, create_graph=True)
    their_first = torch.autograd.grad((theirs(*their_in) * torch.tensor(w)).sum(), their_in, create_graph=True)
    for a, b in zip(ours_first, their_first):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-13, atol=1e-15)
    ours_second = mt.autograd.grad(sum((d * d).sum() for d in ours_first), ours_in)
    their_second = torch.autograd.grad(sum((d * d).sum() for d in their_first), their_in)
    for a, b in zip(ours_second, their_second):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-13, atol=1e-15)

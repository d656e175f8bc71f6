"""The piecewise activations (ops/activations.py) through their ``F.`` forms: float64 gradcheck and
second order away from the kinks, PyTorch's values and gradients (first and second order), and
PyTorch's one-sided choices at the kinks themselves and at NaN."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from helpers import away_from
from op_checks import check_jvp, check_op

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.ops import activations

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# name, minitensor form, PyTorch form, kinks (where the gradient jumps)
CASES = [
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda x: TF.leaky_relu(x, 0.2), [0.0]),
    ("hardtanh", F.hardtanh, TF.hardtanh, [-1.0, 1.0]),
    ("hardtanh(-0.5, 2)", lambda x: F.hardtanh(x, -0.5, 2.0), lambda x: TF.hardtanh(x, -0.5, 2.0), [-0.5, 2.0]),
    ("relu6", F.relu6, TF.relu6, [0.0, 6.0]),
    ("hardsigmoid", F.hardsigmoid, TF.hardsigmoid, [-3.0, 3.0]),
    ("hardswish", F.hardswish, TF.hardswish, [-3.0, 3.0]),
    ("threshold", lambda x: F.threshold(x, 0.5, -2.0), lambda x: TF.threshold(x, 0.5, -2.0), [0.5]),
    ("softshrink", F.softshrink, TF.softshrink, [-0.5, 0.5]),
    ("softshrink(1.5)", lambda x: F.softshrink(x, 1.5), lambda x: TF.softshrink(x, 1.5), [-1.5, 1.5]),
    ("hardshrink", F.hardshrink, TF.hardshrink, [-0.5, 0.5]),
    ("rrelu (eval)", lambda x: F.rrelu(x, 0.1, 0.3), lambda x: TF.rrelu(x, 0.1, 0.3), [0.0]),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize("name,ours,theirs,kinks", CASES, ids=IDS)
def test_against_pytorch_to_second_order(name, ours, theirs, kinks):
    x = away_from(np.random.default_rng(0).uniform(-8, 8, (3, 5)), kinks)
    if name != "hardsigmoid":
        check_op(ours, theirs, x)
        return
    # PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32 (3e-8 relative off in float64),
    # and has no second derivative: the second order is checked against finite differences only.
    check_op(ours, theirs, x, atol=1e-7, pytorch_second_order=False)


@pytest.mark.parametrize("name,ours,theirs,kinks", CASES, ids=IDS)
def test_values_and_gradients_at_the_kinks_and_nan_equal_pytorch(name, ours, theirs, kinks):
    points = np.array([*kinks, *(k + 1e-9 for k in kinks), *(k - 1e-9 for k in kinks), 0.0, -7.0, 7.0, np.nan])
    for dtype, tdtype in ((mt.float64, torch.float64), (mt.float32, torch.float32)):
        x = mt.tensor(points, dtype=dtype, requires_grad=True)
        tx = torch.tensor(points, dtype=tdtype, requires_grad=True)
        y, ty = ours(x), theirs(tx)
        assert y.dtype == dtype
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-6, atol=1e-7)
        (g,) = mt.autograd.grad(y.sum(), x)
        (tg,) = torch.autograd.grad(ty.sum(), tx)
        np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-6, atol=1e-7, err_msg=f"{name} at {points}")


PRELU_SHAPES = [((2, 3, 4), (3,)), ((2, 3), (3,)), ((2, 3, 4), (1,)), ((5,), (1,)), ((), (1,))]  # input, weight


@pytest.mark.parametrize("shape,weight", PRELU_SHAPES)
def test_prelu_against_pytorch_to_second_order(shape, weight):
    rng = np.random.default_rng(1)
    x = away_from(rng.standard_normal(shape) * 2, [0.0])
    w = rng.uniform(0.05, 0.5, weight)
    check_op(F.prelu, TF.prelu, x, w)


def test_prelu_gradient_at_zero_and_nan_equals_pytorch():
    points = np.array([[0.0, -0.0, np.nan, -1.0], [1.0, 0.0, -2.0, 3.0]]).T  # (4, 2): 2 channels
    w = np.array([0.25, -0.5])
    x = mt.tensor(points, dtype=mt.float64, requires_grad=True)
    wt = mt.tensor(w, dtype=mt.float64, requires_grad=True)
    tx, twt = torch.tensor(points, requires_grad=True), torch.tensor(w, requires_grad=True)
    grads = mt.autograd.grad(F.prelu(x, wt).sum(), [x, wt])
    tgrads = torch.autograd.grad(TF.prelu(tx, twt).sum(), [tx, twt])
    for g, tg in zip(grads, tgrads):
        np.testing.assert_allclose(g.numpy(), tg.numpy(), equal_nan=True)


def test_rrelu_in_training_draws_a_slope_per_negative_element_from_the_generator():
    x = mt.tensor(away_from(np.random.default_rng(2).standard_normal((50, 4)), [0.0]), dtype=mt.float64)
    x.requires_grad_()
    mt.manual_seed(3)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    mt.manual_seed(3)
    again = F.rrelu(x, 0.1, 0.3, training=True)
    np.testing.assert_array_equal(y.detach().numpy(), again.detach().numpy())  # mt.manual_seed repeats it
    a, out = x.detach().numpy(), y.detach().numpy()
    np.testing.assert_array_equal(out[a > 0], a[a > 0])
    slopes = out[a < 0] / a[a < 0]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03  # drawn, not one constant
    (g,) = mt.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(g.numpy(), out / a)  # the gradient is the drawn slope

    def seeded(x):  # the same noise at every evaluation: finite differences can check it
        mt.manual_seed(3)
        return F.rrelu(x, 0.1, 0.3, training=True)

    small = x.detach()[:4].requires_grad_()
    assert gradcheck(seeded, [small]) and gradgradcheck(seeded, [small])
    check_jvp(seeded, None, small.detach().numpy(), pytorch_jvp=False)  # (the tangent times the drawn slope)


def test_float32_stays_float32_and_matches_float64():
    x64 = away_from(np.random.default_rng(4).uniform(-8, 8, (4, 6)), [-3, -1, 0, 0.5, 1, 3, 6, -0.5])
    for name, ours, _, _ in CASES:
        y32 = ours(mt.tensor(x64, dtype=mt.float32))
        assert y32.dtype == mt.float32, name
        np.testing.assert_allclose(y32.numpy(), ours(mt.tensor(x64, dtype=mt.float64)).numpy(), rtol=1e-6, atol=1e-6)


def test_docstring_examples_run():
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(activations, extraglobs={"mt": mt}, optionflags=flags)
    assert result.attempted > 0 and result.failed == 0

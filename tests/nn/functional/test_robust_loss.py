"""nn/functional/robust_loss.py (ops/robust_loss.py): l1_loss / L1Loss, smooth_l1_loss / SmoothL1Loss,
huber_loss / HuberLoss: against PyTorch (value, gradient, second derivative), at the kinks (d = 0,
|d| = beta), and error cases."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt
import minitensor.nn.functional as F

rng = np.random.default_rng(5)
INPUT = rng.standard_normal((3, 4)) * 2
TARGET = rng.standard_normal((3, 4))
CASES = [("l1_loss", {}), ("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}), ("smooth_l1_loss", {"beta": 0.0}),
         ("huber_loss", {}), ("huber_loss", {"delta": 2.5})]  # fmt: skip


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,options", CASES)
def test_against_pytorch_to_second_order(name, options, reduction):
    """Away from the kinks (where a second difference quotient is not a derivative)."""

    def ours(x, t):
        return getattr(F, name)(x, t, reduction=reduction, **options)

    def theirs(x, t):
        return getattr(pytest.importorskip("torch").nn.functional, name)(x, t, reduction=reduction, **options)

    check_op(ours, theirs, INPUT, TARGET)


@pytest.mark.parametrize("name,options", CASES)
def test_values_and_gradients_at_the_kinks_equal_pytorch(name, options):
    torch = pytest.importorskip("torch")
    limit = options.get("beta", options.get("delta", 1.0))
    d = np.array([0.0, limit, -limit, 0.3 * limit, 3.0])
    x = mt.tensor(d, dtype=mt.float64, requires_grad=True)
    tx = torch.tensor(d, requires_grad=True)
    loss = getattr(F, name)(x, mt.zeros(5, dtype=mt.float64), reduction="sum", **options)
    tloss = getattr(torch.nn.functional, name)(tx, torch.zeros(5, dtype=torch.float64), reduction="sum", **options)
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_bad_options_raise_naming_them():
    x = mt.ones(2)
    with pytest.raises(ValueError, match="beta must be non-negative, got -1"):
        F.smooth_l1_loss(x, x, beta=-1)
    with pytest.raises(ValueError, match="delta must be positive, got 0"):
        F.huber_loss(x, x, delta=0)
    with pytest.raises(ValueError, match="reduction must be one of"):
        F.l1_loss(x, x, reduction="avg")
    with pytest.raises(ValueError, match="cannot broadcast"):
        F.l1_loss(x, mt.ones(3))
    with pytest.raises(TypeError, match="target dtype"):
        F.huber_loss(x, mt.ones(2, dtype=mt.float64))


@pytest.mark.parametrize("name,options", CASES)
def test_a_broadcast_target_gets_its_summed_gradient(name, options):
    x = mt.tensor(INPUT, dtype=mt.float64, requires_grad=True)
    row = mt.tensor(TARGET[0], dtype=mt.float64, requires_grad=True)  # (4,) against (3, 4): a warning
    with pytest.warns(UserWarning, match="will be broadcast"):
        assert mt.autograd.gradcheck(lambda a, b: getattr(F, name)(a, b, **options), [x, row])
    loss = getattr(F, name)(x, 0.5, reduction="sum", **options)  # a number as the target
    loss.backward()
    assert x.grad.shape == x.shape and np.all(np.isfinite(x.grad.numpy()))


@pytest.mark.parametrize("name,options", CASES)
def test_float32_stays_float32_and_matches_float64(name, options):
    x32 = mt.tensor(INPUT.astype(np.float32), requires_grad=True)
    x64 = mt.tensor(INPUT, dtype=mt.float64, requires_grad=True)
    for x in (x32, x64):
        getattr(F, name)(x, mt.tensor(TARGET, dtype=x.dtype), **options).backward()
    assert x32.grad.dtype == mt.float32
    np.testing.assert_allclose(x32.grad.numpy(), x64.grad.numpy(), rtol=1e-5, atol=1e-7)

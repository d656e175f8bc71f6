"""poisson_nll_loss and gaussian_nll_loss (nn/functional/likelihood_loss.py) and their layers: PyTorch's
values, gradients (input, target and var) and second derivatives in each mode; var's shapes and clamp;
repr, defaults, bad arguments."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.nn.functional import likelihood_loss

torch = pytest.importorskip("torch")
TF = torch.nn.functional

rng = np.random.default_rng(11)
MEAN, TARGET = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
RATE, COUNTS = rng.uniform(0.5, 3, (3, 4)), rng.integers(0, 6, (3, 4)).astype(float)
VAR = rng.uniform(0.2, 2, (3, 4))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [False, True])
def test_poisson_nll_loss_against_pytorch_to_second_order(log_input, full, reduction):
    options = {"log_input": log_input, "full": full, "reduction": reduction}
    # the target is differentiable in PyTorch's formula too; it is kept a constant here (Stirling's term
    # has a kink at t = 1)
    check_op(
        lambda x: F.poisson_nll_loss(x, mt.tensor(COUNTS, dtype=mt.float64), **options),
        lambda x: TF.poisson_nll_loss(x, torch.tensor(COUNTS), **options),
        RATE,
    )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("var_shape", [(3, 4), (3,), (3, 1), (1, 4)])
def test_gaussian_nll_loss_against_pytorch_to_second_order(var_shape, full, reduction):
    var = rng.uniform(0.2, 2, var_shape)
    check_op(
        lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=full, reduction=reduction),
        lambda x, t, v: TF.gaussian_nll_loss(x, t, v, full=full, reduction=reduction),
        MEAN,
        TARGET,
        var,
    )


def test_gaussian_var_below_eps_is_clamped_on_its_value_only_and_a_number_works():
    var = np.array([[1e-9, 0.5, 0.0, 2.0]] * 3)
    v, tv = mt.tensor(var, dtype=mt.float64, requires_grad=True), torch.tensor(var, requires_grad=True)
    x, tx = mt.tensor(MEAN, dtype=mt.float64, requires_grad=True), torch.tensor(MEAN, requires_grad=True)
    loss = F.gaussian_nll_loss(x, mt.tensor(TARGET, dtype=mt.float64), v, eps=1e-3)
    tloss = TF.gaussian_nll_loss(tx, torch.tensor(TARGET), tv, eps=1e-3)
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-12)
    grads, tgrads = mt.autograd.grad(loss, [x, v]), torch.autograd.grad(tloss, [tx, tv])
    for g, tg in zip(grads, tgrads):
        np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-10)
    number = F.gaussian_nll_loss(mt.tensor(MEAN), mt.tensor(TARGET), 0.5, reduction="none")
    np.testing.assert_allclose(
        number.numpy(), TF.gaussian_nll_loss(torch.tensor(MEAN), torch.tensor(TARGET), 0.5, reduction="none"), atol=1e-6
    )


def test_layers_as_pytorch():
    for ours, theirs in (
        (nn.PoissonNLLLoss(), torch.nn.PoissonNLLLoss()),
        (nn.PoissonNLLLoss(False, True, eps=1e-4), torch.nn.PoissonNLLLoss(False, True, eps=1e-4)),
        (nn.GaussianNLLLoss(full=True, eps=1e-3), torch.nn.GaussianNLLLoss(full=True, eps=1e-3)),
    ):
        assert repr(ours) == repr(theirs) and list(ours.state_dict()) == []
        for attribute in ("log_input", "full", "eps", "reduction"):
            assert getattr(ours, attribute, None) == getattr(theirs, attribute, None)
    loss = nn.PoissonNLLLoss(log_input=False)(mt.tensor(RATE), mt.tensor(COUNTS))
    assert loss.item() == pytest.approx(TF.poisson_nll_loss(torch.tensor(RATE), torch.tensor(COUNTS), False).item())
    loss = nn.GaussianNLLLoss()(mt.tensor(MEAN), mt.tensor(TARGET), mt.tensor(VAR))
    assert loss.item() == pytest.approx(TF.gaussian_nll_loss(*map(torch.tensor, (MEAN, TARGET, VAR))).item())


def test_bad_arguments_raise_naming_them():
    x = mt.tensor(MEAN)
    with pytest.raises(ValueError, match="gaussian_nll_loss: var has negative entries"):
        F.gaussian_nll_loss(x, x, mt.tensor(-VAR))
    with pytest.raises(ValueError, match="gaussian_nll_loss: var must be non-negative, got -1.0"):
        F.gaussian_nll_loss(x, x, -1.0)
    with pytest.raises(ValueError, match=r"gaussian_nll_loss: var must have the input's shape \(3, 4\)"):
        F.gaussian_nll_loss(x, x, mt.ones(4, 3))
    with pytest.raises(TypeError, match="poisson_nll_loss: log_input must be a bool"):
        F.poisson_nll_loss(x, x, log_input="yes")
    with pytest.raises(ValueError, match="poisson_nll_loss: the shapes input"):
        F.poisson_nll_loss(x, mt.ones(2))
    with pytest.raises(ValueError, match="GaussianNLLLoss: reduction must be one of"):
        nn.GaussianNLLLoss(reduction="batchmean")


def test_docstring_examples_run():
    result = doctest.testmod(likelihood_loss, extraglobs={"mt": mt, "F": F}, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0

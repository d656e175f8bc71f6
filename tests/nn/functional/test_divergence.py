"""nn/functional/divergence.py (ops/divergence.py): ``kl_div`` / ``KLDivLoss`` against PyTorch (value, gradient,
second derivative) for every reduction and ``log_target``, and a zero target probability."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import torch_functional
from op_checks import check_op

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

rng = np.random.default_rng(3)
LOGITS = rng.standard_normal((4, 3)) * 3
TARGET = rng.random((4, 3))


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")  # PyTorch's warning about 'mean'
@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    target = np.log(TARGET) if log_target else TARGET
    log_p = LOGITS - np.log(np.exp(LOGITS).sum(1, keepdims=True))

    def t_fn(x, t):
        return torch_functional().kl_div(x, t, reduction=reduction, log_target=log_target)

    check_op(lambda x, t: F.kl_div(x, t, reduction=reduction, log_target=log_target), t_fn, log_p, target)
    check_op(lambda x, t: nn.KLDivLoss(reduction=reduction, log_target=log_target)(x, t), t_fn, log_p, target)


def test_kl_div_zero_target_probability_contributes_zero():
    torch = pytest.importorskip("torch")
    target = np.array([[0.0, 0.3, 0.7]])
    x = mt.tensor(LOGITS[:1], dtype=mt.float64, requires_grad=True)
    tx = torch.tensor(LOGITS[:1], requires_grad=True)
    loss = F.kl_div(x, mt.tensor(target, dtype=mt.float64), reduction="sum")
    t_loss = torch.nn.functional.kl_div(tx, torch.tensor(target), reduction="sum")
    assert loss.item() == pytest.approx(t_loss.item(), rel=1e-12)
    loss.backward()
    t_loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())

"""nn/functional/binary_loss.py (ops/binary_loss.py): binary_cross_entropy / BCELoss and
binary_cross_entropy_with_logits / BCEWithLogitsLoss against PyTorch (value, gradient, second
derivative), large logits, the clamped log, the fused node against its plain form, and error cases."""

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


def _t(a):
    return pytest.importorskip("torch").tensor(a)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(reduction, weighted):
    p = 1 / (1 + np.exp(-LOGITS / 3))  # away from 0 and 1, where the second derivative is ill-conditioned
    w = rng.random(3) + 0.5 if weighted else None
    mt_w = None if w is None else mt.tensor(w, dtype=mt.float64)

    def t_fn(x, t):
        return torch_functional().binary_cross_entropy(x, t, weight=None if w is None else _t(w), reduction=reduction)

    check_op(lambda x, t: F.binary_cross_entropy(x, t, weight=mt_w, reduction=reduction), t_fn, p, TARGET)
    check_op(lambda x, t: nn.BCELoss(mt_w, reduction=reduction)(x, t), t_fn, p, TARGET)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted,pos_weighted", [(False, False), (True, False), (False, True), (True, True)])
def test_binary_cross_entropy_with_logits(reduction, weighted, pos_weighted):
    w = rng.random((4, 1)) + 0.5 if weighted else None
    pw = rng.random(3) * 3 if pos_weighted else None
    mt_w = None if w is None else mt.tensor(w, dtype=mt.float64)
    mt_pw = None if pw is None else mt.tensor(pw, dtype=mt.float64)

    def t_fn(x, t):
        return torch_functional().binary_cross_entropy_with_logits(
            x, t, weight=None if w is None else _t(w), reduction=reduction, pos_weight=None if pw is None else _t(pw)
        )

    def m_fn(x, t):
        return F.binary_cross_entropy_with_logits(x, t, weight=mt_w, reduction=reduction, pos_weight=mt_pw)

    check_op(m_fn, t_fn, LOGITS, TARGET)
    check_op(lambda x, t: nn.BCEWithLogitsLoss(mt_w, reduction=reduction, pos_weight=mt_pw)(x, t), t_fn, LOGITS, TARGET)


def test_bce_with_logits_is_stable_for_large_logits():
    x = mt.tensor([-1000.0, 1000.0], requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(x, mt.tensor([1.0, 0.0]), reduction="sum")
    assert loss.item() == pytest.approx(2000.0)
    loss.backward()
    assert x.grad.tolist() == [-1.0, 1.0]


def test_bce_clamps_log_at_minus_100():
    loss = F.binary_cross_entropy(mt.tensor([0.0, 1.0]), mt.tensor([1.0, 0.0]), reduction="none")
    assert loss.tolist() == [100.0, 100.0]


def test_loss_errors():
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.binary_cross_entropy(mt.tensor([1.5]), mt.tensor([1.0]))
    with pytest.raises(ValueError, match="target size"):
        F.binary_cross_entropy_with_logits(mt.ones(2, 3), mt.ones(3))
    with pytest.raises(ValueError, match="reduction must be one of"):
        F.kl_div(mt.ones(2), mt.ones(2), reduction="avg")
    with pytest.raises(ValueError, match="reduction must be one of"):
        nn.BCEWithLogitsLoss(reduction="batchmean")
    with pytest.raises(TypeError, match="input must be a Tensor"):
        F.binary_cross_entropy([0.5], mt.ones(1))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_fused_binary_cross_entropy_equals_its_plain_form(reduction) -> None:
    """ops/binary_loss.py: the one-node BCE (NumPy backward) gives the plain Tensor-op form's value
    and gradients for p, target and weight, also at p = 0 and p = 1 (clamped logs)."""
    from minitensor.ops.binary_loss import BinaryCrossEntropy, bce_plain

    rng = np.random.default_rng(5)
    p0 = rng.uniform(0.01, 0.99, (4, 5))
    p0[0, :2], p0[1, :2] = 0.0, 1.0
    t0, w0, g0 = rng.random((4, 5)), rng.random(5), rng.standard_normal((4, 5))
    results = []
    for fused in (True, False):
        p, t, w = (mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in (p0, t0, w0))
        out = BinaryCrossEntropy.apply(p, t, w, reduction=reduction) if fused else bce_plain(p, t, w, reduction)
        out.backward(mt.tensor(g0 if reduction == "none" else 0.7, dtype=mt.float64))
        results.append([out.numpy(), p.grad.numpy(), t.grad.numpy(), w.grad.numpy()])
    for fused, plain in zip(*results):
        np.testing.assert_allclose(fused, plain, rtol=1e-12, atol=1e-12)


def test_fused_binary_cross_entropy_second_order() -> None:
    """Its create_graph gradients come from the plain form: gradgradcheck on p, target and weight."""
    from minitensor.autograd import gradgradcheck

    rng = np.random.default_rng(6)
    p = mt.tensor(rng.uniform(0.1, 0.9, (3, 4)), dtype=mt.float64, requires_grad=True)
    t = mt.tensor(rng.random((3, 4)), dtype=mt.float64, requires_grad=True)
    w = mt.tensor(rng.random(4), dtype=mt.float64, requires_grad=True)
    weights = mt.tensor(rng.standard_normal((3, 4)), dtype=mt.float64)
    assert gradgradcheck(lambda a, b, c: F.binary_cross_entropy(a, b, c, reduction="none") * weights, (p, t, w))

"""CTC loss (ops/ctc.py, F.ctc_loss, nn.CTCLoss): the alpha recursion against a brute-force sum over all
alignments, values and gradients against PyTorch (padded and concatenated targets, uneven lengths,
unbatched input, every reduction, zero_infinity, float32), gradcheck and second order through
log_softmax, and bad arguments."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from op_checks import check_jvp

import minitensor as mt
import minitensor.func as func
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def brute_force_nll(lp: np.ndarray, target: list, blank: int = 0) -> float:
    """-log of the summed probability of every path (T labels) that collapses to ``target``."""
    t_max, classes = lp.shape
    total = 0.0
    for path in itertools.product(range(classes), repeat=t_max):
        collapsed = [c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1])]
        if collapsed == list(target):
            total += np.exp(sum(lp[t, c] for t, c in enumerate(path)))
    return -np.log(total) if total > 0 else np.inf


def log_probs(shape: tuple, seed: int = 0) -> np.ndarray:
    logits = np.random.default_rng(seed).standard_normal(shape)
    return logits - np.log(np.exp(logits).sum(-1, keepdims=True))


@pytest.mark.parametrize("target", [[1], [1, 2], [2, 2], [1, 1, 1], [], [3, 1, 3]], ids=str)
def test_the_recursion_sums_every_alignment(target):
    lp = log_probs((5, 1, 4), seed=len(target))
    ours = F.ctc_loss(mt.tensor(lp, dtype=mt.float64), mt.tensor([target], dtype=mt.int64).reshape(1, -1), [5],
                      [len(target)], reduction="none")  # fmt: skip
    np.testing.assert_allclose(ours.numpy(), [brute_force_nll(lp[:, 0], target)], rtol=1e-12)


def test_an_impossible_target_is_inf_with_zero_gradient_and_zero_infinity_zeroes_it():
    lp = mt.tensor(log_probs((3, 2, 4)), dtype=mt.float64, requires_grad=True)
    targets = mt.tensor([[1, 1, 1], [1, 2, 0]])  # 1 1 1 needs 5 steps (blanks between repeats); 1 2 needs 2
    loss = F.ctc_loss(lp, targets, [3, 3], [3, 2], reduction="none")
    assert np.isinf(loss[0].item()) and np.isfinite(loss[1].item())
    (g,) = mt.autograd.grad(loss[1] * 1.0 + loss[0] * 0.0, lp)
    assert np.all(g.numpy()[:, 0] == 0) and np.all(np.isfinite(g.numpy()))
    zeroed = F.ctc_loss(lp, targets, [3, 3], [3, 2], reduction="none", zero_infinity=True)
    tzeroed = TF.ctc_loss(torch.tensor(lp.numpy()), torch.tensor(targets.numpy()), (3, 3), (3, 2),
                          reduction="none", zero_infinity=True)  # fmt: skip
    np.testing.assert_allclose(zeroed.detach().numpy(), tzeroed.numpy(), rtol=1e-12)


CASES = {
    "padded": dict(T=7, N=3, C=5, targets=[[1, 2, 2], [3, 1, 0], [4, 4, 4]], il=[7, 6, 7], tl=[3, 2, 1]),
    "concatenated": dict(T=6, N=2, C=4, targets=[1, 2, 3, 3, 1], il=[6, 5], tl=[3, 2]),
    "empty targets": dict(T=4, N=2, C=3, targets=[[1, 2], [0, 0]], il=[4, 2], tl=[2, 0]),
    "blank 2": dict(T=6, N=2, C=4, targets=[[0, 1, 3], [3, 3, 0]], il=[6, 6], tl=[3, 2], blank=2),
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_value_and_gradient_equal_pytorch(case, reduction):
    c = CASES[case]
    lp = log_probs((c["T"], c["N"], c["C"]), seed=1)
    args = (c["targets"], c["il"], c["tl"], c.get("blank", 0), reduction)
    x = mt.tensor(lp, dtype=mt.float64, requires_grad=True)
    tx = torch.tensor(lp, requires_grad=True)
    loss = F.ctc_loss(x, mt.tensor(c["targets"]), c["il"], c["tl"], *args[3:])
    tloss = TF.ctc_loss(tx, torch.tensor(c["targets"]), torch.tensor(c["il"]), torch.tensor(c["tl"]), *args[3:])
    np.testing.assert_allclose(loss.detach().numpy(), tloss.detach().numpy(), rtol=1e-12)
    w = np.random.default_rng(2).standard_normal(tloss.shape)
    (g,) = mt.autograd.grad((loss * mt.tensor(w, dtype=mt.float64)).sum(), x, retain_graph=True)  # (with exp(lp))
    (tg,) = torch.autograd.grad((tloss * torch.tensor(w)).sum(), tx)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-10, atol=1e-12)
    (again,) = mt.autograd.grad((loss * mt.tensor(w, dtype=mt.float64)).sum(), x, create_graph=True)
    np.testing.assert_allclose(again.detach().numpy(), g.numpy(), rtol=1e-10, atol=1e-12)  # the Tensor-op path


def test_unbatched_and_float32_as_pytorch():
    lp = log_probs((6, 4), seed=3)
    ours = F.ctc_loss(mt.tensor(lp, dtype=mt.float64), mt.tensor([1, 3]), mt.tensor(6), mt.tensor(2), reduction="none")
    theirs = TF.ctc_loss(torch.tensor(lp), torch.tensor([1, 3]), torch.tensor(6), torch.tensor(2), reduction="none")
    assert ours.shape == () and ours.item() == pytest.approx(theirs.item(), rel=1e-12)
    x32 = mt.tensor(log_probs((6, 2, 4)).astype(np.float32), requires_grad=True)
    loss = F.ctc_loss(x32, mt.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2])
    assert loss.dtype == mt.float32
    loss.backward()
    assert x32.grad.dtype == mt.float32
    tx = torch.tensor(x32.detach().numpy(), requires_grad=True)
    TF.ctc_loss(tx, torch.tensor([[1, 2], [3, 3]]), (6, 5), (2, 2)).backward()
    np.testing.assert_allclose(x32.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_gradcheck_and_second_order_through_log_softmax():
    """Behind log_softmax PyTorch's extra exp(lp) term cancels: the gradient is the exact one."""
    logits = mt.tensor(np.random.default_rng(4).standard_normal((5, 2, 4)), dtype=mt.float64, requires_grad=True)

    def loss(z):
        return F.ctc_loss(z.log_softmax(2), mt.tensor([[1, 2], [3, 3]]), [5, 4], [2, 2], reduction="none")

    assert gradcheck(loss, [logits])
    assert gradgradcheck(loss, [logits])


def test_jvp_through_log_softmax_against_differences():
    """PyTorch has no forward AD for ctc_loss: ours against central differences (through log_softmax,
    where the gradient is the exact one)."""
    logits = np.random.default_rng(6).standard_normal((5, 3, 4))

    def loss(z):
        return F.ctc_loss(z.log_softmax(2), mt.tensor([[1, 2], [3, 3], [1, 1]]), [5, 4, 3], [2, 2, 2], reduction="none")

    check_jvp(loss, None, logits, pytorch_jvp=False)


def test_forward_and_reverse_mode_give_the_same_jacobian_and_hessian():
    """On raw log-probabilities the JVP is the transpose of PyTorch's gradient (jacfwd == jacrev); the
    Hessian by forward-over-reverse (the JVP on Tensors) equals reverse-over-reverse."""
    lp = mt.tensor(log_probs((4, 2, 3), seed=8), dtype=mt.float64)

    def loss(x):
        return F.ctc_loss(x, mt.tensor([[1, 2], [2, 2]]), [4, 4], [2, 1], reduction="none")

    np.testing.assert_allclose(func.jacfwd(loss)(lp).numpy(), func.jacrev(loss)(lp).numpy(), rtol=1e-10)
    logits = mt.tensor(np.random.default_rng(9).standard_normal((3, 1, 3)), dtype=mt.float64)

    def total(z):
        return F.ctc_loss(z.log_softmax(2), mt.tensor([[1, 2]]), [3], [2], reduction="sum")

    np.testing.assert_allclose(
        func.hessian(total)(logits).numpy(), func.jacrev(func.jacrev(total))(logits).numpy(), atol=1e-12
    )


def test_layer_as_pytorch():
    for args in ((), (2, "sum", True)):
        ours, theirs = nn.CTCLoss(*args), torch.nn.CTCLoss(*args)
        assert repr(ours) == repr(theirs) and list(ours.state_dict()) == []
        for attribute in ("blank", "reduction", "zero_infinity"):
            assert getattr(ours, attribute) == getattr(theirs, attribute)
    lp = log_probs((6, 2, 4), seed=5)
    value = nn.CTCLoss(blank=3)(mt.tensor(lp), mt.tensor([[1, 2], [0, 0]]), [6, 6], [2, 1])
    expected = torch.nn.CTCLoss(blank=3)(torch.tensor(lp), torch.tensor([[1, 2], [0, 0]]), (6, 6), (2, 1))
    assert value.item() == pytest.approx(expected.item(), rel=1e-6)


def test_bad_arguments_raise_naming_them():
    lp = mt.tensor(log_probs((4, 2, 3)))
    t = mt.tensor([[1, 2], [2, 1]])
    with pytest.raises(ValueError, match=r"ctc_loss: blank must be a class index in \[0, 2\], got 3"):
        F.ctc_loss(lp, t, [4, 4], [2, 2], blank=3)
    with pytest.raises(ValueError, match=r"ctc_loss: input_lengths must be in \[0, 4\]"):
        F.ctc_loss(lp, t, [5, 4], [2, 2])
    with pytest.raises(ValueError, match=r"ctc_loss: targets hold class index 3, outside \[0, 2\]"):
        F.ctc_loss(lp, mt.tensor([[1, 3], [2, 1]]), [4, 4], [2, 2])
    with pytest.raises(ValueError, match=r"ctc_loss: target_lengths must hold one length per sample \(2\)"):
        F.ctc_loss(lp, t, [4, 4], [2])
    with pytest.raises(ValueError, match="ctc_loss: target_lengths .* exceed the targets' length 2"):
        F.ctc_loss(lp, t, [4, 4], [3, 2])
    with pytest.raises(ValueError, match=r"ctc_loss: targets must be \(N, S\) padded or 1-D holding"):
        F.ctc_loss(lp, mt.tensor([1, 2, 1]), [4, 4], [2, 2])
    with pytest.raises(ValueError, match=r"ctc_loss: log_probs must be \(T, N, C\)"):
        F.ctc_loss(mt.ones(4), t, [4, 4], [2, 2])
    with pytest.raises(TypeError, match="ctc_loss: input_lengths must hold integers"):
        F.ctc_loss(lp, t, [4.5, 4], [2, 2])

"""kernels/bce.py (``F.binary_cross_entropy``): the kernels equal their NumPy references (float32
and float64, p at 0 and 1 and where the log is clamped at -100, NaN, weights, both reductions'
gradient forms), and the op matches PyTorch in float32 away from the clamp."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import jitted, reference

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck
from minitensor.kernels import bce

TOL = {np.float32: dict(rtol=1e-6, atol=1e-6), np.float64: dict(rtol=1e-13, atol=1e-13)}


def probabilities(dtype, n: int = 2500) -> tuple:
    rng = np.random.default_rng(0)
    p = np.concatenate([rng.random(n), [0.0, 1.0, 1e-45, 1e-44, 1 - 1e-8, np.nan, 0.5]]).astype(dtype)
    t = np.concatenate([rng.random(n), [1.0, 0.0, 1.0, 0.5, 0.0, 0.5, 0.3]]).astype(dtype)
    return p, t, (rng.random(p.size) + 0.5).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
def test_bce_kernels_equal_references(dtype, weighted) -> None:
    p, t, w = probabilities(dtype)
    w = w if weighted else None
    lp, lq = bce.logs(p)
    for per_element in (False, True):
        got = jitted(lambda pe=per_element: bce.bce(lp, lq, t, w, pe))
        expected = reference(lambda pe=per_element: bce.bce(lp, lq, t, w, pe))
        np.testing.assert_allclose(got, expected, equal_nan=True, **TOL[dtype])
    loss = jitted(lambda: bce.bce(lp, lq, t, None, True))
    assert loss[-7:-3].tolist() == pytest.approx([100.0, 100.0, 100.0, 50.0], rel=1e-6)  # clamped logs
    assert np.isnan(loss[-2])
    grads = np.random.default_rng(1).standard_normal(p.shape).astype(dtype)
    for grad in (np.asarray(0.5, dtype), grads):
        got = jitted(lambda g=grad: bce.bce_backward(p, t, w, lp, lq, g, (True, True, True)))
        expected = reference(lambda g=grad: bce.bce_backward(p, t, w, lp, lq, g, (True, True, True)))
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, equal_nan=True, **TOL[dtype])
    only_p = jitted(lambda: bce.bce_backward(p, t, w, lp, lq, np.asarray(1.0, dtype), (True, False, False)))
    assert only_p[1] is None and only_p[2] is None


def test_bce_gradient_is_zero_where_the_log_is_clamped() -> None:
    p = np.array([0.0, 1.0, 1e-45], np.float32)
    t = np.array([1.0, 0.0, 1.0], np.float32)
    lp, lq = bce.logs(p)
    dp, dt, _ = jitted(lambda: bce.bce_backward(p, t, None, lp, lq, np.asarray(1.0, np.float32), (True, True, False)))
    assert dp.tolist() == [0.0, 0.0, 0.0]
    assert dt.tolist() == [100.0, -100.0, pytest.approx(100.0)]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_op_matches_pytorch_in_float32(reduction) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    p = rng.uniform(0.02, 0.98, (33, 41)).astype(np.float32)
    t = rng.random((33, 41)).astype(np.float32)
    w = (rng.random(41) + 0.5).astype(np.float32)
    for weight in (None, w):
        mp, mt_t = mt.tensor(p, requires_grad=True), mt.tensor(t, requires_grad=True)
        tp, tt = torch.tensor(p, requires_grad=True), torch.tensor(t, requires_grad=True)
        mw, tw = (None, None) if weight is None else (mt.tensor(weight), torch.tensor(weight))
        out = F.binary_cross_entropy(mp, mt_t, weight=mw, reduction=reduction)
        tout = torch.nn.functional.binary_cross_entropy(tp, tt, weight=tw, reduction=reduction)
        g = rng.standard_normal(out.shape).astype(np.float32)
        out.backward(mt.tensor(g) if out.ndim else None)
        tout.backward(torch.tensor(g) if tout.ndim else None)
        np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(mp.grad.numpy(), tp.grad.numpy(), rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(mt_t.grad.numpy(), tt.grad.numpy(), rtol=2e-5, atol=1e-6)


def test_bce_weight_gradient_and_broadcasting_on_the_jit_path() -> None:
    rng = np.random.default_rng(3)
    p = mt.tensor(rng.uniform(0.1, 0.9, (3, 4)), dtype=mt.float64, requires_grad=True)
    t = mt.tensor(rng.random((3, 4)), dtype=mt.float64, requires_grad=True)
    w = mt.tensor(rng.random((2, 1, 4)) + 0.5, dtype=mt.float64, requires_grad=True)  # broadcasts p up
    assert jitted(lambda: gradcheck(lambda a, b, c: F.binary_cross_entropy(a, b, weight=c, reduction="sum"), [p, t, w]))
    loss = F.binary_cross_entropy(p, t, weight=w, reduction="none")
    assert loss.shape == (2, 3, 4)


@pytest.mark.filterwarnings("error")
def test_losses_of_empty_inputs_are_nan_without_warnings() -> None:
    """The mean of nothing is NaN (as PyTorch), and the backward gives empty gradients, silently."""
    for loss in (
        lambda x: F.binary_cross_entropy(x.sigmoid(), mt.zeros(0, 2)),
        lambda x: F.binary_cross_entropy_with_logits(x, mt.zeros(0, 2)),
        lambda x: F.kl_div(x, mt.zeros(0, 2), reduction="batchmean"),
    ):
        x = mt.zeros(0, 2, requires_grad=True)
        out = loss(x)
        assert np.isnan(out.item())
        out.backward()
        assert x.grad.shape == (0, 2)

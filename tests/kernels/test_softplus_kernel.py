"""kernels/softplus.py: the softplus and BCE-with-logits kernels equal their NumPy references
(float32 and float64, odd sizes, ±inf and NaN, beta and threshold, weight and pos_weight), and the
ops on them match PyTorch, also where its formulas meet inf or NaN."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import both_paths, jitted

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck
from minitensor.kernels import softplus

TOL = {np.float32: dict(rtol=1e-6, atol=1e-7), np.float64: dict(rtol=1e-14, atol=1e-15)}
SPECIAL = [0.0, -0.0, 19.9, 20.1, -30.0, 88.0, -104.0, -750.0, np.inf, -np.inf, np.nan]


def logits(dtype, n: int = 1001) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.concatenate([rng.standard_normal(n) * 8, SPECIAL]).astype(dtype)


def assert_close(a, b, dtype, scale=None) -> None:
    """Equal to ``TOL``; with ``scale`` (the size of the terms that were added up, per element) also
    up to a few roundings of it: a loss of terms that cancel is exact only to their size."""
    if a is None or b is None:
        assert a is None and b is None
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and (a.ndim == 0 or a.dtype == dtype)
    if scale is not None:
        with np.errstate(invalid="ignore"):  # (inf - inf)
            close = np.abs(a - b) <= TOL[dtype]["rtol"] * np.abs(b) + 4 * np.finfo(dtype).eps * scale
        assert np.all(close | (a == b) | (np.isnan(a) & np.isnan(b)))
        return
    np.testing.assert_allclose(a, b, equal_nan=True, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("beta,threshold", [(1.0, 20.0), (2.0, 1.0), (0.5, 3.0), (-1.5, 20.0)])
def test_softplus_equals_reference(dtype, beta, threshold) -> None:
    x = logits(dtype)
    for keep in (False, True):
        kernel, ref = both_paths(lambda k=keep: softplus.softplus(x, beta, threshold, keep_slope=k))
        for a, b in zip(kernel, ref):
            assert_close(a, b, dtype)
    y, slope = jitted(lambda: softplus.softplus(x, 1.0, 20.0, keep_slope=True))
    assert y[-3] == np.inf and y[-2] == 0 and np.isnan(y[-1])  # inf, -inf, NaN
    assert slope[-3] == 1 and slope[-2] == 0 and np.isnan(slope[-1])
    assert y[SPECIAL.index(20.1) - len(SPECIAL)] == dtype(20.1)  # above the threshold: x itself


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted,pos_weighted", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("per_element", [False, True])
def test_bce_logits_equals_reference(dtype, weighted, pos_weighted, per_element) -> None:
    rng = np.random.default_rng(1)
    x = logits(dtype, 2500)  # (more than one piece of the kernel's loop)
    t = rng.random(x.shape).astype(dtype)
    w = (rng.random(x.shape) + 0.5).astype(dtype) if weighted else None
    pw = (rng.random(x.shape) * 3).astype(dtype) if pos_weighted else None
    forward = both_paths(lambda: softplus.bce_logits(x, t, w, pw, per_element, keep=(True, True)))
    with np.errstate(invalid="ignore"):
        size = (np.abs(x) + 1) * (1 if pw is None else pw + 1) * (1 if w is None else w)  # of each loss's terms
    for a, b, scale in zip(*forward, (size if per_element else np.sum(size), None, None)):
        assert_close(a, b, dtype, scale)
    _, s, sp = forward[1]
    for grad in (np.asarray(0.25, dtype), rng.standard_normal(x.shape).astype(dtype)):
        backward = both_paths(lambda g=grad: softplus.bce_logits_backward(x, t, w, pw, s, sp, g, (True, True)))
        for a, b in zip(*backward):
            assert_close(a, b, dtype, size * np.abs(grad))
    only_x = jitted(lambda: softplus.bce_logits_backward(x, t, w, pw, s, None, np.asarray(1.0, dtype), (True, False)))
    assert only_x[1] is None and only_x[0].shape == x.shape


def test_bce_logits_sum_is_accurate_for_many_elements() -> None:
    """The float32 losses are summed in float64 (vectorised by pieces)."""
    rng = np.random.default_rng(2)
    x, t = rng.standard_normal(100_003).astype(np.float32), rng.random(100_003).astype(np.float32)
    total = jitted(lambda: softplus.bce_logits(x, t, None, None, False, keep=(False, False))[0])
    x64, t64 = x.astype(np.float64), t.astype(np.float64)
    exact = np.sum((1 - t64) * x64 + np.logaddexp(0, -x64))
    assert abs(total - exact) <= 1e-6 * exact


def test_softplus_matches_pytorch_at_special_values() -> None:
    torch = pytest.importorskip("torch")
    values = [-0.0, 0.0, float("nan"), -1.0, 2.0, 25.0, -200.0, float("inf"), float("-inf")]
    for beta, threshold in ((1.0, 20.0), (2.0, 1.0)):
        x, tx = mt.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
        y, ty = F.softplus(x, beta, threshold), torch.nn.functional.softplus(tx, beta, threshold)
        y.backward(mt.ones(len(values)))
        ty.backward(torch.ones(len(values)))
        np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_softplus_above_float32_exp_range_stays_finite() -> None:
    """With a threshold above 88, PyTorch's log1p(exp(z)) overflows to inf (and its gradient to NaN);
    the stable form gives z and slope 1 there."""
    x = mt.tensor([95.0, -80.0], requires_grad=True)
    y = F.softplus(x, threshold=100.0)
    y.sum().backward()
    np.testing.assert_allclose(y.numpy(), [95.0, np.exp(-80.0)], rtol=1e-6)
    assert x.grad.tolist() == [1.0, pytest.approx(np.exp(-80.0), rel=1e-6)]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_matches_pytorch_in_float32(reduction) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x, t = (rng.standard_normal((37, 29)) * 5).astype(np.float32), rng.random((37, 29)).astype(np.float32)
    w, pw = (rng.random((37, 1)) + 0.5).astype(np.float32), (rng.random(29) * 3).astype(np.float32)
    for weight, pos_weight in ((None, None), (w, None), (None, pw), (w, pw)):
        xs = [mt.tensor(a, requires_grad=True) for a in (x, t)]
        txs = [torch.tensor(a, requires_grad=True) for a in (x, t)]
        mw, mpw = (None if a is None else mt.tensor(a) for a in (weight, pos_weight))
        tw, tpw = (None if a is None else torch.tensor(a) for a in (weight, pos_weight))
        out = F.binary_cross_entropy_with_logits(*xs, weight=mw, reduction=reduction, pos_weight=mpw)
        tF = torch.nn.functional
        tout = tF.binary_cross_entropy_with_logits(*txs, weight=tw, reduction=reduction, pos_weight=tpw)
        g = rng.standard_normal(out.shape).astype(np.float32)
        out.backward(mt.tensor(g) if out.ndim else None)
        tout.backward(torch.tensor(g) if tout.ndim else None)
        np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=2e-5, atol=1e-6)
        for a, b in zip(xs, txs):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=2e-5, atol=1e-6)


def test_bce_with_logits_weights_needing_a_gradient_take_the_tensor_form() -> None:
    """A weight or pos_weight that requires grad, or broadcasts beyond the input, gets its gradient
    from the Tensor-op form (PyTorch gives none); the fused op gives the same loss and input gradient."""
    rng = np.random.default_rng(4)
    x = mt.tensor(rng.standard_normal((3, 4)), dtype=mt.float64, requires_grad=True)
    t = mt.tensor(rng.random((3, 4)), dtype=mt.float64)
    w = mt.tensor(rng.random((3, 1)) + 0.5, dtype=mt.float64, requires_grad=True)
    pw = mt.tensor(rng.random(4) * 2, dtype=mt.float64, requires_grad=True)
    assert gradcheck(lambda a, b, c: F.binary_cross_entropy_with_logits(a, t, weight=b, pos_weight=c), [x, w, pw])
    loss = F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw)
    fused = F.binary_cross_entropy_with_logits(x, t, weight=w.detach(), pos_weight=pw.detach())
    assert type(fused.grad_fn).__name__ == "BinaryCrossEntropyWithLogitsBackward"
    assert type(loss.grad_fn).__name__ != "BinaryCrossEntropyWithLogitsBackward"
    np.testing.assert_allclose(loss.item(), fused.item(), rtol=1e-14)
    wide = mt.tensor(rng.random((2, 3, 4)), dtype=mt.float64)  # broadcasts x up to (2, 3, 4)
    assert F.binary_cross_entropy_with_logits(x, t, weight=wide, reduction="none").shape == (2, 3, 4)

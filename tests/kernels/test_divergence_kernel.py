"""kernels/divergence.py and ``F.kl_div``: the kernel equals its NumPy reference (float32 and float64,
both target forms, zero, negative and NaN targets, infinite inputs), and the op matches PyTorch's
values and gradients, with the target's gradient at t = 0 finite (-x) where PyTorch's is NaN."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from kernel_paths import jitted, reference

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck
from minitensor.kernels import divergence


def pairs(dtype, log_target: bool) -> tuple:
    rng = np.random.default_rng(0)
    x = np.log(rng.dirichlet(np.ones(7), 301)).reshape(-1)
    t = rng.dirichlet(np.ones(7), 301).reshape(-1)
    t[:20:2] = 0.0  # zero probabilities
    x = np.concatenate([x, [-np.inf, -np.inf, 1.0, np.nan, 0.5]])
    t = np.concatenate([t, [0.0, 0.3, -0.1, 0.2, np.nan]])  # (0 * -inf, a negative and a NaN target)
    if log_target:
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.log(t)
    return x.astype(dtype), t.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("per_element", [False, True])
def test_kl_div_kernel_equals_reference(dtype, log_target, per_element) -> None:
    x, t = pairs(dtype, log_target)
    n = 7 * 301
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = jitted(lambda: divergence.kl_div(x[:n], t[:n], log_target, per_element))
        expected = reference(lambda: divergence.kl_div(x[:n], t[:n], log_target, per_element))
        special = jitted(lambda: divergence.kl_div(x[n:], t[n:], log_target, True))[0]
    tol = dict(rtol=1e-6, atol=1e-7) if dtype == np.float32 else dict(rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(got[0], expected[0], **tol)
    np.testing.assert_array_equal(got[1], expected[1])
    if not log_target:  # PyTorch's xlogy(t, t) - t x: 0 * -inf is NaN, a negative or NaN target NaN
        assert np.isnan(special).tolist() == [True, False, True, True, True]
        assert got[0].dtype == dtype if per_element else isinstance(got[0], float)


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")
@pytest.mark.parametrize("reduction", ["none", "mean", "sum", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_matches_pytorch_in_float32(reduction, log_target) -> None:
    torch = pytest.importorskip("torch")
    x, t = pairs(np.float32, log_target)
    x, t = x[: 7 * 301].reshape(301, 7), t[: 7 * 301].reshape(301, 7)
    mx, mt_t = mt.tensor(x, requires_grad=True), mt.tensor(t, requires_grad=True)
    tx, tt = torch.tensor(x, requires_grad=True), torch.tensor(t, requires_grad=True)
    out = F.kl_div(mx, mt_t, reduction=reduction, log_target=log_target)
    tout = torch.nn.functional.kl_div(tx, tt, reduction=reduction, log_target=log_target)
    g = np.random.default_rng(1).standard_normal(out.shape).astype(np.float32)
    out.backward(mt.tensor(g) if out.ndim else None)
    tout.backward(torch.tensor(g) if tout.ndim else None)
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    zero = t == 0 if not log_target else np.isneginf(t)
    tgrad = tt.grad.numpy()
    if not log_target:  # PyTorch: NaN at t = 0 (0/0 in xlogy's derivative); here the finite -x
        assert np.isnan(tgrad[zero]).all()
        scale = g if out.ndim else 1 / _scale(reduction, x)
        np.testing.assert_allclose(mt_t.grad.numpy()[zero], (-x * scale)[zero], rtol=1e-6)
    np.testing.assert_allclose(mt_t.grad.numpy()[~zero], tgrad[~zero], rtol=2e-5, atol=1e-6)


def _scale(reduction: str, x: np.ndarray) -> float:
    return {"sum": 1, "mean": x.size, "batchmean": x.shape[0]}[reduction]


def test_kl_div_gradcheck_on_the_jit_path_and_broadcast_targets() -> None:
    rng = np.random.default_rng(2)
    x = mt.tensor(np.log(rng.dirichlet(np.ones(5), 3)), dtype=mt.float64, requires_grad=True)
    t = mt.tensor(rng.dirichlet(np.ones(5), 3), dtype=mt.float64, requires_grad=True)
    weights = mt.tensor(rng.standard_normal((3, 5)), dtype=mt.float64)
    for log_target in (False, True):
        target = (t.log() if log_target else t).detach().requires_grad_()

        def weighted(a, b, lt=log_target):
            return (F.kl_div(a, b, reduction="none", log_target=lt) * weights).sum()

        def batchmean(a, b=target, lt=log_target):
            return F.kl_div(a, b, reduction="batchmean", log_target=lt)

        assert gradcheck(weighted, [x, target])
        assert gradcheck(batchmean, [x])
    row = mt.tensor(rng.dirichlet(np.ones(5)), dtype=mt.float64)  # broadcasts against x: the Tensor-op form
    loss = F.kl_div(x, row, reduction="sum")
    expected = (row.numpy() * (np.log(row.numpy()) - x.numpy())).sum()
    np.testing.assert_allclose(loss.item(), expected, rtol=1e-12)

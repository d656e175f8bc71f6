"""Normalisation by statistics (``ops/batch_norm.py``, ``nn/functional/batch_norm.py`` and
``group_norm.py``): batch norm in training and evaluation, instance norm, group norm, local
response norm.  float64 gradchecks of first and second order and PyTorch as the oracle
(``check_op``), the running statistics against PyTorch's (unbiased variance, momentum), and the
fused op against its definition in Tensor ops."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_same_numbers, assert_trees_close
from op_checks import check_op

import minitensor as mt
import minitensor.func as func
import minitensor.nn.functional as F
from minitensor.ops.batch_norm import batch_norm_definition

torch = pytest.importorskip("torch")
tF = torch.nn.functional

rng = np.random.default_rng(5)
X = rng.standard_normal((2, 2, 2, 2)) * 2 + 1  # (N, C, H, W)
W, B = rng.standard_normal(2), rng.standard_normal(2)
MEAN, VAR = rng.standard_normal(2), rng.uniform(0.5, 2.0, 2)


@pytest.mark.parametrize("shape", [(2, 2, 1, 3), (3, 2), (2, 2, 3)], ids=str)
def test_batch_norm_training(shape) -> None:
    x = rng.standard_normal(shape) * 2 + 1
    check_op(
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        lambda x, w, b: tF.batch_norm(x, None, None, w, b, training=True),
        x,
        W,
        B,
    )
    check_op(
        lambda x: F.batch_norm(x, None, None, training=True), lambda x: tF.batch_norm(x, None, None, training=True), x
    )


def test_batch_norm_evaluation() -> None:
    mean, var = mt.tensor(MEAN, dtype=mt.float64), mt.tensor(VAR, dtype=mt.float64)
    tmean, tvar = torch.tensor(MEAN), torch.tensor(VAR)
    check_op(
        lambda x, w, b: F.batch_norm(x, mean, var, w, b, training=False, eps=1e-3),
        lambda x, w, b: tF.batch_norm(x, tmean, tvar, w, b, training=False, eps=1e-3),
        X,
        W,
        B,
    )


@pytest.mark.parametrize("training", [True, False])
def test_forward_over_forward(training) -> None:
    """jacfwd of jacfwd (the JVP rule's Tensor form: the tangent of a tangent) equals jacrev of jacrev
    (the backward formulas) for x, weight and bias, and PyTorch's Hessian in x.  (PyTorch 2.13's
    jacfwd/jacrev of a training batch_norm whose weight is differentiated too disagree with its own
    finite differences in the x-x block, so PyTorch is asked with weight and bias held constant.)"""
    x, weights = X[:, :, :1], rng.standard_normal(X[:, :, :1].shape)  # (2, 2, 1, 2)
    stats = (None, None) if training else (MEAN, VAR)

    def loss(lib, F, *constants):
        running = [None if s is None else lib.tensor(s, dtype=lib.float64) for s in stats]
        scale = lib.tensor(weights, dtype=lib.float64)
        return lambda x, *wb: (F.batch_norm(x, *running, *(wb or constants), training) * scale).sum()

    args, inputs = (0, 1, 2), [mt.tensor(a, dtype=mt.float64) for a in (x, W, B)]
    forward = func.jacfwd(func.jacfwd(loss(mt, F), argnums=args), argnums=args)(*inputs)
    assert_trees_close(forward, func.jacrev(func.jacrev(loss(mt, F), argnums=args), argnums=args)(*inputs))
    theirs = torch.func.hessian(loss(torch, tF, torch.tensor(W), torch.tensor(B)))(torch.tensor(x))
    assert_trees_close(forward[0][0], theirs, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("momentum", [0.1, 0.7])
def test_running_statistics_as_pytorch(dtype, momentum) -> None:
    """running = (1 - momentum) * running + momentum * batch, with the unbiased batch variance."""
    ours = [mt.tensor(MEAN, dtype=dtype), mt.tensor(VAR, dtype=dtype)]
    theirs = [torch.tensor(MEAN.astype(dtype)), torch.tensor(VAR.astype(dtype))]
    for step in range(3):
        x = (rng.standard_normal((4, 2, 3)) * (step + 1) + step).astype(dtype)
        y = F.batch_norm(mt.tensor(x, dtype=dtype), *ours, training=True, momentum=momentum)
        ty = tF.batch_norm(torch.tensor(x), *theirs, training=True, momentum=momentum)
        tol = {"rtol": 1e-12} if dtype == "float64" else {"rtol": 2e-6, "atol": 1e-6}
        np.testing.assert_allclose(y.numpy(), ty.numpy(), **tol)
        for a, b in zip(ours, theirs):
            assert a.dtype == np.dtype(dtype)
            np.testing.assert_allclose(a.numpy(), b.numpy(), **tol)


def test_fused_op_equals_its_definition(jit_path) -> None:
    xs = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in (X, W, B)]
    g = mt.tensor(rng.standard_normal(X.shape), dtype=mt.float64)
    fused = F.batch_norm(xs[0], None, None, xs[1], xs[2], training=True)
    plain = batch_norm_definition(*xs)
    assert_same_numbers(fused.numpy(), plain.numpy())
    for a, b in zip(mt.autograd.grad(fused, xs, g), mt.autograd.grad(plain, xs, g)):
        assert_same_numbers(a.numpy(), b.numpy())


def test_float32_batch_norm_close_to_pytorch() -> None:
    x = (rng.standard_normal((8, 3, 6, 6)) * 3 + 5).astype(np.float32)
    xm, xt = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ym, yt = F.batch_norm(xm, None, None, training=True), tF.batch_norm(xt, None, None, training=True)
    g = rng.standard_normal(x.shape).astype(np.float32)
    ym.backward(mt.tensor(g))
    yt.backward(torch.tensor(g))
    assert ym.dtype == mt.float32 and xm.grad.dtype == mt.float32
    np.testing.assert_allclose(ym.numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_instance_norm() -> None:
    ours, theirs = (
        (lambda x, w, b: F.instance_norm(x, weight=w, bias=b)),
        (lambda x, w, b: tF.instance_norm(x, weight=w, bias=b)),
    )
    check_op(ours, theirs, X, W, B)
    ours = [mt.tensor(MEAN, dtype=mt.float64), mt.tensor(VAR, dtype=mt.float64)]
    theirs = [torch.tensor(MEAN), torch.tensor(VAR)]
    y, ty = F.instance_norm(mt.tensor(X, dtype=mt.float64), *ours), tF.instance_norm(torch.tensor(X), *theirs)
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-12)
    for a, b in zip(ours, theirs):  # the mean over the batch of each sample's update
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    mean, var = mt.tensor(MEAN, dtype=mt.float64), mt.tensor(VAR, dtype=mt.float64)
    check_op(
        lambda x: F.instance_norm(x, mean, var, use_input_stats=False),
        lambda x: tF.instance_norm(x, torch.tensor(MEAN), torch.tensor(VAR), use_input_stats=False),
        X,
    )


@pytest.mark.parametrize(("shape", "groups"), [((2, 4, 2), 2), ((2, 6, 2, 3), 3), ((3, 4), 1), ((1, 4, 3), 4)], ids=str)
def test_group_norm(shape, groups) -> None:
    x = rng.standard_normal(shape) * 2 + rng.standard_normal((shape[0],) + (1,) * (len(shape) - 1)) * 3
    w, b = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
    check_op(lambda x, w, b: F.group_norm(x, groups, w, b), lambda x, w, b: tF.group_norm(x, groups, w, b), x, w, b)
    check_op(lambda x: F.group_norm(x, groups), lambda x: tF.group_norm(x, groups), x)


def test_group_norm_op_equals_its_definition() -> None:
    from minitensor.ops.group_norm import GroupNorm, group_norm_definition

    x = mt.tensor(rng.standard_normal((3, 4, 5)) * 3 + 1, dtype=mt.float64, requires_grad=True)
    w = mt.tensor(rng.standard_normal(4), dtype=mt.float64, requires_grad=True)
    b = mt.tensor(rng.standard_normal(4), dtype=mt.float64, requires_grad=True)
    g = mt.tensor(rng.standard_normal((3, 4, 5)), dtype=mt.float64)
    fused = GroupNorm.apply(x, w, b, groups=2, eps=1e-5)
    defined = group_norm_definition(x, w, b, groups=2, eps=1e-5)
    assert_trees_close(fused, defined, rtol=1e-12, atol=1e-12)
    assert_trees_close(
        mt.autograd.grad(fused, (x, w, b), g), mt.autograd.grad(defined, (x, w, b), g), rtol=1e-11, atol=1e-12
    )


@pytest.mark.parametrize("shape", [(2, 5, 3), (1, 4, 2, 2)], ids=str)
def test_local_response_norm(shape) -> None:
    x = rng.standard_normal(shape)
    check_op(
        lambda x: F.local_response_norm(x, 3, alpha=0.5, k=2.0),
        lambda x: tF.local_response_norm(x, 3, alpha=0.5, k=2.0),
        x,
    )

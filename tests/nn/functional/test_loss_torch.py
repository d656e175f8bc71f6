"""nn/functional/loss.py against PyTorch: cross_entropy, nll_loss, mse_loss (and their modules) and
their gradients, for every option (the checks without PyTorch: test_loss.py)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# (input shape, class count C): batched (N, C), higher-dim (N, C, d1[, d2]) and unbatched (C,)
SHAPES = [(6, 5), (3, 4, 5), (2, 3, 2, 2), (5,)]
REDUCTIONS = ["mean", "sum", "none"]


def _target_shape(shape):
    return shape[:1] + shape[2:] if len(shape) > 1 else ()


def _class_axis(shape):
    return 1 if len(shape) > 1 else 0


def _data(shape, seed, ignore_index=None, dtype=np.float64):
    """Logits, class-index targets (some set to ignore_index), class weights, upstream weighting."""
    rng = np.random.default_rng(seed)
    n_classes = shape[_class_axis(shape)]
    x = rng.normal(scale=2.0, size=shape).astype(dtype)
    target = rng.integers(0, n_classes, size=_target_shape(shape))
    if ignore_index is not None and target.ndim:
        target.reshape(-1)[::3] = ignore_index
    weight = rng.uniform(0.2, 2.0, size=n_classes).astype(dtype)
    return x, target, weight, rng


def _compare(ours_fn, theirs_fn, x, extra_inputs=(), rtol=1e-10, atol=1e-12):
    """Same loss values and same gradients (for a random weighting of a non-scalar loss)."""
    a = mt.tensor(x, dtype=x.dtype, requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    extra_a = [mt.tensor(e, dtype=e.dtype, requires_grad=True) for e in extra_inputs]
    extra_b = [torch.tensor(e, requires_grad=True) for e in extra_inputs]
    out, tout = ours_fn(a, *extra_a), theirs_fn(b, *extra_b)
    assert out.dtype == x.dtype
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=rtol, atol=atol)
    g = np.random.default_rng(99).normal(size=tout.shape).astype(x.dtype)
    out.backward(mt.tensor(g, dtype=x.dtype))
    tout.backward(torch.tensor(g))
    assert a.grad.dtype == x.dtype
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol)
    for e, te in zip(extra_a, extra_b):
        np.testing.assert_allclose(e.grad.numpy(), te.grad.numpy(), rtol=rtol, atol=atol)


CE_CASES = list(itertools.product(SHAPES, REDUCTIONS, [False, True], [0.0, 0.25], [None, -100, 1]))


@pytest.mark.parametrize("shape, reduction, weighted, smoothing, ignore_index", CE_CASES)
def test_cross_entropy_with_class_indices(shape, reduction, weighted, smoothing, ignore_index):
    x, target, weight, _ = _data(shape, seed=len(shape), ignore_index=ignore_index)
    if shape == (5,) and ignore_index is not None:
        # one sample: ignored or not (an ignored one under 'mean' is 0 here, NaN in torch: see test_loss.py)
        target = np.array(ignore_index if ignore_index == 1 and reduction != "mean" else 2)
    options = dict(
        reduction=reduction, label_smoothing=smoothing, ignore_index=-100 if ignore_index is None else ignore_index
    )
    _compare(
        lambda a: F.cross_entropy(
            a, mt.tensor(target), weight=mt.tensor(weight, dtype=x.dtype) if weighted else None, **options
        ),
        lambda b: TF.cross_entropy(
            b, torch.tensor(target), weight=torch.tensor(weight) if weighted else None, **options
        ),
        x,
    )


@pytest.mark.parametrize(
    "shape, reduction, weighted, smoothing",
    list(itertools.product([(4, 3), (2, 3, 4), (3,)], REDUCTIONS, [False, True], [0.0, 0.3])),
)
def test_cross_entropy_with_class_probabilities(shape, reduction, weighted, smoothing):
    x, _, weight, rng = _data(shape, seed=7)
    probs = rng.dirichlet(np.ones(shape[_class_axis(shape)]), size=_target_shape(shape))
    probs = np.moveaxis(probs, -1, _class_axis(shape))
    options = dict(reduction=reduction, label_smoothing=smoothing)
    _compare(
        lambda a, t: F.cross_entropy(a, t, weight=mt.tensor(weight, dtype=x.dtype) if weighted else None, **options),
        lambda b, t: TF.cross_entropy(b, t, weight=torch.tensor(weight) if weighted else None, **options),
        x,
        extra_inputs=[probs],
    )


@pytest.mark.parametrize(
    "shape, reduction, weighted, ignore_index", list(itertools.product(SHAPES, REDUCTIONS, [False, True], [-100, 2]))
)
def test_nll_loss(shape, reduction, weighted, ignore_index):
    x, target, weight, _ = _data(shape, seed=3, ignore_index=ignore_index)
    logp = x - np.log(np.exp(x).sum(axis=_class_axis(shape), keepdims=True))
    options = dict(reduction=reduction, ignore_index=ignore_index)
    _compare(
        lambda a: F.nll_loss(
            a, mt.tensor(target), weight=mt.tensor(weight, dtype=x.dtype) if weighted else None, **options
        ),
        lambda b: TF.nll_loss(b, torch.tensor(target), weight=torch.tensor(weight) if weighted else None, **options),
        logp,
    )


@pytest.mark.parametrize("shape, reduction", list(itertools.product([(7,), (3, 4), (2, 3, 4), ()], REDUCTIONS)))
def test_mse_loss(shape, reduction):
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=shape), rng.normal(size=shape)
    _compare(
        lambda a, t: F.mse_loss(a, t, reduction=reduction),
        lambda b, t: TF.mse_loss(b, t, reduction=reduction),
        x,
        extra_inputs=[y],
    )


def test_mse_loss_broadcasts_with_a_warning_like_torch():
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=(4, 1)), rng.normal(size=(4,))
    with pytest.warns(UserWarning, match="shape"):
        ours = F.mse_loss(mt.tensor(x, dtype=mt.float64), mt.tensor(y, dtype=mt.float64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = TF.mse_loss(torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-12)


@pytest.mark.parametrize("shape", [(8, 10), (2, 6, 3)])
def test_float32_cross_entropy_matches_torch_float32(shape):
    x, target, weight, _ = _data(shape, seed=11, ignore_index=-100, dtype=np.float32)
    options = dict(label_smoothing=0.1, ignore_index=-100)
    _compare(
        lambda a: F.cross_entropy(a, mt.tensor(target), weight=mt.tensor(weight, dtype=x.dtype), **options),
        lambda b: TF.cross_entropy(b, torch.tensor(target), weight=torch.tensor(weight), **options),
        x,
        rtol=1e-5,
        atol=1e-6,
    )


def test_extreme_and_masked_logits_match_torch():
    x = np.array([[1e4, -1e4, 0.0, 3.0], [-np.inf, 2.0, -np.inf, -1e4], [5.0, -np.inf, 1e4, -1e4]])
    target = np.array([1, 1, 2])
    _compare(lambda a: F.cross_entropy(a, mt.tensor(target)), lambda b: TF.cross_entropy(b, torch.tensor(target)), x)


def test_modules_match_torch_modules():
    x, target, weight, _ = _data((6, 5), seed=12, ignore_index=3)
    pairs = [
        (
            nn.CrossEntropyLoss(mt.tensor(weight, dtype=mt.float64), ignore_index=3, label_smoothing=0.2),
            torch.nn.CrossEntropyLoss(torch.tensor(weight), ignore_index=3, label_smoothing=0.2),
        ),
        (nn.NLLLoss(reduction="sum", ignore_index=3), torch.nn.NLLLoss(reduction="sum", ignore_index=3)),
    ]
    for ours, theirs in pairs:
        _compare(lambda a, f=ours: f(a, mt.tensor(target)), lambda b, f=theirs: f(b, torch.tensor(target)), x)
        assert list(ours.state_dict()) == list(theirs.state_dict())
    y = np.random.default_rng(1).normal(size=x.shape)
    _compare(
        lambda a: nn.MSELoss(reduction="none")(a, mt.tensor(y, dtype=mt.float64)),
        lambda b: torch.nn.MSELoss(reduction="none")(b, torch.tensor(y)),
        x,
    )
    assert repr(nn.CrossEntropyLoss()) == repr(torch.nn.CrossEntropyLoss())

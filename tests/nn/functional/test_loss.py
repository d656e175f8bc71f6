"""nn/functional/loss.py (ops/loss.py): cross_entropy, nll_loss, mse_loss without an oracle: float64
gradchecks, extreme and masked logits, ignored targets, dtypes, argument checks (against PyTorch:
test_loss_torch.py; the modules: tests/nn/test_loss.py)."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck


def _leaf(array) -> mt.Tensor:
    return mt.tensor(array, dtype=mt.float64, requires_grad=True)


def _ce_inputs(shape, seed=0):
    rng = np.random.default_rng(seed)
    c_axis = 1 if len(shape) > 1 else 0
    x = rng.normal(scale=1.5, size=shape)
    target_shape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    target = rng.integers(0, shape[c_axis], size=target_shape)
    return x, target, rng.uniform(0.3, 2.0, size=shape[c_axis]), rng


# ---------------------------------------------------------------- gradchecks
@pytest.mark.parametrize(
    "shape, options",
    [
        ((4, 5), dict()),
        ((4, 5), dict(reduction="none")),
        ((4, 5), dict(reduction="sum", label_smoothing=0.2)),
        ((3, 4, 2), dict(weighted=True, ignore=True)),
        ((3, 4, 2), dict(reduction="none", weighted=True, label_smoothing=0.3, ignore=True)),
        ((2, 3, 2, 2), dict(weighted=True, label_smoothing=0.1)),
        ((5,), dict(label_smoothing=0.5)),
        ((5,), dict(reduction="none", weighted=True)),
    ],
)
def test_cross_entropy_gradcheck(shape, options):
    options = dict(options)
    x, target, weight, _ = _ce_inputs(shape)
    if options.pop("ignore", False):
        target.reshape(-1)[::2] = -100
    if options.pop("weighted", False):
        options["weight"] = mt.tensor(weight, dtype=mt.float64)
    assert gradcheck(lambda a: F.cross_entropy(a, mt.tensor(target), **options), [_leaf(x)])


@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 2)])
def test_cross_entropy_with_probabilities_gradcheck_for_input_and_target(shape, reduction):
    x, _, weight, rng = _ce_inputs(shape, seed=1)
    probs = rng.uniform(0.1, 1.0, size=shape)
    weight = mt.tensor(weight, dtype=mt.float64)

    def fn(a, t):
        return F.cross_entropy(a, t, weight=weight, reduction=reduction, label_smoothing=0.2)

    assert gradcheck(fn, [_leaf(x), _leaf(probs)])


@pytest.mark.parametrize("options", [dict(), dict(reduction="none"), dict(reduction="sum", weighted=True)])
def test_nll_loss_gradcheck(options):
    options = dict(options)
    x, target, weight, _ = _ce_inputs((3, 4, 2), seed=2)
    target[0, 0] = -100
    if options.pop("weighted", False):
        options["weight"] = mt.tensor(weight, dtype=mt.float64)
    assert gradcheck(lambda a: F.nll_loss(a, mt.tensor(target), **options), [_leaf(x)])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_gradcheck_for_input_and_target(reduction):
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    assert gradcheck(lambda a, b: F.mse_loss(a, b, reduction=reduction), [_leaf(x), _leaf(y)])


def test_cross_entropy_after_a_linear_layer_and_a_reused_input():
    """A composite graph: the loss of a Linear layer, with the input used twice."""
    mt.manual_seed(0)
    layer = nn.Linear(4, 3, dtype=mt.float64)
    x, target = _leaf(np.random.default_rng(4).normal(size=(5, 4))), mt.tensor([0, 2, 1, 1, 0])

    def fn(inp, weight, bias):
        logits = F.linear(inp, weight, bias) + inp[:, :3] * 0.5
        return F.cross_entropy(logits, target, label_smoothing=0.1)

    assert gradcheck(fn, [x, layer.weight, layer.bias])


def test_nll_of_log_softmax_equals_cross_entropy():
    x, target, weight, _ = _ce_inputs((6, 4), seed=5)
    a, b = _leaf(x), _leaf(x)
    ce = F.cross_entropy(a, mt.tensor(target), weight=mt.tensor(weight, dtype=mt.float64))
    nll = F.nll_loss(F.log_softmax(b, dim=1), mt.tensor(target), weight=mt.tensor(weight, dtype=mt.float64))
    ce.backward()
    nll.backward()
    np.testing.assert_allclose(ce.item(), nll.item(), rtol=1e-12)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_cross_entropy_gradient_is_softmax_minus_onehot_over_n():
    x, target, _, _ = _ce_inputs((4, 3), seed=6)
    a = _leaf(x)
    F.cross_entropy(a, mt.tensor(target)).backward()
    softmax = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(a.grad.numpy(), (softmax - np.eye(3)[target]) / 4, rtol=1e-12, atol=1e-15)


# ------------------------------------------------------- extreme values, dtypes
@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_extreme_logits_give_finite_exact_losses(dtype, smoothing):
    x = np.array([[1e4, -1e4, 0.0], [-1e4, 1e4, 1e4], [3.0, -1e4, -1e4]])
    target = np.array([1, 0, 0])
    a = mt.tensor(x, dtype=dtype, requires_grad=True)
    loss = F.cross_entropy(a, mt.tensor(target), reduction="none", label_smoothing=smoothing)
    lse = np.array([1e4, 1e4 + np.log(2.0), 3.0])  # exact to float64 precision here
    logp = x - lse[:, None]
    want = (1 - smoothing) * -logp[np.arange(3), target] - smoothing / 3 * logp.sum(axis=1)
    np.testing.assert_allclose(loss.numpy(), want, rtol=1e-6)
    loss.sum().backward()
    assert np.all(np.isfinite(a.grad.numpy())) and a.grad.dtype == dtype


def test_masked_logits_are_ignored_and_get_zero_gradient():
    x = np.array([[2.0, -np.inf, 0.5, -np.inf], [-np.inf, 1.0, -np.inf, 3.0]])
    target = np.array([2, 3])
    a = _leaf(x)
    loss = F.cross_entropy(a, mt.tensor(target))
    loss.backward()
    kept = F.cross_entropy(mt.tensor([[2.0, 0.5], [1.0, 3.0]], dtype=mt.float64), mt.tensor([1, 1]))
    np.testing.assert_allclose(loss.item(), kept.item(), rtol=1e-12)
    grad = a.grad.numpy()
    assert np.all(np.isfinite(grad)) and np.all(grad[np.isinf(x)] == 0)


def test_an_ignored_row_of_only_masked_logits_gives_no_nan():
    x = np.array([[1.0, 2.0, 0.0], [-np.inf, -np.inf, -np.inf]])
    a = _leaf(x)
    loss = F.cross_entropy(a, mt.tensor([1, -100]), label_smoothing=0.1)
    loss.backward()
    want = F.cross_entropy(mt.tensor(x[:1], dtype=mt.float64), mt.tensor([1]), label_smoothing=0.1)
    np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-12)
    assert np.all(np.isfinite(a.grad.numpy())) and np.all(a.grad.numpy()[1] == 0)


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_mean_with_every_target_ignored_is_zero_not_nan(loss):
    a = _leaf(np.random.default_rng(7).normal(size=(3, 4)))
    out = getattr(F, loss)(a, mt.tensor([-100, -100, -100]))
    out.backward()
    assert out.item() == 0.0 and not np.any(a.grad.numpy())


@pytest.mark.parametrize(
    "fn",
    [
        lambda a: F.cross_entropy(
            a, mt.tensor([0, 2, -100]), weight=mt.tensor([1.0, 2.0, 0.5, 1.0]), label_smoothing=0.1
        ),
        lambda a: F.cross_entropy(a, mt.tensor(np.full((3, 4), 0.25), dtype=mt.float32)),
        lambda a: F.nll_loss(a, mt.tensor([0, 2, 1]), reduction="none"),
        lambda a: F.mse_loss(a, mt.zeros(3, 4)),
    ],
)
def test_float32_stays_float32(fn):
    a = mt.tensor(np.random.default_rng(8).normal(size=(3, 4)), dtype=mt.float32, requires_grad=True)
    out = fn(a)
    out.sum().backward()
    assert out.dtype == mt.float32 and a.grad.dtype == mt.float32


# ------------------------------------------------------------ argument checks
X = mt.zeros(3, 4)
T = mt.tensor([0, 1, 2])


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: F.cross_entropy(X.numpy().tolist(), T), TypeError, "input must be a Tensor or a NumPy array"),
        (lambda: F.cross_entropy(mt.tensor([1, 2]), T), TypeError, "float"),
        (lambda: F.cross_entropy(mt.zeros(()), T), ValueError, "0-d"),
        (lambda: F.cross_entropy(X, T, reduction="avg"), ValueError, "reduction.*'avg'"),
        (lambda: F.cross_entropy(X, T, label_smoothing=1.5), ValueError, "label_smoothing.*1.5"),
        (lambda: F.cross_entropy(X, T, label_smoothing=-0.1), ValueError, "label_smoothing.*-0.1"),
        (lambda: F.cross_entropy(X, mt.tensor([0, 1])), ValueError, r"target.*\(3,\).*\(2,\)"),
        (lambda: F.cross_entropy(X, mt.tensor([[0, 1, 2]])), ValueError, "target"),
        (lambda: F.cross_entropy(X, mt.tensor([0, 4, 1])), ValueError, "target.*class index 4"),
        (lambda: F.cross_entropy(X, mt.tensor([0, -1, 1])), ValueError, "target.*class index -1"),
        (lambda: F.cross_entropy(X, mt.tensor([0, -1, 1]), ignore_index=-2), ValueError, "-1.*ignore_index=-2"),
        (lambda: F.cross_entropy(X, mt.tensor([True, False, True])), TypeError, "target.*bool"),
        (lambda: F.cross_entropy(X, mt.tensor([0.0, 1.0, 2.0])), ValueError, "probability.*shape"),
        (lambda: F.cross_entropy(X, T, weight=mt.ones(3)), ValueError, r"weight.*\(4,\).*\(3,\)"),
        (lambda: F.cross_entropy(X, T, ignore_index=None), TypeError, "ignore_index"),
        (lambda: F.cross_entropy(X, mt.zeros(3, 4, dtype=mt.float64)), TypeError, "target dtype float64"),
        (lambda: F.nll_loss(X, mt.tensor([0, 1, 9])), ValueError, "nll_loss.*class index 9"),
        (lambda: F.nll_loss(X, mt.tensor([0.0, 1.0, 2.0])), TypeError, "nll_loss.*int64"),
        (lambda: F.nll_loss(X, T, reduction="mena"), ValueError, "reduction"),
        (lambda: F.mse_loss(X, mt.zeros(3, 5)), ValueError, r"mse_loss.*\(3, 5\).*\(3, 4\)"),
        (lambda: F.mse_loss(X, mt.zeros(3, 4, dtype=mt.float64)), TypeError, "mse_loss.*float64"),
        (lambda: F.mse_loss(X, X, reduction="max"), ValueError, "reduction"),
        (lambda: nn.CrossEntropyLoss(reduction="avg"), ValueError, "CrossEntropyLoss.*reduction"),
        (lambda: nn.MSELoss(reduction="avg"), ValueError, "MSELoss.*reduction"),
    ],
)
def test_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_targets_may_be_numpy_arrays_and_mse_targets_numbers():
    x, target, _, _ = _ce_inputs((4, 3), seed=9)
    a = mt.tensor(x)
    assert F.cross_entropy(a, target).item() == F.cross_entropy(a, mt.tensor(target)).item()
    assert F.mse_loss(a, 0.0).item() == pytest.approx(float(np.mean(np.float32(x) ** 2)), rel=1e-6)

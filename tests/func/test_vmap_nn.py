"""vmap through the nn activations' batching rules (ops/activations.py, ops/smooth_activations.py):
each op runs once on the whole batch (its rule, not the per-example loop), and the result equals
PyTorch's ``torch.func.vmap`` and a Python loop over the examples stacked."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.func as func
import minitensor.nn.functional as F
from minitensor.autograd import batching

# name: (ours, PyTorch's), functions of one example
ELEMENTWISE = {
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda tf, x: tf.leaky_relu(x, 0.2)),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 2.0), lambda tf, x: tf.hardtanh(x, -0.5, 2.0)),
    "relu6": (F.relu6, lambda tf, x: tf.relu6(x)),
    "hardsigmoid": (F.hardsigmoid, lambda tf, x: tf.hardsigmoid(x)),
    "hardswish": (F.hardswish, lambda tf, x: tf.hardswish(x)),
    "threshold": (lambda x: F.threshold(x, 0.1, -2.0), lambda tf, x: tf.threshold(x, 0.1, -2.0)),
    "softshrink": (F.softshrink, lambda tf, x: tf.softshrink(x)),
    "hardshrink": (F.hardshrink, lambda tf, x: tf.hardshrink(x)),
    "elu": (lambda x: F.elu(x, 0.5), lambda tf, x: tf.elu(x, 0.5)),
    "selu": (F.selu, lambda tf, x: tf.selu(x)),
    "celu": (lambda x: F.celu(x, 2.0), lambda tf, x: tf.celu(x, 2.0)),
    "mish": (F.mish, lambda tf, x: tf.mish(x)),
    "logsigmoid": (F.logsigmoid, lambda tf, x: tf.logsigmoid(x)),
    "softsign": (F.softsign, lambda tf, x: tf.softsign(x)),
    "tanhshrink": (F.tanhshrink, lambda tf, x: tf.tanhshrink(x)),
}


@pytest.fixture
def no_loop(monkeypatch):
    """Fail if any op falls back to vmap's per-example loop (an op without a batching rule)."""

    def fail(b):
        raise AssertionError(f"{b.op.__name__} ran vmap's per-example loop: no batching rule")

    monkeypatch.setattr(batching, "loop", fail)


def _compare(ours, theirs, in_dims, *arrays, torch) -> None:
    """vmap(ours) against torch.func.vmap(theirs) and against a loop over the examples of ``arrays``."""
    got = func.vmap(ours, in_dims=in_dims)(*[mt.tensor(a, dtype=mt.float64) for a in arrays]).numpy()
    expected = torch.func.vmap(theirs, in_dims=in_dims)(*[torch.tensor(a) for a in arrays]).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
    size = next(np.shape(a)[d] for a, d in zip(arrays, in_dims) if d is not None)
    with mt.no_grad():
        examples = [
            ours(
                *[
                    mt.tensor(a if d is None else np.take(a, k, axis=d), dtype=mt.float64)
                    for a, d in zip(arrays, in_dims)
                ]
            )
            for k in range(size)
        ]
    np.testing.assert_allclose(got, mt.stack(examples).numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_activations_batch_as_pytorch(name, no_loop, torch):
    ours, theirs = ELEMENTWISE[name]
    x = np.random.default_rng(0).uniform(-5, 5, (4, 3, 2))
    _compare(ours, lambda t: theirs(torch.nn.functional, t), (0,), x, torch=torch)
    _compare(ours, lambda t: theirs(torch.nn.functional, t), (2,), x, torch=torch)  # (the batch dim last)


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")  # (PyTorch's prelu)
def test_prelu_batches_inputs_through_shared_or_per_example_slopes(no_loop, torch):
    rng = np.random.default_rng(1)
    x, w, ws = rng.standard_normal((4, 2, 3, 5)), rng.uniform(0.1, 0.5, 3), rng.uniform(0.1, 0.5, (4, 3))
    _compare(F.prelu, torch.nn.functional.prelu, (0, None), x, w, torch=torch)  # one layer, a batch of inputs
    _compare(F.prelu, torch.nn.functional.prelu, (0, 0), x, ws, torch=torch)  # each example its own slopes
    _compare(F.prelu, torch.nn.functional.prelu, (None, 0), x[0], ws, torch=torch)  # an ensemble of layers


def test_gradients_per_example_through_a_rule(no_loop, torch):
    """vmap(grad(f)): per-example gradients run each activation's backward on the whole batch."""
    x = np.random.default_rng(2).uniform(-4, 4, (6, 5))

    def loss(v):
        return F.mish(F.hardswish(v)).sum()

    got = func.vmap(func.grad(loss))(mt.tensor(x, dtype=mt.float64)).numpy()
    tf = torch.nn.functional
    expected = torch.func.vmap(torch.func.grad(lambda v: tf.mish(tf.hardswish(v)).sum()))(torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_rrelu_in_training_follows_vmaps_randomness(no_loop):
    """'same': one draw of slopes for every example; 'different': each its own; 'error' refuses (as PyTorch)."""
    x = mt.tensor(-np.random.default_rng(3).uniform(0.5, 2.0, (3, 50)))  # (all negative: every slope drawn)

    def rrelu(v):
        return F.rrelu(v, 0.1, 0.3, training=True)

    same = (func.vmap(rrelu, randomness="same")(x) / x).numpy()
    np.testing.assert_allclose(same, np.broadcast_to(same[0], same.shape), rtol=1e-6)
    assert same.min() >= 0.1 and same.max() <= 0.3 and same[0].std() > 0.03
    different = (func.vmap(rrelu, randomness="different")(x) / x).numpy()
    assert different.min() >= 0.1 and different.max() <= 0.3 and not np.allclose(different[0], different[1])
    with pytest.raises(RuntimeError, match="vmap: called random operation while in randomness error mode"):
        func.vmap(rrelu)(x)


@pytest.mark.parametrize("dim", [0, -1])
def test_glu_batches_by_its_dim_rule(dim, no_loop, torch):
    x = np.random.default_rng(5).uniform(-3, 3, (4, 4, 6))
    ours = lambda t: F.glu(t, dim)  # noqa: E731
    theirs = lambda t: torch.nn.functional.glu(t, dim)  # noqa: E731
    _compare(ours, theirs, (0,), x, torch=torch)
    _compare(ours, theirs, (2,), x, torch=torch)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multi_class_margin_losses_batch_as_a_loop(reduction, no_loop):
    """multi_margin_loss and multilabel_margin_loss (ops/margin_loss.py): the examples' rows in one
    call, then each example's reduction; per-example gradients likewise."""
    rng = np.random.default_rng(4)
    x = mt.tensor(rng.standard_normal((3, 4, 5)), dtype=mt.float64)  # 3 examples of (4, 5) scores
    labels = np.full((3, 4, 5), -1)
    labels[..., :2] = np.argsort(rng.random((3, 4, 5)), axis=-1)[..., :2]  # two classes per row, then -1
    cases = [
        (lambda v, t: F.multi_margin_loss(v, t, p=2, reduction=reduction), mt.tensor(rng.integers(0, 5, (3, 4)))),
        (lambda v, t: F.multilabel_margin_loss(v, t, reduction=reduction), mt.tensor(labels)),
    ]
    for loss, target in cases:
        got = func.vmap(loss)(x, target).numpy()
        np.testing.assert_allclose(got, np.stack([loss(x[k], target[k]).numpy() for k in range(3)]), rtol=1e-12)
        if reduction != "none":
            grads = func.vmap(func.grad(loss))(x, target).numpy()
            for k in range(3):
                xk = x[k].detach().requires_grad_()
                loss(xk, target[k]).backward()
                np.testing.assert_allclose(grads[k], xk.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_class_index_loss_in_nested_vmap_with_targets_of_the_outer_level(weighted, no_loop):
    """cross_entropy and nll_loss (mean) inside two vmaps, the targets batched at the outer level only:
    each outer example's mean divides by its own counted weights (0 where all its targets are ignored)."""
    rng = np.random.default_rng(5)
    x = mt.tensor(rng.standard_normal((4, 5, 2, 3)), dtype=mt.float64)  # 4 outer examples of 5 inner ones
    y = mt.tensor(np.array([[0, -100], [1, 2], [2, 2], [-100, -100]]))
    weight = mt.tensor([0.5, 1.0, 2.0], dtype=mt.float64) if weighted else None
    for loss in (F.cross_entropy, lambda v, t, weight: F.nll_loss(v.log_softmax(-1), t, weight=weight)):

        def outer(xo, yo, loss=loss):  # (one example of the outer level: the inner vmap over its rows)
            return func.vmap(lambda xi: loss(xi, yo, weight=weight))(xo)

        got = func.vmap(outer)(x, y).numpy()
        expected = [[loss(x[i, j], y[i], weight=weight).item() for j in range(5)] for i in range(4)]
        np.testing.assert_allclose(got, expected, rtol=1e-12)

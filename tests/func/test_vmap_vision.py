"""vmap of the vision ops (pooling, interpolation, padding modes, batch norm): each case's
``vmap(f)`` equals ``f`` run example by example and stacked, and ``torch.func.vmap`` of the same
function; the ops' batching rules run (the per-example fallback, ``batching.loop``, is not called).  Then per-example
gradients through pooling and batch norm (``vmap(grad(f))``) against a loop, and batch norm in
training inside vmap: per-example statistics, running statistics refused as PyTorch refuses them."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_trees_close

import minitensor as mt
import minitensor.func as func
from minitensor.autograd import batching

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 2, 2, 4, 5))  # 3 examples, each a batch (N=2, C=2, 4, 5)
W, B = RNG.standard_normal(2), RNG.standard_normal(2)
MEAN, VAR = RNG.standard_normal(2), RNG.uniform(0.5, 2.0, 2)


def _on(lib, array):
    return lib.tensor(array, dtype=lib.float64)


# name: (f(lib, x) for one example, the batch of examples)
CASES = {
    "max_pool2d": (lambda lib, x: lib.nn.functional.max_pool2d(x, 2, stride=1, padding=1), X),
    "max_pool2d_unbatched_examples": (lambda lib, x: lib.nn.functional.max_pool2d(x, (2, 3)), X[:, 0]),
    "max_pool2d_indices": (lambda lib, x: lib.nn.functional.max_pool2d(x, 3, 2, 1, return_indices=True), X),
    "max_unpool2d": (
        lambda lib, x: lib.nn.functional.max_unpool2d(
            *lib.nn.functional.max_pool2d(x, 2, return_indices=True), 2, output_size=x.shape[-2:]
        ),
        X,
    ),
    "adaptive_max_pool1d": (lambda lib, x: lib.nn.functional.adaptive_max_pool1d(x, 3), X[:, 0, 0]),
    "avg_pool2d": (lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, stride=2, padding=1), X),
    "adaptive_avg_pool2d": (lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, (2, 3)), X),
    "interpolate_bilinear": (
        lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
        X,
    ),
    "interpolate_nearest": (lambda lib, x: lib.nn.functional.interpolate(x, size=(5, 7)), X),
    "pad_reflect": (lambda lib, x: lib.nn.functional.pad(x, (2, 1, 1, 2), mode="reflect"), X),
    "batch_norm_evaluation": (
        lambda lib, x: lib.nn.functional.batch_norm(x, _on(lib, MEAN), _on(lib, VAR), _on(lib, W), _on(lib, B)),
        X,
    ),
}


def _loop(f, xs):
    """f example by example, the results stacked (a tuple of outputs: each stacked)."""
    outs = [f(mt, _on(mt, x)) for x in xs]
    if isinstance(outs[0], tuple):
        return tuple(mt.stack([o[i] for o in outs]) for i in range(len(outs[0])))
    return mt.stack(outs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_matches_a_loop_and_pytorch(name, monkeypatch) -> None:
    f, xs = CASES[name]

    def no_fallback(b):
        raise AssertionError(f"{b.op.__name__} ran example by example (no batching rule)")

    with monkeypatch.context() as patch:
        patch.setattr(batching, "loop", no_fallback)
        ours = func.vmap(lambda x: f(mt, x))(_on(mt, xs))
    assert_trees_close(ours, _loop(f, xs))
    torch = pytest.importorskip("torch")
    assert_trees_close(ours, torch.func.vmap(lambda x: f(torch, x))(torch.tensor(xs)), rtol=1e-12, atol=1e-12)


def test_max_unpool2d_with_indices_shared_by_the_examples() -> None:
    _, index = mt.nn.functional.max_pool2d(_on(mt, X[0]), 2, return_indices=True)

    def f(lib, x):
        return lib.nn.functional.max_unpool2d(x, index, 2, output_size=(4, 5))

    small = X[:, :, :, :2, :2]
    assert_trees_close(func.vmap(lambda x: f(mt, x))(_on(mt, small)), _loop(f, small))
    with pytest.raises(ValueError, match="indices must be batched as input is"):
        func.vmap(lambda i: mt.nn.functional.max_unpool2d(_on(mt, small[0]), i, 2, output_size=(4, 5)))(
            mt.stack([index, index])
        )


def test_batch_norm_evaluation_with_a_weight_per_example() -> None:
    """Batched weights (an ensemble of layers): the definition on the batched values."""
    ws = RNG.standard_normal((3, 2))

    def f(lib, x, w):
        return lib.nn.functional.batch_norm(x, _on(lib, MEAN), _on(lib, VAR), w, _on(lib, B))

    ours = func.vmap(lambda x, w: f(mt, x, w))(_on(mt, X), _on(mt, ws))
    assert_trees_close(ours, mt.stack([f(mt, _on(mt, x), _on(mt, w)) for x, w in zip(X, ws)]))


def test_batch_norm_training_has_per_example_statistics() -> None:
    def f(lib, x):
        return lib.nn.functional.batch_norm(x, None, None, _on(lib, W), _on(lib, B), training=True)

    ours = func.vmap(lambda x: f(mt, x))(_on(mt, X))
    assert_trees_close(ours, _loop(f, X), rtol=1e-10, atol=1e-12)
    torch = pytest.importorskip("torch")
    assert_trees_close(ours, torch.func.vmap(lambda x: f(torch, x))(torch.tensor(X)), rtol=1e-10, atol=1e-12)


def test_batch_norm_training_refuses_running_statistics() -> None:
    mean, var = _on(mt, MEAN), _on(mt, VAR)
    with pytest.raises(RuntimeError, match="running statistics cannot be updated"):
        func.vmap(lambda x: mt.nn.functional.batch_norm(x, mean, var, training=True))(_on(mt, X))
    assert mean.tolist() == MEAN.tolist() and var.tolist() == VAR.tolist()


@pytest.mark.parametrize(
    "name", ["max_pool2d", "max_unpool2d", "avg_pool2d", "interpolate_bilinear", "batch_norm_evaluation"]
)
def test_per_example_gradients(name) -> None:
    """vmap(grad(f)): one backward pass over the batch gives each example's own gradient."""
    f, xs = CASES[name]
    weights = _on(mt, RNG.standard_normal(f(mt, _on(mt, xs[0])).shape))

    def loss(x):
        return (f(mt, x) * weights).sum()

    ours = func.vmap(func.grad(loss))(_on(mt, xs))
    assert_trees_close(ours, mt.stack([func.grad(loss)(_on(mt, x)) for x in xs]))

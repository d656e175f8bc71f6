"""vmap over the convolution family (``ops/conv.py``, ``ops/unfold.py``) against ``torch.func.vmap``
and against a Python loop over the examples: the examples' images join the op's batch of images
(``images_merged``); a weight per example makes the examples groups of one grouped op
(``examples_as_groups``: ensembles, per-example weight gradients by ``vmap(grad)``); no per-example
fallback anywhere."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_trees_close

import minitensor as mt
import minitensor.func as mf

rng = np.random.default_rng(3)
X = rng.standard_normal((3, 2, 4, 6, 6))  # 3 examples, each a batch of 2 images of 4 channels
W = rng.standard_normal((6, 4, 3, 3))
B = rng.standard_normal(6)
WT = rng.standard_normal((4, 3, 3, 3))  # a transposed convolution's weight: (in, out, kh, kw)
COLS = rng.standard_normal((3, 2, 4 * 9, 16))  # 3 examples of unfold's columns: 4 x 4 windows of 3 x 3


def T(a) -> mt.Tensor:
    """A float64 minitensor tensor of ``a``'s values (``mt.tensor`` keeps the default float32)."""
    return mt.tensor(a, dtype=mt.float64)


def _f(L):
    return L.nn.functional


PROGRAMS = {
    # name: (f of one example and the shared arrays, the batched argument)
    "conv2d": (lambda L, x, w, b, wt: _f(L).conv2d(x, w, b, stride=2, padding=1), X),
    "conv2d_unbatched_images": (lambda L, x, w, b, wt: _f(L).conv2d(x[0], w, b, padding="same"), X),
    "conv1d": (lambda L, x, w, b, wt: _f(L).conv1d(x[:, :, 0], w[:, :, 1], b, dilation=2), X),
    "conv_transpose2d": (lambda L, x, w, b, wt: _f(L).conv_transpose2d(x, wt, b[:3], stride=2, output_padding=1), X),
    "unfold": (lambda L, x, w, b, wt: _f(L).unfold(x, 3, padding=1, stride=2), X),
    "fold": (lambda L, x, w, b, wt: _f(L).fold(x, (6, 6), 3), COLS),
}


def run(L, func, name: str, batched, shared):
    f, _ = PROGRAMS[name]
    return func.vmap(lambda e: f(L, e, *shared))(batched)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vmap_of_the_convolutions_gives_the_loop_and_torch_func(name: str) -> None:
    f, data = PROGRAMS[name]
    shared = [T(a) for a in (W, B, WT)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a rule, not the per-example fallback
        ours = run(mt, mf, name, T(data), shared)
    loop = mt.stack([f(mt, T(e), *shared) for e in data])
    np.testing.assert_allclose(ours.numpy(), loop.numpy(), rtol=1e-12, atol=1e-12)
    torch = pytest.importorskip("torch")
    theirs = run(torch, torch.func, name, torch.tensor(data), [torch.tensor(a) for a in (W, B, WT)])
    assert_trees_close(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("groups", [1, 2])
def test_per_example_weights_are_groups_of_one_op(groups: int) -> None:
    """A weight (and bias) batched with the images (an ensemble of convolutions), grouped or not."""
    weights = rng.standard_normal((3, 6, 4 // groups, 3, 3))
    biases = rng.standard_normal((3, 6))

    def program(L, func, x, w, b):
        return func.vmap(lambda e, k, c: _f(L).conv2d(e, k, c, padding=1, groups=groups))(x, w, b)

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # (no loop fallback)
        ours = program(mt, mf, T(X), T(weights), T(biases))
    loop = [_f(mt).conv2d(T(x), T(w), T(b), padding=1, groups=groups).numpy() for x, w, b in zip(X, weights, biases)]
    np.testing.assert_allclose(ours.numpy(), np.stack(loop), rtol=1e-12, atol=1e-12)
    torch = pytest.importorskip("torch")
    theirs = program(torch, torch.func, torch.tensor(X), torch.tensor(weights), torch.tensor(biases))
    assert_trees_close(ours, theirs, rtol=1e-10)


def test_per_example_weights_of_a_transposed_convolution() -> None:
    weights = rng.standard_normal((3, 4, 3, 3, 3))

    def program(L, func, x, w):
        return func.vmap(lambda e, k: _f(L).conv_transpose2d(e, k, stride=2))(x, w)

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        ours = program(mt, mf, T(X), T(weights))
    loop = [_f(mt).conv_transpose2d(T(x), T(w), stride=2).numpy() for x, w in zip(X, weights)]
    np.testing.assert_allclose(ours.numpy(), np.stack(loop), rtol=1e-12, atol=1e-12)


def test_per_example_gradients_of_a_small_cnn() -> None:
    """vmap(grad): each example's gradients of its loss w.r.t. the shared weights of two convolutions
    and a linear head, in one batched backward (ConvWeight and ConvTranspose per example)."""
    w1, w2, head = rng.standard_normal((4, 2, 3, 3)), rng.standard_normal((3, 4, 3, 3)), rng.standard_normal((2, 3))
    images = rng.standard_normal((5, 2, 7, 7))  # 5 examples, each one (2, 7, 7) image

    def program(L, func, x, p1, p2, p3):
        def loss(params, e):
            h = _f(L).conv2d(e.unsqueeze(0), params[0], padding=1).relu()
            h = _f(L).conv2d(h, params[1], stride=2).tanh().mean((2, 3))
            return (h @ params[2].T).pow(2).sum()

        return func.vmap(func.grad(loss), in_dims=(None, 0))((p1, p2, p3), x)

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        ours = program(mt, mf, T(images), T(w1), T(w2), T(head))
    torch = pytest.importorskip("torch")
    theirs = program(torch, torch.func, *[torch.tensor(a) for a in (images, w1, w2, head)])
    assert_trees_close(ours, theirs, rtol=1e-10, atol=1e-12)

"""vmap over the convolution family (``ops/conv.py``, ``ops/unfold.py``) against ``torch.func.vmap``
and against a Python loop over the examples: the examples' images join the op's batch of images
(``images_merged``), with no per-example fallback; a batched weight takes the loop (with its warning)
and still gives the right values, as do per-example weight gradients (``vmap(grad)``)."""

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


def test_per_example_weights_loop_and_agree() -> None:
    """A weight batched with the images (an ensemble of convolutions) runs once per example."""
    weights = rng.standard_normal((3, 6, 4, 3, 3))

    def program(L, func, x, w):
        return func.vmap(lambda e, k: _f(L).conv2d(e, k, padding=1))(x, w)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (the loop fallback's warning)
        ours = program(mt, mf, T(X), T(weights))
    loop = [_f(mt).conv2d(T(x), T(w), padding=1).numpy() for x, w in zip(X, weights)]
    np.testing.assert_allclose(ours.numpy(), np.stack(loop), rtol=1e-12, atol=1e-12)
    torch = pytest.importorskip("torch")
    assert_trees_close(ours, program(torch, torch.func, torch.tensor(X), torch.tensor(weights)), rtol=1e-10)


def test_per_example_gradients_of_a_convolution() -> None:
    """vmap(grad): each example's gradient of its loss w.r.t. the shared weight (ConvWeight, per example)."""

    def program(L, func, x, w):
        loss = lambda w, e: (_f(L).conv2d(e, w, stride=2).tanh() ** 2).sum()  # noqa: E731
        return func.vmap(func.grad(loss), in_dims=(None, 0))(w, x)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ours = program(mt, mf, T(X), T(W))
    for k, e in enumerate(X):
        w = mt.tensor(W, dtype=mt.float64, requires_grad=True)
        (_f(mt).conv2d(T(e), w, stride=2).tanh() ** 2).sum().backward()
        np.testing.assert_allclose(ours.numpy()[k], w.grad.numpy(), rtol=1e-10, atol=1e-12)
    torch = pytest.importorskip("torch")
    assert_trees_close(ours, program(torch, torch.func, torch.tensor(X), torch.tensor(W)), rtol=1e-10)

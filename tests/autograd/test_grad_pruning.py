"""autograd.grad runs only the part of the graph that leads to the requested inputs."""

from __future__ import annotations

import numpy as np

import minitensor as mt


def test_grad_wrt_non_leaf_stops_there_even_if_below_was_freed():
    x = mt.randn(3, dtype=mt.float64, requires_grad=True)
    a = x.exp()
    (a * 2).sum().backward()  # frees a's node (ExpBackward)
    (g,) = mt.autograd.grad((a * a).sum(), a)
    np.testing.assert_allclose(g.numpy(), 2 * a.numpy())


def test_grad_wrt_non_leaf_and_its_leaf_together():
    y = mt.randn(3, dtype=mt.float64, requires_grad=True)
    b = y.exp()
    gb, gy = mt.autograd.grad((b * b).sum(), [b, y])
    np.testing.assert_allclose(gb.numpy(), 2 * b.numpy())
    np.testing.assert_allclose(gy.numpy(), 2 * b.numpy() * b.numpy())


def test_unrelated_branch_backward_is_not_run():
    x = mt.randn(3, dtype=mt.float64, requires_grad=True)
    w = mt.randn(3, dtype=mt.float64, requires_grad=True)
    side = w.exp()
    side.sum().backward()  # frees side's graph
    out = (x * 3).sum() + side.sum()
    (gx,) = mt.autograd.grad(out, x)
    np.testing.assert_allclose(gx.numpy(), np.full(3, 3.0))

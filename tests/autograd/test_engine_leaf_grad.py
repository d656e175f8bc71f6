"""A leaf's first gradient is taken without a copy only when no one else can reach the array."""

from __future__ import annotations

import numpy as np

import minitensor as mt
from minitensor import backend


def _taken(monkeypatch) -> list:
    """Record each verdict of ``backend.owned``, which the engine asks (the spy's own argument is one
    holder more)."""
    log = []
    real = backend.owned

    def spy(grad, like, holders=1):
        verdict = real(grad, like, holders + 1)
        log.append(verdict)
        return verdict

    monkeypatch.setattr(backend, "owned", spy)
    return log


def test_a_fresh_gradient_is_taken_and_a_shared_one_copied(monkeypatch) -> None:
    log = _taken(monkeypatch)
    x = mt.randn(4, 5, requires_grad=True)
    (x * 2).sum().backward()
    assert log == [True]
    np.testing.assert_array_equal(x.grad.numpy(), np.full((4, 5), 2, np.float32))
    log.clear()
    g = np.ones((4, 5), np.float32)
    y = mt.randn(4, 5, requires_grad=True)
    (y + 0).backward(g)  # Add hands the caller's own array through
    assert log == [False] and not np.shares_memory(y.grad.numpy(), g)
    y.grad.numpy()[0, 0] = 7.0
    assert g[0, 0] == 1.0


def test_one_array_for_two_leaves_is_owned_by_at_most_one(monkeypatch) -> None:
    log = _taken(monkeypatch)
    a, b = mt.randn(3, requires_grad=True), mt.randn(3, requires_grad=True)
    (a + b).backward(mt.ones(3) * 2)
    assert log.count(True) <= 1
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
    a.grad.numpy()[:] = 0
    np.testing.assert_array_equal(b.grad.numpy(), [2, 2, 2])


def test_a_gradient_a_hook_kept_is_copied(monkeypatch) -> None:
    log = _taken(monkeypatch)
    kept = []
    c = mt.randn(3, requires_grad=True)
    c.register_hook(lambda g: kept.append(g))
    (c * 3).sum().backward()
    assert log == [False] and not np.shares_memory(kept[0].numpy(), c.grad.numpy())

"""``Function.apply_each`` (the pieces of ``unbind`` / ``split``): the same nodes, views, version
counters and in-place behaviour as one ``apply`` per piece, in every grad mode."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.ops.shape import Index

KEYS = [{"key": (0,)}, {"key": (slice(1, 3),)}, {"key": (slice(None), 2)}]


def _pieces_both_ways(x):
    return Index.apply_each(x, KEYS), [Index.apply(x, **s) for s in KEYS]


@pytest.mark.parametrize("mode", ["grad", "no_grad", "leaf without grad", "anomaly"])
def test_same_tensors_as_apply(mode) -> None:
    x = mt.tensor(np.arange(12.0).reshape(3, 4), requires_grad=mode != "leaf without grad")
    h = x * 1 if mode != "leaf without grad" else x
    context = mt.no_grad() if mode == "no_grad" else mt.autograd.detect_anomaly() if mode == "anomaly" else None
    if context is None:
        each, one_by_one = _pieces_both_ways(h)
    else:
        with context:
            each, one_by_one = _pieces_both_ways(h)
    for a, b in zip(each, one_by_one):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert np.shares_memory(a.numpy(), h.numpy())
        assert a.requires_grad == b.requires_grad
        assert type(a.grad_fn) is type(b.grad_fn)
        assert a._version_counter is h._version_counter is b._version_counter
        assert a._view_of == b._view_of


def test_gradients_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(0).standard_normal((4, 3))
    grads = []
    for lib in (mt, torch):
        x = lib.tensor(data, requires_grad=True)
        h = x * 2
        rows, cols = h.unbind(0), h.split([1, 2], dim=1)
        ((rows[0] * 5).sum() + (rows[3] * rows[1]).sum() + (cols[1] ** 2).sum() + h.sum()).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])


def test_in_place_change_through_a_piece_as_through_an_apply() -> None:
    """(PyTorch forbids this for the views of unbind/split; minitensor allows it, as for any view.)"""
    data = np.random.default_rng(1).standard_normal((4, 3))
    results = []
    for pieces in (Index.apply_each, lambda t, keys: [Index.apply(t, **s) for s in keys]):
        x = mt.tensor(data, requires_grad=True)
        h = x * 2
        row = pieces(h, KEYS)[0]
        row.mul_(3)  # through the view: h changes, and so does its graph
        (h * mt.tensor(data)).sum().backward()
        results.append((x.grad.numpy(), h.detach().numpy(), h._version))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2] == 1
    np.testing.assert_allclose(results[0][0][0], 6 * data[0])


def test_a_piece_of_a_leaf_cannot_change_in_place() -> None:
    x = mt.ones(3, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x.unbind(0)[0].add_(1)

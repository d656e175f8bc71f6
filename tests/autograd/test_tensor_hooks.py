"""Tensor hooks, retain_grad and anomaly detection, as PyTorch (issue: see inside, items 1 and 3)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import Function


def _program(lib, log):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x * x
    h.retain_grad()
    first = h.register_hook(lambda g: log.append(("first", g.detach().numpy().copy())) or g * 2)
    h.register_hook(lambda g: log.append(("second", g.detach().numpy().copy())))
    x.register_hook(lambda g: g + 1)  # a leaf hook replaces what accumulates into .grad
    y = (h * lib.tensor([1.0, -1.0, 0.5])).sum()
    y.backward(retain_graph=True)
    first.remove()
    y.backward()
    return x.grad.detach().numpy(), h.grad.detach().numpy(), h.retains_grad


def test_hooks_and_retain_grad_match_pytorch():
    torch = pytest.importorskip("torch")
    ours_log, theirs_log = [], []
    ours = _program(mt, ours_log)
    theirs = _program(torch, theirs_log)
    for o, t in zip(ours[:2], theirs[:2]):
        np.testing.assert_allclose(o, t)
    assert ours[2] and theirs[2]
    assert [name for name, _ in ours_log] == [name for name, _ in theirs_log]
    for (_, o), (_, t) in zip(ours_log, theirs_log):
        np.testing.assert_allclose(o, t)


def test_hook_values_by_hand():
    log = []
    xg, hg, retains = _program(mt, log)
    # first backward: dy/dh = w, doubled by the first hook; second: w alone.  retain_grad sees the result.
    w = np.array([1.0, -1.0, 0.5])
    np.testing.assert_allclose(hg, 2 * w + w)
    np.testing.assert_allclose(xg, (2 * w * 2 * np.array([1, 2, 3]) + 1) + (w * 2 * np.array([1, 2, 3]) + 1))
    assert retains


def test_register_hook_on_a_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        mt.ones(2).register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="does not require grad"):
        mt.ones(2).retain_grad()


def test_a_leaf_retains_its_grad_and_a_plain_non_leaf_does_not():
    x = mt.ones(2, requires_grad=True)
    h = x * 2
    (h * h).sum().backward()
    assert h.grad is None and not h.retains_grad and x.grad is not None


def test_hooks_with_create_graph_get_graph_tensors():
    x = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    h = x**3
    h.retain_grad()
    h.register_hook(lambda g: g * x)  # the replacement depends on x: it is part of the gradient's graph
    (g,) = mt.autograd.grad(h.sum(), x, create_graph=True)  # 3x^2 * x = 3x^3
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 3)
    (gg,) = mt.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 9 * x.numpy() ** 2)


class NanBackward(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * np.nan


def test_detect_anomaly_names_the_op_and_the_forward_line():
    x = mt.ones(3, requires_grad=True)
    with mt.autograd.detect_anomaly():
        y = NanBackward.apply(x)  # THE FORWARD LINE
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
    message = str(info.value)
    assert "NanBackwardBackward returned nan values" in message
    assert "test_tensor_hooks.py" in message and "THE FORWARD LINE" in message
    assert not mt.autograd.is_anomaly_enabled()


def test_without_detection_nan_gradients_pass_silently_and_nothing_is_recorded():
    x = mt.ones(3, requires_grad=True)
    y = NanBackward.apply(x)
    assert "forward_line" not in y.grad_fn.__dict__
    y.sum().backward()
    assert np.isnan(x.grad.numpy()).all()


def test_set_detect_anomaly_and_a_real_op():
    mt.autograd.set_detect_anomaly(True)
    try:
        x = mt.tensor([0.0, 1.0], requires_grad=True)
        y = x.sqrt() * 0  # d sqrt(x)/dx = inf at 0, times 0: nan
        with pytest.raises(RuntimeError, match="MulBackward|SqrtBackward"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y.sum().backward()
    finally:
        mt.autograd.set_detect_anomaly(False)

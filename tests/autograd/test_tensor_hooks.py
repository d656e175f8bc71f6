"""Tensor hooks and retain_grad (tensor/hooks.py, run by the engine) as PyTorch, also in the corners: a
tensor used by several ops, in-place changes before and after a hook, ``autograd.grad`` and hooks off
its path, create_graph and double backward.  Each is compared with PyTorch where it has the same
thing, and computed by hand as well.  (Anomaly detection: test_anomaly.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run_on_both

import minitensor as mt


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


def _t(lib, values):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def _np(t) -> list:
    return t.detach().numpy().tolist()


# ----------------------------------------------------------------- a tensor used by several ops
def _used_by_three_ops(lib):
    log = []
    x = _t(lib, [1.0, 2.0])
    h = x * 3
    h.register_hook(lambda g: log.append(("h", _np(g))))
    x.register_hook(lambda g: log.append(("x", _np(g))))
    (h * h + h.exp() + h).sum().backward()
    return log, _np(x.grad)


def _replacement_reaches_every_path(lib):
    x = _t(lib, [1.0, -2.0])
    h = x * x
    h.register_hook(lambda g: g * 0 + 1)  # pretend dL/dh = 1 whatever it was
    (h.tanh() * h).sum().backward()
    return _np(x.grad)


# ----------------------------------------------------------------- in-place changes
def _hooks_around_an_inplace_op(lib):
    log = []
    x = _t(lib, [1.0, 2.0])
    h = x * 1
    h.register_hook(lambda g: log.append(("before", _np(g))))
    h *= 2
    h.register_hook(lambda g: log.append(("after", _np(g))))
    (h * lib.tensor([1.0, 3.0], dtype=lib.float64)).sum().backward()
    return log, _np(x.grad)


def _hooks_through_a_view(lib):
    log = []
    x = _t(lib, [[1.0, 2.0], [3.0, 4.0]])
    w = _t(lib, [5.0, 6.0])
    h = x * 1
    h.register_hook(lambda g: log.append(("before", _np(g))))
    v = h[0]
    v += w  # changes h through its view
    h.register_hook(lambda g: log.append(("after", _np(g))))
    (h * h).sum().backward()
    return log, _np(x.grad), _np(w.grad)


def _retain_grad_then_inplace(lib):
    x = _t(lib, [1.0, 2.0])
    h = x * 1
    h.retain_grad()
    h *= 2
    (h * lib.tensor([1.0, 3.0], dtype=lib.float64)).sum().backward()
    return _np(h.grad), h.retains_grad


# ----------------------------------------------------------------- autograd.grad and backward(inputs=)
def _grad_with_hooks(lib):
    log = []
    x = _t(lib, [1.0, 2.0])
    h = x * x
    h.register_hook(lambda g: log.append(("h", _np(g))) or g * 10)
    x.register_hook(lambda g: log.append(("x", _np(g))) or g + 1)
    (gx,) = lib.autograd.grad((h * 3).sum(), x)
    return _np(gx), log, x.grad


def _hooks_off_the_path(lib):
    log = []
    x, y = _t(lib, [1.0, 2.0]), _t(lib, [3.0, 4.0])
    hx, hy = x * 2, y * 2
    hy.register_hook(lambda g: log.append("hy"))
    y.register_hook(lambda g: log.append("y"))
    (gx,) = lib.autograd.grad((hx * hy).sum(), x, retain_graph=True)
    (hx * hy).sum().backward(inputs=[x])
    return _np(gx), _np(x.grad), log, y.grad


# ----------------------------------------------------------------- create_graph
def _retain_grad_with_create_graph(lib):
    x = _t(lib, [1.0, 2.0])
    h = x * x
    h.retain_grad()
    (h**2).sum().backward(create_graph=True)
    first = _np(h.grad)
    (gg,) = lib.autograd.grad(h.grad.sum(), x)  # d/dx of 2h = 4x
    return first, _np(h.grad), _np(gg)


def test_a_hook_on_a_tensor_used_three_times_runs_once_with_the_sum():
    ours, theirs = _used_by_three_ops(mt), None
    h = 3 * np.array([1.0, 2.0])
    dh = 2 * h + np.exp(h) + 1
    assert [name for name, _ in ours[0]] == ["h", "x"]
    np.testing.assert_allclose(ours[0][0][1], dh)
    np.testing.assert_allclose(ours[0][1][1], 3 * dh)
    np.testing.assert_allclose(ours[1], 3 * dh)
    ours, theirs = run_on_both(_used_by_three_ops)
    assert [n for n, _ in ours[0]] == [n for n, _ in theirs[0]]
    for (_, o), (_, t) in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(o, t)


def test_a_replacement_gradient_is_what_flows_on_to_the_inputs():
    ours, theirs = run_on_both(_replacement_reaches_every_path)
    np.testing.assert_allclose(ours, 2 * np.array([1.0, -2.0]))  # dL/dh = 1, dh/dx = 2x
    np.testing.assert_allclose(ours, theirs)


def test_hooks_before_an_inplace_op_see_the_old_value_and_after_it_the_new():
    ours, theirs = run_on_both(_hooks_around_an_inplace_op)
    assert ours == ([("after", [1.0, 3.0]), ("before", [2.0, 6.0])], [2.0, 6.0])
    assert ours == theirs


def test_hooks_on_a_base_changed_through_its_view_match_pytorch():
    ours, theirs = run_on_both(_hooks_through_a_view)
    assert ours == theirs
    assert ours[0][0] == ("after", [[12.0, 16.0], [6.0, 8.0]])  # 2 * (new h)


def test_retain_grad_after_an_inplace_op_keeps_the_new_values_gradient():
    # retain_grad called after the in-place op: already right
    x = _t(mt, [1.0, 2.0])
    h = x * 1
    h *= 2
    h.retain_grad()
    (h * mt.tensor([1.0, 3.0], dtype=mt.float64)).sum().backward()
    assert _np(h.grad) == [1.0, 3.0] and h.retains_grad


def test_retain_grad_before_an_inplace_op_follows_the_tensor_as_in_pytorch():
    ours, theirs = run_on_both(_retain_grad_then_inplace)
    assert theirs == ([1.0, 3.0], True)
    assert ours == theirs


def test_autograd_grad_runs_the_hooks_on_its_path_and_returns_the_replacement():
    ours, theirs = run_on_both(_grad_with_hooks)
    # dL/dh = 3, times 10 by h's hook; dL/dx = 30 * 2x, plus 1 by x's hook; nothing accumulates
    assert ours == ([61.0, 121.0], [("h", [3.0, 3.0]), ("x", [60.0, 120.0])], None)
    assert ours == theirs


def test_hooks_off_the_path_to_the_inputs_do_not_run():
    ours, theirs = run_on_both(_hooks_off_the_path)
    assert theirs == ([12.0, 16.0], [12.0, 16.0], [], None)  # d(sum 2x * 2y)/dx = 4y
    assert ours == theirs


def test_retain_grad_with_create_graph_keeps_a_differentiable_gradient():
    ours, theirs = run_on_both(_retain_grad_with_create_graph)
    # h.grad = 2h = 2x^2; the second pass goes through h again, so its retain_grad adds
    # d(sum 2h)/dh = 2 (PyTorch's retain_grad runs in autograd.grad too)
    assert ours == ([2.0, 8.0], [4.0, 10.0], [4.0, 8.0])
    assert ours == theirs


def test_hooks_run_again_in_the_double_backward_of_a_graph_they_are_in():
    log = []
    x = _t(mt, [1.0, 2.0])
    h = x**3
    h.register_hook(lambda g: log.append(_np(g)))
    (g,) = mt.autograd.grad(h.sum(), x, create_graph=True)  # 3x^2; h's hook runs (with 1s)
    (gg,) = mt.autograd.grad((g * g).sum(), x)  # d/dx 9x^4 = 36x^3; h is not in g's graph
    assert log == [[1.0, 1.0]]
    np.testing.assert_allclose(gg.numpy(), 36 * np.array([1.0, 8.0]))

"""Tensor hooks, retain_grad and anomaly detection in the corners the issue names: a tensor used
by several ops, in-place changes, autograd.grad and backward(inputs=), create_graph, and the
claim that detection costs nothing when off.  Each is compared with PyTorch where it has the
same thing, and computed by hand as well."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import anomaly


def _t(lib, values):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def _np(t) -> list:
    return t.detach().numpy().tolist()


def _both(program):
    """(minitensor's result, PyTorch's result) of ``program(lib)``."""
    torch = pytest.importorskip("torch")
    return program(mt), program(torch)


# ----------------------------------------------------------------- a tensor used by several ops
def _used_by_three_ops(lib):
    log = []
    x = _t(lib, [1.0, 2.0])
    h = x * 3
    h.register_hook(lambda g: log.append(("h", _np(g))))
    x.register_hook(lambda g: log.append(("x", _np(g))))
    (h * h + h.exp() + h).sum().backward()
    return log, _np(x.grad)


def test_a_hook_on_a_tensor_used_three_times_runs_once_with_the_sum():
    ours, theirs = _used_by_three_ops(mt), None
    h = 3 * np.array([1.0, 2.0])
    dh = 2 * h + np.exp(h) + 1
    assert [name for name, _ in ours[0]] == ["h", "x"]
    np.testing.assert_allclose(ours[0][0][1], dh)
    np.testing.assert_allclose(ours[0][1][1], 3 * dh)
    np.testing.assert_allclose(ours[1], 3 * dh)
    ours, theirs = _both(_used_by_three_ops)
    assert [n for n, _ in ours[0]] == [n for n, _ in theirs[0]]
    for (_, o), (_, t) in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(o, t)


def _replacement_reaches_every_path(lib):
    x = _t(lib, [1.0, -2.0])
    h = x * x
    h.register_hook(lambda g: g * 0 + 1)  # pretend dL/dh = 1 whatever it was
    (h.tanh() * h).sum().backward()
    return _np(x.grad)


def test_a_replacement_gradient_is_what_flows_on_to_the_inputs():
    ours, theirs = _both(_replacement_reaches_every_path)
    np.testing.assert_allclose(ours, 2 * np.array([1.0, -2.0]))  # dL/dh = 1, dh/dx = 2x
    np.testing.assert_allclose(ours, theirs)


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


def test_hooks_before_an_inplace_op_see_the_old_value_and_after_it_the_new():
    ours, theirs = _both(_hooks_around_an_inplace_op)
    assert ours == ([("after", [1.0, 3.0]), ("before", [2.0, 6.0])], [2.0, 6.0])
    assert ours == theirs


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


def test_hooks_on_a_base_changed_through_its_view_match_pytorch():
    ours, theirs = _both(_hooks_through_a_view)
    assert ours == theirs
    assert ours[0][0] == ("after", [[12.0, 16.0], [6.0, 8.0]])  # 2 * (new h)


def _retain_grad_then_inplace(lib):
    x = _t(lib, [1.0, 2.0])
    h = x * 1
    h.retain_grad()
    h *= 2
    (h * lib.tensor([1.0, 3.0], dtype=lib.float64)).sum().backward()
    return _np(h.grad), h.retains_grad


def test_retain_grad_after_an_inplace_op_keeps_the_new_values_gradient():
    # retain_grad called after the in-place op: already right
    x = _t(mt, [1.0, 2.0])
    h = x * 1
    h *= 2
    h.retain_grad()
    (h * mt.tensor([1.0, 3.0], dtype=mt.float64)).sum().backward()
    assert _np(h.grad) == [1.0, 3.0] and h.retains_grad


def test_retain_grad_before_an_inplace_op_follows_the_tensor_as_in_pytorch():
    ours, theirs = _both(_retain_grad_then_inplace)
    assert theirs == ([1.0, 3.0], True)
    assert ours == theirs


# ----------------------------------------------------------------- autograd.grad and backward(inputs=)
def _grad_with_hooks(lib):
    log = []
    x = _t(lib, [1.0, 2.0])
    h = x * x
    h.register_hook(lambda g: log.append(("h", _np(g))) or g * 10)
    x.register_hook(lambda g: log.append(("x", _np(g))) or g + 1)
    (gx,) = lib.autograd.grad((h * 3).sum(), x)
    return _np(gx), log, x.grad


def test_autograd_grad_runs_the_hooks_on_its_path_and_returns_the_replacement():
    ours, theirs = _both(_grad_with_hooks)
    # dL/dh = 3, times 10 by h's hook; dL/dx = 30 * 2x, plus 1 by x's hook; nothing accumulates
    assert ours == ([61.0, 121.0], [("h", [3.0, 3.0]), ("x", [60.0, 120.0])], None)
    assert ours == theirs


def _hooks_off_the_path(lib):
    log = []
    x, y = _t(lib, [1.0, 2.0]), _t(lib, [3.0, 4.0])
    hx, hy = x * 2, y * 2
    hy.register_hook(lambda g: log.append("hy"))
    y.register_hook(lambda g: log.append("y"))
    (gx,) = lib.autograd.grad((hx * hy).sum(), x, retain_graph=True)
    (hx * hy).sum().backward(inputs=[x])
    return _np(gx), _np(x.grad), log, y.grad


def test_hooks_off_the_path_to_the_inputs_do_not_run():
    ours, theirs = _both(_hooks_off_the_path)
    assert theirs == ([12.0, 16.0], [12.0, 16.0], [], None)  # d(sum 2x * 2y)/dx = 4y
    assert ours == theirs


# ----------------------------------------------------------------- create_graph
def _retain_grad_with_create_graph(lib):
    x = _t(lib, [1.0, 2.0])
    h = x * x
    h.retain_grad()
    (h**2).sum().backward(create_graph=True)
    first = _np(h.grad)
    (gg,) = lib.autograd.grad(h.grad.sum(), x)  # d/dx of 2h = 4x
    return first, _np(h.grad), _np(gg)


def test_retain_grad_with_create_graph_keeps_a_differentiable_gradient():
    ours, theirs = _both(_retain_grad_with_create_graph)
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


# ----------------------------------------------------------------- anomaly detection
def test_anomaly_with_create_graph_names_the_op_and_the_line():
    x = _t(mt, [0.0, 1.0])
    with mt.autograd.detect_anomaly(), np.errstate(all="ignore"):
        y = (x.sqrt() * 0).sum()  # THE SQRT LINE
        with pytest.raises(RuntimeError) as info:
            mt.autograd.grad(y, x, create_graph=True)
    assert "SqrtBackward returned nan" in str(info.value) and "THE SQRT LINE" in str(info.value)


def test_anomaly_in_a_double_backward_names_the_op_of_the_first_gradient():
    x = _t(mt, [0.0, 1.0])
    with mt.autograd.detect_anomaly(), np.errstate(all="ignore"):
        (g,) = mt.autograd.grad((x**3).sum(), x, create_graph=True)  # 3x^2: 0 at x = 0
        z = (g.sqrt() * 0).sum()  # THE SECOND-ORDER LINE
        with pytest.raises(RuntimeError) as info:
            z.backward()
    assert "SqrtBackward returned nan" in str(info.value) and "THE SECOND-ORDER LINE" in str(info.value)


class _ZeroThenSqrt(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(2, 2)
        with mt.no_grad():
            self.lin.weight.zero_()
            self.lin.bias.zero_()

    def forward(self, x):
        h = self.lin(x)
        return h.sqrt() * 0  # THE USER'S MODULE LINE


def test_anomaly_points_at_the_users_module_code_not_at_minitensor():
    model = _ZeroThenSqrt()
    with mt.autograd.detect_anomaly(), np.errstate(all="ignore"):
        out = model(mt.ones(3, 2))
        with pytest.raises(RuntimeError) as info:
            out.sum().backward()
    message = str(info.value)
    assert "SqrtBackward" in message and "THE USER'S MODULE LINE" in message
    assert __file__ in message and "minitensor/nn" not in message


def test_anomaly_off_records_nothing_and_checks_nothing(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("anomaly machinery ran while detection was off")

    monkeypatch.setattr(anomaly, "user_line", fail)
    monkeypatch.setattr(anomaly, "check_gradients", fail)
    assert not mt.autograd.is_anomaly_enabled()
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    x = mt.randn(5, 3)
    loss = (model(x) ** 2).mean()
    loss.backward()
    nodes, stack, seen = [], [loss.grad_fn], set()
    while stack:
        node = stack.pop()
        if isinstance(node, mt.autograd.Node) and id(node) not in seen:
            seen.add(id(node))
            nodes.append(node)
            stack.extend(node.next_functions)
    assert len(nodes) >= 5
    assert all("forward_line" not in node.__dict__ for node in nodes)


def test_anomaly_on_records_a_line_on_every_node_and_restores_the_setting():
    mt.autograd.set_detect_anomaly(True)
    try:
        with mt.autograd.detect_anomaly():
            x = _t(mt, [1.0, 2.0])
            y = (x * 2).exp().sum()  # RECORDED
        assert mt.autograd.is_anomaly_enabled()  # the outer setting is back
    finally:
        mt.autograd.set_detect_anomaly(False)
    lines = [y.grad_fn.forward_line, y.grad_fn.parents[0].forward_line]
    assert all(__file__ in line and "RECORDED" in line for line in lines)
    y.backward()  # a clean backward with finite gradients does not raise
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * np.array([1.0, 2.0])))


def _anomaly_settings(lib) -> list:
    """What is_anomaly_enabled / is_anomaly_check_nan_enabled say through the ways of setting them."""
    ag = lib.autograd

    def state():
        return lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()

    seen = [state()]
    with ag.set_detect_anomaly(True, check_nan=False):
        seen.append(state())
        with ag.detect_anomaly():
            seen.append(state())
        seen.append(state())
    seen.append(state())
    ag.set_detect_anomaly(True)  # called as a function: it stays on
    seen.append(state())
    ag.set_detect_anomaly(False)
    seen.append(lib.is_anomaly_enabled())
    return seen


def test_set_detect_anomaly_is_a_function_and_a_context_manager_as_in_pytorch():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns that detection is slow
        ours, theirs = _both(_anomaly_settings)
    assert ours == [(False, True), (True, False), (True, True), (True, False), (False, True), (True, True), False]
    assert ours == theirs
    assert mt.autograd.is_anomaly_enabled is mt.is_anomaly_enabled


def test_check_nan_false_records_the_lines_but_lets_the_nan_through():
    x = _t(mt, [0.0, 1.0])
    with mt.autograd.detect_anomaly(check_nan=False), np.errstate(all="ignore"):
        y = (x.sqrt() * 0).sum()  # RECORDED, NOT CHECKED
        y.backward()
    assert "RECORDED, NOT CHECKED" in y.grad_fn.forward_line
    assert np.isnan(x.grad.numpy()[0]) and not mt.autograd.is_anomaly_enabled()


def test_the_anomaly_docstring_example_runs():
    import doctest

    with np.errstate(all="ignore"):
        result = doctest.testmod(anomaly, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0

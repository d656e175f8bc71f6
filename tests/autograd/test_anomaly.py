"""autograd/anomaly.py: ``detect_anomaly`` / ``set_detect_anomaly`` as PyTorch: a NaN gradient names the op and the
forward line that made it (also with create_graph, in a double backward, in a user's module), the
setting restored, ``check_nan=False``, and nothing recorded or checked when detection is off."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import f64, run_on_both

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import Function, anomaly


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
    assert __file__ in message and "THE FORWARD LINE" in message
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


# ----------------------------------------------------------------- anomaly detection
def test_anomaly_with_create_graph_names_the_op_and_the_line():
    x = f64([0.0, 1.0])
    with mt.autograd.detect_anomaly(), np.errstate(all="ignore"):
        y = (x.sqrt() * 0).sum()  # THE SQRT LINE
        with pytest.raises(RuntimeError) as info:
            mt.autograd.grad(y, x, create_graph=True)
    assert "SqrtBackward returned nan" in str(info.value) and "THE SQRT LINE" in str(info.value)


def test_anomaly_in_a_double_backward_names_the_op_of_the_first_gradient():
    x = f64([0.0, 1.0])
    with mt.autograd.detect_anomaly(), np.errstate(all="ignore"):
        (g,) = mt.autograd.grad((x**3).sum(), x, create_graph=True)  # 3x^2: 0 at x = 0
        z = (g.sqrt() * 0).sum()  # THE SECOND-ORDER LINE
        with pytest.raises(RuntimeError) as info:
            z.backward()
    assert "SqrtBackward returned nan" in str(info.value) and "THE SECOND-ORDER LINE" in str(info.value)


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
            stack.extend(next_node for next_node, _ in node.next_functions)
    assert len(nodes) >= 5
    assert all("forward_line" not in node.__dict__ for node in nodes)


def test_anomaly_on_records_a_line_on_every_node_and_restores_the_setting():
    mt.autograd.set_detect_anomaly(True)
    try:
        with mt.autograd.detect_anomaly():
            x = f64([1.0, 2.0])
            y = (x * 2).exp().sum()  # RECORDED
        assert mt.autograd.is_anomaly_enabled()  # the outer setting is back
    finally:
        mt.autograd.set_detect_anomaly(False)
    lines = [y.grad_fn.forward_line, y.grad_fn.parents[0].forward_line]
    assert all(__file__ in line and "RECORDED" in line for line in lines)
    y.backward()  # a clean backward with finite gradients does not raise
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * np.array([1.0, 2.0])))


def test_set_detect_anomaly_is_a_function_and_a_context_manager_as_in_pytorch():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns that detection is slow
        ours, theirs = run_on_both(_anomaly_settings)
    assert ours == [(False, True), (True, False), (True, True), (True, False), (False, True), (True, True), False]
    assert ours == theirs
    assert mt.autograd.is_anomaly_enabled is mt.is_anomaly_enabled


def test_check_nan_false_records_the_lines_but_lets_the_nan_through():
    x = f64([0.0, 1.0])
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

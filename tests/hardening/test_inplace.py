"""In-place safety: a tensor saved for backward and then modified in place makes backward raise.

Every op that saves an input (or its output) for its backward records that
tensor's version (``Tensor._version``, its count of in-place changes); the
engine compares before running the op's backward.  Views (``x[0]``,
``x.reshape``, ``x.T``) and ``x.detach()`` share their base's counter.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor import optim


def weight_and_input():
    """w requires grad, x does not: y = (w * x).sum() saves x for w's gradient."""
    w = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = mt.tensor([4.0, 5.0, 6.0])
    return w, x, (w * x).sum()


@pytest.mark.parametrize(
    "modify",
    [
        lambda x: x.__iadd__(1.0),
        lambda x: x.__imul__(2.0),
        lambda x: x.__setitem__(0, 7.0),
        lambda x: x.zero_(),
        lambda x: x.fill_(3.0),
        lambda x: x.copy_(mt.ones(3)),
        lambda x: x.uniform_(),
        lambda x: x.normal_(),
    ],
    ids=["+=", "*=", "setitem", "zero_", "fill_", "copy_", "uniform_", "normal_"],
)
def test_modifying_a_saved_input_makes_backward_raise(modify) -> None:
    w, x, y = weight_and_input()
    modify(x)
    with pytest.raises(
        RuntimeError, match=r"MulBackward: input 1 \(a tensor of shape \(3,\)\).*modified in place"
    ) as info:
        y.backward()
    assert "(version 1, expected 0)" in str(info.value)
    assert w.grad is None  # nothing was accumulated from the wrong gradient


def test_without_modification_the_gradient_is_the_saved_input() -> None:
    w, x, y = weight_and_input()
    y.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [4.0, 5.0, 6.0])


def test_modifying_an_input_that_was_not_saved_is_fine() -> None:
    w = mt.tensor([0.5, -1.0], requires_grad=True)
    x = mt.tensor([1.0, 2.0])
    y = (w + x).exp()  # Add saves nothing; Exp saves its output, not x
    x += 10.0
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.exp([1.5, 1.0]), rtol=1e-6)


def test_an_op_that_saved_its_output_names_the_output() -> None:
    a = mt.tensor([0.0, 1.0], requires_grad=True)
    b = a.exp()
    with mt.no_grad():
        b *= 2.0
    with pytest.raises(RuntimeError, match=r"ExpBackward: its output .*\(version 1, expected 0\)"):
        b.sum().backward()


@pytest.mark.parametrize("op", ["tanh", "sigmoid", "relu", "sqrt"])
def test_every_output_saving_op_is_covered(op: str) -> None:
    a = mt.tensor([0.5, 1.5], requires_grad=True)
    b = getattr(a, op)()
    with mt.no_grad():
        b[0] = 0.25
    with pytest.raises(RuntimeError, match=f"{op.capitalize()}Backward: its output"):
        b.sum().backward()


def test_an_optimizer_step_before_backward_raises() -> None:
    layer = nn.Linear(3, 2)
    opt = optim.SGD(layer.parameters(), lr=0.1)
    loss = (layer(mt.randn(4, 3)) ** 2).sum()
    loss.backward(retain_graph=True)
    opt.step()  # changes weight in place: the retained graph's saved weight is stale
    with pytest.raises(RuntimeError, match=r"LinearBackward: input 1 \(a tensor of shape \(2, 3\)\)"):
        loss.backward()


@pytest.mark.parametrize("make_opt", [lambda p: optim.Adam(p, lr=0.1), lambda p: optim.AdamW(p, lr=0.1)])
def test_every_optimizer_bumps_the_version(make_opt) -> None:
    w = nn.Parameter(mt.ones(2))
    opt = make_opt([w])
    (w * w).sum().backward()
    before = w._version
    opt.step()
    assert w._version == before + 1


def test_load_state_dict_counts_as_an_in_place_change() -> None:
    layer = nn.Linear(2, 2)
    y = layer(mt.randn(3, 2)).sum()
    layer.load_state_dict(nn.Linear(2, 2).state_dict())
    with pytest.raises(RuntimeError, match="LinearBackward"):
        y.backward()


def test_a_view_shares_the_counter_of_its_base() -> None:
    w = mt.ones(3, requires_grad=True)
    x = mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    y = (w * x).sum()
    x[1].zero_()  # a view of x (basic indexing) modified in place
    with pytest.raises(RuntimeError, match="MulBackward: input 1"):
        y.backward()


def test_modifying_the_base_of_a_saved_view_raises() -> None:
    w = mt.ones(2, requires_grad=True)
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
    view = x.T[0]  # a view of a view
    y = (w * view).sum()
    x.fill_(0.0)
    with pytest.raises(RuntimeError, match="MulBackward: input 1"):
        y.backward()


@pytest.mark.parametrize(
    "make_view",
    [lambda x: x[0], lambda x: x.reshape(6), lambda x: x.T, lambda x: x.unsqueeze(0), lambda x: x.expand(2, 2, 3)],
    ids=["index", "reshape", "T", "unsqueeze", "expand"],
)
def test_views_share_the_version_counter(make_view) -> None:
    x = mt.zeros(2, 3)
    view = make_view(x)
    x.fill_(1.0)
    assert view._version == x._version == 1


def test_an_advanced_index_is_a_copy_with_its_own_counter() -> None:
    x = mt.zeros(3)
    picked = x[[0, 2]]
    x.fill_(1.0)
    assert x._version == 1 and picked._version == 0


def test_detach_shares_the_counter() -> None:
    x = mt.tensor([0.3, 0.7], requires_grad=True)
    y = x.tanh()
    y.detach().zero_()
    with pytest.raises(RuntimeError, match="TanhBackward: its output"):
        y.sum().backward()


def test_autograd_grad_checks_versions_too() -> None:
    w, x, y = weight_and_input()
    x.zero_()
    with pytest.raises(RuntimeError, match="MulBackward"):
        mt.autograd.grad(y, w)


def test_the_check_runs_on_every_node_of_a_longer_graph() -> None:
    w = mt.tensor([1.0, 2.0], requires_grad=True)
    scale = mt.tensor([3.0, 4.0])
    h = (w * 2.0).tanh()
    out = (h * scale).sum() + (w * w).sum()
    scale[1] = 0.0
    with pytest.raises(RuntimeError, match=r"MulBackward: input 1 \(a tensor of shape \(2,\)\)"):
        out.backward()


def test_modifying_after_backward_is_fine_and_a_new_graph_records_the_new_version() -> None:
    w, x, y = weight_and_input()
    y.backward()
    x += 1.0  # after backward: harmless
    (w * x).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [4.0 + 5.0, 5.0 + 6.0, 6.0 + 7.0])


def test_in_place_on_a_leaf_that_requires_grad_still_raises_outside_no_grad() -> None:
    w = mt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad.*no_grad"):
        w += 1.0
    with mt.no_grad():
        w += 1.0
    assert w._version == 1


def test_the_version_counter_makes_no_reference_cycle() -> None:
    """exp saves its output; the node holds the output's counter, not the output Tensor."""
    gc.disable()
    try:
        x = mt.randn(4, requires_grad=True)
        y = x.exp()
        y_ref, saved_ref = weakref.ref(y), weakref.ref(y.grad_fn.saved_tensors[0])
        assert y.grad_fn.saved_versions[0][0] == -1  # the output's version is recorded
        del y
        assert y_ref() is None  # freed by reference counting alone: no cycle through grad_fn
        assert saved_ref() is None  # and the node (with the saved array) went with it
    finally:
        gc.enable()

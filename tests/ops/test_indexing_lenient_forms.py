"""ops/indexing.py: the lenient forms PyTorch accepts and old tutorials use: a 0-d index (and a 0-d src) on
a 1-D tensor in gather / scatter(_) / scatter_add(_), and scatter's deprecated ``reduce='add'|'multiply'``:
PyTorch's values, gradients (first and second order) and errors."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt
from minitensor.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

FORMS = [
    ("scatter_ with a number", lambda lib: lib.zeros(5).scatter_(0, lib.tensor(2), 1.0)),
    ("scatter with a number", lambda lib: lib.zeros(5).scatter(-1, lib.tensor(2), 1.0)),
    ("scatter with a 0-d src", lambda lib: lib.zeros(5).scatter(0, lib.tensor(2), lib.tensor(3.0))),
    ("scatter, 1-d index, 0-d src", lambda lib: lib.zeros(5).scatter(0, lib.tensor([2]), lib.tensor(3.0))),
    ("scatter_add with a 0-d src", lambda lib: lib.zeros(5).scatter_add(0, lib.tensor(2), lib.tensor(3.0))),
    ("scatter_add, a longer src", lambda lib: lib.zeros(5).scatter_add(0, lib.tensor(2), lib.ones(3))),
    ("scatter_add_", lambda lib: lib.zeros(5).scatter_add_(0, lib.tensor(4), lib.tensor(3.0))),
    ("gather", lambda lib: lib.arange(5.0).gather(0, lib.tensor(3))),
    ("0-d input", lambda lib: lib.zeros(()).scatter(0, lib.tensor(0), lib.tensor(3.0))),
    ("reduce='add'", lambda lib: lib.ones(5).scatter(0, lib.tensor([0, 2, 2]), lib.tensor([1.0, 2, 3]), reduce="add")),
    ("reduce='multiply'", lambda lib: lib.ones(5).scatter_(0, lib.tensor([0, 2, 2]), 3.0, reduce="multiply")),
]


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize("name,form", FORMS, ids=[name for name, _ in FORMS])
def test_values_as_pytorch(name, form):
    ours, theirs = form(mt), form(torch)
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_gradients_with_a_0d_index_to_second_order():
    index = np.array(3)
    check_op(lambda x: x.gather(0, mt.tensor(index)), lambda x: x.gather(0, torch.tensor(index)), np.arange(5.0))
    check_op(
        lambda x, s: x.scatter(0, mt.tensor(index), s),
        lambda x, s: x.scatter(0, torch.tensor(index), s),
        np.arange(5.0),
        np.array(2.5),
    )
    check_op(
        lambda x, s: x.scatter_add(0, mt.tensor(index), s),
        lambda x, s: x.scatter_add(0, torch.tensor(index), s),
        np.arange(5.0),
        np.array(2.5),
    )
    # a src longer than the index: its first element is added (PyTorch's backward fails on this form)
    longer = mt.tensor([2.5, 1.0], dtype=mt.float64, requires_grad=True)
    x = mt.tensor(np.arange(5.0), dtype=mt.float64, requires_grad=True)
    assert gradcheck(lambda x, s: x.scatter_add(0, mt.tensor(index), s), [x, longer])
    assert gradgradcheck(lambda x, s: x.scatter_add(0, mt.tensor(index), s), [x, longer])


def test_reduce_add_is_differentiable_and_multiply_refuses_a_gradient():
    x = mt.tensor(np.arange(5.0), dtype=mt.float64, requires_grad=True)
    s = mt.tensor([1.0, 2.0, 3.0], dtype=mt.float64, requires_grad=True)
    y = x.scatter(0, mt.tensor([0, 2, 2]), s, reduce="add")
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(5))
    np.testing.assert_array_equal(s.grad.numpy(), np.ones(3))
    with pytest.raises(RuntimeError, match="the derivative of reduce='multiply' is not implemented"):
        x.scatter(0, mt.tensor([0, 2]), 2.0, reduce="multiply")
    with pytest.raises(ValueError, match="scatter: reduce must be 'add' or 'multiply', got 'max'"):
        mt.zeros(3).scatter(0, mt.tensor([0]), 1.0, reduce="max")


def test_errors_stay_where_pytorch_raises():
    with pytest.raises(ValueError, match="scatter: index must have as many dims as input"):
        mt.zeros(2, 3).scatter_(1, mt.tensor(2), 1.0)  # (a 0-d index only stands for 1-d)
    with pytest.raises(ValueError, match="scatter: index has size 2 in dim 0, larger than src's size 1"):
        mt.zeros(5).scatter(0, mt.tensor([2, 3]), mt.tensor(3.0))

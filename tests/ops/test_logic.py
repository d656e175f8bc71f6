"""ops/logic.py: the comparison and logic functions and methods under PyTorch's names (``eq``,
``isnan``, ``logical_and``, ``bitwise_and``, their aliases, ``Tensor.matmul``): PyTorch's values and
dtypes, bad input named, and under vmap the same as a loop."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.func as func
from minitensor.ops import logic

X = np.array([[1.0, np.nan, 3.0], [-np.inf, 0.0, np.inf]])
Y = np.array([[1.0, 2.0, 3.5], [0.0, 0.0, 1.0]])
INTS, MASK = np.array([[5, 3, 0], [6, 1, 7]]), np.array([[True, False, True], [False, False, True]])
BINARY = ["eq", "ne", "not_equal", "lt", "less", "le", "less_equal", "gt", "greater", "ge", "greater_equal"]
BINARY += ["logical_and", "logical_or", "logical_xor"]
UNARY = ["isnan", "isinf", "isfinite", "isposinf", "isneginf"]
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor"]


def _same(ours, theirs) -> None:
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", BINARY)
def test_comparisons_as_pytorch(name, torch):
    a, b, ta, tb = mt.tensor(X), mt.tensor(Y), torch.tensor(X), torch.tensor(Y)
    _same(getattr(mt, name)(a, b), getattr(torch, name)(ta, tb))
    _same(getattr(a, name)(b), getattr(ta, name)(tb))
    if not name.startswith("logical"):  # (PyTorch's logical_* take Tensors only, as minitensor's)
        _same(getattr(mt, name)(a, 1.0), getattr(torch, name)(ta, 1.0))  # (a number as the other)


@pytest.mark.parametrize("name", UNARY)
def test_value_tests_as_pytorch(name, torch):
    _same(getattr(mt, name)(mt.tensor(X)), getattr(torch, name)(torch.tensor(X)))
    _same(getattr(mt.tensor(X), name)(), getattr(torch.tensor(X), name)())
    _same(getattr(mt, name)(mt.tensor(INTS)), getattr(torch, name)(torch.tensor(INTS)))  # (integers: finite)


@pytest.mark.parametrize("name", BITWISE)
def test_bitwise_as_pytorch(name, torch):
    for a, b in ((INTS, INTS[::-1].copy()), (MASK, MASK[::-1].copy())):
        _same(getattr(mt, name)(mt.tensor(a), mt.tensor(b)), getattr(torch, name)(torch.tensor(a), torch.tensor(b)))
        _same(getattr(mt.tensor(a), name)(mt.tensor(b)), getattr(torch.tensor(a), name)(torch.tensor(b)))
    _same(mt.bitwise_not(mt.tensor(INTS)), torch.bitwise_not(torch.tensor(INTS)))
    _same(mt.tensor(MASK).bitwise_not(), torch.tensor(MASK).bitwise_not())


def test_matmul_method_is_the_differentiable_matmul(torch):
    a = mt.tensor(Y, requires_grad=True)
    b = mt.tensor(Y.T.copy(), requires_grad=True)
    out = a.matmul(b)
    ta, tb = torch.tensor(Y, requires_grad=True), torch.tensor(Y.T.copy(), requires_grad=True)
    tout = ta.matmul(tb)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy())
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="eq: input must be a Tensor, got list"):
        mt.eq([1.0], 1.0)
    with pytest.raises(TypeError, match="isnan: input must be a Tensor, got float"):
        mt.isnan(1.0)
    with pytest.raises(TypeError, match="logical_and: other must be a Tensor, got float"):
        mt.logical_and(mt.tensor(X), 1.0)
    with pytest.raises(TypeError, match="&: only bool and integer tensors"):
        mt.bitwise_and(mt.tensor(X), mt.tensor(Y))


@pytest.mark.parametrize("name", ["isnan", "isfinite", "logical_and", "eq"])
def test_under_vmap_as_a_loop(name):
    fn = getattr(logic, name)

    def f(v):
        return fn(v) if name in UNARY else fn(v > 0.5, v) if name == "logical_and" else fn(v, 3.0)

    batched = func.vmap(f)(mt.tensor(X)).numpy()
    np.testing.assert_array_equal(batched, np.stack([f(mt.tensor(row)).numpy() for row in X]))


def test_docstring_examples_run():
    import doctest

    assert doctest.testmod(logic, extraglobs={"mt": mt}).failed == 0

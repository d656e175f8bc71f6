"""Type promotion (``dtypes.result_type``) against PyTorch's, table-driven.

Operands come as dimensioned tensors, 0-d tensors and Python numbers; every pair
(and the ops that take them: arithmetic, comparisons, where, cat, clamp, in-place
arithmetic) must give PyTorch's result dtype and values.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import minitensor as mt
from minitensor import dtypes

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def operands():
    """(label, minitensor operand, torch operand): dimensioned and 0-d tensors of every dtype, and numbers."""
    for name in DTYPES:
        data = [1, 0, 1] if name == "bool" else [3, 2, 1]
        yield f"{name}[3]", mt.tensor(data, dtype=name), torch.tensor(data, dtype=getattr(torch, name))
        yield f"{name}[]", mt.tensor(data[0], dtype=name), torch.tensor(data[0], dtype=getattr(torch, name))
    for number in (True, 2, 2.5):
        yield repr(number), number, number


PAIRS = [
    (a, b) for a, b in itertools.product(list(operands()), repeat=2) if not (np.isscalar(a[1]) and np.isscalar(b[1]))
]


def torch_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


@pytest.mark.parametrize("a, b", PAIRS, ids=[f"{a[0]}-{b[0]}" for a, b in PAIRS])
def test_result_type_and_ops_follow_pytorch(a, b) -> None:
    (_, ma, ta), (_, mb, tb) = a, b
    assert dtypes.result_type(ma, mb).name == torch_name(torch.result_type(ta, tb))
    for op in ("add", "mul", "sub", "truediv", "lt", "eq"):
        try:
            expected = getattr(torch.Tensor, f"__{op}__")(ta, tb) if torch.is_tensor(ta) else None
        except RuntimeError:  # (PyTorch refuses bool - bool: so does minitensor, with NumPy's error)
            continue
        if expected is None:
            continue
        got = getattr(mt.Tensor, f"__{op}__")(ma, mb)
        assert got.dtype.name == torch_name(expected.dtype), op
        np.testing.assert_allclose(got.numpy().astype(float), expected.numpy().astype(float), rtol=1e-3)


def test_a_0d_tensor_does_not_upcast_a_dimensioned_one() -> None:
    x = mt.ones(2) * mt.tensor(0.5, dtype=mt.float64)
    assert x.dtype == mt.float32
    assert mt.nn.Linear(2, 3)(x[None]).dtype == mt.float32  # (it used to reach Linear as float64 and raise)
    assert (mt.ones(2, dtype=mt.int32) + mt.tensor(5)).dtype == mt.int32


def test_gradients_flow_back_through_a_promotion_in_each_operands_dtype() -> None:
    x = mt.ones(2, requires_grad=True)
    s = mt.tensor(0.5, dtype=mt.float64, requires_grad=True)
    (x * s).sum().backward()
    assert x.grad.dtype == mt.float32 and s.grad.dtype == mt.float64
    np.testing.assert_allclose(s.grad.numpy(), 2.0)


@pytest.mark.parametrize("value", [2**40, 300, -1])
@pytest.mark.parametrize("name", ["uint8", "int32"])
def test_python_ints_wrap_into_smaller_integer_dtypes_as_in_pytorch(name: str, value: int) -> None:
    got = mt.ones(2, dtype=name) + value
    expected = torch.ones(2, dtype=getattr(torch, name)) + value
    assert got.dtype.name == name
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_a_python_int_beyond_int64_raises_overflow_error_as_in_pytorch() -> None:
    with pytest.raises(OverflowError):
        mt.ones(2, dtype=mt.int32) + 2**70


@pytest.mark.parametrize("other", [2.5, "float64[]", "int64[]", "float64[3]"])
@pytest.mark.parametrize("x", ["int32[3]", "float32[3]", "bool[3]"])
def test_where_and_cat_promote_as_pytorch(x: str, other) -> None:
    table = {label: (m, t) for label, m, t in operands()}
    mx, tx = table[x]
    mo, to = table[other] if isinstance(other, str) else (other, other)
    cond = [True, False, True]
    got = mt.where(mt.tensor(cond), mx, mo)
    expected = torch.where(torch.tensor(cond), tx, to)
    assert got.dtype.name == torch_name(expected.dtype)
    if isinstance(other, str) and other.endswith("[3]"):
        assert mt.cat([mx, mo]).dtype.name == torch_name(torch.cat([tx, to]).dtype)
        assert mt.stack([mx, mo]).dtype.name == torch_name(torch.stack([tx, to]).dtype)


@pytest.mark.parametrize("bounds", [{"min": 1.5}, {"max": 2}, {"min": 1, "max": 2.5}])
@pytest.mark.parametrize("name", ["int64", "int32", "float32", "float16"])
def test_clamp_promotes_with_its_bounds_as_pytorch(name: str, bounds: dict) -> None:
    got = mt.tensor([0, 1, 2, 3], dtype=name).clamp(**bounds)
    expected = torch.tensor([0, 1, 2, 3], dtype=getattr(torch, name)).clamp(**bounds)
    assert got.dtype.name == torch_name(expected.dtype)
    np.testing.assert_array_equal(got.numpy().astype(float), expected.numpy().astype(float))


@pytest.mark.parametrize(
    "op, other", [("__imul__", 1.5), ("__itruediv__", 2), ("add_", 0.5), ("sub_", 0.5), ("mul_", 2.5), ("div_", 2)]
)
def test_in_place_arithmetic_refuses_a_float_result_in_an_integer_tensor(op: str, other) -> None:
    t = mt.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        getattr(t, op)(other)
    np.testing.assert_array_equal(t.numpy(), [1, 2])  # nothing changed
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        getattr(torch.tensor([1, 2]), op)(other)


@pytest.mark.parametrize("name", ["int32", "uint8", "float16", "float32"])
def test_in_place_arithmetic_keeps_the_tensors_dtype_as_pytorch(name: str) -> None:
    got, expected = mt.ones(3, dtype=name), torch.ones(3, dtype=getattr(torch, name))
    for other in (2, mt.tensor(3, dtype=mt.int64), mt.tensor([1, 2, 3], dtype=mt.int16)):
        t_other = torch.tensor(other.numpy()) if isinstance(other, mt.Tensor) else other
        got += other
        expected += t_other
    assert got.dtype.name == name
    np.testing.assert_array_equal(got.numpy(), expected.numpy())

"""ops/modulo.py: ``//``, ``%``, ``floor_divide``, ``remainder``, ``fmod`` and their in-place and
reflected forms, against PyTorch (values and dtypes), with float64 gradchecks to second order."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

torch = pytest.importorskip("torch")

DIVIDENDS = [7, -7, 6, -6, 0, 5]
DIVISORS = [2, 2, -2, 3, -3, 4]


def tensors(kind: str, values: list) -> tuple:
    """(minitensor, torch) tensors of ``values``: int64, or float32 with a half added."""
    data = values if kind == "int" else [x + 0.5 for x in values]
    return mt.tensor(data), torch.tensor(data)


@pytest.mark.parametrize("op", ["__floordiv__", "__mod__", "fmod", "remainder", "__rfloordiv__", "__rmod__"])
@pytest.mark.parametrize("kind", ["int", "float"])
@pytest.mark.parametrize("number", [2, -2.5])
def test_values_and_dtypes_follow_pytorch(op: str, kind: str, number) -> None:
    reflected = op.startswith("__r")  # (number // tensor: the tensor divides)
    ma, ta = tensors(kind, DIVISORS if reflected else DIVIDENDS)
    got, expected = getattr(ma, op)(number), getattr(ta, op)(number)
    assert got.dtype.name == str(expected.dtype).removeprefix("torch.")
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


@pytest.mark.parametrize("fn", ["floor_divide", "remainder", "fmod"])
def test_tensor_by_tensor_broadcasts_as_pytorch(fn: str) -> None:
    a, b = np.array(DIVIDENDS)[:, None] * 1.25, np.array(DIVISORS)[None, :]
    got = getattr(mt, fn)(mt.tensor(a), mt.tensor(b))
    expected = getattr(torch, fn)(torch.tensor(a, dtype=torch.float32), torch.tensor(b))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


@pytest.mark.parametrize("method, op", [("__ifloordiv__", "//="), ("__imod__", "%="), ("floor_divide_", None),
                                        ("remainder_", None), ("fmod_", None)])  # fmt: skip
def test_in_place_forms_write_into_the_tensor_as_pytorch(method: str, op) -> None:
    got, expected = mt.tensor(DIVIDENDS), torch.tensor(DIVIDENDS)
    alias = got[:]
    got = getattr(got, method)(mt.tensor(DIVISORS))
    expected = getattr(expected, method)(torch.tensor(DIVISORS))
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    np.testing.assert_array_equal(alias.numpy(), expected.numpy())  # the same memory changed
    with pytest.raises(RuntimeError, match="result type Float can't be cast"):
        getattr(mt.tensor(DIVIDENDS), method)(2.5)


@pytest.mark.parametrize("fn", [lambda a, b: a // b, lambda a, b: a % b, mt.fmod, lambda a, b: b % a])
def test_an_integer_division_by_zero_raises_as_pytorch(fn) -> None:
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(mt.tensor([7, 0, -7]), mt.tensor([1, 0, 2]))


def test_float_division_by_zero_gives_inf_and_nan_silently_as_pytorch() -> None:
    x = mt.tensor([7.0, -7.0, 0.0])
    np.testing.assert_array_equal((x // 0.0).numpy(), [np.inf, -np.inf, np.nan])
    assert np.isnan((x % 0.0).numpy()).all() and np.isnan(mt.fmod(x, 0.0).numpy()).all()


def test_floor_division_is_not_differentiable() -> None:
    x = mt.tensor([7.5, -7.5], requires_grad=True)
    assert not (x // 2).requires_grad


@pytest.mark.parametrize("name", ["remainder", "fmod"])
def test_gradients_to_second_order_and_against_pytorch(name: str) -> None:
    rng = np.random.default_rng(3)
    a = rng.uniform(-5, 5, (3, 4))
    b = rng.uniform(0.7, 2.0, (4,)) * rng.choice([-1, 1], 4)
    a = np.where(np.abs(np.remainder(a, b)) < 0.05, a + 0.1, a)  # (away from the jumps)
    check_op(getattr(mt, name), getattr(torch, name), a, b)


def test_the_reflected_remainder_sends_a_gradient_to_the_divisor() -> None:
    b = mt.tensor([2.0, -3.0], dtype=mt.float64, requires_grad=True)
    (grad,) = mt.autograd.grad((7.0 % b).sum(), b)
    np.testing.assert_allclose(grad.numpy(), -np.floor(7.0 / np.array([2.0, -3.0])))

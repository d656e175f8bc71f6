"""hypot, logaddexp, logaddexp2, copysign, float_power, lerp, addcmul, addcdiv, true_divide (ops/binary_math.py):
float64 gradcheck, second order and PyTorch as the oracle, with broadcasting; heaviside's values."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

rng = np.random.default_rng(15)
A, B = rng.standard_normal((2, 3)), rng.standard_normal((3,))
AWAY = np.where(np.abs(A) < 0.2, 0.5, A)


@pytest.mark.parametrize("name", ["hypot", "logaddexp", "logaddexp2", "true_divide"])
def test_two_operand_functions(name):
    b = B + 3.0 if name == "true_divide" else B
    check_op(lambda x, y: getattr(mt, name)(x, y), lambda x, y: getattr(x, name)(y), A, b)


def test_logaddexp_does_not_overflow():
    big = mt.tensor([1000.0, -1000.0], dtype=mt.float64)
    np.testing.assert_allclose(mt.logaddexp(big, big).numpy(), [1000 + np.log(2), -1000 + np.log(2)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_matches_numpy_at_infinities_nan_and_large_arrays(name, dtype) -> None:
    """The forward is max + log1p(exp(-|a - b|)) by the kernels: NumPy's answers, equal infinities included."""
    values = np.array([-np.inf, -1e30, -100.0, -1.0, -0.0, 0.0, 1e-8, 1.0, 88.0, 1e30, np.inf, np.nan], dtype)
    a, b = np.meshgrid(values, values)
    big_a, big_b = (np.random.default_rng(i).standard_normal((64, 512)).astype(dtype) * 30 for i in (0, 1))
    for x, y in ((a, b), (big_a, big_b), (big_a[:1], big_b)):
        with np.errstate(invalid="ignore"):
            expected = getattr(np, name)(x, y)
        got = getattr(mt, name)(mt.from_numpy(x), mt.from_numpy(y)).numpy()
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-6)


def test_copysign_gradient_goes_to_the_magnitude_only():
    check_op(mt.copysign, lambda x, y: x.copysign(y), AWAY, B)
    check_op(lambda x: mt.copysign(x, -2.0), lambda x: x.copysign(-2.0), AWAY)


def test_float_power_computes_in_float64():
    base, exponent = rng.uniform(0.5, 2.0, (2, 3)), rng.standard_normal((3,))
    check_op(mt.float_power, lambda x, y: x.float_power(y), base, exponent)
    assert mt.float_power(mt.tensor([2.0]), 2).dtype == mt.float64
    assert mt.float_power(2, mt.tensor([3], dtype=mt.int64)).tolist() == [8.0]


def test_lerp_with_a_number_and_a_tensor_weight():
    w = rng.uniform(0, 1, (2, 3))
    check_op(lambda x, y: mt.lerp(x, y, 0.3), lambda x, y: x.lerp(y, 0.3), A, B)
    check_op(lambda x, y: mt.lerp(x, y, 0.8), lambda x, y: x.lerp(y, 0.8), A, B)  # (the |w| >= 0.5 formula)
    check_op(mt.lerp, lambda x, y, z: x.lerp(y, z), A, B, w)
    check_op(mt.lerp, lambda x, y, z: x.lerp(y, z), A, B[:1], w * 3 - 1.5)  # (both formulas, broadcast)


def test_lerp_is_pytorchs_and_gives_end_at_weight_one():
    """Both formulas, as PyTorch chooses them by |w|; PyTorch's kernel fuses the multiply-add, so the
    last bit may differ.  w = 1 gives end exactly."""
    torch = pytest.importorskip("torch")
    a, b = (rng.standard_normal(1000).astype(np.float32) * 1e3 for _ in range(2))
    w = rng.uniform(-1, 2, 1000).astype(np.float32)
    for weight in (0.3, 0.7, 1.0, -0.2):
        got = mt.lerp(mt.tensor(a), mt.tensor(b), weight).numpy()
        expected = torch.lerp(torch.tensor(a), torch.tensor(b), weight).numpy()
        np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-3)
    np.testing.assert_array_equal(mt.lerp(mt.tensor(a), mt.tensor(b), 1.0).numpy(), b)
    got = mt.lerp(mt.tensor(a), mt.tensor(b), mt.tensor(w)).numpy()
    expected = torch.lerp(torch.tensor(a), torch.tensor(b), torch.tensor(w)).numpy()
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-3)
    np.testing.assert_array_equal(mt.lerp(mt.tensor(a), mt.tensor(b), mt.ones(1000)).numpy(), b)


def test_addcmul_and_addcdiv():
    c = rng.uniform(0.5, 2.0, (2, 1))
    check_op(lambda x, y, z: mt.addcmul(x, y, z, value=0.5), lambda x, y, z: x.addcmul(y, z, value=0.5), A, B, c)
    check_op(lambda x, y, z: mt.addcdiv(x, y, z, value=-2), lambda x, y, z: x.addcdiv(y, z, value=-2), A, B, c)
    with pytest.raises(TypeError, match="addcdiv: integer division"):
        mt.addcdiv(mt.ones(2), mt.tensor([1, 2]), mt.tensor([1, 2]))
    with pytest.raises(ValueError, match=r"addcmul: shapes \(2,\), \(3,\) and \(2,\) cannot be broadcast"):
        mt.addcmul(mt.ones(2), mt.ones(3), mt.ones(2))


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("shapes", [((3, 4), (4,), (1,)), ((), (), ()), ((4,), (3, 4), (3, 1))], ids=str)
@pytest.mark.parametrize("needs", [(True,) * 3, (False, True, False), (False, False, True), (True, False, False)])
def test_addcmul_and_addcdiv_one_node_against_pytorch(name, shapes, needs) -> None:
    """``AddCMul`` / ``AddCDiv`` (one node): float32 values and the gradients of the tensors that need
    one, against PyTorch, with input wider than the product, 0-d operands and a product wider than input."""
    torch = pytest.importorskip("torch")
    arrays = [rng.uniform(0.5, 2.0, shape).astype(np.float32) for shape in shapes]
    seed = rng.standard_normal(np.broadcast_shapes(*shapes)).astype(np.float32)
    mine = [mt.tensor(a, requires_grad=need) for a, need in zip(arrays, needs)]
    theirs = [torch.tensor(a, requires_grad=need) for a, need in zip(arrays, needs)]
    out = getattr(mt, name)(*mine, value=-0.75)
    expected = getattr(torch, name)(*theirs, value=-0.75)
    assert out.grad_fn.name() == {"addcmul": "AddCMulBackward", "addcdiv": "AddCDivBackward"}[name]
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-6, atol=1e-6)
    out.backward(mt.tensor(seed))
    expected.backward(torch.tensor(seed))
    for m, t in zip(mine, theirs):
        assert (m.grad is None) == (t.grad is None)
        if t.grad is not None:
            np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_addcmul_of_integers_truncates_a_float_value_as_pytorch() -> None:
    """Integer tensors: ``value`` 0.5 is 0 there (PyTorch's cast), the result stays int64."""
    out = mt.addcmul(mt.tensor([1, 2]), mt.tensor([1, 2]), mt.tensor([3, 4]), value=0.5)
    assert out.dtype == mt.int64 and out.tolist() == [1, 2]
    assert mt.addcmul(mt.tensor([1, 2]), mt.tensor([1, 2]), mt.tensor([3, 4]), value=2).tolist() == [7, 18]
    assert mt.addcmul(mt.tensor([1, 2]), mt.tensor([1.0, 2.0]), mt.tensor([3, 4]), value=0.5).tolist() == [2.5, 6.0]


def test_heaviside_values_and_no_gradient():
    x = mt.tensor([-2.0, 0.0, 3.0, float("nan")], requires_grad=True)
    out = mt.heaviside(x, mt.tensor([0.5]))
    np.testing.assert_array_equal(out.numpy(), [0.0, 0.5, 1.0, 0.0])
    assert not out.requires_grad
    with pytest.raises(TypeError, match="heaviside: input and values must have the same dtype"):
        mt.heaviside(mt.ones(2), mt.tensor([1]))


def test_in_place_forms_record_both_operands():
    w, v = (mt.tensor([0.5, 2.0], dtype=mt.float64, requires_grad=True) for _ in range(2))
    h = w * 1.0
    h.lerp_(v, 0.25).hypot_(v)
    h.sum().backward()
    torch = pytest.importorskip("torch")
    tw, tv = (torch.tensor([0.5, 2.0], dtype=torch.float64, requires_grad=True) for _ in range(2))
    th = tw * 1.0
    th.lerp_(tv, 0.25).hypot_(tv)
    th.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy())
    np.testing.assert_allclose(v.grad.numpy(), tv.grad.numpy())


def test_bad_arguments():
    with pytest.raises(TypeError, match="lerp: end must be a Tensor, got float"):
        mt.lerp(mt.ones(2), 1.0, 0.5)
    with pytest.raises(TypeError, match="lerp: expected weight of input's dtype Float, got Double"):
        mt.lerp(mt.ones(2), mt.ones(2), mt.ones(2, dtype=mt.float64))
    with pytest.raises(TypeError, match="lerp: expected end of input's dtype"):
        mt.lerp(mt.ones(2), mt.ones(2, dtype=mt.float64), 0.5)
    with pytest.raises(ValueError, match="hypot: shapes"):
        mt.hypot(mt.ones(2), mt.ones(3))

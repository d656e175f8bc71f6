"""log1p, expm1, log2, log10, exp2, rsqrt, square, reciprocal, neg, frac (functions and methods):
float64 gradcheck, second order and PyTorch as the oracle; sign, floor, ceil, round, trunc: PyTorch's
values and zero gradients; integer inputs computed in the default float dtype."""

from __future__ import annotations

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt

rng = np.random.default_rng(7)
POSITIVE = rng.random((3, 4)) + 0.3
SIGNED = rng.standard_normal((3, 4)) * 2 + 0.05  # away from integers' neighbourhood at 0


@pytest.mark.parametrize("name", ["log1p", "log2", "log10", "rsqrt", "reciprocal"])
def test_functions_of_positive_inputs(name):
    check_op(lambda x: getattr(mt, name)(x), lambda x: getattr(x, name)(), POSITIVE)
    check_op(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), POSITIVE)


@pytest.mark.parametrize("name", ["expm1", "exp2", "square", "neg", "frac"])
def test_functions_of_signed_inputs(name):
    data = SIGNED if name != "frac" else SIGNED + 0.013  # (frac: away from integers, where it jumps)
    check_op(lambda x: getattr(mt, name)(x), lambda x: getattr(x, name)(), data)
    check_op(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), data)


def test_log1p_and_expm1_keep_precision_near_zero():
    tiny = mt.tensor([1e-12, -1e-12], dtype=mt.float64)
    np.testing.assert_allclose(mt.log1p(tiny).numpy(), [1e-12, -1e-12], rtol=1e-12)
    np.testing.assert_allclose(mt.expm1(tiny).numpy(), [1e-12, -1e-12], rtol=1e-12)


def _ulps(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in units of the last place of ``got``'s dtype at ``exact``."""
    spacing = np.spacing(np.abs(exact).astype(got.dtype)).astype(np.float64)
    return np.abs(got.astype(np.float64) - exact) / spacing


@pytest.mark.parametrize("dtype, most", [(np.float32, 6.0), (np.float64, 3.0)])
def test_log1p_and_expm1_within_a_few_ulp_of_numpy_on_every_range(dtype, most):
    """Kahan's forms (ops/more_math.py) against NumPy's C-library log1p / expm1 (float32 against
    float64's, rounded: the exactly rounded result up to a half ulp)."""
    from minitensor.kernels.expm1 import expm1 as _expm1
    from minitensor.kernels.log1p import log1p as _log1p

    r = np.random.default_rng(3)
    wide = 10 ** r.uniform(-40, 38, 20000)
    log_in = np.concatenate([r.uniform(-1, 1, 20000), wide, -(10 ** r.uniform(-40, 0, 20000)), [0.0, -1.0, 2.0]])
    exp_in = np.concatenate([r.uniform(-1, 1, 20000), r.uniform(-100, 88, 20000), [0.0, -200.0, 1e-30]])
    for ours, numpys, data in ((_log1p, np.log1p, log_in), (_expm1, np.expm1, exp_in)):
        x = data.astype(dtype)
        with np.errstate(all="ignore"):
            exact = numpys(x.astype(np.float64) if dtype == np.float32 else x)
        got = ours(x)
        assert got.dtype == dtype
        finite = np.isfinite(exact)
        assert _ulps(got[finite], exact[finite]).max() <= most, numpys.__name__
        np.testing.assert_array_equal(got[~finite], exact[~finite].astype(dtype))


def test_log1p_and_expm1_at_their_special_values():
    from minitensor.kernels.expm1 import expm1 as _expm1
    from minitensor.kernels.log1p import log1p as _log1p

    x = np.array([0.0, -0.0, -1.0, -2.0, np.inf, -np.inf, np.nan])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_log1p(x), np.log1p(x))  # (-0.0 and 0.0 compare equal:)
        assert np.signbit(_log1p(x)[1]) and np.signbit(_expm1(x)[1])
        y = np.array([0.0, -0.0, 800.0, -800.0, np.inf, -np.inf, np.nan])
        np.testing.assert_array_equal(_expm1(y), np.expm1(y))


@pytest.mark.parametrize("name", ["sign", "floor", "ceil", "round", "trunc"])
def test_piecewise_constant_functions_have_zero_gradient(name):
    torch = pytest.importorskip("torch")
    data = np.array([-2.5, -1.5, -0.4, 0.0, 0.5, 1.5, 2.7])
    x = mt.tensor(data, dtype=mt.float64, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    y, ty = getattr(mt, name)(x), getattr(torch, name)(tx)
    np.testing.assert_array_equal(y.numpy(), ty.detach().numpy())
    (y * 3).sum().backward()
    (ty * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert not x.grad.numpy().any()


def test_integer_inputs_give_default_floats():
    ints = mt.tensor([1, 2, 4])
    assert mt.log2(ints).tolist() == [0.0, 1.0, 2.0] and mt.log2(ints).dtype == mt.float32
    assert mt.reciprocal(ints).dtype == mt.float32 and mt.sign(mt.tensor([-3, 0, 2])).tolist() == [-1, 0, 1]


@pytest.mark.parametrize("name", ["sign", "floor", "ceil", "round", "trunc"])
def test_piecewise_constant_gradient_is_zero_even_for_a_nan_gradient(name):
    """PyTorch's derivative is zeros_like(grad): a NaN arriving from above does not pass."""
    x = mt.tensor([0.5, -1.5], requires_grad=True)
    getattr(mt, name)(x).backward(mt.tensor([np.nan, np.inf]))
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


def test_frac_is_one_node_whose_gradient_passes_unchanged():
    x = mt.tensor([1.5, -2.25, np.inf, -0.0, 3.0], requires_grad=True)
    y = mt.frac(x)
    assert type(y.grad_fn).__name__ == "FracBackward"
    np.testing.assert_array_equal(y.detach().numpy(), [0.5, -0.25, np.nan, 0.0, 0.0])
    g = mt.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    y.backward(g)
    np.testing.assert_array_equal(x.grad.numpy(), g.numpy())


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
def test_log2_and_log10_are_exact_on_powers_of_two_and_ten(dtype):
    powers = np.arange(-30, 31)
    np.testing.assert_array_equal(mt.log2(mt.tensor(2.0**powers, dtype=dtype)).numpy(), powers)
    np.testing.assert_array_equal(mt.log10(mt.tensor(10.0 ** powers[23:38], dtype=dtype)).numpy(), powers[23:38])
    x = mt.tensor([8.0, 1000.0], dtype=dtype, requires_grad=True)
    (mt.log2(x) + mt.log10(x)).sum().backward()
    np.testing.assert_allclose(
        x.grad.numpy(), 1 / (x.detach().numpy() * np.log(2)) + 1 / (x.detach().numpy() * np.log(10))
    )


@pytest.mark.parametrize("name", ["deg2rad", "rad2deg"])
def test_angle_conversions(name):
    check_op(lambda x: getattr(mt, name)(x), lambda x: getattr(x, name)(), SIGNED)
    assert getattr(mt, name)(mt.tensor([180])).dtype == mt.float32


def test_nan_to_num_values_and_gradient_as_pytorch():
    check_op(mt.nan_to_num, lambda x: x.nan_to_num(), SIGNED)
    torch = pytest.importorskip("torch")
    data = np.array([np.nan, np.inf, -np.inf, 1.5])
    x, tx = mt.tensor(data, dtype=mt.float64, requires_grad=True), torch.tensor(data, requires_grad=True)
    for kwargs in ({}, {"nan": 1.0, "posinf": 9.0, "neginf": -9.0}):
        np.testing.assert_array_equal(mt.nan_to_num(x, **kwargs).detach().numpy(),
                                      torch.nan_to_num(tx, **kwargs).detach().numpy())  # fmt: skip
    mt.nan_to_num(x).sum().backward()
    torch.nan_to_num(tx).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert mt.nan_to_num(mt.tensor([1, 2])).tolist() == [1, 2]


def test_sgn_fix_and_signbit():
    x = mt.tensor([-2.5, -0.0, 0.0, 1.5], requires_grad=True)
    assert mt.sgn(x).tolist() == [-1.0, 0.0, 0.0, 1.0] and mt.fix(x).tolist() == [-2.0, 0.0, 0.0, 1.0]
    assert mt.signbit(x).tolist() == [True, True, False, False] and not mt.signbit(x).requires_grad
    (mt.sgn(x) + mt.fix(x)).sum().backward()
    assert not x.grad.numpy().any()

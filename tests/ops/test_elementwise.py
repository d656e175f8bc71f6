"""ops/elementwise.py: gradient checks (float64) of the elementwise ops on hypothesis-generated inputs,
``a ** b`` with a Tensor exponent to second order, and the dtypes of float functions of integers.

Binary ops get broadcast shape pairs; every input may be contiguous,
transposed or strided.  Inputs stay away from each op's kinks.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import f64
from hypothesis import given
from hypothesis import strategies as st
from op_checks import check_op
from strategies import broadcast_pairs, layouts, leaf, seeds, shapes, values

import minitensor as mt
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.ops import elementwise as E

BINARY = {
    "add": (lambda a, b: a + b, {}, {}),
    "sub": (lambda a, b: a - b, {}, {}),
    "mul": (lambda a, b: a * b, {}, {}),
    "div": (lambda a, b: a / b, {}, {"away": 0.5}),
    "pow": (lambda a, b: a**b, {"low": 0.5, "high": 2.0}, {}),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@given(pair=broadcast_pairs(), seed=seeds, layout_a=layouts, layout_b=layouts)
def test_binary_gradcheck_broadcast(name, pair, seed, layout_a, layout_b):
    fn, kw_a, kw_b = BINARY[name]
    a = leaf(seed, pair[0], layout_a, **kw_a)
    b = leaf(seed + 7, pair[1], layout_b, **kw_b)
    out = fn(a, b)
    assert out.shape == np.broadcast_shapes(pair[0], pair[1])
    np.testing.assert_allclose(out.numpy(), fn(a.numpy(), b.numpy()), rtol=1e-12, atol=0)
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


@pytest.mark.parametrize("name", sorted(BINARY))
@given(pair=broadcast_pairs(), seed=seeds)
def test_binary_gradcheck_one_side_only(name, pair, seed):
    """Only one operand requires grad: the other gets no gradient and no error."""
    fn, kw_a, kw_b = BINARY[name]
    a = leaf(seed, pair[0], **kw_a)
    b = leaf(seed + 3, pair[1], requires_grad=False, **kw_b)
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))
    fn(a, b).sum().backward()
    assert b.grad is None and a.grad.shape == a.shape


SCALAR_RIGHT = {
    "add": lambda x, s: x + s,
    "sub": lambda x, s: x - s,
    "mul": lambda x, s: x * s,
    "div": lambda x, s: x / s,
    "radd": lambda x, s: s + x,
    "rsub": lambda x, s: s - x,
    "rmul": lambda x, s: s * x,
}


@pytest.mark.parametrize("name", sorted(SCALAR_RIGHT))
@given(shape=shapes(), seed=seeds, layout=layouts, s=st.sampled_from([-2.5, -1, 0.5, 3]))
def test_scalar_operand_gradcheck(name, shape, seed, layout, s):
    fn = SCALAR_RIGHT[name]
    x = leaf(seed, shape, layout)
    np.testing.assert_allclose(fn(x, s).numpy(), fn(x.numpy(), s), rtol=1e-12)
    assert gradcheck(lambda t: fn(t, s), x)
    assert gradgradcheck(lambda t: fn(t, s), x)


@given(shape=shapes(), seed=seeds, layout=layouts, s=st.sampled_from([-2.0, 0.5, 3.0]))
def test_rdiv_scalar_gradcheck(shape, seed, layout, s):
    x = leaf(seed, shape, layout, away=0.5)
    np.testing.assert_allclose((s / x).numpy(), s / x.numpy(), rtol=1e-12)
    assert gradcheck(lambda t: s / t, x)
    assert gradgradcheck(lambda t: s / t, x)


@given(shape=shapes(), seed=seeds, layout=layouts, p=st.sampled_from([2, 3, 0.5, -1.5, 1.7]))
def test_pow_tensor_scalar_gradcheck(shape, seed, layout, p):
    # integer powers are smooth everywhere, fractional ones need a positive base
    kw = {} if isinstance(p, int) else {"low": 0.3, "high": 2.0}
    x = leaf(seed, shape, layout, **kw)
    np.testing.assert_allclose((x**p).numpy(), x.numpy() ** p, rtol=1e-12)
    assert gradcheck(lambda t: t**p, x)
    assert gradgradcheck(lambda t: t**p, x)


@given(shape=shapes(), seed=seeds, layout=layouts, base=st.sampled_from([2.0, 0.5, np.e, 3]))
def test_pow_scalar_tensor_gradcheck(shape, seed, layout, base):
    x = leaf(seed, shape, layout)
    np.testing.assert_allclose((base**x).numpy(), base ** x.numpy(), rtol=1e-12)
    assert gradcheck(lambda t: base**t, x)
    assert gradgradcheck(lambda t: base**t, x)


def test_pow_gradients_by_hand():
    a = mt.tensor([0.5, 2.0, 3.0], dtype=mt.float64, requires_grad=True)
    b = mt.tensor([2.0, -1.0, 0.5], dtype=mt.float64, requires_grad=True)
    (a**b).backward(mt.ones(3, dtype=mt.float64))
    np.testing.assert_allclose(a.grad.numpy(), b.numpy() * a.numpy() ** (b.numpy() - 1), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), a.numpy() ** b.numpy() * np.log(a.numpy()), rtol=1e-12)


UNARY = {
    "neg": (lambda t: -t, np.negative, {}),
    "exp": (lambda t: t.exp(), np.exp, {}),
    "log": (lambda t: t.log(), np.log, {"low": 0.1, "high": 3.0}),
    "sqrt": (lambda t: t.sqrt(), np.sqrt, {"low": 0.1, "high": 3.0}),
    "abs": (lambda t: t.abs(), np.abs, {"away": 0.1}),
    "builtin_abs": (lambda t: abs(t), np.abs, {"away": 0.1}),
    "tanh": (lambda t: t.tanh(), np.tanh, {}),
    "sigmoid": (lambda t: t.sigmoid(), lambda a: 1 / (1 + np.exp(-a)), {"low": -6.0, "high": 6.0}),
    "relu": (lambda t: t.relu(), lambda a: np.maximum(a, 0), {"away": 0.1}),
    "mt.exp": (mt.exp, np.exp, {}),
    "mt.relu": (mt.relu, lambda a: np.maximum(a, 0), {"away": 0.1}),
    "cast_f64": (lambda t: E.Cast.apply(t, dtype=mt.float64), lambda a: a, {}),
    "to_f64": (lambda t: t.to(mt.float64) * 1.0, lambda a: a, {}),
    "double": (lambda t: t.double().tanh(), np.tanh, {}),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@given(shape=shapes(), seed=seeds, layout=layouts)
def test_unary_gradcheck(name, shape, seed, layout):
    fn, ref, kw = UNARY[name]
    x = leaf(seed, shape, layout, **kw)
    out = fn(x)
    assert out.shape == x.shape and out.dtype == mt.float64
    np.testing.assert_allclose(out.numpy(), ref(x.numpy()), rtol=1e-12, atol=1e-300)
    assert gradcheck(fn, x)
    assert gradgradcheck(fn, x)


@given(shape=shapes(), seed=seeds, layout=layouts, bounds=st.sampled_from([(-0.5, 0.5), (None, 0.3), (-0.2, None)]))
def test_clamp_gradcheck_away_from_bounds(shape, seed, layout, bounds):
    low, high = bounds
    x = values(seed, shape, -1.5, 1.5)
    for bound in (low, high):
        if bound is not None:  # push values at least 0.05 away from each bound
            x = np.where(np.abs(x - bound) < 0.05, bound + 0.05 * np.sign(x - bound + 1e-12), x)
    t = mt.from_numpy(x if layout == "contiguous" else np.asfortranarray(x)).requires_grad_()
    out = t.clamp(low, high)
    np.testing.assert_array_equal(out.numpy(), np.clip(x, low, high))
    assert gradcheck(lambda a: a.clamp(min=low, max=high), t)
    assert gradgradcheck(lambda a: a.clamp(min=low, max=high), t)


def test_clamp_gradient_is_one_inside_zero_outside():
    x = mt.tensor([-2.0, -0.3, 0.0, 0.4, 2.0], dtype=mt.float64, requires_grad=True)
    x.clamp(-0.5, 0.5).backward(mt.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=mt.float64))
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 2.0, 3.0, 4.0, 0.0])


@pytest.mark.parametrize("bounds", [(0, None), (None, 0), (None, 0.3), (-1, 1), (1, -1), (0.5, None)])
def test_clamp_values_like_torch_with_nan_infinities_and_signed_zeros(bounds):
    torch = pytest.importorskip("torch")
    x = np.array([-2.0, -0.5, 0.0, 0.5, np.nan, np.inf, -np.inf, -0.0], np.float32)
    ours, theirs = mt.tensor(x).clamp(*bounds).numpy(), torch.tensor(x).clamp(*bounds).numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs))  # (a tie keeps x: clamp(-0.0, min=0) is -0.0)


def test_relu_and_abs_gradient_at_zero_is_zero():
    x = mt.tensor([-1.0, 0.0, 2.0], dtype=mt.float64, requires_grad=True)
    (x.relu() + x.abs()).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [-1.0, 0.0, 2.0])


def test_sigmoid_is_stable_for_large_inputs():
    x = mt.tensor([-1000.0, -30.0, 0.0, 30.0, 1000.0], dtype=mt.float64, requires_grad=True)
    y = x.sigmoid()
    assert np.all(np.isfinite(y.numpy()))
    np.testing.assert_allclose(y.numpy(), [0.0, 1 / (1 + np.exp(30)), 0.5, 1 / (1 + np.exp(-30)), 1.0], rtol=1e-12)
    y.sum().backward()
    assert np.all(np.isfinite(x.grad.numpy()))


def test_pow_exponent_gradient_at_zero_base_is_zero_not_nan():
    """d(a**b)/db = a**b log(a) is 0 at a == 0 for b >= 0 (as PyTorch), not 0 * -inf."""
    a = mt.tensor([0.0, 0.0, 2.0], dtype=mt.float64)
    b = mt.tensor([2.0, 0.0, 3.0], dtype=mt.float64, requires_grad=True)
    (a**b).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), [0.0, 0.0, 8 * np.log(2.0)], rtol=1e-12)
    x = mt.tensor([0.0, 1.0], requires_grad=True)
    (0.0**x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0] and x.grad.dtype == mt.float32


@pytest.mark.parametrize("bounds", [("lo", None), (None, "hi"), ("lo", "hi"), ("hi", "lo")])
def test_clamp_with_tensor_bounds_gives_the_bounds_their_gradient(bounds):
    """Tensor bounds broadcast and take the gradient where they are the result, as PyTorch's
    clamp(Tensor min, Tensor max) (a tie keeps it on x); min above max gives max."""
    rng = np.random.default_rng(0)
    x_data, lo = rng.standard_normal((3, 4)), rng.standard_normal(4) * 0.5 - 0.3
    hi = lo + rng.random(4)
    x_data[0, 0], x_data[1, 1] = lo[0], hi[1]  # ties with each bound
    weight = np.arange(12.0).reshape(3, 4)

    def run(lib):
        x = lib.tensor(x_data, dtype=lib.float64, requires_grad=True)
        named = {n: lib.tensor(v, dtype=lib.float64, requires_grad=True) for n, v in (("lo", lo), ("hi", hi))}
        low, high = (named[b] if b else None for b in bounds)
        y = x.clamp(min=low, max=high)
        (y * lib.tensor(weight, dtype=lib.float64)).sum().backward()
        grads = [t.grad.numpy() if t.grad is not None else np.zeros(4) for t in named.values()]
        return y.detach().numpy(), x.grad.numpy(), *grads

    expected_low = np.maximum(x_data, lo) if bounds[0] == "lo" else np.maximum(x_data, hi) if bounds[0] else x_data
    high = {"hi": hi, "lo": lo, None: np.inf}[bounds[1]]
    np.testing.assert_allclose(run(mt)[0], np.minimum(expected_low, high))
    t_low = mt.tensor(lo + 0.05, dtype=mt.float64, requires_grad=True)
    t_x = mt.tensor(x_data, dtype=mt.float64, requires_grad=True)
    assert gradcheck(lambda a, b: (a.clamp(min=b) * mt.tensor(weight)).sum(), (t_x, t_low))
    torch = pytest.importorskip("torch")
    for ours, theirs in zip(run(mt), run(torch), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", [2.5, 0.5, -1.5, 0.3, 7.5])
def test_pow_base_gradient_from_the_output_matches_the_power_form(dtype, p) -> None:
    """x ** p's gradient divides the output by x; where that is not x ** (p - 1) (x = 0 or inf,
    an output that overflowed or lost bits below the smallest normal) it takes np.power."""
    from minitensor.ops.elementwise import _base_grad

    tiny = np.finfo(dtype).tiny
    x = np.array([0.0, -0.0, tiny, tiny * 1e3, 1e-20, 2.0, 1e16, 3e30, np.inf, -2.0, 0.5, np.nan], dtype)
    with np.errstate(all="ignore"):
        out = np.power(x, p)
        got = _base_grad(x, p, out)
        exponent = np.longdouble(dtype(p)) - 1  # (the forward's exponent is p in x's dtype, as NumPy rounds it)
        expected = (p * np.power(x.astype(np.longdouble), exponent)).astype(dtype)
    assert got.dtype == np.dtype(dtype) and got.shape == x.shape
    subnormal = 2 * np.finfo(dtype).smallest_subnormal  # (a result below the normals has fewer bits)
    np.testing.assert_allclose(got, expected, rtol=4 * np.finfo(dtype).eps, atol=subnormal, equal_nan=True)
    zero_d = np.array(2.0, dtype)
    np.testing.assert_allclose(_base_grad(zero_d, p, np.power(zero_d, p)), p * 2.0 ** (p - 1), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pow_base_gradient_with_an_array_exponent_divides_the_output_where_it_can(dtype) -> None:
    """With an array exponent too, x ** p's gradient is p * out / x, np.power where that is not
    x ** (p - 1), and 0 where p == 0; x (12, 1) and p (5,) broadcast."""
    from minitensor.ops.elementwise import _base_grad

    tiny = np.finfo(dtype).tiny
    x = np.array([0.0, -0.0, tiny, tiny * 1e3, 1e-20, 2.0, 1e16, 3e30, np.inf, -2.0, 0.5, np.nan], dtype)[:, None]
    p = np.array([2.5, 0.0, -1.5, 1.0, 7.5], dtype)
    with np.errstate(all="ignore"):
        out = np.power(x, p)
        got = _base_grad(x, p, out)
        expected = (p * np.power(x.astype(np.longdouble), p.astype(np.longdouble) - 1)).astype(dtype)
    expected[:, p == 0] = 0.0
    assert got.dtype == np.dtype(dtype) and got.shape == out.shape
    subnormal = 2 * np.finfo(dtype).smallest_subnormal
    np.testing.assert_allclose(got, expected, rtol=4 * np.finfo(dtype).eps, atol=subnormal, equal_nan=True)


def test_pow_base_gradient_with_a_tensor_exponent_at_zero_and_inf_like_torch() -> None:
    torch = pytest.importorskip("torch")
    base = [0.0, 0.0, 0.0, 0.0, 0.0, np.inf, 2.0, -3.0]
    exponent = [0.0, 1.0, 2.0, 0.5, -1.0, 2.0, 0.0, 3.0]
    grads = []
    for lib in (mt, torch):
        a = lib.tensor(base, dtype=lib.float64, requires_grad=True)
        (a ** lib.tensor(exponent, dtype=lib.float64)).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_array_equal(*grads)


def test_pow_tensor_exponent_and_scalar_base(rng):
    a, b = np.abs(rng.standard_normal((3, 4))) + 0.5, rng.standard_normal((3, 4))
    check_op(lambda s, e: mt.pow(s, e), lambda s, e: s.pow(e), a, b)
    check_op(lambda e: mt.pow(2.0, e), lambda e: 2.0**e, b)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "tanh", "sigmoid"])
def test_float_functions_of_integers_and_bools_give_default_floats(name):
    for t in (mt.tensor([1, 2]), mt.tensor([True, False])):
        for out in (getattr(mt, name)(t), getattr(t, name)()):
            assert out.dtype == mt.float32  # (as PyTorch; NumPy would give float64, or int for sigmoid)
    expected = getattr(np, name)(np.array([1.0, 2.0])) if name != "sigmoid" else 1 / (1 + np.exp(-np.array([1.0, 2.0])))
    np.testing.assert_allclose(getattr(mt, name)(mt.tensor([1, 2])).numpy(), expected, rtol=1e-6)
    assert getattr(mt, name)(mt.tensor([1.0], dtype=mt.float64)).dtype == mt.float64


def test_second_derivative_of_tensor_pow_tensor():
    rng = np.random.default_rng(0)
    a, b = f64(rng.uniform(0.5, 2.0, 3)), f64(rng.uniform(-1.0, 1.0, 3))
    assert gradgradcheck(lambda p, q: p**q, (a, b))


def test_scalar_base_pow_tensor_is_right():
    """With a Python-scalar base the mask is built from an array, and works."""
    assert gradgradcheck(lambda q: 2.0**q, f64(np.random.default_rng(0).uniform(-1.0, 1.0, 3)))


@pytest.mark.parametrize("divisor_shape", [(4, 1), (5,), (1, 5), ()])
def test_div_by_a_broadcast_divisor_against_pytorch(divisor_shape):
    """A divisor broadcast over the quotient (``x / norm``) takes its gradient summed to its own shape
    first (``Div.backward``): PyTorch's numbers to second order."""
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((4, 5)), rng.uniform(0.5, 2.0, divisor_shape)
    check_op(lambda x, y: x / y, lambda x, y: x / y, a, b)

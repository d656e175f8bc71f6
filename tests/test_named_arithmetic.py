"""add/sub/mul/div with PyTorch's signatures (alpha=, rounding_mode=), the in-place forms add_, sub_,
mul_, div_, clamp_, pow_: values, gradients (in the graph as PyTorch records them) and errors."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import gradcheck

rng = np.random.default_rng(4)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((3, 4)) + 3.0


def _leaves():
    return mt.tensor(A, dtype=mt.float64, requires_grad=True), mt.tensor(B, dtype=mt.float64, requires_grad=True)


@pytest.mark.parametrize(
    "fn,expected",
    [
        (lambda a, b: mt.add(a, b, alpha=2.5), A + 2.5 * B),
        (lambda a, b: a.add(b, alpha=-0.5), A - 0.5 * B),
        (lambda a, b: mt.sub(a, b, alpha=2), A - 2 * B),
        (lambda a, b: a.sub(b), A - B),
        (lambda a, b: mt.mul(a, b), A * B),
        (lambda a, b: a.mul(b), A * B),
        (lambda a, b: mt.div(a, b), A / B),
        (lambda a, b: a.div(b), A / B),
    ],
)
def test_out_of_place(fn, expected):
    a, b = _leaves()
    np.testing.assert_allclose(fn(a, b).numpy(), expected)
    assert gradcheck(fn, [a, b])


def test_div_rounding_modes_match_torch():
    torch = pytest.importorskip("torch")
    for mode in ("trunc", "floor"):
        np.testing.assert_array_equal(
            mt.tensor(A).div(mt.tensor(B) - 3, rounding_mode=mode).numpy(),
            torch.tensor(A, dtype=torch.float32).div(torch.tensor(B, dtype=torch.float32) - 3, rounding_mode=mode),
        )
    assert mt.tensor([7, -7]).div(2, rounding_mode="floor").tolist() == [3, -4]
    with pytest.raises(ValueError, match="rounding_mode must be"):
        mt.ones(2).div(2, rounding_mode="round")


def test_old_style_sgd_step_updates_the_parameter():
    p = mt.tensor([1.0, 2.0], requires_grad=True)
    (p * p).sum().backward()
    p.data.add_(p.grad, alpha=-0.1)  # the pre-optimizer training loop of old course code
    np.testing.assert_allclose(p.numpy(), [0.8, 1.6])
    assert p.requires_grad and p.is_leaf


@pytest.mark.parametrize(
    "method,args,kwargs,expected",
    [
        ("add_", (2.0,), {"alpha": 3}, A + 6.0),
        ("sub_", (B,), {"alpha": 0.5}, A - 0.5 * B),
        ("mul_", (B,), {}, A * B),
        ("div_", (B,), {}, A / B),
        ("clamp_", (-0.5, 0.5), {}, np.clip(A, -0.5, 0.5)),
        ("clamp_", (), {"min": 0.0}, np.clip(A, 0.0, None)),
        ("pow_", (2,), {}, A**2),
    ],
)
def test_inplace_values(method, args, kwargs, expected):
    x = mt.tensor(A, dtype=mt.float64)
    args = tuple(mt.tensor(a, dtype=mt.float64) if isinstance(a, np.ndarray) else a for a in args)
    version = x._version
    assert getattr(x, method)(*args, **kwargs) is x
    np.testing.assert_allclose(x.numpy(), expected)
    assert x._version == version + 1


@pytest.mark.parametrize(
    "method,args,kwargs",
    [
        ("add_", ("b",), {"alpha": 3}),
        ("sub_", ("b",), {"alpha": 0.5}),
        ("mul_", ("b",), {}),
        ("div_", ("b",), {}),
        ("clamp_", (-0.5, 0.5), {}),
        ("pow_", (3,), {}),
    ],
)
def test_inplace_in_the_graph_matches_torch(method, args, kwargs):
    torch = pytest.importorskip("torch")
    g = rng.standard_normal(A.shape)
    grads = []
    for lib, make in ((mt, lambda a: mt.tensor(a, dtype=mt.float64, requires_grad=True)), (torch, torch.tensor)):
        a = make(A) if lib is mt else torch.tensor(A, requires_grad=True)
        b = make(B) if lib is mt else torch.tensor(B, requires_grad=True)
        h = a * 1.5  # a non-leaf: in-place ops on it are recorded
        getattr(h, method)(*[b if x == "b" else x for x in args], **kwargs)
        (h * (mt.tensor(g, dtype=mt.float64) if lib is mt else torch.tensor(g))).sum().backward()
        grads.append((h.detach().numpy(), a.grad.numpy(), None if b.grad is None else b.grad.numpy()))
    (mv, ma, mb), (tv, ta, tb) = grads
    np.testing.assert_allclose(mv, tv)
    np.testing.assert_allclose(ma, ta)
    if tb is not None:
        np.testing.assert_allclose(mb, tb)


def test_inplace_errors():
    leaf = mt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        leaf.add_(1.0)
    with pytest.raises(TypeError, match="alpha must be a number"):
        mt.ones(2).add_(1.0, alpha="2")
    with pytest.raises(RuntimeError, match="div_: result type Float can't be cast to the desired output type Long"):
        mt.tensor([1, 2]).div_(2)
    with pytest.raises(ValueError, match="at least one of min and max"):
        mt.ones(2).clamp_()
    with pytest.raises(RuntimeError, match="pow_: result type Float can't be cast"):
        mt.tensor([1, 2]).pow_(2.0)
    assert mt.tensor([1, 2]).pow_(2).tolist() == [1, 4]


@pytest.mark.parametrize("name", ["abs", "ceil", "cos", "exp", "exp2", "expm1", "floor", "frac", "log", "log10",
                                  "log1p", "log2", "neg", "reciprocal", "relu", "round", "rsqrt", "sigmoid", "sign",
                                  "sin", "sqrt", "square", "tanh", "trunc"])  # fmt: skip
def test_in_place_elementwise_functions_equal_pytorchs(name: str) -> None:
    torch = pytest.importorskip("torch")
    data = [0.3, 1.7, 2.5, 4.0]
    got, expected = mt.tensor(data), torch.tensor(data)
    alias = got[1:]
    assert getattr(got, f"{name}_")() is got
    getattr(expected, f"{name}_")()
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)
    np.testing.assert_allclose(alias.numpy(), expected.numpy()[1:], rtol=1e-6)  # the memory itself changed
    ints, t_ints = mt.tensor([1, 2]), torch.tensor([1, 2])
    try:
        getattr(t_ints, f"{name}_")()
    except RuntimeError as error:  # a float result (or, for frac, no integer kernel in PyTorch)
        if "can't be cast" in str(error):
            with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
                getattr(ints, f"{name}_")()
    else:
        np.testing.assert_array_equal(getattr(ints, f"{name}_")().numpy(), t_ints.numpy())


def test_in_place_elementwise_function_in_the_graph() -> None:
    x = mt.tensor([0.5, 1.0], dtype=mt.float64, requires_grad=True)
    y = x * 3
    y.exp_()
    (grad,) = mt.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(grad.numpy(), 3 * np.exp(3 * np.array([0.5, 1.0])))

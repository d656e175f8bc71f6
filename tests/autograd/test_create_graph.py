"""The engine with create_graph=True: gradients are Tensors in a graph (higher-order autograd)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import f64

import minitensor as mt
from minitensor.autograd import Function


def test_derivatives_of_x_cubed_to_the_fourth_order():
    x = f64(2.0)
    y = x**3
    expected = [12.0, 12.0, 6.0, 0.0]  # 3x^2, 6x, 6, 0
    for order, value in enumerate(expected[:-1], start=1):
        (y,) = mt.autograd.grad(y, x, create_graph=True)
        if order < 3:  # 3x^2 and 6x depend on x; the third derivative, 6, may be a constant (as in PyTorch)
            assert y.requires_grad and y.grad_fn is not None
        assert y.item() == pytest.approx(value)
    if y.requires_grad:  # PyTorch keeps 6 in the graph; its derivative is 0
        (last,) = mt.autograd.grad(y, x, allow_unused=True)
        assert last is None or last.item() == 0.0


def test_backward_with_create_graph_leaves_a_differentiable_grad():
    x = f64([1.0, 2.0, 3.0])
    (x.tanh() * x).sum().backward(create_graph=True)
    g = x.grad
    assert g.grad_fn is not None  # d/dx (x tanh x) = tanh x + x (1 - tanh^2 x), a graph
    (h,) = mt.autograd.grad(g.sum(), x)
    t = np.tanh([1.0, 2.0, 3.0])
    np.testing.assert_allclose(h.numpy(), 2 * (1 - t**2) - 2 * np.array([1.0, 2.0, 3.0]) * t * (1 - t**2))


def test_broadcast_gradients_are_reduced_inside_the_graph():
    a = f64(np.arange(6.0).reshape(2, 3))
    b = f64([0.5, -1.0, 2.0])  # broadcast over the rows
    (gb,) = mt.autograd.grad(((a * b) ** 2).sum(), b, create_graph=True)  # 2 b sum_rows a^2
    assert gb.shape == (3,)
    (gab,) = mt.autograd.grad(gb.sum(), a)  # d/da of sum_j 2 b_j sum_i a_ij^2 = 4 a b
    np.testing.assert_allclose(gab.numpy(), 4 * a.numpy() * b.numpy())


def test_retain_graph_defaults_to_create_graph():
    x = f64([1.0, 2.0])
    y = (x * x * x).sum()
    mt.autograd.grad(y, x, create_graph=True)
    mt.autograd.grad(y, x)  # the graph was kept, because create_graph was True
    with pytest.raises(RuntimeError, match="retain_graph"):
        mt.autograd.grad(y, x)


def test_grad_outputs_in_a_graph():
    x = f64([1.0, 2.0])
    v = f64([3.0, -1.0])
    (g,) = mt.autograd.grad(x * x, x, grad_outputs=v, create_graph=True)  # 2 x v
    (dv,) = mt.autograd.grad(g.sum(), v)
    np.testing.assert_allclose(dv.numpy(), 2 * x.numpy())


def test_backward_inputs_accumulates_only_into_those():
    x, w = f64([1.0, 2.0]), f64([3.0, 4.0])
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), [1.0, 2.0])


def test_numpy_functions_on_tensors_are_differentiable():
    x = f64([0.5, 1.5])
    y = np.exp(x) * np.where(x.numpy() > 1, x, 2.0)
    assert isinstance(y, mt.Tensor)
    np.sum(y).backward()
    e = np.exp([0.5, 1.5])
    np.testing.assert_allclose(x.grad.numpy(), [2 * e[0], e[1] * (1.5 + 1)])
    assert np.allclose(mt.ones(2), np.ones(2))  # others see the plain array


def test_an_unsupported_numpy_function_in_a_graph_backward_raises():
    class CumSum(Function):
        differentiable_backward = True  # a false claim: np.cumsum has no Tensor version

        @staticmethod
        def forward(ctx, x):
            return np.cumsum(x)

        @staticmethod
        def backward(ctx, grad):
            return np.cumsum(grad[::-1])[::-1]

    x = f64([1.0, 2.0, 3.0])
    (g,) = mt.autograd.grad(CumSum.apply(x).sum(), x)  # first order: arrays, fine
    np.testing.assert_allclose(g.numpy(), [3.0, 2.0, 1.0])
    with pytest.raises(TypeError, match="numpy.cumsum has no differentiable minitensor version"):
        mt.autograd.grad(CumSum.apply(x).sum(), x, create_graph=True)


def test_second_derivatives_of_primitives_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a_np, b_np, w_np = rng.uniform(0.5, 2.0, (3, 4)), rng.uniform(0.5, 2.0, (4,)), rng.standard_normal((3, 4))

    def program(lib, a, b, w):
        y = ((a / b).log() * a.sigmoid() + (a @ b).unsqueeze(1) ** 1.5 - a.std(dim=0)) * w
        (ga, gb) = lib.autograd.grad(y.sum(), (a, b), create_graph=True)
        return (ga * ga).sum() + (gb * a.sum(0)).sum()

    a, b = f64(a_np), f64(b_np)
    ours = mt.autograd.grad(program(mt, a, b, mt.tensor(w_np, dtype=mt.float64)), (a, b))
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a_np, b_np))
    theirs = torch.autograd.grad(program(torch, ta, tb, torch.tensor(w_np)), (ta, tb))
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)


def test_second_derivatives_of_0d_tensors_whose_forward_returns_a_numpy_scalar():
    """np.exp of a 0-d array is a NumPy scalar; the saved output must still come back as the output."""
    x = f64(1.0)
    (g,) = mt.autograd.grad(x.exp(), x, create_graph=True)
    (h,) = mt.autograd.grad(g, x)
    assert h.item() == pytest.approx(np.e)
    x = f64(0.3)
    (g,) = mt.autograd.grad(x.tanh() * x.sigmoid(), x, create_graph=True)
    (h,) = mt.autograd.grad(g, x)
    t, s = np.tanh(0.3), 1 / (1 + np.exp(-0.3))
    dt, ds = 1 - t * t, s * (1 - s)
    expected = -2 * t * dt * s + 2 * dt * ds + t * ds * (1 - 2 * s)
    assert h.item() == pytest.approx(expected, rel=1e-10)

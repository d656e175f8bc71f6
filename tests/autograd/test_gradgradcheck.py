"""``gradgradcheck`` itself: it must catch wrong second derivatives and name where."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import f64

import minitensor as mt
from minitensor.autograd import Function, GradcheckError, gradgradcheck


def _plain(t):
    """The array behind t when t is a Tensor (a constant in the gradient graph)."""
    return t.detach() if isinstance(t, mt.Tensor) else t


class SquareDetachedX(Function):
    """x**2 whose backward 2*g*x hides x from the gradient graph: d2/dx2 comes out 0, not 2g."""

    differentiable_backward = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * grad * _plain(x)


class SquareDetachedGrad(Function):
    """x**2 whose backward hides the incoming gradient: wrong w.r.t. grad_outputs."""

    differentiable_backward = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * _plain(grad) * x


def test_passes_for_right_second_derivatives():
    rng = np.random.default_rng(0)
    x = f64(rng.standard_normal((3, 4)))
    w = f64(rng.standard_normal((4, 2)))
    assert gradgradcheck(lambda a, b: (a @ b).tanh(), (x, w)) is True
    assert gradgradcheck(lambda a: a.exp() / a.exp().sum(-1, keepdim=True), x, gen_non_contig_grad_outputs=True) is True
    assert gradgradcheck(lambda a, b: (a.exp(), (a @ b).sum()), [x, w]) is True


def test_first_order_right_second_order_wrong_is_caught():
    x = f64([1.0, -2.0, 0.5])
    assert mt.autograd.gradcheck(SquareDetachedX.apply, x) is True
    g = f64([1.0, 3.0, -1.0])
    with pytest.raises(GradcheckError) as info:
        gradgradcheck(SquareDetachedX.apply, x, g)
    message = str(info.value)
    # d(2 g x)/dx = 2 g: element (0,) of the first derivative, w.r.t. x[0]: analytic 0, numeric 2
    assert "gradgradcheck failed" in message and "input 0 at element (0,)" in message
    assert re.search(r"analytic 0\b", message) and re.search(r"numeric 2\b", message)


def test_wrong_dependence_on_grad_outputs_names_them():
    x = f64([1.5, -2.0])
    with pytest.raises(GradcheckError) as info:
        gradgradcheck(SquareDetachedGrad.apply, x)
    message = str(info.value)
    # d(2 g x)/dg = 2 x = 3 at element 0, but the gradient graph says 0
    assert "grad_outputs[0] at element (0,)" in message
    assert re.search(r"analytic 0\b", message) and re.search(r"numeric 3\b", message)


def test_raise_exception_false_returns_false():
    x = f64([1.0, 2.0])
    assert gradgradcheck(SquareDetachedX.apply, x, raise_exception=False) is False
    assert gradgradcheck(lambda t: t * t, x, raise_exception=False) is True


def test_a_pytorch_style_function_passes_and_a_once_differentiable_one_raises_naming_it():
    from minitensor.autograd.function import once_differentiable

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * grad * x**2

    class CubeOnce(Cube):
        backward = staticmethod(once_differentiable(Cube.backward))

    assert gradgradcheck(Cube.apply, f64([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="CubeOnce"):
        gradgradcheck(CubeOnce.apply, f64([1.0, 2.0]))


def test_random_grad_outputs_are_float64_and_non_contiguous_when_asked():
    def f(t):
        return t.tanh()

    x = f64(np.arange(6.0).reshape(2, 3) / 6)
    from minitensor.autograd.gradgradcheck import _random_grad_outputs

    (g,) = _random_grad_outputs(f, [x], True)
    assert g.dtype == mt.float64 and g.requires_grad and g.shape == (2, 3)
    assert not g.numpy().flags["C_CONTIGUOUS"]
    (h,) = _random_grad_outputs(f, [x], False)
    assert h.numpy().flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(g.numpy(), _random_grad_outputs(f, [x], True)[0].numpy())


def test_bad_arguments():
    x = f64([1.0, 2.0])
    with pytest.raises(ValueError, match="eps"):
        gradgradcheck(lambda t: t * t, x, eps=0.0)
    with pytest.raises(TypeError, match=r"grad_outputs\[0\]"):
        gradgradcheck(lambda t: t * t, x, [np.ones(2)])
    with pytest.raises(ValueError, match="expected 1 grad_outputs"):
        gradgradcheck(lambda t: t * t, x, [f64([1.0, 1.0]), f64([1.0, 1.0])])
    with pytest.raises(ValueError, match="no output"):
        gradgradcheck(lambda t: t.detach() * 2, x)
    with pytest.raises(TypeError):
        gradgradcheck(lambda t: t * t, x, None, 1e-6)  # eps is keyword-only, as in PyTorch


def test_matches_torch_on_the_same_function():
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(1).standard_normal((2, 3))
    assert torch.autograd.gradgradcheck(lambda t: (t.tanh() * t.exp()).mean(1), torch.tensor(data, requires_grad=True))
    assert gradgradcheck(lambda t: (t.tanh() * t.exp()).mean(1), f64(data))


@pytest.mark.parametrize("op", ["exp", "tanh", "sqrt", "sigmoid"])
def test_0d_ops_that_save_their_output_have_right_second_derivatives(op):
    """Regression: a ufunc on a 0-d array returns a NumPy scalar; the saved output must still
    be the output Tensor under create_graph (it once came back as a constant)."""
    assert gradgradcheck(lambda t: getattr(t, op)(), f64(0.7))
    assert gradgradcheck(lambda t: t.logsumexp(0), f64(0.7))

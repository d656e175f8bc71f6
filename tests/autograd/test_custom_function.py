"""A student's first custom Function gets told what went wrong (correctness sweep, item 6),
and higher order through user Functions (once-differentiable unless declared)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import Function, gradcheck, numerical_grad


class Scale(Function):
    """y = 3 x, with a backward that returns ``ctx.result`` (set per test)."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.shape = x.shape
        return 3 * x + y

    @staticmethod
    def backward(ctx, grad):
        return ctx.result(grad)


def _run(result):
    x = mt.randn(3, 4, requires_grad=True)
    y = mt.randn(3, 4, requires_grad=True)
    out = Scale.apply(x, y)
    out.grad_fn.result = result
    out.sum().backward()


def test_too_few_or_too_many_gradients_name_the_function_and_counts():
    with pytest.raises(RuntimeError, match=r"Scale\.backward returned 1 gradient\(s\), expected 2"):
        _run(lambda g: (3 * g,))
    with pytest.raises(RuntimeError, match=r"Scale\.backward returned 3 gradient\(s\), expected 2"):
        _run(lambda g: (3 * g, g, g))


def test_a_gradient_of_the_wrong_shape_names_function_input_and_shapes():
    with pytest.raises(RuntimeError, match=r"ScaleBackward.* shape \(4,\) for input 1, whose shape is \(3, 4\)"):
        _run(lambda g: (3 * g, g[0]))
    with pytest.raises(RuntimeError, match=r"shape \(2, 2\) for input 0"):
        _run(lambda g: (np.ones((2, 2)), g))


def test_a_forward_returning_a_tensor_is_explained():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return mt.tensor(x)

    with pytest.raises(TypeError, match="Bad.forward returned a Tensor"):
        Bad.apply(mt.randn(2, requires_grad=True))


def test_a_tensor_keyword_argument_is_explained():
    class Shift(Function):
        @staticmethod
        def forward(ctx, x, by=None):
            return x + by

    with pytest.raises(TypeError, match="by= is a keyword argument"):
        Shift.apply(mt.randn(2, requires_grad=True), by=mt.randn(2, requires_grad=True))


def test_bool_and_integer_outputs_never_get_a_grad_fn():
    class Positive(Function):
        @staticmethod
        def forward(ctx, x):
            return x > 0

    class Floor(Function):
        @staticmethod
        def forward(ctx, x):
            return np.floor(x).astype(np.int64)

    x = mt.randn(4, requires_grad=True)
    for out in (Positive.apply(x), Floor.apply(x)):
        assert out.grad_fn is None and not out.requires_grad


def test_gradcheck_refuses_inputs_that_do_not_require_grad():
    wrong = Scale  # whatever its backward: nothing would be checked
    with pytest.raises(ValueError, match="no input requires grad"):
        gradcheck(lambda a: wrong.apply(a, a), [mt.randn(2, dtype=mt.float64)])


def test_gradcheck_and_numerical_grad_restore_inputs_when_fn_raises():
    x = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    before = x.numpy().copy()
    calls = []

    def explode(t):
        calls.append(1)
        if len(calls) > 1:  # the first (unperturbed) evaluation passes, a perturbed one raises
            raise ValueError("boom")
        return t * 2

    with pytest.raises(ValueError, match="boom"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gradcheck(explode, [x])
    np.testing.assert_array_equal(x.numpy(), before)
    calls.clear()
    with pytest.raises(ValueError, match="boom"):
        numerical_grad(lambda t: explode(t).sum(), x)
    np.testing.assert_array_equal(x.numpy(), before)


def test_no_grad_decorates_a_generator_body():
    @mt.no_grad()
    def steps(x):
        for _ in range(3):
            yield x * 2

    x = mt.randn(2, requires_grad=True)
    outs = list(steps(x))
    assert all(not o.requires_grad for o in outs)
    assert mt.is_grad_enabled()  # restored between and after the items


def test_array_backward_is_once_differentiable_and_says_so():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * grad * x**2

    x = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    (g,) = mt.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), [3.0, 12.0])  # first order is right
    with pytest.raises(RuntimeError, match="Cube: its backward works on NumPy arrays"):
        g.sum().backward()


def test_a_declared_differentiable_backward_is_differentiated_again():
    class Cube(Function):
        differentiable_backward = True

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * grad * x**2

    x = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    (g,) = mt.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (h,) = mt.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), [6.0, 12.0])

"""``gradcheck`` and ``numerical_grad`` themselves: they must catch wrong gradients."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from helpers import f64

import minitensor as mt
from minitensor.autograd import Function, GradcheckError, gradcheck, numerical_grad


def test_gradcheck_passes_for_a_right_gradient():
    x = f64(np.random.default_rng(0).standard_normal((3, 4)))
    assert gradcheck(lambda t: t.softmax(-1), x) is True
    assert gradcheck(lambda t: (t * t).sum(), [x]) is True


def test_wrong_gradient_raises_gradcheck_error_with_details():
    x = f64([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda t: t * t.detach(), x)
    assert isinstance(info.value, RuntimeError)
    message = str(info.value)
    # output element 0 depends on x[0, 0] only: analytic x = 1, numeric 2x = 2
    assert "input 0" in message and "element (0, 0)" in message
    assert re.search(r"analytic 1\b", message) and re.search(r"numeric 2\b", message)


def test_empty_inputs_and_outputs_are_checked_like_any_other():
    """An empty input has no Jacobian columns but the output need not be empty (a sum over an
    empty dim is zeros); an empty output has no rows. The other inputs are still checked."""
    empty = f64(np.zeros((0, 3)))
    full = f64(np.random.default_rng(1).standard_normal((2, 3)))
    assert gradcheck(lambda e: e.sum(0), empty) is True
    assert gradcheck(lambda e, x: e.sum(0) * x, (empty, full)) is True
    assert gradcheck(lambda x: x[:0] * 3.0, full) is True
    with pytest.raises(GradcheckError, match="input 1"):
        gradcheck(lambda e, x: e.sum(0) + x * x.detach(), (empty, full))


def test_error_names_the_right_input_and_element():
    a = f64([1.0, 2.0])
    b = f64([3.0, -1.5, 0.25])
    c = f64([5.0], requires_grad=False)
    # b's gradient through the second output is off by a factor 2 from element 1 on
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda p, r, q: (p * r, q[:1] * 2.0, q[1:] * q[1:].detach()), (a, c, b))
    message = str(info.value)
    assert "input 2" in message and "element (1,)" in message
    assert "analytic -1.5" in message and "numeric -3" in message


def test_raise_exception_false_returns_false():
    x = f64([1.0, 2.0])
    assert gradcheck(lambda t: t * t.detach(), x, raise_exception=False) is False
    assert gradcheck(lambda t: t * t, x, raise_exception=False) is True


class WrongSoftmax(Function):
    """Softmax whose backward uses mean(g) for sum(g * y): right for a constant g only."""

    @staticmethod
    def forward(ctx, x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        y = e / e.sum(axis=-1, keepdims=True)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return y * (grad - grad.mean(axis=-1, keepdims=True))


class SoftmaxNoSumTerm(WrongSoftmax):
    """Softmax whose backward forgets the ``- sum(g * y)`` term."""

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return y * grad


def test_wrong_softmax_backward_passes_a_sum_check_but_fails_gradcheck():
    x = f64(np.random.default_rng(1).standard_normal((2, 5)))
    # a check through .sum() alone is fooled: both gradients are ~0
    numeric = numerical_grad(lambda t: WrongSoftmax.apply(t).sum(), x)
    (analytic,) = mt.autograd.grad(WrongSoftmax.apply(x).sum(), x)
    np.testing.assert_allclose(analytic.numpy(), numeric, atol=1e-8)
    assert gradcheck(lambda t: WrongSoftmax.apply(t).sum(), x)
    # gradcheck on the actual output is not
    with pytest.raises(GradcheckError):
        gradcheck(WrongSoftmax.apply, x)
    # also when the output is large enough for random weightings instead of the full Jacobian
    big = f64(np.random.default_rng(2).standard_normal((8, 6)))
    assert gradcheck(WrongSoftmax.apply, big, raise_exception=False) is False


def test_softmax_without_sum_term_fails_gradcheck():
    x = f64(np.random.default_rng(3).standard_normal((3, 4)))
    with pytest.raises(GradcheckError, match="input 0"):
        gradcheck(SoftmaxNoSumTerm.apply, x)


def test_numerical_grad_values():
    x = f64([1.0, -2.0, 0.5])
    np.testing.assert_allclose(numerical_grad(lambda t: (t * t).sum(), x), 2 * x.numpy(), atol=1e-7)
    a, b = f64([[1.0, 2.0]]), f64([[3.0], [4.0]])
    ga, gb = numerical_grad(lambda p, q: (p @ q).sum() * 2.0, (a, b))
    np.testing.assert_allclose(ga, 2 * b.numpy().T, atol=1e-7)
    np.testing.assert_allclose(gb, 2 * a.numpy().T, atol=1e-7)
    assert ga.shape == a.shape and gb.shape == b.shape


def test_numerical_grad_needs_a_scalar_output():
    with pytest.raises(ValueError, match="single-element"):
        numerical_grad(lambda t: t * 2.0, f64([1.0, 2.0]))


def test_warns_for_float32_inputs():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="float64"):
        gradcheck(lambda t: t * 2.0, x, eps=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradcheck(lambda t: t * 2.0, f64([1.0, 2.0]))


def test_tuple_outputs():
    x = f64([0.3, -0.7, 1.1])
    assert gradcheck(lambda t: (t.exp(), t.tanh() * 2.0), x)
    with pytest.raises(GradcheckError):
        gradcheck(lambda t: (t.exp(), t * t.detach()), x)


def test_output_that_does_not_require_grad_is_allowed():
    x = f64([0.3, -0.7])
    assert gradcheck(lambda t: (t.exp(), mt.ones(2, dtype=mt.float64)), x)


def test_inputs_are_restored_even_after_a_failure():
    x = f64(np.random.default_rng(4).standard_normal((3, 3)))
    view = mt.from_numpy(np.random.default_rng(5).standard_normal((4, 6))[::2, 1::2]).requires_grad_()
    before_x, before_view = x.numpy().copy(), view.numpy().copy()
    gradcheck(lambda a, b: a @ b.T, (x, view))
    np.testing.assert_array_equal(x.numpy(), before_x)
    np.testing.assert_array_equal(view.numpy(), before_view)
    with pytest.raises(GradcheckError):
        gradcheck(lambda a: a * a.detach(), x)
    np.testing.assert_array_equal(x.numpy(), before_x)
    assert x.grad is None and view.grad is None  # gradcheck does not touch .grad


def test_only_inputs_that_require_grad_are_checked():
    a = f64([1.0, 2.0])
    b = f64([3.0, 4.0], requires_grad=False)
    # b enters through a wrong path, but b is not checked
    assert gradcheck(lambda p, q: p * q + q * q.detach(), (a, b))


def test_non_tensor_input_raises_type_error():
    with pytest.raises(TypeError, match="inputs\\[0\\]"):
        gradcheck(lambda t: t, [np.ones(2)])


def test_tolerances_are_used():
    """An analytic gradient off by 0.1 % passes with rtol=1e-2 and fails with rtol=1e-5."""

    class Scaled(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, grad):
            return grad * 2.002

    x = f64([1.0, 2.0])
    assert gradcheck(Scaled.apply, x, rtol=1e-2, atol=0)
    assert gradcheck(Scaled.apply, x, rtol=1e-5, atol=0, raise_exception=False) is False


def test_gradcheck_refuses_inputs_that_do_not_require_grad():
    with pytest.raises(ValueError, match="no input requires grad"):  # (nothing would be checked)
        gradcheck(lambda a: 3 * a + a, [mt.randn(2, dtype=mt.float64)])


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

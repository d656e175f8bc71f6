"""autograd/function.py: a student's first custom Function gets told what went wrong (correctness
sweep, item 6), higher order through user Functions (once-differentiable unless declared), and
``Function.apply_each`` (the pieces of ``unbind`` / ``split``): the same nodes, views, version
counters and in-place behaviour as one ``apply`` per piece."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import Function
from minitensor.ops.shape import Index


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


def test_an_op_on_arrays_returning_a_tensor_is_explained():
    class Bad(Function):
        on_arrays = True

        @staticmethod
        def forward(ctx, x):
            return mt.tensor(x)

    with pytest.raises(TypeError, match="Bad.forward returned a Tensor"):
        Bad.apply(mt.randn(2, requires_grad=True))


def test_a_pytorch_style_function_runs_on_tensors():
    """PyTorch's own tutorial Function: Tensor methods in forward, in-place masking in backward."""

    class MyReLU(Function):
        @staticmethod
        def forward(ctx, input):  # noqa: A002
            assert isinstance(input, mt.Tensor) and not input.requires_grad
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors  # noqa: A001
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input

    x = mt.tensor([-1.0, 2.0, 3.0], requires_grad=True)
    MyReLU.apply(x).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0]


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


def test_a_function_is_twice_differentiable_by_default():
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
    np.testing.assert_allclose(g.detach().numpy(), [3.0, 12.0])
    (h,) = mt.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), [6.0, 12.0])  # 6x


def test_once_differentiable_backward_raises_when_differentiated_again():
    from minitensor.autograd.function import once_differentiable

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * grad * x**2

    x = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    (g,) = mt.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [3.0, 12.0])  # first order is right
    with pytest.raises(RuntimeError, match="Cube: trying to differentiate twice"):
        g.sum().backward()


def test_a_backward_through_numpy_is_a_dead_end_not_a_wrong_zero():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * grad.numpy() * x.numpy() ** 2

    x = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    (g,) = mt.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="Cube"):
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


KEYS = [{"key": (0,)}, {"key": (slice(1, 3),)}, {"key": (slice(None), 2)}]


def _pieces_both_ways(x):
    return Index.apply_each(x, KEYS), [Index.apply(x, **s) for s in KEYS]


@pytest.mark.parametrize("mode", ["grad", "no_grad", "leaf without grad", "anomaly"])
def test_same_tensors_as_apply(mode) -> None:
    x = mt.tensor(np.arange(12.0).reshape(3, 4), requires_grad=mode != "leaf without grad")
    h = x * 1 if mode != "leaf without grad" else x
    context = mt.no_grad() if mode == "no_grad" else mt.autograd.detect_anomaly() if mode == "anomaly" else None
    if context is None:
        each, one_by_one = _pieces_both_ways(h)
    else:
        with context:
            each, one_by_one = _pieces_both_ways(h)
    for a, b in zip(each, one_by_one):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert np.shares_memory(a.numpy(), h.numpy())
        assert a.requires_grad == b.requires_grad
        assert type(a.grad_fn) is type(b.grad_fn)
        assert a._version_counter is h._version_counter is b._version_counter
        assert a._view_of == b._view_of


def test_gradients_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(0).standard_normal((4, 3))
    grads = []
    for lib in (mt, torch):
        x = lib.tensor(data, requires_grad=True)
        h = x * 2
        rows, cols = h.unbind(0), h.split([1, 2], dim=1)
        ((rows[0] * 5).sum() + (rows[3] * rows[1]).sum() + (cols[1] ** 2).sum() + h.sum()).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])


def test_in_place_change_through_a_piece_as_through_an_apply() -> None:
    """(PyTorch forbids this for the views of unbind/split; minitensor allows it, as for any view.)"""
    data = np.random.default_rng(1).standard_normal((4, 3))
    results = []
    for pieces in (Index.apply_each, lambda t, keys: [Index.apply(t, **s) for s in keys]):
        x = mt.tensor(data, requires_grad=True)
        h = x * 2
        row = pieces(h, KEYS)[0]
        row.mul_(3)  # through the view: h changes, and so does its graph
        (h * mt.tensor(data)).sum().backward()
        results.append((x.grad.numpy(), h.detach().numpy(), h._version))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2] == 1
    np.testing.assert_allclose(results[0][0][0], 6 * data[0])


def test_a_piece_of_a_leaf_cannot_change_in_place() -> None:
    x = mt.ones(3, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x.unbind(0)[0].add_(1)


def test_pytorch_tutorial_function_matches_pytorch_to_second_order():
    """LegendrePolynomial3 of PyTorch's custom-Function tutorial, the same class body on both."""
    from helpers import run_on_both

    def program(L):
        class LegendrePolynomial3(L.autograd.Function):
            @staticmethod
            def forward(ctx, input):  # noqa: A002
                ctx.save_for_backward(input)
                return 0.5 * (5 * input**3 - 3 * input)

            @staticmethod
            def backward(ctx, grad_output):
                (input,) = ctx.saved_tensors  # noqa: A001
                return grad_output * 1.5 * (5 * input**2 - 1)

        x = L.tensor([0.3, -0.8, 1.2], dtype=L.float64, requires_grad=True)
        y = LegendrePolynomial3.apply(x)
        (g,) = L.autograd.grad(y.sum(), x, create_graph=True)
        (h,) = L.autograd.grad(g.sum(), x)
        return y.tolist(), g.tolist(), h.tolist()

    ours, theirs = run_on_both(program)
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-12)

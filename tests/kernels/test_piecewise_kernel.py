"""kernels/piecewise.py: the piecewise activations' kernels equal their NumPy references bit for bit
(float32 and float64; zeros of both signs, ±inf, NaN and the values at every kink), on strided
inputs and broadcast gradients, and the ops on them keep PyTorch's values and gradients there."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_paths import assert_same_values, both_paths

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.kernels import piecewise

# The settings of the cases below, and values at each of their kinks (and next to them).
SLOPE, LOW, HIGH, THRESHOLD, VALUE, LAMBD = 0.1, -0.5, 0.75, 0.1, -2.0, 0.5
KINKS = [0.0, -0.0, 3.0, -3.0, LOW, HIGH, THRESHOLD, LAMBD, -LAMBD, np.inf, -np.inf, np.nan]


def inputs(dtype, n: int = 999) -> np.ndarray:
    """Random values around the kinks, then the kinks themselves and their neighbours in ``dtype``."""
    rng = np.random.default_rng(0)
    kinks = np.array(KINKS, dtype)
    finite = kinks[np.isfinite(kinks)]
    near = np.concatenate([np.nextafter(finite, np.inf, dtype=dtype), np.nextafter(finite, -np.inf, dtype=dtype)])
    return np.concatenate([rng.standard_normal(n) * 3, kinks, near]).astype(dtype)


def forward_cases(x) -> dict:
    return {
        "leaky_relu": lambda: piecewise.leaky_relu(x, SLOPE),
        "hardtanh": lambda: piecewise.hardtanh(x, LOW, HIGH),
        "relu6": lambda: piecewise.hardtanh(x, 0.0, 6.0),
        "hardsigmoid": lambda: piecewise.hardsigmoid(x),
        "hardswish": lambda: piecewise.hardswish(x),
        "threshold": lambda: piecewise.threshold(x, THRESHOLD, VALUE),
        "softshrink": lambda: piecewise.softshrink(x, LAMBD),
        "hardshrink": lambda: piecewise.hardshrink(x, LAMBD),
        "frac": lambda: piecewise.frac(x),
    }


def backward_cases(g, x) -> dict:
    return {
        "leaky_relu": lambda: piecewise.leaky_relu_backward(g, x, SLOPE),
        "hardtanh": lambda: piecewise.hardtanh_backward(g, x, LOW, HIGH),
        "clamp": lambda: piecewise.clamp_backward(g, x, LOW, HIGH),
        "clamp_min": lambda: piecewise.clamp_backward(g, x, LOW, np.inf),
        "hardsigmoid": lambda: piecewise.hardsigmoid_backward(g, x),
        "hardswish": lambda: piecewise.hardswish_backward(g, x),
        "threshold": lambda: piecewise.threshold_backward(g, x, THRESHOLD),
        "shrink": lambda: piecewise.shrink_backward(g, x, LAMBD),
    }


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(forward_cases(None)))
def test_forward_kernels_equal_references(dtype, name) -> None:
    kernel, reference = both_paths(forward_cases(inputs(dtype))[name])
    assert kernel.dtype == reference.dtype == np.dtype(dtype)
    assert_same_values(kernel, reference)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(backward_cases(None, None)))
def test_backward_kernels_equal_references(dtype, name) -> None:
    x = inputs(dtype)
    g = np.random.default_rng(1).standard_normal(x.shape).astype(dtype)
    kernel, reference = both_paths(backward_cases(g, x)[name])
    assert kernel.dtype == reference.dtype == np.dtype(dtype)
    assert_same_values(kernel, reference)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_strided_inputs_and_broadcast_gradients(dtype) -> None:
    """A transposed, sliced x; gradients broadcast from one value (the backward of ``sum``) and from a
    column, and of another dtype: the kernels' results are those of the references on copies."""
    x = inputs(dtype)[-240:].reshape(4, 6, 10).transpose(2, 0, 1)[::2]  # (the kinks and some random values)
    column = np.random.default_rng(2).standard_normal((5, 4, 1)).astype(dtype)
    for g in (np.broadcast_to(np.asarray(2.5, dtype), x.shape), column, column.astype(np.float16)):
        cases = {**forward_cases(x), **backward_cases(g, x)}
        copies = {**forward_cases(x.copy()), **backward_cases(np.broadcast_to(g, x.shape).astype(dtype), x.copy())}
        for name, fn in cases.items():
            kernel, _ = both_paths(fn)
            assert kernel.shape == x.shape and kernel.flags.c_contiguous, name
            assert_same_values(kernel, both_paths(copies[name])[1])


def test_empty_inputs_and_gradients() -> None:
    x = np.zeros((0, 3), np.float32)
    g = np.broadcast_to(np.float32(1), x.shape)  # (all strides 0, no elements)
    for fn in [*forward_cases(x).values(), *backward_cases(g, x).values()]:
        got = fn()
        assert got.shape == x.shape and got.dtype == x.dtype


OPS = {
    "leaky_relu": (lambda t: F.leaky_relu(t, SLOPE), lambda tf, t: tf.leaky_relu(t, SLOPE)),
    "hardtanh": (lambda t: F.hardtanh(t, LOW, HIGH), lambda tf, t: tf.hardtanh(t, LOW, HIGH)),
    "relu6": (F.relu6, lambda tf, t: tf.relu6(t)),
    "clamp": (lambda t: t.clamp(LOW, HIGH), lambda tf, t: t.clamp(LOW, HIGH)),
    "clamp_max": (lambda t: t.clamp(max=HIGH), lambda tf, t: t.clamp(max=HIGH)),
    "hardsigmoid": (F.hardsigmoid, lambda tf, t: tf.hardsigmoid(t)),
    "hardswish": (F.hardswish, lambda tf, t: tf.hardswish(t)),
    "threshold": (lambda t: F.threshold(t, THRESHOLD, VALUE), lambda tf, t: tf.threshold(t, THRESHOLD, VALUE)),
    "softshrink": (lambda t: F.softshrink(t, LAMBD), lambda tf, t: tf.softshrink(t, LAMBD)),
    "hardshrink": (lambda t: F.hardshrink(t, LAMBD), lambda tf, t: tf.hardshrink(t, LAMBD)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(OPS))
def test_ops_match_pytorch_at_the_kinks(dtype, name) -> None:
    """Values (with the signs of zeros) and gradients of a random weighting, on both paths.  The
    gradients at NaN are left out: PyTorch's differ between its vectorised loop (16 elements at a time:
    0 for most, NaN for hardswish) and its scalar one (the grad passed, the choice minitensor keeps); so
    do the signs of softshrink's zeros (its vectorised loop gives +0 inside [-lambd, lambd], its scalar
    loop ``x * 0``, minitensor's choice: NaN stays NaN)."""
    torch = pytest.importorskip("torch")
    mine, theirs = OPS[name]
    x = inputs(dtype, 50)
    g = np.random.default_rng(3).standard_normal(x.shape).astype(dtype)
    tx = torch.tensor(x, requires_grad=True)
    ty = theirs(torch.nn.functional, tx)
    ty.backward(torch.tensor(g))

    def run():
        mx = mt.tensor(x, dtype=getattr(mt, dtype), requires_grad=True)
        y = mine(mx)
        y.backward(mt.tensor(g, dtype=getattr(mt, dtype)))
        return y.numpy(), mx.grad.numpy()

    for y, grad in both_paths(run):
        np.testing.assert_allclose(y, ty.detach().numpy(), rtol=1e-6, atol=0, err_msg=name)
        zeros = (y == 0) & (name != "softshrink")
        np.testing.assert_array_equal(np.signbit(y[zeros]), np.signbit(ty.detach().numpy()[zeros]), err_msg=name)
        number = ~np.isnan(x)
        np.testing.assert_allclose(grad[number], tx.grad.numpy()[number], rtol=1e-6, atol=0, err_msg=name)


def test_clamp_sends_no_gradient_outside_its_bounds_even_an_infinite_one() -> None:
    """PyTorch's clamp selects the gradient (``where``): an infinite one outside the bounds gives 0,
    not inf * 0; at the bounds it passes."""
    torch = pytest.importorskip("torch")
    x, g = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, np.nan]), np.array([np.inf, 1.0, 2.0, 3.0, -np.inf, 4.0])
    tx = torch.tensor(x, requires_grad=True)
    tx.clamp(0.0, 1.0).backward(torch.tensor(g))

    def run():
        mx = mt.tensor(x, dtype=mt.float64, requires_grad=True)
        mx.clamp(0.0, 1.0).backward(mt.tensor(g, dtype=mt.float64))
        return mx.grad.numpy()

    for grad in both_paths(run):
        np.testing.assert_array_equal(grad, tx.grad.numpy())
        np.testing.assert_array_equal(grad, [0.0, 1.0, 2.0, 3.0, 0.0, 0.0])

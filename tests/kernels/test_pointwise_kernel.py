"""kernels/pointwise.py: the ReLU, |x|, sigmoid and SiLU kernels equal their NumPy references
(float32 and float64, odd sizes, non-contiguous inputs, -0.0, ±inf and NaN), and the ops on them
keep PyTorch's values and gradients at those special points."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from kernel_paths import both_paths

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.kernels import pointwise

TOL = {np.float32: dict(rtol=4e-7, atol=1e-30), np.float64: dict(rtol=2e-15, atol=1e-300)}
# Backward values are the gradient (of order 1) times terms that may cancel (1 + x (1 - s) near 0):
# the kernels' fused multiply-adds round differently from NumPy's, by a few units of the gradient's last digit.
TOL_BACKWARD = {np.float32: dict(rtol=4e-7, atol=1e-7), np.float64: dict(rtol=2e-15, atol=1e-15)}
SPECIAL = [0.0, -0.0, 88.0, -88.0, 750.0, -750.0, np.inf, -np.inf, np.nan]


def inputs(dtype, n: int = 1001) -> np.ndarray:
    """Random values of every magnitude, then the special ones (``SPECIAL``) at the end."""
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (750 overflows float32 to inf)
        return np.concatenate([rng.standard_normal(n) * 10, SPECIAL]).astype(dtype)


def assert_same(kernel, ref, dtype, tol=TOL) -> None:
    """Equal to the dtype's rounding, NaN where the reference has NaN, and the same signs of zero."""
    assert kernel.dtype == dtype and kernel.shape == ref.shape
    np.testing.assert_allclose(kernel, ref, equal_nan=True, **tol[dtype])
    np.testing.assert_array_equal(np.signbit(kernel[kernel == 0]), np.signbit(ref[kernel == 0]))


def forward_cases(x: np.ndarray) -> dict:
    return {
        "relu": lambda: pointwise.relu(x),
        "sgn": lambda: pointwise.sgn(x),
        "sigmoid": lambda: pointwise.sigmoid(x),
        "silu": lambda: pointwise.silu(x, keep_sigmoid=False)[0],
        "silu_kept_sigmoid": lambda: pointwise.silu(x, keep_sigmoid=True)[1],
    }


def backward_cases(g: np.ndarray, x: np.ndarray) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        y, s = np.maximum(x, 0), 1 / (1 + np.exp(-x.astype(np.float64))).astype(x.dtype)
    return {
        "relu_backward": lambda: pointwise.relu_backward(g, y),
        "abs_backward": lambda: pointwise.abs_backward(g, x),
        "sigmoid_backward": lambda: pointwise.sigmoid_backward(g, s),
        "silu_backward": lambda: pointwise.silu_backward(g, x, s),
    }


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(forward_cases(np.zeros(1))))
def test_forward_kernels_equal_references(dtype, name) -> None:
    x = inputs(dtype)
    assert_same(*both_paths(forward_cases(x)[name]), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(backward_cases(np.zeros(1), np.zeros(1))))
def test_backward_kernels_equal_references(dtype, name) -> None:
    x = inputs(dtype)
    g = np.random.default_rng(1).standard_normal(x.shape).astype(dtype)
    assert_same(*both_paths(backward_cases(g, x)[name]), dtype, TOL_BACKWARD)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernels_on_strided_and_shaped_inputs(dtype) -> None:
    x = inputs(dtype, 4 * 6 * 5 - len(SPECIAL)).reshape(4, 6, 5).transpose(2, 0, 1)[:, ::2]  # not contiguous
    g = np.random.default_rng(2).standard_normal(x.shape).astype(dtype)[..., ::-1]
    cases = {**forward_cases(x), **backward_cases(g, x)}
    for name, fn in cases.items():
        kernel, ref = both_paths(fn)
        assert kernel.shape == x.shape, name
        assert_same(kernel, ref, dtype, TOL_BACKWARD)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        exact = 1 / (1 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(pointwise.sigmoid(x), exact, rtol=1e-6)


def test_special_values_exactly() -> None:
    """relu keeps -0.0 and NaN; its gradient passes at NaN (PyTorch's threshold_backward); |x|'s
    gradient is 0 at 0 and NaN (PyTorch's sgn); sigmoid and SiLU saturate without overflow."""
    x = np.array([-0.0, 0.0, np.nan, -1.0, 2.0, np.inf, -np.inf], np.float32)
    g = np.full(x.shape, 3.0, np.float32)
    for relu, grad in both_paths(lambda: (pointwise.relu(x), pointwise.relu_backward(g, pointwise.relu(x)))):
        assert np.signbit(relu[0]) and not np.signbit(relu[1]) and np.isnan(relu[2])
        np.testing.assert_array_equal(relu[3:], [0.0, 2.0, np.inf, 0.0])
        np.testing.assert_array_equal(grad, [0.0, 0.0, 3.0, 0.0, 3.0, 3.0, 0.0])
    for grad in both_paths(lambda: pointwise.abs_backward(g, x)):
        np.testing.assert_array_equal(grad, [0.0, 0.0, 0.0, -3.0, 3.0, 3.0, -3.0])
    for s in both_paths(lambda: pointwise.sigmoid(x)):
        assert s[5] == 1 and s[6] == 0 and np.isnan(s[2])
    for y in both_paths(lambda: pointwise.silu(x, keep_sigmoid=False)[0]):
        assert y[5] == np.inf and np.isnan(y[6]) and np.signbit(y[0])  # -inf * 0 is NaN, as in PyTorch


def test_backward_of_other_shapes_takes_the_plain_formula() -> None:
    x = np.array([[-1.0, 2.0, 0.0]], np.float32)
    g = np.array([[2.0], [3.0]], np.float32)  # broadcasts against x
    np.testing.assert_array_equal(pointwise.relu_backward(g, x), [[0, 2, 0], [0, 3, 0]])
    np.testing.assert_array_equal(pointwise.abs_backward(g, x), [[-2, 2, 0], [-3, 3, 0]])


@pytest.mark.parametrize(
    "fn",
    [lambda t: t.relu(), lambda t: t.abs(), lambda t: t.sigmoid(), F.silu],
    ids=["relu", "abs", "sigmoid", "silu"],
)
def test_op_gradients_on_both_paths(fn) -> None:
    """First order through the op (kernel and reference) agree, and gradcheck / gradgradcheck pass
    on a random weighting of the output (away from relu's and abs's kink at 0)."""
    rng = np.random.default_rng(2)
    weights = mt.tensor(rng.standard_normal((3, 4)), dtype=mt.float64)
    data = rng.standard_normal((3, 4)) * 3
    x = mt.tensor(np.where(np.abs(data) < 0.1, 0.5, data), dtype=mt.float64, requires_grad=True)
    grads = []
    for jit in (True, False):
        mt.set_jit_enabled(jit)
        x.grad = None
        (fn(x) * weights).sum().backward()
        grads.append(x.grad.numpy())
        assert gradcheck(lambda t: (fn(t) * weights).sum(), (x,))
        assert gradgradcheck(lambda t: fn(t) * weights, (x,))
    mt.set_jit_enabled(True)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-14)


def test_ops_match_pytorch_at_special_values() -> None:
    torch = pytest.importorskip("torch")
    values = [-0.0, 0.0, float("nan"), -1.0, 2.0, float("inf"), float("-inf")]
    ops = {
        "relu": (lambda t: t.relu(), torch.relu),
        "abs": (lambda t: t.abs(), torch.abs),
        "sign": (lambda t: t.sign(), torch.sign),
        "sgn": (mt.sgn, torch.sgn),
        "sigmoid": (lambda t: t.sigmoid(), torch.sigmoid),
        "silu": (F.silu, torch.nn.functional.silu),
    }
    for name, (mine, theirs) in ops.items():  # (repeated: 16 elements and more take PyTorch's vectorised loop)
        x = mt.tensor(values * 4, requires_grad=True)
        tx = torch.tensor(values * 4, requires_grad=True)
        y, ty = mine(x), theirs(tx)
        y.backward(mt.ones(len(values) * 4))
        ty.backward(torch.ones(len(values) * 4))
        np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-6, err_msg=name)
        np.testing.assert_array_equal(np.signbit(y.numpy()), np.signbit(ty.detach().numpy()), err_msg=name)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(force=True), rtol=1e-6, err_msg=name)


def test_silu_checks_its_input() -> None:
    """As every nn function: a Tensor or a NumPy array (converted), nothing else; floating point only."""
    np.testing.assert_allclose(F.silu(np.zeros(3)).numpy(), 0.0)
    with pytest.raises(TypeError, match="silu: input must be a Tensor or a NumPy array"):
        F.silu([1.0, 2.0])
    with pytest.raises(TypeError, match="floating point"):
        F.silu(mt.tensor([1, 2]))

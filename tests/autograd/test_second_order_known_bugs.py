"""Second derivatives main gets wrong today: each test fails now and must pass once fixed.

They are xfail(strict=True): when the fix lands the test passes, strict turns that
into a failure, and the marker (and the matching exclusion in tests/ops/strategies.py
``second_order_ok`` or the op tables) must be removed.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import gradgradcheck


def f64(values):
    return mt.tensor(values, dtype=mt.float64, requires_grad=True)


@pytest.mark.xfail(
    strict=True,
    raises=mt.autograd.GradcheckError,
    reason="0-d output saved as a NumPy scalar: ufuncs return np.float64 for 0-d arrays, forward saves that "
    "scalar with save_for_backward(out), Function.apply wraps the returned scalar in a new 0-d array, so "
    "_saved_records finds no ndarray identical to out._data (origin None) and _saved_tensor hands the scalar "
    "back as a constant: d/dx of exp's backward (grad * out) misses grad * out",
)
@pytest.mark.parametrize("op", ["exp", "tanh", "sqrt"])
def test_second_derivative_of_a_0d_op_that_saves_its_output(op):
    assert gradgradcheck(lambda t: getattr(t, op)(), f64(0.7))


@pytest.mark.xfail(strict=True, raises=mt.autograd.GradcheckError, reason="the same 0-d saved-output bug")
def test_second_derivative_of_logsumexp_of_a_0d_tensor():
    assert gradgradcheck(lambda t: t.logsumexp(0), f64(0.7))


def test_the_same_ops_on_1d_tensors_are_right():
    """The bug is the 0-d case only: one element in a 1-D tensor is fine."""
    for op in ["exp", "tanh", "sqrt"]:
        assert gradgradcheck(lambda t, op=op: getattr(t, op)(), f64([0.7]))
    assert gradgradcheck(lambda t: t.logsumexp(0), f64([0.7]))


@pytest.mark.xfail(
    strict=True,
    raises=TypeError,
    reason="Pow's backward for a Tensor exponent, _exponent_grad in ops/elementwise.py, builds its mask with "
    "(a == 0) & (b >= 0); with create_graph a and b are Tensors and Tensor has no __and__ (numpy_protocol "
    "has no logical_and/bitwise_and), so d/db of a**b cannot be differentiated again",
)
def test_second_derivative_of_tensor_pow_tensor():
    rng = np.random.default_rng(0)
    a, b = f64(rng.uniform(0.5, 2.0, 3)), f64(rng.uniform(-1.0, 1.0, 3))
    assert gradgradcheck(lambda p, q: p**q, (a, b))


def test_scalar_base_pow_tensor_is_right():
    """With a Python-scalar base the mask is built from an array, and works."""
    assert gradgradcheck(lambda q: 2.0**q, f64(np.random.default_rng(0).uniform(-1.0, 1.0, 3)))

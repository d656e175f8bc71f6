"""nn/functional/linear.py: ``F.linear`` (one LinearBackward node): float64 gradchecks of input, weight
and bias on random shapes and memory layouts, values, float32, owned output memory, only the gradients
needed, and validation."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import randn_f64
from hypothesis import given
from hypothesis import strategies as st
from strategies import layouts, leaf, shapes

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck


# -------------------------------------------------------------------- linear
@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4)])
def test_linear_gradcheck_input_weight_bias(rng, shape):
    x, w, b = randn_f64(rng, *shape), randn_f64(rng, 5, 4), randn_f64(rng, 5)
    assert gradcheck(F.linear, [x, w, b])
    assert gradcheck(lambda x, w: F.linear(x, w), [x, w])


def test_linear_values_and_1d_input(rng):
    x, w, b = randn_f64(rng, 2, 3, 4), randn_f64(rng, 5, 4), randn_f64(rng, 5)
    np.testing.assert_allclose(F.linear(x, w, b).numpy(), x.numpy() @ w.numpy().T + b.numpy(), rtol=1e-12)
    v = randn_f64(rng, 4)
    y = F.linear(v, w, b)
    assert y.shape == (5,)
    np.testing.assert_allclose(y.numpy(), w.numpy() @ v.numpy() + b.numpy(), rtol=1e-12)


def test_linear_is_one_op_that_keeps_float32(rng):
    x, w, b = (mt.tensor(rng.standard_normal(s), dtype=mt.float32, requires_grad=True) for s in ((3, 4), (2, 4), 2))
    y = F.linear(x, w, b)
    assert type(y.grad_fn).__name__ == "LinearBackward" and y.dtype == mt.float32
    y.backward(mt.ones(3, 2))
    assert x.grad.dtype == mt.float32 and w.grad.dtype == mt.float32


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (4,), (0, 4)])
def test_linear_output_owns_its_memory(rng, shape):
    """Not a reshaped view of the product: a view makes ``Function.apply`` search the inputs for
    memory the output could share (and an in-place change of the output is then checked against it)."""
    y = F.linear(randn_f64(rng, *shape), randn_f64(rng, 5, 4), randn_f64(rng, 5))
    assert y.numpy().base is None and y.shape == shape[:-1] + (5,)


def test_linear_weight_gradient_accumulates_over_the_flattened_batch(rng):
    x, w = randn_f64(rng, 2, 3, 4), randn_f64(rng, 5, 4)
    g = rng.standard_normal((2, 3, 5))
    F.linear(x, w).backward(mt.tensor(g, dtype=mt.float64))
    np.testing.assert_allclose(w.grad.numpy(), np.einsum("bso,bsi->oi", g, x.numpy()), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), g @ w.numpy(), rtol=1e-12)


def test_linear_only_computes_needed_gradients(rng):
    x = randn_f64(rng, 3, 4, requires_grad=False)
    w = randn_f64(rng, 2, 4)
    F.linear(x, w, randn_f64(rng, 2, requires_grad=False)).sum().backward()
    assert w.grad is not None and x.grad is None


def test_linear_validation(rng):
    x, w = randn_f64(rng, 3, 4), randn_f64(rng, 2, 4)
    with pytest.raises(ValueError, match="in_features=4, got 3"):
        F.linear(randn_f64(rng, 3, 3), w)
    with pytest.raises(ValueError, match="2-D"):
        F.linear(x, randn_f64(rng, 4))
    with pytest.raises(ValueError, match=r"bias must have shape \(2,\)"):
        F.linear(x, w, randn_f64(rng, 3))
    with pytest.raises(TypeError, match="input dtype float32 does not match weight dtype float64"):
        F.linear(x.to(mt.float32), w)
    with pytest.raises(TypeError, match="bias dtype float32"):
        F.linear(x, w, mt.ones(2))
    with pytest.raises(TypeError, match="input must be a Tensor or a NumPy array, got list"):
        F.linear(x.numpy().tolist(), w)


@given(
    lead=shapes(max_dims=2, max_side=3),
    n_in=st.integers(1, 4),
    n_out=st.integers(1, 3),
    layout=layouts,
    seed=st.integers(0, 2**16),
)
def test_linear_random_shapes_and_layouts(lead, n_in, n_out, layout, seed):
    x = leaf(seed, lead + (n_in,), layout)
    w, b = leaf(seed + 1, (n_out, n_in), layout), leaf(seed + 2, (n_out,))
    np.testing.assert_allclose(F.linear(x, w, b).numpy(), x.numpy() @ w.numpy().T + b.numpy(), rtol=1e-12, atol=1e-12)
    assert gradcheck(F.linear, [x, w, b])

"""nn/functional/activation.py: gelu (exact and tanh), softmax and log_softmax (also without ``dim``,
PyTorch's implicit dim with its warning, and ``dtype``), relu, tanh, sigmoid: values and float64 gradchecks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import randn_f64

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck


# --------------------------------------------------------------- activations
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradcheck_including_large_and_tiny_inputs(rng, approximate):
    x = mt.tensor(np.concatenate([rng.standard_normal(20) * 3, [-9.0, -6.0, 6.0, 9.0, 1e-8]]), dtype=mt.float64)
    x.requires_grad_()
    assert gradcheck(lambda t: F.gelu(t, approximate=approximate), [x])


def test_gelu_known_values():
    x = mt.tensor([-3.0, -1.0, 0.0, 1.0, 3.0], dtype=mt.float64)
    phi = [0.5 * (1 + math.erf(v / math.sqrt(2))) for v in (-3.0, -1.0, 0.0, 1.0, 3.0)]
    np.testing.assert_allclose(F.gelu(x).numpy(), x.numpy() * phi, rtol=1e-15, atol=1e-16)
    assert abs(F.gelu(x, "tanh").numpy() - F.gelu(x).numpy()).max() < 1e-3  # the approximation is close
    assert type(F.gelu(x.requires_grad_()).grad_fn).__name__ == "GeluBackward"
    with pytest.raises(ValueError, match="'none' or 'tanh'"):
        F.gelu(x, approximate="erf")


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_and_log_softmax_gradcheck(rng, dim):
    x = randn_f64(rng, 3, 5)
    assert gradcheck(lambda t: F.softmax(t, dim), [x])
    assert gradcheck(lambda t: F.log_softmax(t, dim), [x])
    np.testing.assert_allclose(F.softmax(x, dim).numpy().sum(dim), 1.0)
    np.testing.assert_allclose(np.exp(F.log_softmax(x, dim).numpy()), F.softmax(x, dim).numpy(), rtol=1e-12)


def test_relu_tanh_sigmoid(rng):
    x = randn_f64(rng, 4, 3)
    with mt.no_grad():
        x.numpy()[np.abs(x.numpy()) < 0.05] = 0.3
    cases = ((F.relu, lambda a: np.maximum(a, 0)), (F.tanh, np.tanh), (F.sigmoid, lambda a: 1 / (1 + np.exp(-a))))
    for fn, ref in cases:
        np.testing.assert_allclose(fn(x).numpy(), ref(x.numpy()), rtol=1e-12)
        assert gradcheck(fn, [x])
    with pytest.raises(TypeError, match="Tensor"):
        F.relu([1.0, -1.0])


# ------------------------------------------------------------- implicit softmax dim
@pytest.mark.parametrize("shape, dim", [((4,), 0), ((2, 3), 1), ((2, 3, 4), 0), ((2, 3, 4, 5), 1)])
def test_softmax_without_dim_takes_pytorchs_implicit_dim_and_warns(rng, shape, dim):
    x = randn_f64(rng, *shape, requires_grad=False)
    for implicit, explicit in [
        (lambda: F.softmax(x), F.softmax(x, dim)),
        (lambda: F.log_softmax(x), F.log_softmax(x, dim)),
        (lambda: mt.nn.Softmax()(x), F.softmax(x, dim)),
        (lambda: mt.nn.LogSoftmax()(x), F.log_softmax(x, dim)),
    ]:
        with pytest.warns(UserWarning, match="Implicit dimension choice for (log_)?softmax has been deprecated") as w:
            got = implicit()
        assert w[0].filename == __file__  # the warning points at the caller's line, as PyTorch's
        np.testing.assert_array_equal(got.numpy(), explicit.numpy())
    assert repr(mt.nn.Softmax()) == "Softmax(dim=None)"


def test_softmax_dtype_converts_first():
    x = mt.tensor([1.0, 2.0])
    assert F.softmax(x, 0, dtype=mt.float64).dtype == mt.float64

"""nn/functional/normalization.py: ``F.layer_norm``: float64 gradchecks on random shapes and memory
layouts, values, float32 with large offsets, and validation."""

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


# ---------------------------------------------------------------- layer_norm
@pytest.mark.parametrize("normalized_shape, shape", [((4,), (3, 4)), ((3, 4), (2, 3, 4)), (4, (4,))])
def test_layer_norm_gradcheck(rng, normalized_shape, shape):
    shape_t = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
    x, w, b = randn_f64(rng, *shape), randn_f64(rng, *shape_t), randn_f64(rng, *shape_t)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, normalized_shape, w, b), [x, w, b])
    assert gradcheck(lambda x: F.layer_norm(x, normalized_shape), [x])
    assert gradcheck(lambda x, w: F.layer_norm(x, normalized_shape, weight=w), [x, w])
    assert gradcheck(lambda x, b: F.layer_norm(x, normalized_shape, bias=b), [x, b])


def test_layer_norm_values(rng):
    x, w, b = randn_f64(rng, 2, 3, 4), randn_f64(rng, 4), randn_f64(rng, 4)
    a = x.numpy()
    ref = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-3) * w.numpy() + b.numpy()
    y = F.layer_norm(x, (4,), w, b, eps=1e-3)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-12, atol=1e-12)
    assert type(y.grad_fn).__name__ == "LayerNormBackward"


def test_layer_norm_float32_stays_float32_and_large_offsets_are_stable(rng):
    x = mt.tensor(rng.standard_normal((4, 16)) + 1e4, dtype=mt.float32)
    y = F.layer_norm(x, 16)
    assert y.dtype == mt.float32
    np.testing.assert_allclose(y.numpy().std(-1), 1, atol=1e-2)


def test_layer_norm_validation(rng):
    x = randn_f64(rng, 2, 4)
    with pytest.raises(ValueError, match=r"normalized_shape=\(3,\)"):
        F.layer_norm(x, (3,))
    with pytest.raises(ValueError, match=r"normalized_shape=\(2, 2, 4\)"):
        F.layer_norm(x, (2, 2, 4))
    with pytest.raises(ValueError, match="weight must have shape"):
        F.layer_norm(x, (4,), randn_f64(rng, 3))
    with pytest.raises(TypeError, match="bias dtype float32"):
        F.layer_norm(x, (4,), None, mt.ones(4))
    with pytest.raises(ValueError, match="positive ints"):
        F.layer_norm(x, (0,))
    with pytest.raises(ValueError, match="eps must be positive"):
        F.layer_norm(x, (4,), eps=0.0)
    with pytest.raises(TypeError, match="float tensor"):
        F.layer_norm(mt.tensor([[1, 2]]), (2,))


@given(lead=shapes(max_dims=2, max_side=3), norm=shapes(1, 2, min_side=2), layout=layouts, seed=st.integers(0, 2**16))
def test_layer_norm_random_shapes_and_layouts(lead, norm, layout, seed):
    x = leaf(seed, lead + norm, layout)
    w, b = leaf(seed + 1, norm, layout), leaf(seed + 2, norm)
    axes = tuple(range(len(lead), len(lead) + len(norm)))
    a = x.numpy()
    ref = (a - a.mean(axes, keepdims=True)) / np.sqrt(a.var(axes, keepdims=True) + 1e-5) * w.numpy() + b.numpy()
    np.testing.assert_allclose(F.layer_norm(x, norm, w, b).numpy(), ref, rtol=1e-10, atol=1e-12)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, norm, w, b), [x, w, b])

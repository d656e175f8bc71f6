"""``minitensor.nn.functional``: the stateless ops (values, gradients, validation) and ``erf``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck
from minitensor.ops.special import erf

F64 = mt.float64


def _t(rng, *shape, dtype=F64, requires_grad=True):
    return mt.tensor(rng.standard_normal(shape), dtype=dtype, requires_grad=requires_grad)


# ----------------------------------------------------------------------- erf
def test_erf_matches_math_erf_on_a_wide_grid():
    xs = np.concatenate([np.linspace(-30, 30, 60001), np.geomspace(1e-300, 1e-3, 50), [0.46875, 4.0, -4.0, -0.0]])
    ref = np.array([math.erf(v) for v in xs])
    np.testing.assert_allclose(erf(xs), ref, rtol=0, atol=1e-15)
    # relative accuracy too, where erf is tiny
    small = np.abs(xs) < 1e-3
    np.testing.assert_allclose(erf(xs[small]), ref[small], rtol=1e-14, atol=0)


def test_erf_special_values_and_float32():
    out = erf(np.array([np.inf, -np.inf, np.nan, 0.0]))
    assert out[0] == 1 and out[1] == -1 and np.isnan(out[2]) and out[3] == 0
    x32 = np.linspace(-5, 5, 1001, dtype=np.float32)
    y32 = erf(x32)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32, [math.erf(v) for v in x32.astype(np.float64)], atol=2e-7)


@given(st.floats(-40, 40, allow_nan=False))
def test_erf_property_against_math_erf(v):
    assert erf(np.array([v]))[0] == pytest.approx(math.erf(v), abs=1e-15)


# -------------------------------------------------------------------- linear
@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4)])
def test_linear_gradcheck_input_weight_bias(rng, shape):
    x, w, b = _t(rng, *shape), _t(rng, 5, 4), _t(rng, 5)
    assert gradcheck(F.linear, [x, w, b])
    assert gradcheck(lambda x, w: F.linear(x, w), [x, w])


def test_linear_values_and_1d_input(rng):
    x, w, b = _t(rng, 2, 3, 4), _t(rng, 5, 4), _t(rng, 5)
    np.testing.assert_allclose(F.linear(x, w, b).numpy(), x.numpy() @ w.numpy().T + b.numpy(), rtol=1e-12)
    v = _t(rng, 4)
    y = F.linear(v, w, b)
    assert y.shape == (5,)
    np.testing.assert_allclose(y.numpy(), w.numpy() @ v.numpy() + b.numpy(), rtol=1e-12)


def test_linear_is_one_op_that_keeps_float32(rng):
    x, w = _t(rng, 3, 4, dtype=mt.float32), _t(rng, 2, 4, dtype=mt.float32)
    y = F.linear(x, w, _t(rng, 2, dtype=mt.float32))
    assert type(y.grad_fn).__name__ == "LinearBackward" and y.dtype == mt.float32
    y.backward(mt.ones(3, 2))
    assert x.grad.dtype == mt.float32 and w.grad.dtype == mt.float32


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (4,), (0, 4)])
def test_linear_output_owns_its_memory(rng, shape):
    """Not a reshaped view of the product: a view makes ``Function.apply`` search the inputs for
    memory the output could share (and an in-place change of the output is then checked against it)."""
    y = F.linear(_t(rng, *shape), _t(rng, 5, 4), _t(rng, 5))
    assert y.numpy().base is None and y.shape == shape[:-1] + (5,)


def test_linear_weight_gradient_accumulates_over_the_flattened_batch(rng):
    x, w = _t(rng, 2, 3, 4), _t(rng, 5, 4)
    g = rng.standard_normal((2, 3, 5))
    F.linear(x, w).backward(mt.tensor(g, dtype=F64))
    np.testing.assert_allclose(w.grad.numpy(), np.einsum("bso,bsi->oi", g, x.numpy()), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), g @ w.numpy(), rtol=1e-12)


def test_linear_only_computes_needed_gradients(rng):
    x = _t(rng, 3, 4, requires_grad=False)
    w = _t(rng, 2, 4)
    F.linear(x, w, _t(rng, 2, requires_grad=False)).sum().backward()
    assert w.grad is not None and x.grad is None


def test_linear_validation(rng):
    x, w = _t(rng, 3, 4), _t(rng, 2, 4)
    with pytest.raises(ValueError, match="in_features=4, got 3"):
        F.linear(_t(rng, 3, 3), w)
    with pytest.raises(ValueError, match="2-D"):
        F.linear(x, _t(rng, 4))
    with pytest.raises(ValueError, match=r"bias must have shape \(2,\)"):
        F.linear(x, w, _t(rng, 3))
    with pytest.raises(TypeError, match="input dtype float32 does not match weight dtype float64"):
        F.linear(x.to(mt.float32), w)
    with pytest.raises(TypeError, match="bias dtype float32"):
        F.linear(x, w, _t(rng, 2, dtype=mt.float32))
    with pytest.raises(TypeError, match="input must be a Tensor or a NumPy array, got list"):
        F.linear(x.numpy().tolist(), w)


# ---------------------------------------------------------------- layer_norm
@pytest.mark.parametrize("normalized_shape, shape", [((4,), (3, 4)), ((3, 4), (2, 3, 4)), (4, (4,))])
def test_layer_norm_gradcheck(rng, normalized_shape, shape):
    shape_t = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
    x, w, b = _t(rng, *shape), _t(rng, *shape_t), _t(rng, *shape_t)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, normalized_shape, w, b), [x, w, b])
    assert gradcheck(lambda x: F.layer_norm(x, normalized_shape), [x])
    assert gradcheck(lambda x, w: F.layer_norm(x, normalized_shape, weight=w), [x, w])
    assert gradcheck(lambda x, b: F.layer_norm(x, normalized_shape, bias=b), [x, b])


def test_layer_norm_values(rng):
    x, w, b = _t(rng, 2, 3, 4), _t(rng, 4), _t(rng, 4)
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
    x = _t(rng, 2, 4)
    with pytest.raises(ValueError, match=r"normalized_shape=\(3,\)"):
        F.layer_norm(x, (3,))
    with pytest.raises(ValueError, match=r"normalized_shape=\(2, 2, 4\)"):
        F.layer_norm(x, (2, 2, 4))
    with pytest.raises(ValueError, match="weight must have shape"):
        F.layer_norm(x, (4,), _t(rng, 3))
    with pytest.raises(TypeError, match="bias dtype float32"):
        F.layer_norm(x, (4,), None, _t(rng, 4, dtype=mt.float32))
    with pytest.raises(ValueError, match="positive ints"):
        F.layer_norm(x, (0,))
    with pytest.raises(ValueError, match="eps must be positive"):
        F.layer_norm(x, (4,), eps=0.0)
    with pytest.raises(TypeError, match="float tensor"):
        F.layer_norm(mt.tensor([[1, 2]]), (2,))


# --------------------------------------------------------------- activations
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradcheck_including_large_and_tiny_inputs(rng, approximate):
    x = mt.tensor(np.concatenate([rng.standard_normal(20) * 3, [-9.0, -6.0, 6.0, 9.0, 1e-8]]), dtype=F64)
    x.requires_grad_()
    assert gradcheck(lambda t: F.gelu(t, approximate=approximate), [x])


def test_gelu_known_values():
    x = mt.tensor([-3.0, -1.0, 0.0, 1.0, 3.0], dtype=F64)
    phi = [0.5 * (1 + math.erf(v / math.sqrt(2))) for v in (-3.0, -1.0, 0.0, 1.0, 3.0)]
    np.testing.assert_allclose(F.gelu(x).numpy(), x.numpy() * phi, rtol=1e-15, atol=1e-16)
    assert abs(F.gelu(x, "tanh").numpy() - F.gelu(x).numpy()).max() < 1e-3  # the approximation is close
    assert type(F.gelu(x.requires_grad_()).grad_fn).__name__ == "GeluBackward"
    with pytest.raises(ValueError, match="'none' or 'tanh'"):
        F.gelu(x, approximate="erf")


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_and_log_softmax_gradcheck(rng, dim):
    x = _t(rng, 3, 5)
    assert gradcheck(lambda t: F.softmax(t, dim), [x])
    assert gradcheck(lambda t: F.log_softmax(t, dim), [x])
    np.testing.assert_allclose(F.softmax(x, dim).numpy().sum(dim), 1.0)
    np.testing.assert_allclose(np.exp(F.log_softmax(x, dim).numpy()), F.softmax(x, dim).numpy(), rtol=1e-12)


def test_relu_tanh_sigmoid(rng):
    x = _t(rng, 4, 3)
    with mt.no_grad():
        x.numpy()[np.abs(x.numpy()) < 0.05] = 0.3
    cases = ((F.relu, lambda a: np.maximum(a, 0)), (F.tanh, np.tanh), (F.sigmoid, lambda a: 1 / (1 + np.exp(-a))))
    for fn, ref in cases:
        np.testing.assert_allclose(fn(x).numpy(), ref(x.numpy()), rtol=1e-12)
        assert gradcheck(fn, [x])
    with pytest.raises(TypeError, match="Tensor"):
        F.relu([1.0, -1.0])


# ------------------------------------------------------------------- dropout
def test_dropout_function():
    x = mt.ones(1000)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    mt.manual_seed(0)
    y = F.dropout(x, 0.25)
    assert set(np.unique(y.numpy()).tolist()) == {0.0, np.float32(1 / 0.75).item()}
    assert y.dtype == mt.float32
    assert not F.dropout(x, 1.0).numpy().any()
    for p in (-1e-9, 1.0001):
        with pytest.raises(ValueError, match=r"\[0, 1\]"):
            F.dropout(x, p)
    with pytest.raises(TypeError, match="float tensor"):
        F.dropout(mt.tensor([1, 2]), 0.5)


def test_dropout_p_one_gives_zero_gradient():
    x = mt.ones(5, requires_grad=True)
    F.dropout(x, 1.0).backward(mt.ones(5))
    assert not x.grad.numpy().any() and np.isfinite(x.grad.numpy()).all()


# ----------------------------------------------------------------- embedding
def test_embedding_function_gradcheck_and_padding(rng):
    w = _t(rng, 6, 3)
    idx = np.array([[0, 2, 2], [5, 0, 0]])
    assert gradcheck(lambda w: F.embedding(idx, w), [w])
    F.embedding(mt.tensor(idx), w, padding_idx=0).backward(mt.ones(2, 3, 3, dtype=F64))
    assert not w.grad.numpy()[0].any() and w.grad.numpy()[2].tolist() == [2.0, 2.0, 2.0]
    assert w.grad.numpy()[5].tolist() == [1.0, 1.0, 1.0] and not w.grad.numpy()[1].any()


def test_embedding_function_validation(rng):
    w = _t(rng, 4, 2)
    with pytest.raises(ValueError, match=r"index 4 is out of range; indices must be in \[0, 3\]"):
        F.embedding(np.array([4]), w)
    with pytest.raises(TypeError, match="integer"):
        F.embedding(np.array([0.5]), w)
    with pytest.raises(ValueError, match="2-D"):
        F.embedding(np.array([0]), _t(rng, 4))
    with pytest.raises(ValueError, match="padding_idx"):
        F.embedding(np.array([0]), w, padding_idx=9)
    assert F.embedding(np.zeros((0,), dtype=np.int64), w).shape == (0, 2)


# ------------------------------------------------- random shapes and layouts
def _laid_out(rng, shape, layout):
    """A float64 leaf of ``shape`` whose memory is C-ordered, transposed or strided (no copy)."""
    if layout == "transposed":
        array = rng.standard_normal(shape[::-1]).T
    elif layout == "strided":
        array = rng.standard_normal(tuple(2 * s for s in shape))[tuple(slice(None, None, 2) for _ in shape)]
    else:
        array = rng.standard_normal(shape)
    return mt.from_numpy(array).requires_grad_()


layouts = st.sampled_from(["contiguous", "transposed", "strided"])
lead_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)


@given(lead=lead_shapes, n_in=st.integers(1, 4), n_out=st.integers(1, 3), layout=layouts, seed=st.integers(0, 2**16))
def test_linear_random_shapes_and_layouts(lead, n_in, n_out, layout, seed):
    rng = np.random.default_rng(seed)
    x = _laid_out(rng, lead + (n_in,), layout)
    w, b = _laid_out(rng, (n_out, n_in), layout), _laid_out(rng, (n_out,), "contiguous")
    np.testing.assert_allclose(F.linear(x, w, b).numpy(), x.numpy() @ w.numpy().T + b.numpy(), rtol=1e-12, atol=1e-12)
    assert gradcheck(F.linear, [x, w, b])


@given(lead=lead_shapes, norm=st.lists(st.integers(2, 4), min_size=1, max_size=2).map(tuple), layout=layouts,
       seed=st.integers(0, 2**16))  # fmt: skip
def test_layer_norm_random_shapes_and_layouts(lead, norm, layout, seed):
    rng = np.random.default_rng(seed)
    x = _laid_out(rng, lead + norm, layout)
    w, b = _laid_out(rng, norm, layout), _laid_out(rng, norm, "contiguous")
    axes = tuple(range(len(lead), len(lead) + len(norm)))
    a = x.numpy()
    ref = (a - a.mean(axes, keepdims=True)) / np.sqrt(a.var(axes, keepdims=True) + 1e-5) * w.numpy() + b.numpy()
    np.testing.assert_allclose(F.layer_norm(x, norm, w, b).numpy(), ref, rtol=1e-10, atol=1e-12)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, norm, w, b), [x, w, b])


# ------------------------------------------------------------- implicit softmax dim
@pytest.mark.parametrize("shape, dim", [((4,), 0), ((2, 3), 1), ((2, 3, 4), 0), ((2, 3, 4, 5), 1)])
def test_softmax_without_dim_takes_pytorchs_implicit_dim_and_warns(rng, shape, dim):
    x = _t(rng, *shape, requires_grad=False)
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

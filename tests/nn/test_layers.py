"""The layers: gradients w.r.t. input and every parameter (float64 gradcheck), init, validation, dtype."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck

F64 = mt.float64


def _input(rng, *shape, dtype=F64):
    return mt.tensor(rng.standard_normal(shape), dtype=dtype, requires_grad=True)


def _randomize(module, rng):
    """Give every parameter random values (so gamma != 1, beta != 0 in the checks)."""
    with mt.no_grad():
        for p in module.parameters():
            p.numpy()[...] = rng.standard_normal(p.shape)
    return module


def check_module(module, x):
    """gradcheck the module w.r.t. its input and all its parameters (passed as inputs)."""
    params = list(module.parameters())
    assert gradcheck(lambda inp, *_: module(inp), [x, *params])


# ------------------------------------------------------------------- gradients
@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 3, 5)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_gradcheck(rng, shape, bias):
    layer = nn.Linear(5, 4, bias=bias, dtype=F64)
    check_module(layer, _input(rng, *shape))


def test_linear_gradcheck_on_non_contiguous_input(rng):
    layer = nn.Linear(3, 2, dtype=F64)
    x = _input(rng, 3, 4)
    assert gradcheck(lambda t, *_: layer(t.transpose(0, 1)), [x, *layer.parameters()])


@pytest.mark.parametrize("normalized_shape", [6, (2, 3)])
@pytest.mark.parametrize("affine, bias", [(True, True), (True, False), (False, True)])
def test_layer_norm_gradcheck(rng, normalized_shape, affine, bias):
    norm = _randomize(nn.LayerNorm(normalized_shape, elementwise_affine=affine, bias=bias, dtype=F64), rng)
    assert len(list(norm.parameters())) == (2 if affine and bias else 1 if affine else 0)
    check_module(norm, _input(rng, 2, 2, 6) if normalized_shape == 6 else _input(rng, 4, 2, 3))


@pytest.mark.parametrize(
    "layer",
    [nn.ReLU(), nn.GELU(), nn.GELU(approximate="tanh"), nn.Tanh(), nn.Sigmoid(), nn.Softmax(dim=1), nn.LogSoftmax(-1)],
    ids=repr,
)
def test_activation_gradcheck(rng, layer):
    x = _input(rng, 3, 4, 2)
    if isinstance(layer, nn.ReLU):
        with mt.no_grad():
            x.numpy()[np.abs(x.numpy()) < 0.05] = 0.5  # away from the kink
    check_module(layer, x)


def test_embedding_gradcheck_with_repeated_indices(rng):
    emb = nn.Embedding(6, 3, dtype=F64)
    idx = mt.tensor([[0, 2, 2, 5], [5, 5, 1, 0]])
    assert gradcheck(lambda w: emb(idx), [emb.weight])


def test_dropout_gradcheck_with_a_fixed_mask(rng):
    drop = nn.Dropout(0.4)
    x = _input(rng, 4, 5)

    def fn(t):
        mt.manual_seed(11)  # the same mask at every evaluation
        return drop(t)

    assert gradcheck(fn, [x])


def test_composite_model_gradcheck(rng):
    model = nn.Sequential(
        nn.Linear(4, 6, dtype=F64),
        nn.LayerNorm(6, dtype=F64),
        nn.GELU(),
        nn.Linear(6, 3, dtype=F64),
        nn.Tanh(),
    )
    _randomize(model, rng)
    check_module(model, _input(rng, 2, 4))


def test_reused_module_accumulates_gradient_from_both_uses(rng):
    layer = nn.Linear(3, 3, dtype=F64)
    x = _input(rng, 2, 3)
    assert gradcheck(lambda t, *_: layer(layer(t)), [x, *layer.parameters()])


# ------------------------------------------------------------------------ Linear
def test_linear_shapes_and_formula(rng):
    layer = nn.Linear(4, 3)
    assert layer.weight.shape == (3, 4) and layer.bias.shape == (3,)
    assert layer.weight.dtype == mt.float32
    x = mt.tensor(rng.standard_normal((2, 5, 4)))
    y = layer(x)
    assert y.shape == (2, 5, 3) and y.dtype == mt.float32
    np.testing.assert_allclose(y.numpy(), x.numpy() @ layer.weight.numpy().T + layer.bias.numpy(), rtol=1e-5, atol=1e-6)
    assert nn.Linear(4, 3, bias=False).bias is None


def test_linear_default_init_bounds_and_reproducibility():
    mt.manual_seed(0)
    a = nn.Linear(100, 50)
    bound = 1 / math.sqrt(100)
    assert np.abs(a.weight.numpy()).max() <= bound and np.abs(a.bias.numpy()).max() <= bound
    assert np.abs(a.weight.numpy()).max() > 0.9 * bound  # spread over the whole interval
    assert abs(a.weight.numpy().std() - bound / math.sqrt(3)) < 0.05 * bound
    mt.manual_seed(0)
    b = nn.Linear(100, 50)
    np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())
    np.testing.assert_array_equal(a.bias.numpy(), b.bias.numpy())


def test_linear_validation():
    with pytest.raises(ValueError, match="in_features"):
        nn.Linear(0, 3)
    with pytest.raises(ValueError, match="out_features"):
        nn.Linear(3, -1)
    with pytest.raises(TypeError, match="in_features"):
        nn.Linear(2.5, 3)
    with pytest.raises(TypeError, match="dtype"):
        nn.Linear(2, 3, dtype=mt.int64)
    layer = nn.Linear(4, 3)
    with pytest.raises(ValueError, match=r"in_features=4, got 5"):
        layer(mt.zeros(2, 5))
    with pytest.raises(TypeError, match="float64.*float32"):
        layer(mt.zeros(2, 4, dtype=F64))
    with pytest.raises(TypeError, match="Tensor or a NumPy array, got list"):
        layer([[0.0] * 4] * 2)  # (NumPy arrays are accepted: tests/nn/test_array_inputs.py)


def test_float64_module_stays_float64(rng):
    model = nn.Sequential(nn.Linear(3, 4, dtype=F64), nn.LayerNorm(4, dtype=F64), nn.GELU(), nn.Dropout(0.2))
    x = _input(rng, 2, 3)
    y = model(x)
    assert y.dtype == F64
    y.sum().backward()
    assert all(p.grad.dtype == F64 for p in model.parameters()) and x.grad.dtype == F64


def test_default_dtype_is_used_when_dtype_is_none():
    mt.set_default_dtype(F64)
    try:
        assert nn.Linear(2, 2).weight.dtype == F64
        assert nn.LayerNorm(2).weight.dtype == F64
        assert nn.Embedding(3, 2).weight.dtype == F64
    finally:
        mt.set_default_dtype(mt.float32)


# --------------------------------------------------------------------- LayerNorm
def test_layer_norm_normalises_trailing_dims(rng):
    norm = nn.LayerNorm((3, 4))
    x = mt.tensor(rng.standard_normal((2, 3, 4)) * 5 + 3)
    y = norm(x).numpy().reshape(2, -1)
    np.testing.assert_allclose(y.mean(1), 0, atol=1e-5)
    np.testing.assert_allclose(y.var(1), 1, rtol=1e-3)
    assert norm.weight.numpy().tolist() == [[1.0] * 4] * 3 and not norm.bias.numpy().any()


def test_layer_norm_of_a_constant_row_is_finite_with_finite_gradient():
    norm = nn.LayerNorm(4, dtype=F64)
    x = mt.full((2, 4), 3.0, dtype=F64, requires_grad=True)
    y = norm(x)
    assert np.isfinite(y.numpy()).all()
    (y * mt.tensor(np.arange(8.0).reshape(2, 4), dtype=F64)).sum().backward()
    assert np.isfinite(x.grad.numpy()).all() and np.isfinite(norm.weight.grad.numpy()).all()


def test_layer_norm_validation():
    with pytest.raises(ValueError, match="normalized_shape"):
        nn.LayerNorm(0)
    with pytest.raises(ValueError, match="eps"):
        nn.LayerNorm(3, eps=-1.0)
    norm = nn.LayerNorm(4)
    with pytest.raises(ValueError, match=r"normalized_shape=\(4,\)"):
        norm(mt.zeros(2, 5))
    with pytest.raises(TypeError, match="float64"):
        norm(mt.zeros(2, 4, dtype=F64))
    affine_free = nn.LayerNorm(4, elementwise_affine=False)
    assert affine_free.weight is None and affine_free.bias is None
    assert nn.LayerNorm(4, bias=False).bias is None


# ----------------------------------------------------------------------- Dropout
def test_dropout_scales_kept_values_and_drops_about_p():
    mt.manual_seed(1)
    y = nn.Dropout(0.3)(mt.ones(200, 100)).numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)
    assert abs(1 - kept.mean() - 0.3) < 0.01


def test_dropout_gradient_uses_the_same_mask():
    mt.manual_seed(2)
    x = mt.ones(50, 20, requires_grad=True)
    y = nn.Dropout(0.5)(x)
    y.backward(mt.ones(50, 20))
    np.testing.assert_array_equal(x.grad.numpy(), y.numpy())


def test_dropout_eval_p0_p1_and_reproducibility():
    x = mt.randn(10, 10)
    drop = nn.Dropout(0.5)
    assert drop.eval()(x) is x
    assert nn.Dropout(0.0)(x) is x
    one = nn.Dropout(1.0)(x)
    assert not one.numpy().any() and np.isfinite(one.numpy()).all()
    drop.train()
    mt.manual_seed(5)
    a = drop(x).numpy()
    mt.manual_seed(5)
    b = drop(x).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, drop(x).numpy())  # a fresh mask per call


def test_dropout_accepts_numpy_probabilities():
    assert nn.Dropout(np.float32(0.25)).p == 0.25


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan")])
def test_dropout_rejects_bad_p(p):
    with pytest.raises(ValueError, match="p must be a probability"):
        nn.Dropout(p)


@pytest.mark.parametrize("p", ["0.5", True])
def test_dropout_rejects_a_p_that_is_not_a_number(p):
    with pytest.raises(TypeError, match="p must be a probability"):
        nn.Dropout(p)


def test_dropout_follows_module_mode_inside_a_model():
    model = nn.Sequential(nn.Identity(), nn.Dropout(0.9))
    x = mt.ones(100)
    assert (model(x).numpy() == 0).any()
    model.eval()
    assert model(x) is x


# ------------------------------------------------------------------ activations
def test_activation_values(rng):
    x = mt.tensor(rng.standard_normal((3, 4)), dtype=F64)
    a = x.numpy()
    np.testing.assert_allclose(nn.ReLU()(x).numpy(), np.maximum(a, 0))
    np.testing.assert_allclose(nn.Tanh()(x).numpy(), np.tanh(a))
    np.testing.assert_allclose(nn.Sigmoid()(x).numpy(), 1 / (1 + np.exp(-a)))
    e = np.exp(a - a.max(0))
    np.testing.assert_allclose(nn.Softmax(dim=0)(x).numpy(), e / e.sum(0))
    np.testing.assert_allclose(nn.LogSoftmax(dim=0)(x).numpy(), np.log(e / e.sum(0)))
    gelu = [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in a.ravel()]
    np.testing.assert_allclose(nn.GELU()(x).numpy().ravel(), gelu, rtol=1e-14, atol=1e-15)
    tanh = 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3)))
    np.testing.assert_allclose(nn.GELU("tanh")(x).numpy(), tanh, rtol=1e-14)


def test_activations_keep_float32():
    x = mt.randn(3, 4)
    for layer in (nn.ReLU(), nn.GELU(), nn.GELU("tanh"), nn.Tanh(), nn.Softmax(-1)):
        assert layer(x).dtype == mt.float32, layer


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(ValueError, match="approximate"):
        nn.GELU("fast")


def test_activation_reprs():
    assert repr(nn.GELU("tanh")) == "GELU(approximate='tanh')"
    assert repr(nn.Softmax(dim=-1)) == "Softmax(dim=-1)"
    assert repr(nn.ReLU()) == "ReLU()" and repr(nn.Dropout(0.1)) == "Dropout(p=0.1)"


# --------------------------------------------------------------------- Embedding
def test_embedding_lookup_and_scatter_add_gradient(rng):
    emb = nn.Embedding(5, 3)
    idx = mt.tensor([[1, 1, 4], [0, 1, 3]])
    y = emb(idx)
    assert y.shape == (2, 3, 3)
    np.testing.assert_array_equal(y.numpy(), emb.weight.numpy()[idx.numpy()])
    g = rng.standard_normal((2, 3, 3)).astype(np.float32)
    y.backward(mt.tensor(g))
    expected = np.zeros((5, 3), np.float32)
    np.add.at(expected, idx.numpy().ravel(), g.reshape(-1, 3))
    np.testing.assert_allclose(emb.weight.grad.numpy(), expected, rtol=1e-6)
    assert emb.weight.grad.numpy()[1].tolist() == pytest.approx((g[0, 0] + g[0, 1] + g[1, 1]).tolist(), rel=1e-6)


def test_embedding_padding_row_is_zero_and_gets_no_gradient():
    emb = nn.Embedding(4, 2, padding_idx=-1)
    assert emb.padding_idx == 3 and not emb.weight.numpy()[3].any()
    assert emb.weight.numpy()[:3].any()
    idx = mt.tensor([3, 0, 3])
    emb(idx).backward(mt.ones(3, 2))
    assert not emb.weight.grad.numpy()[3].any() and emb.weight.grad.numpy()[0].tolist() == [1.0, 1.0]


def test_embedding_init_is_standard_normal():
    mt.manual_seed(3)
    w = nn.Embedding(1000, 50).weight.numpy()
    assert abs(w.mean()) < 0.01 and abs(w.std() - 1) < 0.01


def test_embedding_validation():
    emb = nn.Embedding(5, 2)
    with pytest.raises(ValueError, match=r"\[0, 4\]"):
        emb(mt.tensor([0, 5]))
    with pytest.raises(ValueError, match="out of range"):
        emb(mt.tensor([-1]))
    with pytest.raises(TypeError, match="integer"):
        emb(mt.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(ValueError, match="num_embeddings"):
        nn.Embedding(0, 2)
    with pytest.raises(ValueError, match="embedding_dim"):
        nn.Embedding(3, 0)
    assert repr(nn.Embedding(5, 2, padding_idx=0)) == "Embedding(5, 2, padding_idx=0)"


def test_embedding_accepts_numpy_indices_and_from_pretrained():
    table = mt.tensor(np.arange(6.0).reshape(3, 2))
    emb = nn.Embedding.from_pretrained(table)
    assert not emb.weight.requires_grad
    np.testing.assert_array_equal(emb(np.array([2, 0])).numpy(), [[4.0, 5.0], [0.0, 1.0]])
    assert nn.Embedding.from_pretrained(table, freeze=False).weight.requires_grad


# ------------------------------------------------------------------------- init
def test_init_functions_fill_in_place_and_return_the_tensor():
    mt.manual_seed(0)
    w = nn.Parameter(mt.empty(200, 100))
    assert nn.init.zeros_(w) is w and not w.numpy().any()
    assert nn.init.ones_(w) is w and (w.numpy() == 1).all()
    assert nn.init.constant_(w, 0.5) is w and (w.numpy() == 0.5).all()
    nn.init.uniform_(w, -2.0, 3.0)
    assert w.numpy().min() >= -2 and w.numpy().max() <= 3 and w.numpy().max() > 2.9
    nn.init.normal_(w, 1.0, 0.5)
    assert abs(w.numpy().mean() - 1) < 0.01 and abs(w.numpy().std() - 0.5) < 0.01
    assert w.grad_fn is None and w.grad is None


# A (60, 40, 3) weight: fan_in = 40 * 3 = 120, fan_out = 60 * 3 = 180.
@pytest.mark.parametrize(
    "fn, kwargs, std",
    [
        (nn.init.xavier_uniform_, {}, math.sqrt(2 / (120 + 180))),
        (nn.init.xavier_uniform_, {"gain": 2.0}, 2 * math.sqrt(2 / (120 + 180))),
        (nn.init.xavier_normal_, {}, math.sqrt(2 / (120 + 180))),
        (nn.init.kaiming_uniform_, {}, math.sqrt(2) / math.sqrt(120)),
        (nn.init.kaiming_uniform_, {"a": math.sqrt(5)}, math.sqrt(1 / 3) / math.sqrt(120)),
        (nn.init.kaiming_normal_, {"mode": "fan_out", "nonlinearity": "relu"}, math.sqrt(2) / math.sqrt(180)),
    ],
)
def test_xavier_and_kaiming_statistics(fn, kwargs, std):
    mt.manual_seed(4)
    w = mt.empty(60, 40, 3)
    assert fn(w, **kwargs) is w
    assert abs(w.numpy().std() - std) < 0.03 * std
    if fn in (nn.init.xavier_uniform_, nn.init.kaiming_uniform_):
        bound = math.sqrt(3) * std
        assert np.abs(w.numpy()).max() <= bound * (1 + 1e-6) and np.abs(w.numpy()).max() > 0.99 * bound


def test_fan_and_gain_helpers():
    assert nn.init._calculate_fan_in_and_fan_out(mt.empty(5, 3)) == (3, 5)
    assert nn.init._calculate_fan_in_and_fan_out(mt.empty(5, 3, 2, 2)) == (12, 20)
    with pytest.raises(ValueError, match="at least 2 dims"):
        nn.init._calculate_fan_in_and_fan_out(mt.empty(5))
    assert nn.init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert nn.init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.init.calculate_gain("swish")
    with pytest.raises(ValueError, match="mode"):
        nn.init.kaiming_uniform_(mt.empty(2, 2), mode="fan")

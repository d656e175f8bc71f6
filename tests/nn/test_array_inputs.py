"""Every layer and function of ``nn`` takes NumPy arrays as data inputs, by one rule.

An array is converted as ``mt.tensor`` converts it, except that a float array takes the dtype of
the layer's parameters (or of the Tensor it meets, e.g. a loss's input): ``layer(x_array)`` equals
``layer(mt.tensor(x_array, dtype=<the layer's dtype>))``.  Anything else that is not a Tensor (a
list, a number) is refused with a TypeError naming the argument, as in PyTorch.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

E = 8


def _layers(dtype) -> dict:
    """name -> (module, call(module, x) -> output) for a representative set of layers."""
    mt.manual_seed(0)
    kw = {"dtype": dtype}
    return {
        "Linear": (nn.Linear(E, 3, **kw), lambda m, x: m(x)),
        "LayerNorm": (nn.LayerNorm(E, **kw), lambda m, x: m(x)),
        "MultiheadAttention": (nn.MultiheadAttention(E, 2, batch_first=True, **kw), lambda m, x: m(x, x, x)[0]),
        "MultiheadAttention_weights": (
            nn.MultiheadAttention(E, 2, **kw),
            lambda m, x: m(x, x, x, average_attn_weights=False)[1],
        ),
        "TransformerEncoderLayer": (
            nn.TransformerEncoderLayer(E, 2, 16, 0.0, batch_first=True, **kw),
            lambda m, x: m(x),
        ),
        "TransformerDecoderLayer": (nn.TransformerDecoderLayer(E, 2, 16, 0.0, **kw), lambda m, x: m(x, x)),
        "Transformer": (nn.Transformer(E, 2, 1, 1, 16, 0.0, dtype=dtype), lambda m, x: m(x, x[:2])),
        "ReLU": (nn.ReLU(), lambda m, x: m(x)),
        "GELU": (nn.GELU(approximate="tanh"), lambda m, x: m(x)),
        "Tanh": (nn.Tanh(), lambda m, x: m(x)),
        "Sigmoid": (nn.Sigmoid(), lambda m, x: m(x)),
        "Softmax": (nn.Softmax(dim=-1), lambda m, x: m(x)),
        "LogSoftmax": (nn.LogSoftmax(dim=1), lambda m, x: m(x)),
        "Dropout_eval": (nn.Dropout(0.3).eval(), lambda m, x: m(x)),
    }


PARAMETER_FREE = {"ReLU", "GELU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Dropout_eval"}


@pytest.mark.parametrize("array_dtype", [np.float64, np.float32])
@pytest.mark.parametrize("layer_dtype", [mt.float32, mt.float64])
@pytest.mark.parametrize("name", list(_layers(mt.float32)))
def test_layer_takes_a_numpy_array_like_a_tensor(rng, name, layer_dtype, array_dtype):
    module, call = _layers(layer_dtype)[name]
    x = rng.standard_normal((2, 5, E)).astype(array_dtype)
    # the layer's dtype; a layer without parameters converts as mt.tensor does (the default float dtype)
    dtype = mt.get_default_dtype() if name in PARAMETER_FREE else layer_dtype
    out = call(module, x)
    expected = call(module, mt.tensor(x, dtype=dtype))
    assert isinstance(out, mt.Tensor)
    assert out.dtype == expected.dtype == dtype
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-6, atol=1e-7)


def test_converted_input_is_a_copy_outside_the_graph(rng):
    layer = nn.Linear(E, 3)
    x = rng.standard_normal((4, E)).astype(np.float32)
    out = layer(x)
    out.backward(mt.ones(4, 3))
    assert layer.weight.grad is not None
    np.testing.assert_allclose(layer.weight.grad.numpy(), np.ones((3, 1)) * x.sum(axis=0), rtol=1e-5)


def test_self_attention_on_one_array_takes_the_self_attention_path(rng):
    """The same array passed as query, key and value becomes one Tensor, so MultiheadAttention
    still recognises self-attention (the fused node)."""
    mha = nn.MultiheadAttention(E, 2, batch_first=True)
    x = rng.standard_normal((2, 5, E))
    out, _ = mha(x, x, x, need_weights=False)
    assert type(out.grad_fn).__name__ == "SelfAttentionBackward"


@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda x, t: F.cross_entropy(x, t), lambda x, t: F.cross_entropy(mt.tensor(x), mt.tensor(t))),
        (lambda x, t: nn.CrossEntropyLoss()(x, t), lambda x, t: F.cross_entropy(mt.tensor(x), mt.tensor(t))),
        (
            lambda x, t: F.nll_loss(F.log_softmax(x, dim=1), t),
            lambda x, t: F.nll_loss(F.log_softmax(mt.tensor(x), dim=1), mt.tensor(t)),
        ),
        (lambda x, t: nn.MSELoss()(x, x * 0.5), lambda x, t: F.mse_loss(mt.tensor(x), mt.tensor(x * 0.5))),
    ],
    ids=["cross_entropy", "CrossEntropyLoss", "nll_loss", "MSELoss"],
)
def test_losses_take_numpy_arrays(rng, call, expected):
    x, t = rng.standard_normal((4, 3)), np.array([0, 2, 1, 0])
    got, want = call(x, t), expected(x, t)
    assert got.dtype == want.dtype == mt.get_default_dtype()
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-6)


def test_mse_loss_array_input_takes_the_target_tensor_dtype(rng):
    target = mt.tensor(rng.standard_normal(5), dtype=mt.float64, requires_grad=True)
    x = rng.standard_normal(5).astype(np.float32)
    loss = F.mse_loss(x, target)
    assert loss.dtype == mt.float64
    np.testing.assert_allclose(loss.item(), np.mean((x.astype(np.float64) - target.numpy()) ** 2), rtol=1e-12)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: nn.Linear(E, 3)([[0.0] * E]), "input"),
        (lambda: nn.LayerNorm(E)([[0.0] * E]), "input"),
        (lambda: nn.ReLU()([1.0]), "input"),
        (lambda: nn.Dropout()(1.0), "input"),
        (lambda: nn.MultiheadAttention(E, 2)([[[0.0] * E]], mt.zeros(1, 1, E), mt.zeros(1, 1, E)), "query"),
        (lambda: nn.TransformerEncoderLayer(E, 2, 16)([[[0.0] * E]]), "src"),
        (lambda: nn.TransformerDecoderLayer(E, 2, 16)(mt.zeros(1, 1, E), [[[0.0] * E]]), "memory"),
        (lambda: nn.Transformer(E, 2, 1, 1, 16)([[[0.0] * E]], mt.zeros(1, 1, E)), "src"),
        (lambda: F.cross_entropy([[0.0, 1.0]], np.array([0])), "input"),
        (lambda: F.mse_loss([0.0], mt.zeros(1)), "input"),
        (lambda: F.scaled_dot_product_attention(mt.zeros(2, 2), mt.zeros(2, 2), [[0.0] * 2] * 2), "value"),
    ],
)
def test_other_non_tensors_are_refused_naming_the_argument(call, name):
    with pytest.raises(TypeError, match=f"{name} must be a Tensor or a NumPy array, got (list|float)"):
        call()

"""Second derivatives of the fused ops by finite differences, and their first-order kernel paths.

``gradcheck`` of the *gradient function* ``xs -> autograd.grad(f(xs), xs, w,
create_graph=True)`` compares the analytic second derivative (the backward of
the gradient graph) with central differences of the gradient itself.  These
tests need no PyTorch (``test_second_order.py`` compares with PyTorch).

The first-order path must stay the kernels': without ``create_graph`` no fused
op may reach its composite (Tensor-op) form.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import randn_f64

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.kernels import softmax as softmax_kernels
from minitensor.ops import attention as A
from minitensor.ops import loss as LOSS
from minitensor.ops import nn_ops as N
from minitensor.ops.fused import attention as FA
from minitensor.ops.fused import decoder_layer as FD
from minitensor.ops.fused import encoder_layer as FE
from minitensor.ops.fused.add_norm import AddLayerNorm
from minitensor.ops.fused.feed_forward import FeedForward
from minitensor.ops.special import Erf


def gradient_of(f, weighting: np.ndarray):
    """xs -> the gradients of (weighting · f(xs)) w.r.t. the xs that require grad, as a graph."""

    def g(*xs):
        with mt.enable_grad():  # (gradcheck evaluates fn under no_grad)
            wanted = [x for x in xs if x.requires_grad]
            return mt.autograd.grad(f(*xs), wanted, mt.tensor(weighting, dtype=mt.float64), create_graph=True)

    return g


def check_second_order(rng, f, *inputs) -> None:
    """gradcheck of f itself and of its gradient function (the second derivative), and gradgradcheck."""
    with mt.no_grad():
        shape = f(*inputs).shape
    w = rng.standard_normal(shape)
    assert gradcheck(lambda *xs: f(*xs) * mt.tensor(w, dtype=mt.float64), inputs)
    assert gradcheck(gradient_of(f, w), inputs)
    assert gradgradcheck(f, inputs)  # (also perturbs the incoming gradient)


# --------------------------------------------------------------------- Erf
def test_erf_op_values_first_and_second_derivative(rng):
    x = mt.tensor([-5.0, -1.3, -0.2, 0.0, 0.4, 2.0, 4.5], dtype=mt.float64, requires_grad=True)
    np.testing.assert_allclose(Erf.apply(x).numpy(), [math.erf(v) for v in x.numpy()], rtol=1e-15, atol=1e-16)
    (g,) = mt.autograd.grad(Erf.apply(x), x, mt.ones(7, dtype=mt.float64), create_graph=True)
    want = 2 / math.sqrt(math.pi) * np.exp(-(x.numpy() ** 2))
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-14)
    (h,) = mt.autograd.grad(g, x, mt.ones(7, dtype=mt.float64))
    np.testing.assert_allclose(h.numpy(), -2 * x.numpy() * want, rtol=1e-14, atol=1e-300)
    check_second_order(rng, Erf.apply, randn_f64(rng, 2, 3))


# --------------------------------------------------------------------- nn_ops
@pytest.mark.parametrize("op", [N.Softmax, N.LogSoftmax])
def test_softmax_ops(rng, op):
    check_second_order(rng, lambda x: op.apply(x, dim=1), randn_f64(rng, 2, 3, 2))


def test_linear(rng):
    x, w, b = randn_f64(rng, 2, 3), randn_f64(rng, 4, 3), randn_f64(rng, 4)
    check_second_order(rng, lambda x, w, b: N.Linear.apply(x, w, b) * x.sum(), x, w, b)


def test_layer_norm(rng):
    x, w, b = randn_f64(rng, 2, 2, 3), randn_f64(rng, 2, 3), randn_f64(rng, 2, 3)
    check_second_order(rng, lambda x, w, b: N.LayerNorm.apply(x, w, b, n_dims=2, eps=1e-5), x, w, b)


def test_add_layer_norm_part_first_order(rng):
    """A part of the fused layer nodes: first order here, higher orders through the layers below."""
    x, r, w, b = randn_f64(rng, 2, 4), randn_f64(rng, 2, 4), randn_f64(rng, 4), randn_f64(rng, 4)
    keep = np.array([[True, False, True, True], [True, True, False, True]])
    weighting = mt.tensor(rng.standard_normal((2, 4)), dtype=mt.float64)
    assert gradcheck(lambda *a: AddLayerNorm.apply(*a, eps=1e-5, keep=keep, scale=1.5) * weighting, (x, r, w, b))


@pytest.mark.parametrize("op", [N.Gelu, N.GeluTanh])
def test_gelu(rng, op):
    check_second_order(rng, op.apply, mt.tensor(rng.standard_normal((2, 4)) * 2, dtype=mt.float64, requires_grad=True))


@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh"])
def test_feed_forward_part_first_order(rng, activation):
    """A part of the fused layer nodes: first order here, higher orders through the layers below."""
    x, w1, b1, w2, b2 = (
        randn_f64(rng, 2, 3),
        randn_f64(rng, 4, 3),
        randn_f64(rng, 4),
        randn_f64(rng, 3, 4),
        randn_f64(rng, 3),
    )
    keep = rng.random((2, 4)) < 0.7
    settings = {"activation": activation, "keep": keep, "scale": 1 / 0.7}
    weighting = mt.tensor(rng.standard_normal((2, 3)), dtype=mt.float64)
    assert gradcheck(lambda *a: FeedForward.apply(*a, **settings) * weighting, (x, w1, b1, w2, b2))


def test_dropout(rng):
    def f(x):
        mt.manual_seed(5)  # the same mask at every evaluation
        return F.dropout(x, p=0.4) * x

    check_second_order(rng, f, randn_f64(rng, 3, 4))


def test_embedding(rng):
    idx = np.array([[0, 2, 2], [3, 1, 0]])
    check_second_order(rng, lambda w: N.Embedding.apply(w, idx).tanh(), randn_f64(rng, 4, 2))
    # The padding row (used, but given no gradient by definition) fails a first-order finite-difference
    # check; the gradient function (its padding row constantly 0) passes a second-order one.
    w = rng.standard_normal((2, 3, 2))
    f = lambda w: N.Embedding.apply(w, idx, padding_idx=1).tanh()  # noqa: E731
    weight = randn_f64(rng, 4, 2)
    assert gradcheck(gradient_of(f, w), weight)
    (g,) = gradient_of(f, w)(weight)
    assert np.all(g.numpy()[1] == 0) and np.all(g.numpy()[[0, 2, 3]] != 0)


# --------------------------------------------------------------------- attention
def _additive_mask(rng, shape: tuple, full_row: bool) -> np.ndarray:
    mask = np.where(rng.random(shape) < 0.3, -np.inf, 0.0)
    mask[..., 0] = 0.0
    if full_row:
        mask[..., 1, :] = -np.inf  # query 1 may attend to no key: zeros, never NaN
    return mask


@pytest.mark.parametrize("full_row", [False, True])
def test_attention(rng, full_row):
    q, k, v = randn_f64(rng, 2, 3, 2), randn_f64(rng, 2, 4, 2), randn_f64(rng, 2, 4, 3)
    mask = _additive_mask(rng, (3, 4), full_row)
    drop = np.where(rng.random((2, 3, 4)) < 0.8, 1.25, 0.0)
    check_second_order(rng, lambda *a: A.Attention.apply(*a, mask=mask, scale=0.7, dropout_mask=drop), q, k, v)


@pytest.mark.parametrize("full_row", [False, True])
def test_attention_weights(rng, full_row):
    q, k = randn_f64(rng, 2, 3, 2), randn_f64(rng, 2, 4, 2)
    mask = _additive_mask(rng, (2, 3, 4), full_row)
    check_second_order(rng, lambda q, k: A.AttentionWeights.apply(q, k, mask=mask, scale=0.7), q, k)


@pytest.mark.parametrize("cross", [False, True])
@pytest.mark.parametrize("batch_first", [True, False])
def test_fused_multi_head_attention_nodes(rng, cross, batch_first):
    """SelfAttention / CrossAttention (what F.multi_head_attention_forward runs for need_weights=False):
    their create_graph gradient is the composite's (the node's definition), to any order."""
    n, l, s, e, h = 2, 3, 4, 4, 2
    lead = (n, l) if batch_first else (l, n)
    memory_lead = (n, s) if batch_first else (s, n)
    x, memory = randn_f64(rng, *lead, e), randn_f64(rng, *memory_lead, e)
    weights = randn_f64(rng, 3 * e, e), randn_f64(rng, 3 * e), randn_f64(rng, e, e), randn_f64(rng, e)
    mask = mt.tensor(rng.random((l, s if cross else l)) < 0.3)

    def f(x, memory, w_in, b_in, w_out, b_out):
        kv = memory if cross else x
        return F.multi_head_attention_forward(
            x, kv, kv, e, h, w_in, b_in, None, None, False, 0.0, w_out, b_out,
            need_weights=False, attn_mask=mask, batch_first=batch_first,
        )[0]  # fmt: skip

    assert type(f(x, memory, *weights).grad_fn).__name__ == (
        "CrossAttentionBackward" if cross else "SelfAttentionBackward"
    )
    if not cross:
        memory.requires_grad_(False)
    check_second_order(rng, f, x, memory, *weights)


def test_transformer_encoder_layer_second_derivative_is_finite_with_a_fully_padded_sequence(rng):
    mt.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, batch_first=True, dtype=mt.float64)
    x = randn_f64(rng, 2, 3, 4)
    pad = np.zeros((2, 3), bool)
    pad[1] = True  # every key of sequence 1 masked
    w = rng.standard_normal((2, 3, 4))
    (g,) = gradient_of(lambda x: layer(x, src_key_padding_mask=pad), w)(x)
    (h,) = mt.autograd.grad((g * mt.tensor(w, dtype=mt.float64)).sum(), x)
    assert np.isfinite(g.numpy()).all() and np.isfinite(h.numpy()).all()
    assert np.abs(h.numpy()).max() > 1e-3


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer_third_derivative(rng, norm_first):
    """d/dx of (w2 · d/dx (w1 · d/dx (w0 · layer(x)))) against central differences of the second derivative."""
    mt.manual_seed(0)
    kwargs = {"dropout": 0.0, "batch_first": True, "norm_first": norm_first, "activation": "gelu"}
    layer = nn.TransformerEncoderLayer(4, 2, 6, dtype=mt.float64, **kwargs)
    x = rng.standard_normal((1, 3, 4))
    w0, w1, w2 = (mt.tensor(rng.standard_normal(x.shape), dtype=mt.float64) for _ in range(3))

    def second(xv, create_graph: bool):
        xt = mt.tensor(xv, dtype=mt.float64, requires_grad=True)
        (g,) = mt.autograd.grad(layer(xt), xt, w0, create_graph=True)
        (h,) = mt.autograd.grad(g, xt, w1, create_graph=create_graph)
        return xt, h

    xt, h = second(x, True)
    (third,) = mt.autograd.grad(h, xt, w2)
    numeric = np.zeros(x.shape)
    for i in np.ndindex(*x.shape):
        step = np.zeros(x.shape)
        step[i] = 1e-5
        plus, minus = second(x + step, False)[1], second(x - step, False)[1]
        numeric[i] = ((plus - minus) * w2).sum().item() / 2e-5
    assert np.abs(numeric).max() > 1e-2
    np.testing.assert_allclose(third.numpy(), numeric, rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------- losses
@pytest.mark.parametrize(
    "opts",
    [
        {},
        {"reduction": "none"},
        {"reduction": "sum", "ignore_index": 2},
        {"weight": True, "label_smoothing": 0.2},
        {"weight": True, "ignore_index": 0, "label_smoothing": 0.1, "reduction": "mean"},
    ],
)
def test_cross_entropy(rng, opts):
    opts = dict(opts)
    if opts.pop("weight", False):
        opts["weight"] = mt.tensor(rng.random(3) + 0.5, dtype=mt.float64)
    target = mt.tensor(np.array([2, 0, 1, 2]))
    check_second_order(rng, lambda x: F.cross_entropy(x, target, **opts), randn_f64(rng, 4, 3))


def test_cross_entropy_with_probability_targets(rng):
    probs = rng.random((3, 4))
    probs /= probs.sum(axis=1, keepdims=True)
    target = mt.tensor(probs, dtype=mt.float64, requires_grad=True)
    weight = mt.tensor(rng.random(4) + 0.5, dtype=mt.float64)
    f = lambda x, t: F.cross_entropy(x, t, weight=weight, label_smoothing=0.1, reduction="sum")  # noqa: E731
    check_second_order(rng, f, randn_f64(rng, 3, 4), target)


def test_nll_and_mse(rng):
    target = mt.tensor(np.array([1, 0, 2]))
    check_second_order(rng, lambda x: F.nll_loss(x.log_softmax(1), target, ignore_index=0), randn_f64(rng, 3, 3))
    check_second_order(
        rng, lambda x, y: F.mse_loss(x.tanh(), y * x, reduction="none"), randn_f64(rng, 2, 3), randn_f64(rng, 2, 3)
    )


# --------------------------------------------------------------------- the first-order path
def _fused_losses(rng) -> tuple:
    """(x, losses): one loss through each fused op, all from the float64 leaf x."""
    x = randn_f64(rng, 2, 3, 4)
    mha = nn.MultiheadAttention(4, 2, batch_first=True, dtype=mt.float64)
    layers = [
        nn.TransformerEncoderLayer(
            4, 2, 6, dropout=0.1, batch_first=True, norm_first=nf, activation=act, dtype=mt.float64
        )
        for nf, act in ((False, "relu"), (True, "gelu"))
    ]
    probs = mt.tensor(np.full((2, 4), 0.25), dtype=mt.float64)
    losses = [
        F.cross_entropy(x[0], mt.tensor(np.array([1, 3, 0]))),
        F.cross_entropy(x[0, :2], probs, label_smoothing=0.1),
        F.nll_loss(x[0], mt.tensor(np.array([1, 3, 0]))),
        F.mse_loss(x, x.detach() * 2),
        F.gelu(x).sum() + F.gelu(x, approximate="tanh").sum(),
        F.dropout(x).sum() + F.layer_norm(x, (4,)).sum() + x.softmax(1).sum() + x.log_softmax(2).sum(),
        mha(x, x, x, need_weights=True)[0].sum() + mha(x, x, x, need_weights=False)[0].sum(),
        mha(x, x * 2, x * 2, need_weights=False)[0].sum(),
        F.scaled_dot_product_attention(x, x, x).sum(),
    ]
    return x, losses + [layer(x).sum() for layer in layers]


@pytest.mark.parametrize("index", range(11))
def test_first_order_never_takes_the_composite_path(rng, monkeypatch, index):
    def composite(*args, **kwargs):
        raise AssertionError("the composite path ran")

    for module in (N, A, LOSS):
        monkeypatch.setattr(module, "composite", composite)
    for module in (FA, FE, FD):  # (the fused layer nodes differentiate their definition)
        monkeypatch.setattr(module, "definition_grads", composite)
    x, losses = _fused_losses(rng)
    losses[index].backward(retain_graph=True)  # the kernels
    assert x.grad is not None
    if index not in (0, 2, 3):  # (cross-entropy with class indices, NLL and MSE have no composite form: their
        # backward runs on Tensors as it is, cross-entropy's around one Softmax)
        with pytest.raises(AssertionError, match="composite path"):  # the patch is effective
            mt.autograd.grad(losses[index], x, create_graph=True)


@pytest.mark.parametrize("op, kernel", [(N.Softmax, "softmax_backward"), (N.LogSoftmax, "log_softmax_backward")])
def test_first_order_softmax_gradient_is_the_kernel_result_bit_for_bit(rng, op, kernel):
    x = randn_f64(rng, 3, 5)
    g = rng.standard_normal((3, 5))
    y = op.apply(x, dim=1)
    y.backward(mt.tensor(g, dtype=mt.float64))
    want = getattr(softmax_kernels, kernel)(y.numpy(), g, 1)
    assert np.array_equal(x.grad.numpy(), want)


@pytest.mark.parametrize(
    "fn", [F.gelu, lambda v: F.gelu(v, approximate="tanh"), lambda v: F.mse_loss(v, mt.tensor(2.0, dtype=mt.float64))]
)
def test_a_zero_dim_gradient_summed_to_a_numpy_scalar_takes_the_kernel_path(fn):
    """Two 0-d gradient contributions add up to a NumPy scalar (not an ndarray): still first order."""

    def f(t):
        y = fn(t * 1.5)
        return y * 2 + y.tanh()  # y receives two 0-d contributions

    x = mt.tensor(0.7, dtype=mt.float64, requires_grad=True)
    f(x).backward()
    eps = 1e-6
    with mt.no_grad():
        numeric = (f(mt.tensor(0.7 + eps, dtype=mt.float64)) - f(mt.tensor(0.7 - eps, dtype=mt.float64))).item() / (
            2 * eps
        )
    assert abs(x.grad.item() - numeric) < 1e-7

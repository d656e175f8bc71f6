"""Empty inputs, as PyTorch: an empty batch (N = 0) or an empty sequence (L = 0 / S = 0).

``nn.MultiheadAttention`` and ``nn.TransformerEncoderLayer`` run forward and backward on them
in every path (train, eval, eval under no_grad; the fused sub-layers and the module-by-module
path; both layouts), and give what PyTorch gives: outputs of the right shape (for a query with
no keys at all, the output projection's bias) and gradients that are zeros of the right shape,
never None.  The products behind them (``F.linear`` with no output features, a batched matmul
with an empty inner dim) back-propagate zeros of the right shapes too.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import copy_weights

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

torch = pytest.importorskip("torch")

E, H, FF = 8, 2, 12
MODES = ["train", "eval", "no_grad"]
EMPTY = {"batch": (0, 4), "sequence": (3, 0)}  # (N, S)


def layout(n: int, s: int, batch_first: bool) -> tuple:
    return (n, s, E) if batch_first else (s, n, E)


def run_both(rng, t_module, m_module, t_call, m_call, shapes: list, mode: str) -> None:
    """Run ``t_call(*inputs)`` / ``m_call(*inputs)`` on float64 inputs of ``shapes``; compare the
    outputs (shape and values) and, unless under no_grad, the gradients of every input and
    parameter for one random upstream gradient."""
    arrays = [rng.standard_normal(s) for s in shapes]
    t_in = [torch.tensor(a, requires_grad=mode != "no_grad") for a in arrays]
    m_in = [mt.tensor(a, dtype=mt.float64, requires_grad=mode != "no_grad") for a in arrays]
    if mode != "train":
        t_module.eval()
        m_module.eval()
    if mode == "no_grad":
        with torch.no_grad():
            t_outs = t_call(*t_in)
        with mt.no_grad():
            m_outs = m_call(*m_in)
    else:
        t_outs, m_outs = t_call(*t_in), m_call(*m_in)
    # (PyTorch's eval + no_grad fast path returns no attention weights for an empty batch, a
    # quirk of its nested tensors; minitensor returns them, checked by the caller.)
    pairs = [(t, m) for t, m in zip(t_outs, m_outs) if t is not None]
    for t_out, m_out in pairs:
        assert m_out.shape == tuple(t_out.shape)
        np.testing.assert_allclose(m_out.numpy(), t_out.detach().numpy(), rtol=1e-7, atol=1e-9)
    if mode == "no_grad":
        return m_outs
    t_loss, m_loss = 0, 0
    for t_out, m_out in pairs:
        g = rng.standard_normal(m_out.shape)
        t_loss = t_loss + (t_out * torch.tensor(g)).sum()
        m_loss = m_loss + (m_out * mt.tensor(g, dtype=mt.float64)).sum()
    t_loss.backward()
    m_loss.backward()
    for t, m in zip(t_in, m_in):
        assert m.grad is not None and m.grad.shape == tuple(t.grad.shape)
        np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-7, atol=1e-9)
    m_params = dict(m_module.named_parameters())
    for name, t_param in t_module.named_parameters():
        got = m_params[name].grad
        assert got is not None, f"{name}.grad is None (PyTorch: zeros)"
        assert got.shape == tuple(t_param.grad.shape), name
        np.testing.assert_allclose(got.numpy(), t_param.grad.numpy(), rtol=1e-7, atol=1e-9, err_msg=name)
    return m_outs


def make_mha(batch_first: bool, kdim=None):
    torch.manual_seed(0)
    t = torch.nn.MultiheadAttention(E, H, dropout=0.2, batch_first=batch_first, kdim=kdim, vdim=kdim)
    with torch.no_grad():  # non-zero biases: the output of a query without keys is out_proj.bias
        t.in_proj_bias.normal_()
        t.out_proj.bias.normal_()
    t.double()
    m = nn.MultiheadAttention(E, H, dropout=0.2, batch_first=batch_first, kdim=kdim, vdim=kdim, dtype=mt.float64)
    copy_weights(t, m)
    return t, m


# ----------------------------------------------------------------- MultiheadAttention
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("need_weights", [True, False], ids=["weights", "fused"])
@pytest.mark.parametrize("empty", list(EMPTY))
@pytest.mark.parametrize("batch_first", [False, True], ids=["seq_first", "batch_first"])
def test_self_attention_on_empty_input_matches_torch(rng, batch_first, empty, need_weights, mode):
    t, m = make_mha(batch_first)
    n, s = EMPTY[empty]

    def call(module):
        return lambda x: module(x, x, x, need_weights=need_weights)

    _, weights = run_both(rng, t, m, call(t), call(m), [layout(n, s, batch_first)], mode)
    assert (weights is None) == (not need_weights)
    if need_weights:
        assert weights.shape == (n, s, s)


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "numpy"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("need_weights", [True, False], ids=["weights", "fused"])
@pytest.mark.parametrize("batch_first", [False, True], ids=["seq_first", "batch_first"])
def test_queries_without_keys_get_the_output_bias_and_zero_gradients(rng, batch_first, need_weights, mode, jit):
    """Cross-attention with L = 3 queries and S = 0 keys: softmax over no keys is empty, so
    each output row is out_proj.bias and nothing flows back into the query or the in-projection."""
    t, m = make_mha(batch_first)

    def call(module):
        return lambda q, k, v: module(q, k, v, need_weights=need_weights)

    shapes = [layout(2, 3, batch_first), layout(2, 0, batch_first), layout(2, 0, batch_first)]
    with mt.jit_disabled() if not jit else _jit_on():
        run_both(rng, t, m, call(t), call(m), shapes, mode)


class _jit_on:
    def __enter__(self):
        self.previous = mt.jit_enabled()
        mt.set_jit_enabled(True)

    def __exit__(self, *exc):
        mt.set_jit_enabled(self.previous)


@pytest.mark.parametrize("mode", ["train", "no_grad"])
@pytest.mark.parametrize("shape", [(0, E), (0, 2, E)], ids=["unbatched", "separate_kdim"])
def test_attention_empty_unbatched_and_separate_projections(rng, shape, mode):
    kdim = 5 if len(shape) == 3 else None
    t, m = make_mha(False, kdim=kdim)
    kv_shape = shape[:-1] + ((kdim or E),)

    def call(module):
        return lambda q, k, v: module(q, k, v)

    run_both(rng, t, m, call(t), call(m), [shape, kv_shape, kv_shape], mode)


# ----------------------------------------------------------------- TransformerEncoderLayer
class _Plain:
    """Subclasses of the standard modules: the layer then takes its module-by-module path."""

    class MHA(nn.MultiheadAttention):
        pass

    class Linear(nn.Linear):
        pass

    class LayerNorm(nn.LayerNorm):
        pass

    class Dropout(nn.Dropout):
        pass


def _unfused(layer: nn.TransformerEncoderLayer) -> None:
    for module in layer.modules():
        for base in (nn.MultiheadAttention, nn.Linear, nn.LayerNorm, nn.Dropout):
            if type(module) is base:
                module.__class__ = getattr(_Plain, base.__name__.replace("Multihead", "").replace("Attention", "MHA"))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", ["fused", "general"])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
@pytest.mark.parametrize("empty", list(EMPTY))
@pytest.mark.parametrize("batch_first", [False, True], ids=["seq_first", "batch_first"])
def test_encoder_layer_on_empty_input_matches_torch(rng, batch_first, empty, norm_first, path, mode):
    torch.manual_seed(0)
    kwargs = {"dim_feedforward": FF, "dropout": 0.1, "batch_first": batch_first, "norm_first": norm_first}
    t = torch.nn.TransformerEncoderLayer(E, H, **kwargs).double()
    m = nn.TransformerEncoderLayer(E, H, **kwargs, dtype=mt.float64)
    copy_weights(t, m)
    if path == "general":
        _unfused(m)
        assert type(m.self_attn) is _Plain.MHA and type(m.norm1) is _Plain.LayerNorm
    n, s = EMPTY[empty]
    run_both(rng, t, m, lambda x: [t(x)], lambda x: [m(x)], [layout(n, s, batch_first)], mode)


@pytest.mark.parametrize("mode", ["train", "no_grad"])
def test_encoder_layer_empty_unbatched_sequence(rng, mode):
    torch.manual_seed(0)
    t = torch.nn.TransformerEncoderLayer(E, H, FF, 0.0).double()
    m = nn.TransformerEncoderLayer(E, H, FF, 0.0, dtype=mt.float64)
    copy_weights(t, m)
    run_both(rng, t, m, lambda x: [t(x)], lambda x: [m(x)], [(0, E)], mode)


# ----------------------------------------------------------------- the products behind them
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("x_shape", [(2, 3), (4, 0, 3)], ids=["rows", "no_rows"])
def test_linear_without_output_features_backward_gives_zeros(rng, x_shape, bias):
    x, w = rng.standard_normal(x_shape), rng.standard_normal((0, 3))
    b = rng.standard_normal(0) if bias else None
    t_args = [torch.tensor(a, requires_grad=True) for a in (x, w, b) if a is not None]
    m_args = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in (x, w, b) if a is not None]
    t_y, m_y = torch.nn.functional.linear(*t_args), F.linear(*m_args)
    assert m_y.shape == tuple(t_y.shape) == x_shape[:-1] + (0,)
    t_y.backward(torch.zeros(t_y.shape, dtype=torch.float64))
    m_y.backward(mt.zeros(*m_y.shape, dtype=mt.float64))
    for t_a, m_a in zip(t_args, m_args):
        assert m_a.grad.shape == tuple(t_a.grad.shape)
        np.testing.assert_array_equal(m_a.grad.numpy(), t_a.grad.numpy())
    assert np.all(m_args[0].grad.numpy() == 0)


def test_linear_without_input_features_gives_the_bias(rng):
    x, w, b = rng.standard_normal((2, 5, 0)), rng.standard_normal((4, 0)), rng.standard_normal(4)
    t_args = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    m_args = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in (x, w, b)]
    t_y, m_y = torch.nn.functional.linear(*t_args), F.linear(*m_args)
    np.testing.assert_allclose(m_y.numpy(), t_y.detach().numpy())
    g = rng.standard_normal(m_y.shape)
    t_y.backward(torch.tensor(g))
    m_y.backward(mt.tensor(g, dtype=mt.float64))
    for t_a, m_a in zip(t_args, m_args):
        assert m_a.grad.shape == tuple(t_a.grad.shape)
        np.testing.assert_allclose(m_a.grad.numpy(), t_a.grad.numpy())


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [((2, 3, 0), (2, 0, 4)), ((3, 0), (2, 0, 4)), ((2, 3, 0), (0, 4)), ((0,), (2, 0, 4)), ((2, 3, 0), (0,))],
    ids=["batched", "broadcast_left", "shared_weight", "vector_left", "vector_right"],
)
def test_matmul_with_empty_inner_dim_backward_gives_zeros(rng, a_shape, b_shape):
    a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    t_a, t_b = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    m_a, m_b = mt.tensor(a, dtype=mt.float64, requires_grad=True), mt.tensor(b, dtype=mt.float64, requires_grad=True)
    t_y, m_y = t_a @ t_b, m_a @ m_b
    assert m_y.shape == tuple(t_y.shape)
    np.testing.assert_array_equal(m_y.numpy(), np.zeros(m_y.shape))
    g = rng.standard_normal(m_y.shape)
    t_y.backward(torch.tensor(g))
    m_y.backward(mt.tensor(g, dtype=mt.float64))
    for t_x, m_x in ((t_a, m_a), (t_b, m_b)):
        assert m_x.grad.shape == tuple(t_x.grad.shape)
        np.testing.assert_array_equal(m_x.grad.numpy(), t_x.grad.numpy())


@pytest.mark.parametrize("a_shape, b_shape", [((2, 0, 3), (2, 3, 4)), ((2, 3, 5), (5, 0))], ids=["no_rows", "no_cols"])
def test_matmul_with_empty_outer_dim_backward_gives_zeros(rng, a_shape, b_shape):
    a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    t_a, t_b = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    m_a, m_b = mt.tensor(a, dtype=mt.float64, requires_grad=True), mt.tensor(b, dtype=mt.float64, requires_grad=True)
    t_y, m_y = t_a @ t_b, m_a @ m_b
    t_y.backward(torch.zeros(t_y.shape, dtype=torch.float64))
    m_y.backward(mt.zeros(*m_y.shape, dtype=mt.float64))
    for t_x, m_x in ((t_a, m_a), (t_b, m_b)):
        assert m_x.grad.shape == tuple(t_x.grad.shape)
        np.testing.assert_array_equal(m_x.grad.numpy(), t_x.grad.numpy())


@pytest.mark.parametrize("mode", ["train", "no_grad"])
@pytest.mark.parametrize("sizes", [(0, 3, 4), (2, 0, 4), (2, 3, 0)], ids=["no_batch", "no_targets", "no_memory"])
def test_decoder_layer_on_empty_input_matches_torch(rng, sizes, mode):
    """(N, T, S) with one of them 0: tgt (N, T, E) attending to memory (N, S, E)."""
    torch.manual_seed(0)
    kwargs = {"dim_feedforward": FF, "dropout": 0.0, "batch_first": True}
    t = torch.nn.TransformerDecoderLayer(E, H, **kwargs).double()
    with torch.no_grad():  # non-zero biases: with no memory, the cross-attention output is its out_proj bias
        t.multihead_attn.out_proj.bias.normal_()
    m = nn.TransformerDecoderLayer(E, H, **kwargs, dtype=mt.float64)
    copy_weights(t, m)
    n, l, s = sizes
    run_both(rng, t, m, lambda a, b: [t(a, b)], lambda a, b: [m(a, b)], [(n, l, E), (n, s, E)], mode)

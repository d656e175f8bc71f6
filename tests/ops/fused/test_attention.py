"""ops/fused/attention.py: ``nn.MultiheadAttention`` from a query to a memory (key is value,
``need_weights=False``) as one ``CrossAttention`` node, and self-attention as one ``SelfAttention``
node: the same numbers as the composite of ``F.multi_head_attention_forward`` (projections, heads
split, attention, heads merged), correct gradients (first and second order), only the gradients
asked for, and the usual checks.  (PyTorch oracles, first and second order, run through them in
tests/nn/test_oracle_transformer.py and tests/nn/test_second_order.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_same_numbers

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck, gradgradcheck

N, L, S, E, H = 2, 3, 5, 8, 2


def _mha(dtype=mt.float64, batch_first=True, bias=True, dropout=0.0) -> nn.MultiheadAttention:
    mt.manual_seed(0)
    m = nn.MultiheadAttention(E, H, dropout=dropout, bias=bias, batch_first=batch_first, dtype=dtype)
    with mt.no_grad():  # non-zero biases, so their gradients are exercised
        for p in m.parameters():
            if p.ndim == 1:
                p.copy_(mt.randn(*p.shape, dtype=dtype) * 0.3)
    return m


def _inputs(rng, dtype=mt.float64, batch_first=True, grad=(True, True)) -> tuple:
    shapes = ((N, L, E), (N, S, E)) if batch_first else ((L, N, E), (S, N, E))
    return tuple(mt.tensor(rng.standard_normal(s), dtype=dtype, requires_grad=g) for s, g in zip(shapes, grad))


def _masks(kind: str, rng, dtype) -> dict:
    if kind == "padding":
        pad = np.zeros((N, S), bool)
        pad[1, 3:] = True
        return {"key_padding_mask": mt.tensor(pad)}
    if kind == "attn_and_padding":
        pad = np.zeros((N, S), bool)
        pad[0, -1:] = True
        return {"attn_mask": mt.tensor(rng.random((L, S)) < 0.3), "key_padding_mask": mt.tensor(pad)}
    if kind == "float":
        return {"attn_mask": mt.tensor(rng.standard_normal((L, S)), dtype=dtype)}
    return {}


def _step_by_step(m: nn.MultiheadAttention, x, memory, **masks):
    """The same attention through F.multi_head_attention_forward's composite (need_weights=True takes
    it, with the same dropout masks drawn): Linear, Index, AttentionWeights and matmul nodes."""
    out_proj = m.out_proj
    out = F.multi_head_attention_forward(
        x, memory, memory, E, H, m.in_proj_weight, m.in_proj_bias, None, None, False, m.dropout,
        out_proj.weight, out_proj.bias, training=m.training, need_weights=True, batch_first=m.batch_first, **masks,
    )[0]  # fmt: skip
    assert type(out.grad_fn).__name__ != "CrossAttentionBackward"
    return out


def _forward_backward(fn, m, x, memory, dy, masks, seed) -> tuple:
    mt.manual_seed(seed)
    out = fn(x, memory, **masks)
    inputs = [t for t in (x, memory, *m.parameters()) if t.requires_grad]
    return out, [g.numpy() for g in mt.autograd.grad(out, inputs, dy)]


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("masks", ["none", "padding", "attn_and_padding", "float"])
@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
@pytest.mark.parametrize("dropout", [0.0, 0.4])
def test_one_node_equals_the_composite(batch_first, masks, dtype, dropout, rng):
    m = _mha(dtype, batch_first, dropout=dropout)
    x, memory = _inputs(rng, dtype, batch_first)
    kwargs = _masks(masks, rng, dtype)
    one = lambda x, memory, **k: m(x, memory, memory, need_weights=False, **k)[0]  # noqa: E731
    dy = mt.tensor(rng.standard_normal(x.shape), dtype=dtype)
    out, grads = _forward_backward(one, m, x, memory, dy, kwargs, seed=3)
    assert type(out.grad_fn).__name__ == "CrossAttentionBackward"
    ref, ref_grads = _forward_backward(lambda *a, **k: _step_by_step(m, *a, **k), m, x, memory, dy, kwargs, seed=3)
    assert_same_numbers(out.numpy(), ref.numpy())
    assert len(grads) == 6
    for g, r in zip(grads, ref_grads):
        assert_same_numbers(g, r)


def test_dropout_draws_a_new_mask_each_call(rng):
    m = _mha(dropout=0.5)
    x, memory = _inputs(rng)
    first, second = (m(x, memory, memory, need_weights=False)[0].numpy() for _ in range(2))
    assert not np.array_equal(first, second)


@pytest.mark.parametrize(
    "frozen", [("x",), ("memory",), ("in_proj_weight", "in_proj_bias"), ("out_proj.weight", "x", "memory")]
)
def test_only_the_gradients_asked_for(frozen, rng):
    m = _mha()
    x, memory = _inputs(rng, grad=("x" not in frozen, "memory" not in frozen))
    for name, p in m.named_parameters():
        p.requires_grad_(name not in frozen)
    out = m(x, memory, memory, need_weights=False)[0]
    (out * out).sum().backward()
    named = {"x": x, "memory": memory, **dict(m.named_parameters())}
    for name, t in named.items():
        assert (t.grad is None) == (name in frozen), name


def test_without_biases(rng):
    m = _mha(bias=False)
    x, memory = _inputs(rng)
    out = m(x, memory, memory, need_weights=False)[0]
    assert type(out.grad_fn).__name__ == "CrossAttentionBackward"
    assert_same_numbers(out.numpy(), _step_by_step(m, x, memory).numpy())
    assert gradcheck(lambda x, memory, *ps: m(x, memory, memory, need_weights=False)[0], [x, memory, *m.parameters()])


@pytest.mark.parametrize("masks", ["none", "padding", "float"])
def test_gradcheck(masks, rng):
    m = _mha()
    x, memory = _inputs(rng)
    kwargs = _masks(masks, rng, mt.float64)
    fn = lambda x, memory, *ps: m(x, memory, memory, need_weights=False, **kwargs)[0]  # noqa: E731
    assert gradcheck(fn, [x, memory, *m.parameters()])


def test_gradcheck_with_dropout(rng):
    m = _mha(dropout=0.3)
    x, memory = _inputs(rng)

    def fn(x, memory, *ps):
        mt.manual_seed(7)  # the same dropout mask at every evaluation
        return m(x, memory, memory, need_weights=False)[0]

    assert gradcheck(fn, [x, memory, *m.parameters()])


@pytest.mark.parametrize("batch_first", [True, False])
def test_gradgradcheck(batch_first, rng):
    m = _mha(batch_first=batch_first)
    x, memory = _inputs(rng, batch_first=batch_first)
    kwargs = _masks("padding", rng, mt.float64)
    fn = lambda x, memory, *ps: m(x, memory, memory, need_weights=False, **kwargs)[0]  # noqa: E731
    assert gradgradcheck(fn, [x, memory, *m.parameters()])


def test_memory_changed_in_place_before_backward_raises(rng):
    m = _mha()
    x, memory = _inputs(rng, grad=(True, False))
    out = m(x, memory, memory, need_weights=False)[0]
    with mt.no_grad():
        memory.add_(1.0)
    with pytest.raises(RuntimeError, match="modified in place"):
        out.sum().backward()


def test_memory_with_another_batch_size_is_an_error(rng):
    m = _mha()
    x, _ = _inputs(rng)
    memory = mt.randn(N + 1, S, E, dtype=mt.float64)
    with pytest.raises(ValueError, match="batch size"):
        m(x, memory, memory, need_weights=False)


class TestFusedSelfAttention:
    """F.multi_head_attention_forward with need_weights=False on self-attention runs one
    SelfAttention node (ops/fused/attention.py): the composite's numbers and gradients."""

    @pytest.mark.parametrize("batch_first", [False, True])
    @pytest.mark.parametrize("dropout", [0.0, 0.4])
    @pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
    def test_one_node_equals_the_composite(self, rng, batch_first, dropout, dtype):
        x0 = rng.standard_normal((N, L, E) if batch_first else (L, N, E))
        weights = [mt.tensor(rng.standard_normal(s) * 0.5, dtype=dtype, requires_grad=True)
                   for s in ((3 * E, E), (3 * E,), (E, E), (E,))]  # fmt: skip
        pad = np.zeros((N, L), bool)
        pad[1, -1] = True
        results = []
        for need_weights in (False, True):  # (True: the composite, weights kept)
            x = mt.tensor(x0, dtype=dtype, requires_grad=True)
            mt.manual_seed(4)
            out = F.multi_head_attention_forward(
                x, x, x, E, H, weights[0], weights[1], None, None, False, dropout, weights[2], weights[3],
                key_padding_mask=pad, need_weights=need_weights, batch_first=batch_first,
            )[0]  # fmt: skip
            assert (type(out.grad_fn).__name__ == "SelfAttentionBackward") == (not need_weights)
            dy = mt.tensor(np.random.default_rng(1).standard_normal(out.shape), dtype=dtype)
            results.append([out.numpy(), *(g.numpy() for g in mt.autograd.grad(out, [x, *weights], dy))])
        for fused, composite in zip(*results):
            assert_same_numbers(fused, composite)

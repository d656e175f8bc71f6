"""``nn.MultiheadAttention`` without PyTorch: against a plain NumPy reference, and float64 gradchecks
(``gradcheck`` compares full Jacobians or random weightings of the output, never a plain sum)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from attention_reference import reference_attention
from helpers import randn_f64

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck
from minitensor.ops.attention import AttentionWeights

E, H, N, L, S = 4, 2, 2, 3, 5


# ------------------------------------------------------------ MultiheadAttention
def mha64(**kwargs) -> nn.MultiheadAttention:
    mt.manual_seed(0)
    m = nn.MultiheadAttention(E, H, dtype=mt.float64, **kwargs)
    with mt.no_grad():  # non-zero biases, so their gradients are exercised in full
        for p in m.parameters():
            if p.ndim == 1:
                p.copy_(np.random.default_rng(p.size()).standard_normal(p.shape) * 0.3)
    return m


def reference_mha(m: nn.MultiheadAttention, q, k, v, mask=None):
    """Per-head attention in NumPy from the module's weights; inputs (N, L, E), mask broadcast to (N, H, L, S)."""
    e, h = m.embed_dim, m.num_heads
    w, b = m.in_proj_weight.numpy(), m.in_proj_bias.numpy()
    qs, ks, vs = q @ w[:e].T + b[:e], k @ w[e : 2 * e].T + b[e : 2 * e], v @ w[2 * e :].T + b[2 * e :]
    heads = []
    for i in range(h):
        sl = slice(i * e // h, (i + 1) * e // h)
        m_i = None if mask is None else np.broadcast_to(mask, (q.shape[0], h) + mask.shape[2:])[:, i]
        heads.append(reference_attention(qs[..., sl], ks[..., sl], vs[..., sl], m_i)[0])
    return np.concatenate(heads, -1) @ m.out_proj.weight.numpy().T + m.out_proj.bias.numpy()


def fused_linear_count(out: mt.Tensor) -> int:
    """How many Linear ops the graph of ``out`` holds."""
    seen, stack, count = set(), [out.grad_fn], 0
    while stack:
        node = stack.pop()
        if node is None or not isinstance(node, mt.autograd.Node) or id(node) in seen:
            continue
        seen.add(id(node))
        count += type(node).__name__ == "LinearBackward"
        stack.extend(node.parents)
    return count


class TestMultiheadAttention:
    def test_parameters_state_dict_and_init(self):
        m = nn.MultiheadAttention(8, 2)
        names = ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
        assert [n for n, _ in m.named_parameters()] == names
        assert list(m.state_dict()) == names
        assert m.in_proj_weight.shape == (24, 8) and m.in_proj_bias.shape == (24,)
        assert isinstance(m.out_proj, nn.Linear) and m.out_proj.weight.shape == (8, 8)
        assert np.all(m.in_proj_bias.numpy() == 0) and np.all(m.out_proj.bias.numpy() == 0)
        bound = math.sqrt(6 / (24 + 8))  # xavier_uniform_ on (3E, E)
        assert np.abs(m.in_proj_weight.numpy()).max() <= bound
        assert np.abs(m.in_proj_weight.numpy()).max() > 0.8 * bound
        assert m.in_proj_weight.dtype == mt.float32

    def test_separate_projections_when_kdim_vdim_differ(self):
        m = nn.MultiheadAttention(8, 2, kdim=5, vdim=3, bias=False)
        names = ["q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"]
        assert [n for n, _ in m.named_parameters()] == names
        assert m.k_proj_weight.shape == (8, 5) and m.v_proj_weight.shape == (8, 3)
        assert m.in_proj_weight is None and m.in_proj_bias is None and m.out_proj.bias is None

    @pytest.mark.parametrize("batch_first", [False, True])
    def test_matches_reference(self, rng, batch_first):
        m = mha64(batch_first=batch_first)
        x, mem = rng.standard_normal((N, L, E)), rng.standard_normal((N, S, E))
        mask = np.where(rng.random((L, S)) < 0.3, -np.inf, 0.0)
        mask[:, 0] = 0.0
        ins = [mt.tensor(a if batch_first else a.transpose(1, 0, 2), dtype=mt.float64) for a in (x, mem)]
        out, w = m(ins[0], ins[1], ins[1], attn_mask=mask)
        got = out.numpy() if batch_first else out.numpy().transpose(1, 0, 2)
        np.testing.assert_allclose(got, reference_mha(m, x, mem, mem, mask[None, None]), rtol=1e-10, atol=1e-12)
        assert w.shape == (N, L, S)
        np.testing.assert_allclose(w.numpy().sum(-1), 1.0)

    @pytest.mark.parametrize("need_weights, average, shape", [(True, True, (N, L, S)), (True, False, (N, H, L, S))])
    def test_weight_shapes(self, rng, need_weights, average, shape):
        m = mha64(batch_first=True)
        q, kv = randn_f64(rng, N, L, E), randn_f64(rng, N, S, E)
        out, w = m(q, kv, kv, need_weights=need_weights, average_attn_weights=average)
        assert out.shape == (N, L, E) and w.shape == shape
        out2, none = m(q, kv, kv, need_weights=False)
        assert none is None
        np.testing.assert_allclose(out2.numpy(), out.numpy(), rtol=1e-12)

    def test_unbatched(self, rng):
        m = mha64()
        q, kv = randn_f64(rng, L, E), randn_f64(rng, S, E)
        pad = np.zeros(S, dtype=bool)
        pad[-1] = True
        out, w = m(q, kv, kv, key_padding_mask=pad, average_attn_weights=False)
        assert out.shape == (L, E) and w.shape == (H, L, S)
        batched, _ = m(q.unsqueeze(1), kv.unsqueeze(1), kv.unsqueeze(1), key_padding_mask=pad[None])
        np.testing.assert_allclose(out.numpy(), batched.numpy()[:, 0], rtol=1e-12)
        assert np.all(w.numpy()[..., -1] == 0)

    @pytest.mark.parametrize("self_attention", [True, False])
    @pytest.mark.parametrize("need_weights", [True, False])
    def test_gradcheck_inputs_and_all_parameters(self, rng, self_attention, need_weights):
        m = mha64(batch_first=True)
        q, kv = randn_f64(rng, N, L, E), randn_f64(rng, N, S, E)
        pad = np.zeros((N, S), dtype=bool)
        pad[1, -2:] = True
        params = list(m.parameters())
        if self_attention:
            fn = lambda x, *ps: m(x, x, x, need_weights=need_weights)[0]  # noqa: E731
            assert gradcheck(fn, [q, *params])
        else:
            v = randn_f64(rng, N, S, E)
            fn = lambda q, k, v, *ps: m(q, k, v, key_padding_mask=pad, need_weights=need_weights)[0]  # noqa: E731
            assert gradcheck(fn, [q, kv, v, *params])

    def test_gradcheck_weights_output_and_separate_projections(self, rng):
        m = mha64(kdim=3, vdim=5)
        q, k, v = randn_f64(rng, L, N, E), randn_f64(rng, S, N, 3), randn_f64(rng, S, N, 5)
        fn = lambda q, k, v, *ps: m(q, k, v, average_attn_weights=False)  # noqa: E731  (output and weights)
        assert gradcheck(fn, [q, k, v, *m.parameters()])

    def test_self_and_cross_attention_are_one_node(self, rng):
        m = mha64()
        x, mem = randn_f64(rng, L, N, E), randn_f64(rng, S, N, E)
        out = m(x, x, x, need_weights=False)[0]  # one node: the QKV GEMM, attention and the output projection
        assert type(out.grad_fn).__name__ == "SelfAttentionBackward" and fused_linear_count(out) == 0
        out = m(x, mem, mem, need_weights=False)[0]  # one node: the Q and packed KV GEMMs, attention, output
        assert type(out.grad_fn).__name__ == "CrossAttentionBackward" and fused_linear_count(out) == 0
        assert fused_linear_count(m(x, mem, mem.detach() * 1.0, need_weights=False)[0]) == 4  # key is not value

    def test_bool_and_float_masks_agree(self, rng):
        m = mha64(batch_first=True)
        q, kv = randn_f64(rng, N, L, E), randn_f64(rng, N, S, E)
        blocked = rng.random((L, S)) < 0.4
        blocked[:, 0] = False
        pad = np.zeros((N, S), dtype=bool)
        pad[0, -1] = True
        a, wa = m(q, kv, kv, attn_mask=blocked, key_padding_mask=pad)
        b, wb = m(q, kv, kv, attn_mask=np.where(blocked, -np.inf, 0.0), key_padding_mask=np.where(pad, -np.inf, 0.0))
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
        assert np.all(wa.numpy()[:, blocked] == 0) and np.all(wa.numpy()[0, :, -1] == 0)
        np.testing.assert_allclose(wa.numpy(), wb.numpy(), rtol=1e-12)

    def test_mask_per_batch_and_head(self, rng):
        m = mha64(batch_first=True)
        q, kv = randn_f64(rng, N, L, E), randn_f64(rng, N, S, E)
        masks = np.where(rng.random((N * H, L, S)) < 0.3, -np.inf, rng.standard_normal((N * H, L, S)))
        masks[..., 0] = 0.0
        out, _ = m(q, kv, kv, attn_mask=mt.tensor(masks, dtype=mt.float64))
        expected = reference_mha(m, q.numpy(), kv.numpy(), kv.numpy(), masks.reshape(N, H, L, S))
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-12)

    def test_is_causal_without_mask_applies_the_causal_mask(self, rng):
        m = mha64()
        x = randn_f64(rng, L, N, E)
        causal = nn.Transformer.generate_square_subsequent_mask(L, dtype=mt.float64)
        a, wa = m(x, x, x, is_causal=True)
        b, _ = m(x, x, x, attn_mask=causal)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
        assert np.all(np.triu(wa.numpy()[0], 1) == 0)

    def test_sdpa_and_mha_bool_conventions_are_opposite(self, rng):
        x = randn_f64(rng, 1, L, E)
        blocked = np.triu(np.ones((L, L), dtype=bool), 1)
        m = mha64(batch_first=True)
        _, w = m(x, x, x, attn_mask=blocked, average_attn_weights=False)
        w_sdpa = AttentionWeights.apply(x, x, mask=np.where(~blocked, 0.0, -np.inf), scale=1.0).numpy()
        assert np.all((w.numpy()[0, 0] == 0) == blocked) and np.all((w_sdpa[0] == 0) == blocked)
        same = F.scaled_dot_product_attention(x, x, x, attn_mask=~blocked)
        np.testing.assert_allclose(same.numpy(), F.scaled_dot_product_attention(x, x, x, is_causal=True).numpy())

    def test_fully_masked_query_gives_bias_and_leaves_other_rows_and_grads_alone(self, rng):
        m = mha64(batch_first=True)
        q, kv = randn_f64(rng, 1, L, E), randn_f64(rng, 1, S, E)
        blocked = np.zeros((L, S), dtype=bool)
        blocked[1] = True
        g = rng.standard_normal((1, L, E))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out, w = m(q, kv, kv, attn_mask=blocked)
            out.backward(g)
        np.testing.assert_allclose(out.numpy()[0, 1], m.out_proj.bias.numpy(), rtol=1e-12)
        assert np.all(w.numpy()[0, 1] == 0)
        grads = {n: p.grad.numpy().copy() for n, p in m.named_parameters()}
        gq, gkv = q.grad.numpy().copy(), kv.grad.numpy().copy()
        assert np.all(gq[0, 1] == 0)
        # Without the masked query row, everything else is identical.
        m.zero_grad()
        rows = [0, 2]
        q2 = mt.tensor(q.numpy()[:, rows], dtype=mt.float64, requires_grad=True)
        kv2 = mt.tensor(kv.numpy(), dtype=mt.float64, requires_grad=True)
        out2, _ = m(q2, kv2, kv2, attn_mask=blocked[rows])
        out2.backward(g[:, rows])
        np.testing.assert_allclose(out.numpy()[:, rows], out2.numpy(), rtol=1e-12)
        np.testing.assert_allclose(gq[:, rows], q2.grad.numpy(), rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(gkv, kv2.grad.numpy(), rtol=1e-10, atol=1e-14)
        for name, p in m.named_parameters():
            expected = p.grad.numpy() + (g[0, 1] if name == "out_proj.bias" else 0)
            np.testing.assert_allclose(grads[name], expected, rtol=1e-10, atol=1e-14)

    def test_dropout_only_in_training(self, rng):
        x = randn_f64(rng, L, N, E)
        m = mha64(dropout=0.5)
        mt.manual_seed(1)
        a, _ = m(x, x, x)
        m.eval()
        b, _ = m(x, x, x)
        ref = mha64()
        np.testing.assert_allclose(b.numpy(), ref(x, x, x)[0].numpy(), rtol=1e-12)
        assert not np.allclose(a.numpy(), b.numpy())
        all_dropped = mha64(dropout=1.0)
        out, w = all_dropped(x, x, x)
        np.testing.assert_allclose(out.numpy(), np.broadcast_to(all_dropped.out_proj.bias.numpy(), out.shape))
        assert np.all(w.numpy() == 0)

    def test_float32(self, rng):
        m = nn.MultiheadAttention(E, H)
        x = mt.tensor(rng.standard_normal((L, N, E)), dtype=mt.float32, requires_grad=True)
        out, w = m(x, x, x, attn_mask=np.zeros((L, L)))
        assert out.dtype == mt.float32 and w.dtype == mt.float32
        out.backward(np.ones(out.shape, np.float32))
        assert x.grad.dtype == mt.float32 and m.in_proj_weight.grad.dtype == mt.float32

    @pytest.mark.parametrize(
        "kwargs, error, match",
        [
            ({"embed_dim": 6, "num_heads": 4}, ValueError, "divisible"),
            ({"embed_dim": 0, "num_heads": 1}, ValueError, "embed_dim must be positive"),
            ({"embed_dim": 4, "num_heads": -2}, ValueError, "num_heads must be positive"),
            ({"embed_dim": 4, "num_heads": 2, "dropout": 1.5}, ValueError, "dropout"),
            ({"embed_dim": 4, "num_heads": 2, "kdim": 0}, ValueError, "kdim"),
            ({"embed_dim": 4.0, "num_heads": 2}, TypeError, "embed_dim must be an int"),
        ],
    )
    def test_constructor_errors(self, kwargs, error, match):
        with pytest.raises(error, match=match):
            nn.MultiheadAttention(**kwargs)

    @pytest.mark.parametrize(
        "case, error, match",
        [
            ("rank", ValueError, "query must be 3-D"),
            ("last_dim", ValueError, "embed_dim=4"),
            ("key_dim", ValueError, "kdim=4"),
            ("batch", ValueError, "batch size"),
            ("int_mask", TypeError, "attn_mask must be a bool or float"),
            ("mask_shape", ValueError, "attn_mask must have shape"),
            ("pad_shape", ValueError, "key_padding_mask must have shape"),
            ("pad_dtype", TypeError, "key_padding_mask must be a bool or float"),
            ("dtype", TypeError, "dtype float32"),
            ("not_tensor", TypeError, "key must be a Tensor or a NumPy array, got list"),
        ],
    )
    def test_forward_errors(self, rng, case, error, match):
        m = mha64()
        q, kv = randn_f64(rng, L, N, E), randn_f64(rng, S, N, E)
        args, kwargs = [q, kv, kv], {}
        if case == "rank":
            args = [q[0, 0], kv, kv]
        elif case == "last_dim":
            args = [randn_f64(rng, L, N, E + 1), kv, kv]
        elif case == "key_dim":
            args = [q, randn_f64(rng, S, N, 3), kv]
        elif case == "batch":
            args = [q, randn_f64(rng, S, N + 1, E), randn_f64(rng, S, N + 1, E)]
        elif case == "int_mask":
            kwargs = {"attn_mask": np.zeros((L, S), dtype=np.int64)}
        elif case == "mask_shape":
            kwargs = {"attn_mask": np.zeros((L, S + 1), dtype=bool)}
        elif case == "pad_shape":
            kwargs = {"key_padding_mask": np.zeros((N + 1, S), dtype=bool)}
        elif case == "pad_dtype":
            kwargs = {"key_padding_mask": np.zeros((N, S), dtype=np.int64)}
        elif case == "dtype":
            args = [q.to(mt.float32), kv, kv]
        elif case == "not_tensor":
            args = [q, kv.numpy().tolist(), kv]  # (a NumPy array is accepted: test_array_inputs.py)
        with pytest.raises(error, match=match):
            m(*args, **kwargs)

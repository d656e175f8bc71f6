"""The attention op and ``F.scaled_dot_product_attention``, without PyTorch (``nn.MultiheadAttention``:
test_multihead_attention.py).

Values are compared with a plain NumPy reference (attention_reference.py); gradients are
checked in float64 against finite differences (``gradcheck`` compares full
Jacobians or random weightings of the output, never a plain sum).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from attention_reference import reference_attention
from helpers import assert_same_numbers, randn_f64

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck
from minitensor.ops.attention import Attention, AttentionWeights, merge_heads, split_heads

E, H, N, L, S = 4, 2, 2, 3, 5


# ---------------------------------------------------------------- the op
class TestAttentionOp:
    def test_forward_matches_reference(self, rng):
        q, k, v = rng.standard_normal((3, 4, 6)), rng.standard_normal((3, 5, 6)), rng.standard_normal((3, 5, 2))
        mask = np.where(rng.random((4, 5)) < 0.3, -np.inf, rng.standard_normal((4, 5)))
        mask[:, 0] = 0.0
        out = Attention.apply(q, k, v, mask=mask, scale=0.7)
        np.testing.assert_allclose(out.numpy(), reference_attention(q, k, v, mask, 0.7)[0], rtol=1e-12, atol=1e-14)

    @pytest.mark.parametrize("with_dropout", [False, True])
    def test_gradcheck(self, rng, with_dropout):
        q, k, v = randn_f64(rng, 2, 3, 4), randn_f64(rng, 2, 5, 4), randn_f64(rng, 2, 5, 3)
        mask = np.where(rng.random((3, 5)) < 0.3, -np.inf, 0.5 * rng.standard_normal((3, 5)))
        mask[1] = -np.inf  # one fully masked query row
        mask[0, 0] = 0.0
        mask[2, 0] = 0.0
        drop = (rng.random((2, 3, 5)) > 0.3) / 0.7 if with_dropout else None
        fn = lambda q, k, v: Attention.apply(q, k, v, mask=mask, scale=0.6, dropout_mask=drop)  # noqa: E731
        assert gradcheck(fn, [q, k, v])

    def test_weights_gradcheck(self, rng):
        q, k = randn_f64(rng, 2, 3, 4), randn_f64(rng, 2, 5, 4)
        mask = np.zeros((3, 5))
        mask[2] = -np.inf
        assert gradcheck(lambda q, k: AttentionWeights.apply(q, k, mask=mask, scale=0.5), [q, k])
        p = AttentionWeights.apply(q, k, mask=mask, scale=0.5).numpy()
        np.testing.assert_allclose(p[:, :2].sum(-1), 1.0)
        assert np.all(p[:, 2] == 0)

    def test_fully_masked_row_is_zero_without_warnings_and_leaves_other_rows_alone(self, rng):
        q, k, v = randn_f64(rng, 1, 3, 4), randn_f64(rng, 1, 5, 4), randn_f64(rng, 1, 5, 3)
        mask = np.zeros((3, 5))
        mask[1] = -np.inf
        g = rng.standard_normal((1, 3, 3))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = Attention.apply(q, k, v, mask=mask, scale=0.5)
            out.backward(g)
        assert np.all(out.numpy()[0, 1] == 0) and np.isfinite(out.numpy()).all()
        grads = [t.grad.numpy().copy() for t in (q, k, v)]
        assert np.all(grads[0][0, 1] == 0)  # the masked query gets no gradient
        # The same computation without the masked query row: identical other rows and gradients.
        rows = [0, 2]
        q2 = mt.tensor(q.numpy()[:, rows], dtype=mt.float64, requires_grad=True)
        k2, v2 = (mt.tensor(t.numpy(), dtype=mt.float64, requires_grad=True) for t in (k, v))
        out2 = Attention.apply(q2, k2, v2, mask=mask[rows], scale=0.5)
        out2.backward(g[:, rows])
        np.testing.assert_allclose(out.numpy()[:, rows], out2.numpy(), rtol=1e-13)
        np.testing.assert_allclose(grads[0][:, rows], q2.grad.numpy(), rtol=1e-13)
        np.testing.assert_allclose(grads[1], k2.grad.numpy(), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(grads[2], v2.grad.numpy(), rtol=1e-12, atol=1e-15)

    def test_float32_stays_float32(self, rng):
        q = mt.tensor(rng.standard_normal((2, 3, 4)), dtype=mt.float32, requires_grad=True)
        mask = np.zeros((3, 3))  # a float64 mask must not upcast
        out = Attention.apply(q, q, q, mask=mask, scale=0.5, dropout_mask=np.ones((2, 3, 3)))
        assert out.dtype == mt.float32
        out.backward(np.ones(out.shape, np.float32))
        assert q.grad.dtype == mt.float32

    def test_grad_fn_name(self, rng):
        q = randn_f64(rng, 1, 2, 2)
        assert type(Attention.apply(q, q, q).grad_fn).__name__ == "AttentionBackward"


class TestHeads:
    """split_heads / merge_heads: one function each, for arrays and Tensors, inverse of each other."""

    @pytest.mark.parametrize("parts", [1, 2, 3])
    @pytest.mark.parametrize("batch_first", [False, True])
    def test_split_then_merge_gives_the_projection_back(self, rng, parts, batch_first):
        shape = (N, L, parts * E) if batch_first else (L, N, parts * E)
        x = rng.standard_normal(shape)
        for pieces in (
            split_heads(x, H, parts, batch_first),
            split_heads(mt.tensor(x, dtype=mt.float64), H, parts, batch_first),
        ):
            assert len(pieces) == parts and all(p.shape == (N, H, L, E // H) for p in pieces)
            merged = [np.asarray(merge_heads(p, batch_first)) for p in pieces]
            np.testing.assert_array_equal(np.concatenate(merged, axis=-1), x)

    def test_head_h_holds_its_block_of_features(self, rng):
        x = rng.standard_normal((N, L, E))  # batch first
        (heads,) = split_heads(x, H, 1, True)
        d = E // H
        for h in range(H):
            np.testing.assert_array_equal(heads[:, h], x[..., h * d : (h + 1) * d])


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


# ------------------------------------------------- scaled_dot_product_attention
class TestSDPA:
    def test_matches_reference_and_gradcheck(self, rng):
        q, k, v = randn_f64(rng, 2, 2, 3, 4), randn_f64(rng, 2, 2, 5, 4), randn_f64(rng, 2, 2, 5, 3)
        out = F.scaled_dot_product_attention(q, k, v)
        np.testing.assert_allclose(out.numpy(), reference_attention(q.numpy(), k.numpy(), v.numpy())[0], rtol=1e-12)
        assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3), [q, k, v])

    def test_bool_mask_true_means_may_attend(self, rng):
        q, k, v = randn_f64(rng, 2, 3, 4), randn_f64(rng, 2, 5, 4), randn_f64(rng, 2, 5, 3)
        allowed = rng.random((3, 5)) < 0.6
        allowed[:, 0] = True
        got = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        expected = reference_attention(q.numpy(), k.numpy(), v.numpy(), np.where(allowed, 0.0, -np.inf))[0]
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
        float_mask = mt.tensor(np.where(allowed, 0.0, -np.inf), dtype=mt.float64)
        np.testing.assert_allclose(F.scaled_dot_product_attention(q, k, v, attn_mask=float_mask).numpy(), got.numpy())
        assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=allowed), [q, k, v])

    def test_float_mask_is_added(self, rng):
        q, k, v = randn_f64(rng, 3, 4), randn_f64(rng, 5, 4), randn_f64(rng, 5, 2)
        bias = rng.standard_normal((3, 5))
        got = F.scaled_dot_product_attention(q, k, v, attn_mask=mt.tensor(bias, dtype=mt.float64))
        np.testing.assert_allclose(
            got.numpy(), reference_attention(q.numpy(), k.numpy(), v.numpy(), bias)[0], rtol=1e-12
        )

    @pytest.mark.parametrize("l, s", [(4, 4), (3, 5), (5, 3)])
    def test_is_causal_is_the_top_left_lower_triangle(self, rng, l, s):
        q, k, v = randn_f64(rng, 2, l, 4), randn_f64(rng, 2, s, 4), randn_f64(rng, 2, s, 3)
        allowed = np.tril(np.ones((l, s), dtype=bool))
        got = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        np.testing.assert_allclose(got.numpy(), F.scaled_dot_product_attention(q, k, v, attn_mask=allowed).numpy())
        np.testing.assert_allclose(got.numpy()[:, 0], v.numpy()[:, 0])  # query 0 sees key 0 only

    def test_fully_masked_row_is_zero(self, rng):
        q, k, v = randn_f64(rng, 3, 4), randn_f64(rng, 5, 4), randn_f64(rng, 5, 2)
        allowed = np.ones((3, 5), dtype=bool)
        allowed[2] = False
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        assert np.all(out.numpy()[2] == 0) and np.isfinite(out.numpy()).all()

    def test_broadcast_batch_dims(self, rng):
        q, k, v = randn_f64(rng, 2, 3, 3, 4), randn_f64(rng, 1, 3, 5, 4), randn_f64(rng, 3, 5, 2)
        out = F.scaled_dot_product_attention(q, k, v)
        assert out.shape == (2, 3, 3, 2)
        assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), [q, k, v])

    def test_dropout(self, rng):
        q, k, v = randn_f64(rng, 2, 6, 4), randn_f64(rng, 2, 7, 4), randn_f64(rng, 2, 7, 3)
        assert np.all(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy() == 0)
        mt.manual_seed(3)
        a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
        mt.manual_seed(3)
        b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert not np.allclose(a.numpy(), F.scaled_dot_product_attention(q, k, v).numpy())

    def test_float32_stays_float32(self, rng):
        q = mt.tensor(rng.standard_normal((2, 3, 4)), dtype=mt.float32)
        mask = np.zeros((3, 3))
        assert F.scaled_dot_product_attention(q, q, q, attn_mask=mask).dtype == mt.float32

    @pytest.mark.parametrize(
        "kwargs, shapes, error, match",
        [
            ({"attn_mask": np.zeros((3, 5), dtype=np.int64)}, None, TypeError, "attn_mask.*bool or float"),
            ({"attn_mask": np.zeros((4, 5), dtype=bool)}, None, ValueError, "attn_mask of shape"),
            ({"attn_mask": np.ones((3, 5), dtype=bool), "is_causal": True}, None, ValueError, "either attn_mask"),
            ({"dropout_p": 1.5}, None, ValueError, "dropout_p"),
            ({}, ((3, 4), (5, 3), (5, 2)), ValueError, "key's last dim"),
            ({}, ((3, 4), (5, 4), (6, 2)), ValueError, "value must have"),
            ({}, ((4,), (5, 4), (5, 2)), ValueError, "at least 2 dims"),
            ({}, ((2, 3, 4), (3, 5, 4), (3, 5, 2)), ValueError, "cannot be broadcast"),
        ],
    )
    def test_errors(self, rng, kwargs, shapes, error, match):
        sq, sk, sv = shapes or ((3, 4), (5, 4), (5, 2))
        q, k, v = randn_f64(rng, *sq), randn_f64(rng, *sk), randn_f64(rng, *sv)
        with pytest.raises(error, match=match):
            F.scaled_dot_product_attention(q, k, v, **kwargs)

    def test_dtype_errors(self, rng):
        q = randn_f64(rng, 3, 4)
        with pytest.raises(TypeError, match="same dtype"):
            F.scaled_dot_product_attention(q, q.to(mt.float32), q)
        with pytest.raises(TypeError, match="query must be a Tensor or a NumPy array, got list"):
            F.scaled_dot_product_attention(q.numpy().tolist(), q, q)

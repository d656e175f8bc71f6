"""ops/attention.py: the attention op (forward against a plain NumPy reference, attention_reference.py;
float64 gradchecks with masks, dropout and fully masked rows) and the heads split / merge."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from attention_reference import reference_attention
from helpers import randn_f64

import minitensor as mt
from minitensor.autograd import gradcheck
from minitensor.ops.attention import Attention, AttentionWeights, merge_heads, split_heads

E, H, N, L = 4, 2, 2, 3


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

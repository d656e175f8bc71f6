"""nn/functional/attention.py: ``F.scaled_dot_product_attention`` without PyTorch (masks, causal,
dropout, broadcast batch dims, dtypes, errors) against a plain NumPy reference (attention_reference.py)
and float64 gradchecks; ``F.multi_head_attention_forward``'s extras, bias_k/bias_v with
static_k/static_v, as PyTorch.

PyTorch refuses (with an assertion) bias_k without bias_v and the other way round, and the biases
together with static keys or values: a learned key/value position cannot be appended to keys and
values given as they are.  minitensor refuses the same calls with a ValueError that names the
arguments.  The accepted combinations give PyTorch's numbers.
"""

from __future__ import annotations

import numpy as np
import pytest
from attention_reference import reference_attention
from helpers import randn_f64

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck


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


E, H, N, L, S, S_STATIC = 8, 2, 2, 3, 4, 5


def _weights(rng) -> dict:
    shapes = {
        "in_w": (3 * E, E), "in_b": (3 * E,), "out_w": (E, E), "out_b": (E,),
        "bias_k": (1, 1, E), "bias_v": (1, 1, E),
        "static_k": (N * H, S_STATIC, E // H), "static_v": (N * H, S_STATIC, E // H),
        "q": (L, N, E), "k": (S, N, E),
    }  # fmt: skip
    return {name: rng.standard_normal(shape) for name, shape in shapes.items()}


def _call(lib: str, arrays: dict, use: set):
    """multi_head_attention_forward of torch or minitensor, with the extras in ``use``."""
    if lib == "torch":
        torch = pytest.importorskip("torch")
        f, t = torch.nn.functional, {n: torch.tensor(a, requires_grad=True) for n, a in arrays.items()}
    else:
        f, t = F, {n: mt.tensor(a, dtype=mt.float64, requires_grad=True) for n, a in arrays.items()}
    pick = {n: t[n] if n in use else None for n in ("bias_k", "bias_v", "static_k", "static_v")}
    out = f.multi_head_attention_forward(
        t["q"], t["k"], t["k"], E, H, t["in_w"], t["in_b"], pick["bias_k"], pick["bias_v"], False, 0.0,
        t["out_w"], t["out_b"], static_k=pick["static_k"], static_v=pick["static_v"], need_weights=True,
    )  # fmt: skip
    return out, t


@pytest.mark.parametrize(
    "use, match",
    [
        ({"bias_k", "bias_v", "static_k"}, "cannot be added to a static key"),
        ({"bias_k", "bias_v", "static_v"}, "cannot be added to a static value"),
        ({"bias_k", "bias_v", "static_k", "static_v"}, "cannot be added to a static key"),
        ({"bias_k"}, "bias_k is set but bias_v is None"),
        ({"bias_v"}, "bias_v is set but bias_k is None"),
        ({"bias_k", "static_k"}, "bias_k is set but bias_v is None"),
        ({"bias_v", "static_v"}, "bias_v is set but bias_k is None"),
    ],
)
def test_biases_with_static_keys_or_alone_are_refused_as_in_pytorch(rng, use, match):
    arrays = _weights(rng)
    with pytest.raises(AssertionError):  # PyTorch refuses these calls too
        _call("torch", arrays, use)
    with pytest.raises(ValueError, match=match):
        _call("mt", arrays, use)


@pytest.mark.parametrize(
    "name, shape, match",
    [
        ("static_k", (N * H + 1, S_STATIC, E // H), r"static_k must have shape \(N\*H, S, E/H\) = \(4, S, 4\)"),
        ("static_v", (N * H, S_STATIC, E // H + 1), r"static_v must have shape"),
        ("static_v", (N * H, S_STATIC + 1, E // H), "static_k and static_v must have the same length"),
    ],
)
def test_static_keys_and_values_of_the_wrong_shape_are_refused(rng, name, shape, match):
    arrays = _weights(rng)
    arrays[name] = rng.standard_normal(shape)
    with pytest.raises(ValueError, match=match):
        _call("mt", arrays, {"static_k", "static_v"})


@pytest.mark.parametrize("use", [{"static_k"}, {"static_v"}, {"bias_k", "bias_v"}], ids=["k", "v", "biases"])
def test_accepted_extras_match_torch(rng, use):
    """static_k alone (values from the projection of key, so S_STATIC must equal S), static_v
    alone, and the two biases: PyTorch's outputs and gradients."""
    torch = pytest.importorskip("torch")
    arrays = _weights(rng)
    for name in ("static_k", "static_v"):
        arrays[name] = rng.standard_normal((N * H, S, E // H))
    (t_out, t_weights), t_in = _call("torch", arrays, use)
    (m_out, m_weights), m_in = _call("mt", arrays, use)
    for got, want in ((m_out, t_out), (m_weights, t_weights)):
        assert got.shape == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-7, atol=1e-10)
    g_out, g_w = rng.standard_normal(m_out.shape), rng.standard_normal(m_weights.shape)
    ((t_out * torch.tensor(g_out)).sum() + (t_weights * torch.tensor(g_w)).sum()).backward()
    (
        (m_out * mt.tensor(g_out, dtype=mt.float64)).sum() + (m_weights * mt.tensor(g_w, dtype=mt.float64)).sum()
    ).backward()
    for name in t_in:
        if t_in[name].grad is None:
            assert m_in[name].grad is None or not m_in[name].grad.numpy().any(), name
            continue
        np.testing.assert_allclose(
            m_in[name].grad.numpy(), t_in[name].grad.numpy(), rtol=1e-7, atol=1e-10, err_msg=name
        )

"""``F.multi_head_attention_forward``'s extras: bias_k/bias_v with static_k/static_v, as PyTorch.

PyTorch refuses (with an assertion) bias_k without bias_v and the other way round, and the biases
together with static keys or values: a learned key/value position cannot be appended to keys and
values given as they are.  minitensor refuses the same calls with a ValueError that names the
arguments (it used to fail with a NumPy broadcast error for bias_k + static_k, and to ignore
bias_v silently without bias_k).  The accepted combinations give PyTorch's numbers.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F

torch = pytest.importorskip("torch")

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

"""PyTorch as an oracle: attention and Transformer layers with copied weights.

Each case builds the PyTorch module, copies its weights into the minitensor
module through ``state_dict`` -> numpy arrays -> ``load_state_dict``, runs both
on the same inputs and masks, back-propagates the same random upstream
gradient, and compares the outputs and the gradients of every input and every
parameter (float64: 1e-6; float32: 1e-4 relative).

PyTorch gives NaN for a query whose keys are all masked (minitensor gives
zeros), so the masks here always leave key 0 visible.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import copy_weights

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

torch = pytest.importorskip("torch")

E, H, FF, N, L, S = 8, 2, 12, 2, 3, 4
DTYPES = {"float64": (torch.float64, mt.float64), "float32": (torch.float32, mt.float32)}


# --------------------------------------------------------------------- helpers
def pair(rng, shape, dtype: str):
    """The same random values as a torch and a minitensor leaf that require grad."""
    a = rng.standard_normal(shape)
    t_dtype, m_dtype = DTYPES[dtype]
    return torch.tensor(a, dtype=t_dtype, requires_grad=True), mt.tensor(a, dtype=m_dtype, requires_grad=True)


def assert_close(got: np.ndarray, want: np.ndarray, dtype: str, what: str) -> None:
    scale = max(1.0, float(np.abs(want).max()))
    if dtype == "float64":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9 * scale, err_msg=what)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * scale, err_msg=what)


def check_against_torch(rng, t_module, m_module, t_outs, m_outs, t_inputs, m_inputs, dtype: str) -> None:
    """Compare outputs, then the gradients of inputs and parameters for one random upstream gradient."""
    t_outs = [o for o in t_outs if o is not None]
    m_outs = [o for o in m_outs if o is not None]
    assert len(t_outs) == len(m_outs)
    t_loss, m_loss = 0, 0
    for i, (t_out, m_out) in enumerate(zip(t_outs, m_outs)):
        assert m_out.shape == tuple(t_out.shape), f"output {i}"
        assert m_out.dtype == DTYPES[dtype][1]
        assert_close(m_out.numpy(), t_out.detach().numpy(), dtype, f"output {i}")
        g = rng.standard_normal(m_out.shape)
        t_loss = t_loss + (t_out * torch.tensor(g, dtype=t_out.dtype)).sum()
        m_loss = m_loss + (m_out * mt.tensor(g, dtype=m_out.dtype)).sum()
    t_loss.backward()
    m_loss.backward()
    for i, (t_in, m_in) in enumerate(zip(t_inputs, m_inputs)):
        assert_close(m_in.grad.numpy(), t_in.grad.numpy(), dtype, f"grad of input {i}")
    m_params = dict(m_module.named_parameters())
    for name, t_param in t_module.named_parameters():
        assert_close(m_params[name].grad.numpy(), t_param.grad.numpy(), dtype, f"grad of {name}")


def masks(rng, kind: str, shape: tuple, dtype: str):
    """(torch mask, minitensor mask) of one kind; key 0 is never masked."""
    if kind is None:
        return None, None
    blocked = rng.random(shape) < 0.35
    blocked[..., 0] = False
    if kind == "bool":
        return torch.tensor(blocked), blocked
    values = np.where(blocked, -np.inf, rng.standard_normal(shape) * 0.5)
    return torch.tensor(values, dtype=DTYPES[dtype][0]), mt.tensor(values, dtype=DTYPES[dtype][1])


def causal(l: int, s: int, dtype: str):
    values = np.triu(np.full((l, s), -np.inf), 1)
    return torch.tensor(values, dtype=DTYPES[dtype][0])


# ----------------------------------------------------------- MultiheadAttention
MHA_CASES = {
    "plain": {},
    "batch_first": {"batch_first": True},
    "bool_mask_2d": {"attn_mask": ("bool", 2)},
    "float_mask_2d": {"attn_mask": ("float", 2)},
    "bool_mask_3d": {"attn_mask": ("bool", 3), "batch_first": True},
    "float_mask_3d": {"attn_mask": ("float", 3)},
    "bool_padding": {"key_padding_mask": "bool"},
    "float_padding": {"key_padding_mask": "float", "batch_first": True},
    "bool_both": {"attn_mask": ("bool", 2), "key_padding_mask": "bool", "need_weights": False},
    "float_both": {"attn_mask": ("float", 3), "key_padding_mask": "float", "average": False},
    "is_causal": {"is_causal": True},
    "is_causal_no_weights": {"is_causal": True, "need_weights": False, "batch_first": True},
    "unbatched": {"unbatched": True},
    "unbatched_masks": {"unbatched": True, "attn_mask": ("bool", 3), "key_padding_mask": "bool", "average": False},
    "no_weights": {"need_weights": False},
    "per_head_weights": {"average": False, "batch_first": True},
    "cross": {"source": "cross"},
    "cross_kv_shared": {"source": "kv_shared", "key_padding_mask": "bool"},
    "kdim_vdim": {"source": "cross", "kdim": 3, "vdim": 5, "attn_mask": ("float", 2)},
    "kdim_vdim_no_weights": {"source": "cross", "kdim": 5, "vdim": 3, "need_weights": False, "batch_first": True},
    "no_bias": {"bias": False, "key_padding_mask": "bool"},
    "no_bias_cross_kdim": {"bias": False, "source": "cross", "kdim": 3, "vdim": 3},
    "eval_with_dropout": {"dropout": 0.3, "eval": True, "attn_mask": ("bool", 2)},
    "float32": {"dtype": "float32"},
    "float32_masks_batch_first": {
        "dtype": "float32",
        "batch_first": True,
        "key_padding_mask": "bool",
        "is_causal": True,
    },
    "float32_cross_no_weights": {"dtype": "float32", "source": "cross", "need_weights": False, "average": False},
}


@pytest.mark.parametrize("name", list(MHA_CASES))
def test_multihead_attention(rng, name):
    case = MHA_CASES[name]
    dtype = case.get("dtype", "float64")
    bf, unbatched, source = case.get("batch_first", False), case.get("unbatched", False), case.get("source", "self")
    kdim, vdim = case.get("kdim"), case.get("vdim")
    kwargs = {"dropout": case.get("dropout", 0.0), "bias": case.get("bias", True), "kdim": kdim, "vdim": vdim}
    torch.manual_seed(0)
    t_mha = torch.nn.MultiheadAttention(E, H, batch_first=bf, dtype=DTYPES[dtype][0], **kwargs)
    m_mha = nn.MultiheadAttention(E, H, batch_first=bf, dtype=DTYPES[dtype][1], **kwargs)
    if case.get("bias", True):  # non-zero biases, so that their gradients are tested in full
        with torch.no_grad():
            t_mha.in_proj_bias.normal_()
            t_mha.out_proj.bias.normal_()
    copy_weights(t_mha, m_mha)
    if case.get("eval"):
        t_mha.eval()
        m_mha.eval()

    s = L if source == "self" else S

    def shape(length: int, features: int) -> tuple:
        if unbatched:
            return (length, features)
        return (N, length, features) if bf else (length, N, features)

    t_q, m_q = pair(rng, shape(L, E), dtype)
    if source == "self":
        t_in, m_in = [t_q], [m_q]
        t_qkv, m_qkv = (t_q, t_q, t_q), (m_q, m_q, m_q)
    elif source == "kv_shared":
        t_kv, m_kv = pair(rng, shape(S, E), dtype)
        t_in, m_in = [t_q, t_kv], [m_q, m_kv]
        t_qkv, m_qkv = (t_q, t_kv, t_kv), (m_q, m_kv, m_kv)
    else:
        t_k, m_k = pair(rng, shape(S, kdim or E), dtype)
        t_v, m_v = pair(rng, shape(S, vdim or E), dtype)
        t_in, m_in = [t_q, t_k, t_v], [m_q, m_k, m_v]
        t_qkv, m_qkv = (t_q, t_k, t_v), (m_q, m_k, m_v)

    t_kw, m_kw = {}, {}
    if "attn_mask" in case:
        kind, ndim = case["attn_mask"]
        heads = H if unbatched else N * H
        t_kw["attn_mask"], m_kw["attn_mask"] = masks(rng, kind, (L, s) if ndim == 2 else (heads, L, s), dtype)
    if "key_padding_mask" in case:
        pad_shape = (s,) if unbatched else (N, s)
        t_kw["key_padding_mask"], m_kw["key_padding_mask"] = masks(rng, case["key_padding_mask"], pad_shape, dtype)
    if case.get("is_causal"):  # PyTorch needs the mask with its is_causal hint; minitensor builds it
        t_kw.update(attn_mask=causal(L, s, dtype), is_causal=True)
        m_kw.update(is_causal=True)
    for kw in (t_kw, m_kw):
        kw.update(need_weights=case.get("need_weights", True), average_attn_weights=case.get("average", True))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's notes about mismatched mask types
        t_out = t_mha(*t_qkv, **t_kw)
    m_out = m_mha(*m_qkv, **m_kw)
    assert (m_out[1] is None) == (t_out[1] is None)
    check_against_torch(rng, t_mha, m_mha, t_out, m_out, t_in, m_in, dtype)


# --------------------------------------------------------- functional forms
@pytest.mark.parametrize(
    "case",
    [
        {},
        {"mask": "bool"},
        {"mask": "float"},
        {"is_causal": True, "l": 3, "s": 5},
        {"is_causal": True, "l": 5, "s": 3},
        {"scale": 0.37, "mask": "bool"},
        {"broadcast": True},
        {"dtype": "float32", "mask": "float"},
    ],
    ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()) or "plain",
)
def test_scaled_dot_product_attention(rng, case):
    dtype = case.get("dtype", "float64")
    l, s = case.get("l", L), case.get("s", S)
    t_q, m_q = pair(rng, (N, H, l, 5), dtype)
    t_k, m_k = pair(rng, (1 if case.get("broadcast") else N, H, s, 5), dtype)
    t_v, m_v = pair(rng, (N, H, s, 3), dtype)
    kw_t, kw_m = {"scale": case.get("scale")}, {"scale": case.get("scale")}
    if case.get("is_causal"):
        kw_t["is_causal"] = kw_m["is_causal"] = True
    if "mask" in case:
        blocked_t, blocked_m = masks(rng, case["mask"], (l, s), dtype)
        # SDPA's bool convention: True = may attend, so the blocked mask is inverted for both.
        kw_t["attn_mask"] = ~blocked_t if case["mask"] == "bool" else blocked_t
        kw_m["attn_mask"] = ~blocked_m if case["mask"] == "bool" else blocked_m
    t_out = torch.nn.functional.scaled_dot_product_attention(t_q, t_k, t_v, **kw_t)
    m_out = F.scaled_dot_product_attention(m_q, m_k, m_v, **kw_m)
    check_against_torch(rng, torch.nn.Module(), nn.Module(), [t_out], [m_out], [t_q, t_k, t_v], [m_q, m_k, m_v], dtype)


@pytest.mark.parametrize("extra", ["bias_kv", "zero_attn", "bias_kv_zero_attn", "static_kv"])
def test_multi_head_attention_forward_extras(rng, extra):
    """bias_k/bias_v, add_zero_attn and static_k/static_v of the functional form."""
    dtype = "float64"
    weights = {name: pair(rng, shape, dtype) for name, shape in [
        ("in_w", (3 * E, E)), ("in_b", (3 * E,)), ("out_w", (E, E)), ("out_b", (E,)),
        ("bias_k", (1, 1, E)), ("bias_v", (1, 1, E)),
        ("static_k", (N * H, S + 1, E // H)), ("static_v", (N * H, S + 1, E // H)),
    ]}  # fmt: skip
    t_q, m_q = pair(rng, (L, N, E), dtype)
    t_k, m_k = pair(rng, (S, N, E), dtype)
    t_pad, m_pad = masks(rng, "bool", (N, S), dtype)
    t_mask, m_mask = masks(rng, "bool", (L, S), dtype)
    use = {"bias_k", "bias_v"} if "bias_kv" in extra else set()
    use |= {"static_k", "static_v"} if extra == "static_kv" else set()

    def run(lib, q, k, w, pad, mask):
        f = torch.nn.functional if lib == "torch" else F
        pick = {n: w[n] if n in use else None for n in ("bias_k", "bias_v", "static_k", "static_v")}
        return f.multi_head_attention_forward(
            q, k, k, E, H, w["in_w"], w["in_b"], pick["bias_k"], pick["bias_v"], "zero_attn" in extra, 0.0,
            w["out_w"], w["out_b"], key_padding_mask=None if extra == "static_kv" else pad,
            attn_mask=None if extra == "static_kv" else mask, static_k=pick["static_k"], static_v=pick["static_v"],
            average_attn_weights=False,
        )  # fmt: skip

    t_w = {n: p[0] for n, p in weights.items()}
    m_w = {n: p[1] for n, p in weights.items()}
    t_out = run("torch", t_q, t_k, t_w, t_pad, t_mask)
    m_out = run("mt", m_q, m_k, m_w, m_pad, m_mask)
    names = ["in_w", "in_b", "out_w", "out_b", *sorted(use)]
    t_in = [t_q] + ([t_k] if extra != "static_kv" else []) + [t_w[n] for n in names]
    m_in = [m_q] + ([m_k] if extra != "static_kv" else []) + [m_w[n] for n in names]
    check_against_torch(rng, torch.nn.Module(), nn.Module(), t_out, m_out, t_in, m_in, dtype)


# ------------------------------------------------------ encoder / decoder layers
def _activation(kind: str):
    return {
        "relu": ("relu", "relu"),
        "gelu": ("gelu", "gelu"),
        "gelu_module": (torch.nn.GELU(), nn.GELU()),
        "callable": (torch.tanh, lambda x: x.tanh()),
    }[kind]


ENCODER_CASES = {
    "post_ln": {},
    "pre_ln": {"norm_first": True},
    "gelu": {"activation": "gelu", "batch_first": True},
    "gelu_module_pre_ln": {"activation": "gelu_module", "norm_first": True},
    "callable_activation": {"activation": "callable"},
    "bool_src_mask": {"src_mask": ("bool", 2)},
    "float_src_mask_pre_ln": {"src_mask": ("float", 2), "norm_first": True},
    "per_head_mask": {"src_mask": ("bool", 3), "batch_first": True},
    "float_per_head_mask": {"src_mask": ("float", 3)},
    "bool_padding": {"padding": "bool", "batch_first": True},
    "float_padding_pre_ln": {"padding": "float", "norm_first": True},
    "both_masks": {"src_mask": ("bool", 2), "padding": "bool"},
    "is_causal": {"is_causal": True},
    "is_causal_padding_pre_ln": {"is_causal": True, "padding": "bool", "norm_first": True, "batch_first": True},
    "unbatched": {"unbatched": True},
    "unbatched_masks_pre_ln": {"unbatched": True, "norm_first": True, "padding": "bool", "src_mask": ("bool", 3)},
    "eval_with_dropout": {"dropout": 0.3, "eval": True, "padding": "bool"},
    "eval_with_dropout_pre_ln": {"dropout": 0.2, "eval": True, "norm_first": True, "batch_first": True},
    "no_bias": {"bias": False, "norm_first": True},
    "layer_norm_eps": {"layer_norm_eps": 1e-3, "batch_first": True},
    "float32": {"dtype": "float32", "padding": "bool"},
    "float32_pre_ln_gelu": {"dtype": "float32", "norm_first": True, "activation": "gelu", "is_causal": True},
}


def _layer_pair(cls_name: str, case: dict):
    dtype = case.get("dtype", "float64")
    t_act, m_act = _activation(case.get("activation", "relu"))
    common = {
        "dropout": case.get("dropout", 0.0),
        "batch_first": case.get("batch_first", False),
        "norm_first": case.get("norm_first", False),
        "layer_norm_eps": case.get("layer_norm_eps", 1e-5),
        "bias": case.get("bias", True),
    }
    torch.manual_seed(0)
    t_layer = getattr(torch.nn, cls_name)(E, H, FF, activation=t_act, dtype=DTYPES[dtype][0], **common)
    m_layer = getattr(nn, cls_name)(E, H, FF, activation=m_act, dtype=DTYPES[dtype][1], **common)
    _perturb(t_layer)
    copy_weights(t_layer, m_layer)
    if case.get("eval"):
        t_layer.eval()
        m_layer.eval()
    return t_layer, m_layer, dtype


def _perturb(t_module) -> None:
    """Non-trivial biases and layer-norm scales (PyTorch initialises them to 0 and 1)."""
    with torch.no_grad():
        for p in t_module.parameters():
            if p.ndim == 1:
                p.add_(0.3 * torch.randn_like(p))


def _seq_shape(case: dict, length: int) -> tuple:
    if case.get("unbatched"):
        return (length, E)
    return (N, length, E) if case.get("batch_first") else (length, N, E)


def _mask_kwargs(rng, case: dict, dtype: str, l: int, s: int, mask_key: str, pad_key: str):
    t_kw, m_kw = {}, {}
    heads = H if case.get("unbatched") else N * H
    if mask_key in case:
        kind, ndim = case[mask_key]
        t_kw[mask_key], m_kw[mask_key] = masks(rng, kind, (l, s) if ndim == 2 else (heads, l, s), dtype)
    if pad_key in case:
        pad_shape = (s,) if case.get("unbatched") else (N, s)
        t_kw[pad_key], m_kw[pad_key] = masks(rng, case[pad_key], pad_shape, dtype)
    return t_kw, m_kw


@pytest.mark.parametrize("name", list(ENCODER_CASES))
def test_encoder_layer(rng, name):
    case = dict(ENCODER_CASES[name])
    if "padding" in case:
        case["src_key_padding_mask"] = case.pop("padding")
    t_layer, m_layer, dtype = _layer_pair("TransformerEncoderLayer", case)
    t_x, m_x = pair(rng, _seq_shape(case, S), dtype)
    t_kw, m_kw = _mask_kwargs(rng, case, dtype, S, S, "src_mask", "src_key_padding_mask")
    if case.get("is_causal"):
        t_kw.update(src_mask=causal(S, S, dtype), is_causal=True)
        m_kw.update(is_causal=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_out = t_layer(t_x, **t_kw)
    m_out = m_layer(m_x, **m_kw)
    check_against_torch(rng, t_layer, m_layer, [t_out], [m_out], [t_x], [m_x], dtype)


DECODER_CASES = {
    "post_ln": {},
    "pre_ln_batch_first": {"norm_first": True, "batch_first": True},
    "causal_and_memory_padding": {"tgt_is_causal": True, "memory_key_padding_mask": "bool"},
    "float_masks_pre_ln": {
        "tgt_mask": ("float", 2),
        "memory_mask": ("float", 2),
        "tgt_key_padding_mask": "float",
        "norm_first": True,
    },
    "bool_per_head_masks": {"tgt_mask": ("bool", 3), "memory_mask": ("bool", 3), "batch_first": True},
    "gelu_unbatched": {"activation": "gelu", "unbatched": True, "tgt_is_causal": True},
    "eval_with_dropout": {"dropout": 0.3, "eval": True, "memory_key_padding_mask": "bool"},
    "float32": {"dtype": "float32", "tgt_is_causal": True, "norm_first": True},
}


@pytest.mark.parametrize("name", list(DECODER_CASES))
def test_decoder_layer(rng, name):
    case = DECODER_CASES[name]
    t_layer, m_layer, dtype = _layer_pair("TransformerDecoderLayer", case)
    t_tgt, m_tgt = pair(rng, _seq_shape(case, L), dtype)
    t_mem, m_mem = pair(rng, _seq_shape(case, S), dtype)
    t_kw, m_kw = _mask_kwargs(rng, case, dtype, L, L, "tgt_mask", "tgt_key_padding_mask")
    t_kw2, m_kw2 = _mask_kwargs(rng, case, dtype, L, S, "memory_mask", "memory_key_padding_mask")
    t_kw.update(t_kw2)
    m_kw.update(m_kw2)
    if case.get("tgt_is_causal"):
        t_kw.update(tgt_mask=causal(L, L, dtype), tgt_is_causal=True)
        m_kw.update(tgt_is_causal=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_out = t_layer(t_tgt, t_mem, **t_kw)
    m_out = m_layer(m_tgt, m_mem, **m_kw)
    check_against_torch(rng, t_layer, m_layer, [t_out], [m_out], [t_tgt, t_mem], [m_tgt, m_mem], dtype)


# ------------------------------------------------------------------ stacks
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_stack_with_final_norm(rng, norm_first):
    torch.manual_seed(0)
    kwargs = {"batch_first": True, "norm_first": norm_first}
    t_layer = torch.nn.TransformerEncoderLayer(E, H, FF, 0.0, dtype=torch.float64, **kwargs)
    t_enc = torch.nn.TransformerEncoder(
        t_layer, 3, norm=torch.nn.LayerNorm(E, dtype=torch.float64), enable_nested_tensor=False
    )
    m_layer = nn.TransformerEncoderLayer(E, H, FF, 0.0, dtype=mt.float64, **kwargs)
    m_enc = nn.TransformerEncoder(m_layer, 3, norm=nn.LayerNorm(E, dtype=mt.float64))
    _perturb(t_enc)
    copy_weights(t_enc, m_enc)
    t_x, m_x = pair(rng, (N, S, E), "float64")
    t_pad, m_pad = masks(rng, "float", (N, S), "float64")
    t_out = t_enc(t_x, mask=causal(S, S, "float64"), src_key_padding_mask=t_pad, is_causal=True)
    m_out = m_enc(m_x, src_key_padding_mask=m_pad, is_causal=True)
    check_against_torch(rng, t_enc, m_enc, [t_out], [m_out], [t_x], [m_x], "float64")


def test_decoder_stack(rng):
    torch.manual_seed(0)
    t_layer = torch.nn.TransformerDecoderLayer(E, H, FF, 0.0, dtype=torch.float64)
    t_dec = torch.nn.TransformerDecoder(t_layer, 2, norm=torch.nn.LayerNorm(E, dtype=torch.float64))
    m_dec = nn.TransformerDecoder(
        nn.TransformerDecoderLayer(E, H, FF, 0.0, dtype=mt.float64), 2, norm=nn.LayerNorm(E, dtype=mt.float64)
    )
    _perturb(t_dec)
    copy_weights(t_dec, m_dec)
    t_tgt, m_tgt = pair(rng, (L, N, E), "float64")
    t_mem, m_mem = pair(rng, (S, N, E), "float64")
    t_pad, m_pad = masks(rng, "bool", (N, S), "float64")
    t_out = t_dec(t_tgt, t_mem, tgt_mask=causal(L, L, "float64"), tgt_is_causal=True, memory_key_padding_mask=t_pad)
    m_out = m_dec(m_tgt, m_mem, tgt_is_causal=True, memory_key_padding_mask=m_pad)
    check_against_torch(rng, t_dec, m_dec, [t_out], [m_out], [t_tgt, t_mem], [m_tgt, m_mem], "float64")


@pytest.mark.parametrize("batch_first, norm_first, dtype", [(False, False, "float64"), (True, True, "float32")])
def test_transformer(rng, batch_first, norm_first, dtype):
    t_dtype, m_dtype = DTYPES[dtype]
    torch.manual_seed(0)
    kwargs = {"dropout": 0.0, "batch_first": batch_first, "norm_first": norm_first}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's note that it cannot use nested tensors here
        t_model = torch.nn.Transformer(E, H, 2, 2, FF, dtype=t_dtype, **kwargs)
    m_model = nn.Transformer(E, H, 2, 2, FF, dtype=m_dtype, **kwargs)
    _perturb(t_model)
    copy_weights(t_model, m_model)
    t_src, m_src = pair(rng, (N, S, E) if batch_first else (S, N, E), dtype)
    t_tgt, m_tgt = pair(rng, (N, L, E) if batch_first else (L, N, E), dtype)
    t_pad, m_pad = masks(rng, "bool", (N, S), dtype)
    t_mask = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=t_dtype)
    m_mask = nn.Transformer.generate_square_subsequent_mask(L, dtype=m_dtype)
    np.testing.assert_array_equal(m_mask.numpy(), t_mask.numpy())
    t_out = t_model(t_src, t_tgt, tgt_mask=t_mask, src_key_padding_mask=t_pad, memory_key_padding_mask=t_pad)
    m_out = m_model(m_src, m_tgt, tgt_mask=m_mask, src_key_padding_mask=m_pad, memory_key_padding_mask=m_pad)
    check_against_torch(rng, t_model, m_model, [t_out], [m_out], [t_src, t_tgt], [m_src, m_tgt], dtype)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.nn.TransformerEncoderLayer(16, 4, 32),
        lambda lib: lib.nn.TransformerEncoderLayer(16, 4, 32, bias=False),
        lambda lib: lib.nn.TransformerDecoderLayer(16, 4, 32),
        lambda lib: lib.nn.MultiheadAttention(16, 4, kdim=6, vdim=10),
        lambda lib: lib.nn.Transformer(16, 4, 2, 3, 32),
    ],
    ids=["encoder_layer", "encoder_layer_no_bias", "decoder_layer", "mha_kdim_vdim", "transformer"],
)
def test_state_dict_round_trip_both_ways(make):
    """Same keys, shapes and parameter counts; weights move PyTorch -> minitensor -> PyTorch unchanged."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_module = make(torch)
    m_module = make(mt)
    assert [(k, v.shape) for k, v in m_module.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in t_module.state_dict().items()
    ]
    copy_weights(t_module, m_module)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_back = make(torch)
    t_back.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in m_module.state_dict().items()})
    for (k, a), b in zip(t_module.state_dict().items(), t_back.state_dict().values()):
        assert torch.equal(a, b), k

"""Second derivatives of the fused ops against PyTorch's double backward, in float64.

For a function f of inputs xs, both libraries compute the output, the gradient
``g = d(w_out · f)/d(xs)`` with ``create_graph=True``, and the second
derivative ``d(sum_i w_i · g_i)/d(xs)`` for random weightings ``w_out``, ``w_i``
(never a plain sum).  Output, gradient and second derivative must agree to
~1e-10 relative.  A derivative one side does not produce (None) counts as 0.

With ``create_graph=True`` the fused ops (softmax, layer norm, attention, the
feed-forward block, cross-entropy, ...) take their composite path; their
first-order kernels are covered by the other test files and by
``test_second_order_fd.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import copy_weights

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

E, H, FF, N, L = 8, 2, 12, 2, 4


# --------------------------------------------------------------------- helpers
def _double_backward(lib, fn, inputs: list, w_out: np.ndarray, w_grads: list) -> tuple:
    """(output, gradients, second derivatives) as arrays (None where a library gives none)."""
    if lib is torch:
        const = lambda a: torch.tensor(a, dtype=torch.float64)  # noqa: E731
        as_array = lambda t: None if t is None else t.detach().numpy()  # noqa: E731
    else:
        const = lambda a: mt.tensor(a, dtype=mt.float64)  # noqa: E731
        as_array = lambda t: None if t is None else t.numpy()  # noqa: E731
    out = fn(*inputs)
    grads = lib.autograd.grad(out, inputs, const(w_out), create_graph=True, allow_unused=True)
    terms = [(g * const(w)).sum() for g, w in zip(grads, w_grads) if g is not None and g.requires_grad]
    if terms:
        second = lib.autograd.grad(sum(terms[1:], terms[0]), inputs, allow_unused=True)
    else:
        second = [None] * len(inputs)
    return as_array(out), [as_array(g) for g in grads], [as_array(s) for s in second]


def _assert_close(got, want, what: str, rtol: float = 1e-10) -> None:
    got = np.zeros(np.shape(want)) if got is None else got
    want = np.zeros(np.shape(got)) if want is None else want
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=what)


def check(rng, t_fn, m_fn, t_inputs: list, m_inputs: list, rtol: float = 1e-10) -> tuple:
    """Compare output, gradient and second derivative; return minitensor's (output, gradients, second
    derivatives)."""
    out_shape = m_fn(*m_inputs).shape
    w_out = rng.standard_normal(out_shape)
    w_grads = [rng.standard_normal(x.shape) for x in m_inputs]
    with sdpa_kernel(SDPBackend.MATH):  # (PyTorch's flash attention has no double backward)
        t_out, t_grads, t_second = _double_backward(torch, t_fn, t_inputs, w_out, w_grads)
    m_out, m_grads, m_second = _double_backward(mt, m_fn, m_inputs, w_out, w_grads)
    _assert_close(m_out, t_out, "output", rtol)
    for i, (m_g, t_g, m_s, t_s) in enumerate(zip(m_grads, t_grads, m_second, t_second)):
        _assert_close(m_g, t_g, f"gradient of input {i}", rtol)
        _assert_close(m_s, t_s, f"second derivative of input {i}", rtol)
    assert any(s is not None and np.abs(s).max() > 1e-3 for s in t_second), "the test needs a second derivative"
    return m_out, m_grads, m_second


def leaves(*arrays) -> tuple:
    """The same float64 values as torch and minitensor leaves that require grad."""
    t = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    m = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in arrays]
    return t, m


def module_leaves(t_module, m_module, t_x, m_x) -> tuple:
    """Inputs [x, *parameters] of both modules, parameters paired by name."""
    m_params = dict(m_module.named_parameters())
    names = [name for name, _ in t_module.named_parameters()]
    assert sorted(names) == sorted(m_params)
    return [t_x, *[dict(t_module.named_parameters())[n] for n in names]], [m_x, *[m_params[n] for n in names]]


# --------------------------------------------------------------------- nn_ops
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_and_log_softmax(rng, dim):
    t, m = leaves(rng.standard_normal((3, 4, 5)))
    check(rng, lambda x: x.softmax(dim), lambda x: x.softmax(dim), t, m)
    check(rng, lambda x: TF.log_softmax(x, dim), lambda x: F.log_softmax(x, dim), t, m)


@pytest.mark.parametrize("bias", [True, False])
def test_linear(rng, bias):
    arrays = [rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4))] + ([rng.standard_normal(5)] if bias else [])
    t, m = leaves(*arrays)
    # the product with a second input makes the second derivative of x and W non-zero
    check(rng, lambda *a: TF.linear(*a) * a[0].sum(), lambda *a: F.linear(*a) * a[0].sum(), t, m)


@pytest.mark.parametrize("shape, affine", [((5,), True), ((4, 5), True), ((5,), False)])
def test_layer_norm(rng, shape, affine):
    arrays = [rng.standard_normal((3, 4, 5))] + (
        [rng.standard_normal(shape), rng.standard_normal(shape)] if affine else []
    )
    t, m = leaves(*arrays)
    check(rng, lambda *a: TF.layer_norm(a[0], shape, *a[1:]), lambda *a: F.layer_norm(a[0], shape, *a[1:]), t, m)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(rng, approximate):
    t, m = leaves(rng.standard_normal((3, 7)) * 2)
    check(rng, lambda x: TF.gelu(x, approximate=approximate), lambda x: F.gelu(x, approximate=approximate), t, m)


def test_dropout_with_the_same_mask(rng):
    x = rng.standard_normal((4, 6))
    mt.manual_seed(3)
    mask = F.dropout(mt.ones(4, 6, dtype=mt.float64), p=0.4).numpy()  # the multipliers: 0 or 1/(1-p)
    assert 0 < np.count_nonzero(mask) < mask.size
    t, m = leaves(x)

    def m_fn(x):
        mt.manual_seed(3)
        return F.dropout(x.tanh(), p=0.4) * x

    check(rng, lambda x: x.tanh() * torch.tensor(mask) * x, m_fn, t, m)


def test_embedding_with_repeated_indices_and_padding(rng):
    idx = np.array([[0, 2, 2], [3, 1, 0]])
    t, m = leaves(rng.standard_normal((5, 3)))
    check(
        rng,
        lambda w: TF.embedding(torch.tensor(idx), w, padding_idx=2).tanh(),
        lambda w: F.embedding(mt.tensor(idx), w, padding_idx=2).tanh(),
        t,
        m,
    )


# --------------------------------------------------------------------- attention
def _mask_pair(rng, kind: str, shape: tuple) -> tuple:
    blocked = rng.random(shape) < 0.35
    blocked[..., 0] = False
    if kind == "bool":
        return torch.tensor(blocked), mt.tensor(blocked)
    values = np.where(blocked, -np.inf, rng.standard_normal(shape))
    return torch.tensor(values), mt.tensor(values, dtype=mt.float64)


@pytest.mark.parametrize("mask", [None, "bool", "float", "causal"])
def test_scaled_dot_product_attention(rng, mask):
    t, m = leaves(rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 3)))
    kwargs_t, kwargs_m = {}, {}
    if mask == "causal":
        kwargs_t = kwargs_m = {"is_causal": True}
    elif mask is not None:
        mask_t, mask_m = _mask_pair(rng, mask, (3, 5))
        mask_t = ~mask_t if mask == "bool" else mask_t  # (here True = may attend, as PyTorch's sdpa)
        mask_m = mt.tensor(~mask_m.numpy()) if mask == "bool" else mask_m
        kwargs_t, kwargs_m = {"attn_mask": mask_t}, {"attn_mask": mask_m}
    check(
        rng,
        lambda q, k, v: TF.scaled_dot_product_attention(q, k, v, **kwargs_t),
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kwargs_m),
        t,
        m,
    )


MHA_CASES = {
    "self_weights": {"need_weights": True},  # AttentionWeights
    "self_fused": {"need_weights": False},  # SelfAttention
    "cross_fused": {"need_weights": False, "cross": True},  # CrossAttention
    "key_padding_bool": {"need_weights": False, "key_padding_mask": "bool"},
    "key_padding_float_weights": {"need_weights": True, "key_padding_mask": "float", "batch_first": False},
    "attn_mask_bool": {"need_weights": False, "attn_mask": "bool"},
    "attn_mask_float_cross": {"need_weights": False, "attn_mask": "float", "cross": True},
    "both_masks_weights": {"need_weights": True, "attn_mask": "bool", "key_padding_mask": "bool"},
    "both_masks_fused": {"need_weights": False, "attn_mask": "float", "key_padding_mask": "float"},
}


@pytest.mark.parametrize("name", list(MHA_CASES))
def test_multihead_attention(rng, name):
    case = MHA_CASES[name]
    bf = case.get("batch_first", True)
    torch.manual_seed(0)
    t_mha = torch.nn.MultiheadAttention(E, H, batch_first=bf, dtype=torch.float64)
    with torch.no_grad():
        t_mha.in_proj_bias.normal_()
        t_mha.out_proj.bias.normal_()
    m_mha = nn.MultiheadAttention(E, H, batch_first=bf, dtype=mt.float64)
    copy_weights(t_mha, m_mha)
    shape = (N, L, E) if bf else (L, N, E)
    t_x, m_x = leaves(rng.standard_normal(shape))
    t_in, m_in = module_leaves(t_mha, m_mha, t_x[0], m_x[0])
    mem_t, mem_m = leaves(rng.standard_normal(shape))
    if case.get("cross"):
        t_in, m_in = t_in + mem_t, m_in + mem_m
    kt, km = {}, {}
    if "attn_mask" in case:
        kt["attn_mask"], km["attn_mask"] = _mask_pair(rng, case["attn_mask"], (L, L))
    if "key_padding_mask" in case:
        kt["key_padding_mask"], km["key_padding_mask"] = _mask_pair(rng, case["key_padding_mask"], (N, L))
    need = case["need_weights"]

    def run(mha, kwargs):
        def fn(x, *rest):
            source = rest[-1] if case.get("cross") else x
            out, weights = mha(x, source, source, need_weights=need, **kwargs)
            if weights is None:
                return out
            spread = (weights * weights).sum(dim=-1, keepdim=True)  # (N, L, 1)
            return out * (spread if bf else spread.transpose(0, 1))

        return fn

    check(rng, run(t_mha, kt), run(m_mha, km), t_in, m_in)


def test_multihead_attention_with_a_fully_masked_query_row(rng):
    """Query row 1 may attend to no key: minitensor gives that row out_proj.bias (no NaN, no
    gradient through it), PyTorch NaN everywhere; so PyTorch computes the other rows only."""
    torch.manual_seed(0)
    t_mha = torch.nn.MultiheadAttention(E, H, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        t_mha.in_proj_bias.normal_()
        t_mha.out_proj.bias.normal_()
    m_mha = nn.MultiheadAttention(E, H, batch_first=True, dtype=mt.float64)
    copy_weights(t_mha, m_mha)
    blocked = rng.random((L, L)) < 0.3
    blocked[:, 0] = False
    blocked[1] = True
    keep = [i for i in range(L) if i != 1]
    t_x, m_x = leaves(rng.standard_normal((N, L, E)))
    t_in, m_in = module_leaves(t_mha, m_mha, t_x[0], m_x[0])

    def t_fn(x, *params):
        out, _ = t_mha(x[:, keep], x, x, attn_mask=torch.tensor(blocked[keep]), need_weights=False)
        bias_row = t_mha.out_proj.bias.expand(N, E)
        return torch.stack([bias_row if i == 1 else out[:, keep.index(i)] for i in range(L)], dim=1)

    for need_weights in (False, True):  # SelfAttention, and AttentionWeights

        def m_fn(x, *params, need_weights=need_weights):
            return m_mha(x, x, x, attn_mask=mt.tensor(blocked), need_weights=need_weights)[0]

        out, grads, second = check(rng, t_fn, m_fn, t_in, m_in)
        assert all(np.isfinite(a).all() for a in [out, *grads, *second] if a is not None)


# --------------------------------------------------------------------- Transformer encoder layer
def _node_names(t: mt.Tensor) -> set:
    seen, stack, names = set(), [t.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or not hasattr(node, "parents") or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(node.name())
        stack.extend(node.parents)
    return names


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("padding", [False, True])
def test_transformer_encoder_layer(rng, norm_first, activation, padding):
    torch.manual_seed(0)
    kwargs = {"dropout": 0.0, "activation": activation, "norm_first": norm_first, "batch_first": True}
    t_layer = torch.nn.TransformerEncoderLayer(E, H, FF, dtype=torch.float64, **kwargs)
    m_layer = nn.TransformerEncoderLayer(E, H, FF, dtype=mt.float64, **kwargs)
    with torch.no_grad():
        for name, p in t_layer.named_parameters():
            if "norm" in name or "bias" in name:
                p.normal_()  # (non-trivial norm weights and biases)
    copy_weights(t_layer, m_layer)
    t_layer.train()
    m_layer.train()
    t_x, m_x = leaves(rng.standard_normal((N, L, E)))
    t_in, m_in = module_leaves(t_layer, m_layer, t_x[0], m_x[0])
    pad = np.zeros((N, L), bool)
    pad[0, -1] = True
    kt, km = (
        ({"src_key_padding_mask": torch.tensor(pad)}, {"src_key_padding_mask": mt.tensor(pad)}) if padding else ({}, {})
    )
    assert _node_names(m_layer(m_x[0], **km)) == {"EncoderLayerBackward"}  # the fused path: one node
    check(rng, lambda x, *p: t_layer(x, **kt), lambda x, *p: m_layer(x, **km), t_in, m_in)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("masks", [False, True])
def test_transformer_decoder_layer(rng, norm_first, masks):
    torch.manual_seed(0)
    kwargs = {"dropout": 0.0, "norm_first": norm_first, "batch_first": True}
    t_layer = torch.nn.TransformerDecoderLayer(E, H, FF, dtype=torch.float64, **kwargs)
    m_layer = nn.TransformerDecoderLayer(E, H, FF, dtype=mt.float64, **kwargs)
    with torch.no_grad():
        for name, p in t_layer.named_parameters():
            if "norm" in name or "bias" in name:
                p.normal_()  # (non-trivial norm weights and biases)
    copy_weights(t_layer, m_layer)
    t_x, m_x = leaves(rng.standard_normal((N, L, E)), rng.standard_normal((N, L + 1, E)))
    t_in, m_in = module_leaves(t_layer, m_layer, t_x[0], m_x[0])
    t_in, m_in = [t_x[1], *t_in], [m_x[1], *m_in]  # (memory first, then x and the parameters)
    kt, km = {}, {}
    if masks:
        pad = np.zeros((N, L + 1), bool)
        pad[0, -1] = True
        causal = np.triu(np.ones((L, L), bool), 1)
        kt = {"tgt_mask": torch.tensor(causal), "memory_key_padding_mask": torch.tensor(pad)}
        km = {"tgt_mask": mt.tensor(causal), "memory_key_padding_mask": mt.tensor(pad)}
    assert _node_names(m_layer(m_x[0], m_x[1], **km)) == {"DecoderLayerBackward"}  # the fused path: one node
    check(rng, lambda mem, x, *p: t_layer(x, mem, **kt), lambda mem, x, *p: m_layer(x, mem, **km), t_in, m_in)


# --------------------------------------------------------------------- losses
CE_CASES = {
    "mean": {},
    "sum": {"reduction": "sum"},
    "none": {"reduction": "none"},
    "weight": {"weight": True},
    "ignore_index": {"ignore_index": 2},
    "label_smoothing": {"label_smoothing": 0.2},
    "all_options": {"weight": True, "ignore_index": 0, "label_smoothing": 0.1, "reduction": "sum"},
    "weight_smoothing_mean": {"weight": True, "label_smoothing": 0.3},
}


@pytest.mark.parametrize("name", list(CE_CASES))
@pytest.mark.parametrize("spatial", [False, True])
def test_cross_entropy(rng, name, spatial):
    opts = dict(CE_CASES[name])
    shape, target_shape = ((3, 4, 2), (3, 2)) if spatial else ((5, 4), (5,))
    target = rng.integers(0, 4, target_shape)
    target.flat[0] = 2  # (so that ignore_index=2 ignores something)
    t_opts, m_opts = dict(opts), dict(opts)
    if opts.pop("weight", False):
        w = rng.random(4) + 0.5
        t_opts["weight"], m_opts["weight"] = torch.tensor(w), mt.tensor(w, dtype=mt.float64)
    t, m = leaves(rng.standard_normal(shape) * 2)
    check(
        rng,
        lambda x: TF.cross_entropy(x, torch.tensor(target), **t_opts),
        lambda x: F.cross_entropy(x, mt.tensor(target), **m_opts),
        t,
        m,
    )


@pytest.mark.parametrize(
    "opts", [{}, {"label_smoothing": 0.2, "reduction": "sum"}, {"weight": True}, {"reduction": "none"}]
)
def test_cross_entropy_with_probability_targets(rng, opts):
    opts = dict(opts)
    probs = rng.random((5, 4))
    probs /= probs.sum(axis=1, keepdims=True)
    t_opts, m_opts = dict(opts), dict(opts)
    if opts.get("weight"):
        w = rng.random(4) + 0.5
        t_opts["weight"], m_opts["weight"] = torch.tensor(w), mt.tensor(w, dtype=mt.float64)
    t, m = leaves(rng.standard_normal((5, 4)), probs)  # the target requires grad too
    check(rng, lambda x, p: TF.cross_entropy(x, p, **t_opts), lambda x, p: F.cross_entropy(x, p, **m_opts), t, m)


@pytest.mark.parametrize("opts", [{}, {"reduction": "sum", "ignore_index": 1}, {"weight": True, "reduction": "none"}])
def test_nll_loss(rng, opts):
    opts = dict(opts)
    target = np.array([1, 0, 3, 1, 2])
    t_opts, m_opts = dict(opts), dict(opts)
    if opts.get("weight"):
        w = rng.random(4) + 0.5
        t_opts["weight"], m_opts["weight"] = torch.tensor(w), mt.tensor(w, dtype=mt.float64)
    t, m = leaves(rng.standard_normal((5, 4)))
    check(
        rng,
        lambda x: TF.nll_loss(TF.log_softmax(x, 1), torch.tensor(target), **t_opts),
        lambda x: F.nll_loss(F.log_softmax(x, 1), mt.tensor(target), **m_opts),
        t,
        m,
    )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(rng, reduction):
    t, m = leaves(rng.standard_normal((4, 3)), rng.standard_normal((4, 3)))
    check(
        rng,
        lambda x, y: TF.mse_loss(x.tanh(), y * x, reduction=reduction),
        lambda x, y: F.mse_loss(x.tanh(), y * x, reduction=reduction),
        t,
        m,
    )


# --------------------------------------------------------------------- and more
def _third(lib, fn, x, ws: list):
    const = (lambda a: torch.tensor(a)) if lib is torch else (lambda a: mt.tensor(a, dtype=mt.float64))  # noqa: E731
    (g,) = lib.autograd.grad(fn(x), x, const(ws[0]), create_graph=True)
    (h,) = lib.autograd.grad(g, x, const(ws[1]), create_graph=True)
    (k,) = lib.autograd.grad(h, x, const(ws[2]))
    return k.detach().numpy() if lib is torch else k.numpy()


def _torch_layer_norm(x):
    """PyTorch's layer norm in plain ops: the oracle of third derivatives (those of PyTorch's native
    layer_norm are wrong in torch 2.x: 28 off against finite differences on a (3, 4) input, where
    minitensor's agree to 3e-8; test_second_order_fd.py checks the encoder layer's by differences)."""
    c = x - x.mean(-1, keepdim=True)
    return c / ((c * c).mean(-1, keepdim=True) + 1e-5).sqrt()


@pytest.mark.parametrize("name", ["softmax", "layer_norm", "gelu", "gelu_tanh", "attention", "cross_entropy", "mha"])
def test_third_derivative(rng, name):
    target = np.array([2, 0, 1])
    if name == "mha":
        torch.manual_seed(0)
        t_mod = torch.nn.MultiheadAttention(4, 2, batch_first=True, dtype=torch.float64)
        m_mod = nn.MultiheadAttention(4, 2, batch_first=True, dtype=mt.float64)
        copy_weights(t_mod, m_mod)
        fns = {
            torch: lambda x: t_mod(x, x, x, need_weights=False)[0],
            mt: lambda x: m_mod(x, x, x, need_weights=False)[0],
        }
        shape = (2, 3, 4)
    else:
        fns = {
            "softmax": {torch: lambda x: x.softmax(1), mt: lambda x: x.softmax(1)},
            "layer_norm": {torch: _torch_layer_norm, mt: lambda x: F.layer_norm(x, (4,))},
            "gelu": {torch: TF.gelu, mt: F.gelu},
            "gelu_tanh": {torch: lambda x: TF.gelu(x, approximate="tanh"), mt: lambda x: F.gelu(x, approximate="tanh")},
            "attention": {
                torch: lambda x: TF.scaled_dot_product_attention(x, x, x, is_causal=True),
                mt: lambda x: F.scaled_dot_product_attention(x, x, x, is_causal=True),
            },
            "cross_entropy": {
                torch: lambda x: TF.cross_entropy(x, torch.tensor(target), label_smoothing=0.1, reduction="none"),
                mt: lambda x: F.cross_entropy(x, mt.tensor(target), label_smoothing=0.1, reduction="none"),
            },
        }[name]
        shape = (3, 4)
    x = rng.standard_normal(shape)
    out_shape = fns[mt](mt.tensor(x, dtype=mt.float64)).shape
    ws = [rng.standard_normal(out_shape), rng.standard_normal(shape), rng.standard_normal(shape)]
    with sdpa_kernel(SDPBackend.MATH):
        want = _third(torch, fns[torch], torch.tensor(x, requires_grad=True), ws)
    got = _third(mt, fns[mt], mt.tensor(x, dtype=mt.float64, requires_grad=True), ws)
    assert np.abs(want).max() > 1e-3
    _assert_close(got, want, "third derivative")

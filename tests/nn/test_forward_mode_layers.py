"""Forward mode through the layers, on every path (fused nodes and composites): MultiheadAttention
(self- and cross-attention, with and without the weights, masks), the Transformer encoder and
decoder layers (post- and pre-LN, ReLU and GELU, eval and training with dropout), LSTM and GRU.

``func.jvp`` of ``functional_call(module, params, inputs)`` in a random direction of the inputs
*and* the parameters, against central differences (dropout: the same seed each evaluation) and
PyTorch's ``torch.func.jvp`` with the same weights (where PyTorch's layers support forward AD).
"""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor import func

torch = pytest.importorskip("torch")

E, HEADS, FF = 8, 2, 12


def _direction(rng, tree: dict) -> dict:
    return {k: mt.tensor(rng.standard_normal(v.shape), dtype=mt.float64) for k, v in tree.items()}


def _shifted(tree: dict, direction: dict, step: float) -> dict:
    return {k: mt.tensor(v.numpy() + step * direction[k].numpy(), dtype=mt.float64) for k, v in tree.items()}


def _check(module, torch_module, inputs: dict, seed: int = 0, first=lambda out: out) -> None:
    """jvp of ``first(module(**inputs))`` w.r.t. the float inputs (masks are constants) and every parameter."""
    rng = np.random.default_rng(seed)
    params = {k: v.detach() for k, v in module.named_parameters()}
    floats = {k: v for k, v in inputs.items() if isinstance(v, mt.Tensor) and v.dtype == mt.float64 and "mask" not in k}
    fixed = {k: v for k, v in inputs.items() if k not in floats}
    dp, dx = _direction(rng, params), _direction(rng, floats)

    def run(p, xs):
        mt.manual_seed(seed)  # (the same dropout masks in every evaluation)
        return first(func.functional_call(module, p, (), {**xs, **fixed}))

    value, tangent = func.jvp(run, (params, floats), (dp, dx))
    eps = 1e-6
    with mt.no_grad():
        ahead = run(_shifted(params, dp, eps), _shifted(floats, dx, eps)).numpy()
        behind = run(_shifted(params, dp, -eps), _shifted(floats, dx, -eps)).numpy()
    np.testing.assert_allclose(tangent.numpy(), (ahead - behind) / (2 * eps), rtol=1e-5, atol=1e-6)
    if torch_module is None:
        return
    torch_module.load_state_dict({k: torch.tensor(v.numpy()) for k, v in module.state_dict().items()})
    t_params = {k: torch.tensor(v.numpy()) for k, v in params.items()}
    t_dp = {k: torch.tensor(v.numpy()) for k, v in dp.items()}
    t_x = {k: torch.tensor(v.numpy()) for k, v in floats.items()}
    t_dx = {k: torch.tensor(v.numpy()) for k, v in dx.items()}
    t_fixed = {k: torch.tensor(v.numpy()) if isinstance(v, mt.Tensor) else v for k, v in fixed.items()}

    def t_run(p, xs):
        return first(torch.func.functional_call(torch_module, p, (), {**xs, **t_fixed}))

    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        t_value, t_tangent = torch.func.jvp(t_run, (t_params, t_x), (t_dp, t_dx))
    np.testing.assert_allclose(value.numpy(), t_value.numpy(), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(tangent.numpy(), t_tangent.numpy(), rtol=1e-8, atol=1e-10)


def _x(rng, *shape) -> mt.Tensor:
    return mt.tensor(rng.standard_normal(shape), dtype=mt.float64)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("need_weights", [False, True])
def test_multihead_self_attention(batch_first, need_weights) -> None:
    rng = np.random.default_rng(1)
    module = nn.MultiheadAttention(E, HEADS, batch_first=batch_first, dtype=mt.float64).eval()
    theirs = torch.nn.MultiheadAttention(E, HEADS, batch_first=batch_first, dtype=torch.float64).train()
    x = _x(rng, 2, 3, E)  # (N, L, E) batch first, else (L, N, E)
    pad = np.array([[False, False, True], [False, False, False]])
    pad = mt.tensor(pad if batch_first else pad.T.copy())  # (N, S)
    inputs = {"query": x, "key": x, "value": x, "key_padding_mask": pad, "need_weights": need_weights}
    _check(module, theirs, inputs, first=lambda out: out[0])
    if need_weights:
        _check(module, theirs, inputs, first=lambda out: out[1])


def test_multihead_cross_attention_with_a_mask() -> None:
    rng = np.random.default_rng(2)
    module = nn.MultiheadAttention(E, HEADS, batch_first=True, dtype=mt.float64).eval()
    theirs = torch.nn.MultiheadAttention(E, HEADS, batch_first=True, dtype=torch.float64).train()
    mask = mt.tensor(np.triu(np.full((3, 4), -1e9), 2), dtype=mt.float64)
    inputs = {"query": _x(rng, 2, 3, E), "key": _x(rng, 2, 4, E), "value": _x(rng, 2, 4, E), "attn_mask": mask}
    _check(module, theirs, inputs, first=lambda out: out[0])


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer(norm_first, activation) -> None:
    rng = np.random.default_rng(3)
    kwargs = {"dropout": 0.0, "activation": activation, "norm_first": norm_first, "batch_first": True}
    module = nn.TransformerEncoderLayer(E, HEADS, FF, dtype=mt.float64, **kwargs).eval()
    theirs = torch.nn.TransformerEncoderLayer(E, HEADS, FF, dtype=torch.float64, **kwargs).train()
    x = _x(rng, 2, 3, E) * 3  # (ReLU: away from its kink, with these weights)
    _check(module, theirs, {"src": x, "src_key_padding_mask": mt.tensor([[False, False, True], [False] * 3])})


def test_encoder_layer_training_with_dropout() -> None:
    rng = np.random.default_rng(4)
    module = nn.TransformerEncoderLayer(E, HEADS, FF, dropout=0.3, batch_first=True, dtype=mt.float64).train()
    _check(module, None, {"src": _x(rng, 2, 3, E)})


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer(norm_first) -> None:
    rng = np.random.default_rng(5)
    kwargs = {"dropout": 0.0, "norm_first": norm_first, "activation": "gelu"}
    module = nn.TransformerDecoderLayer(E, HEADS, FF, dtype=mt.float64, **kwargs).eval()
    theirs = torch.nn.TransformerDecoderLayer(E, HEADS, FF, dtype=torch.float64, **kwargs).train()
    causal = mt.tensor(np.triu(np.full((3, 3), -np.inf), 1), dtype=mt.float64)
    _check(module, theirs, {"tgt": _x(rng, 3, 2, E), "memory": _x(rng, 4, 2, E), "tgt_mask": causal})


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_recurrent_layers(kind) -> None:
    rng = np.random.default_rng(6)
    kwargs = {"num_layers": 2, "bidirectional": True, "batch_first": True}
    module = getattr(nn, kind)(3, 4, dtype=mt.float64, **kwargs)
    theirs = getattr(torch.nn, kind)(3, 4, dtype=torch.float64, **kwargs)
    _check(module, theirs, {"input": _x(rng, 2, 5, 3)}, first=lambda out: out[0])

"""Positional arguments of the Transformer layers are never misread.

``nn.TransformerEncoderLayer`` keeps the Lucid page's positional order, (..., activation,
batch_first, norm_first, device, dtype), while PyTorch's is (..., activation, layer_norm_eps,
batch_first, norm_first, bias, device, dtype).  A float sixth argument can only be PyTorch's
``layer_norm_eps``, so such a call is read in PyTorch's order (checked against PyTorch building
the layer from the same call); a sixth argument that could mean either is refused naming both
orders.  ``TransformerDecoderLayer`` and ``Transformer`` have PyTorch's signatures exactly.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn

torch = pytest.importorskip("torch")

HEAD = (16, 4, 32, 0.0, "relu")  # d_model, nhead, dim_feedforward, dropout, activation: the same in both orders


def _torch_value(v):
    return torch.float64 if v is mt.float64 else torch.float32 if v is mt.float32 else v


def config(layer) -> dict:
    """What the positional arguments decide, read off a built layer (minitensor's or PyTorch's)."""
    return {
        "eps": (layer.norm1.eps, layer.norm2.eps),
        "batch_first": layer.self_attn.batch_first,
        "norm_first": layer.norm_first,
        "bias": layer.linear1.bias is not None,
        "dtype": str(layer.linear1.weight.dtype).replace("torch.", ""),
        "keys": list(layer.state_dict()),
    }


@pytest.mark.parametrize(
    "rest",
    [
        (1e-6,),
        (1e-6, True),
        (1e-3, True, True),
        (1e-6, False, True, False),
        (1e-6, True, False, True, "cpu"),
        (1e-6, True, True, False, "cpu", mt.float64),
        (np.float64(1e-4), True),
        (1.0, True),  # a float 1.0 is an eps (a bool batch_first would be True, not 1.0)
    ],
)
def test_pytorch_positional_order_is_read_as_pytorch_reads_it(rest):
    ours = nn.TransformerEncoderLayer(*HEAD, *rest)
    theirs = torch.nn.TransformerEncoderLayer(*HEAD, *(_torch_value(v) for v in rest))
    assert config(ours) == config(theirs)


def test_the_reported_call_no_longer_misreads_eps_as_batch_first():
    layer = nn.TransformerEncoderLayer(16, 4, 32, 0.0, "relu", 1e-6, True)
    assert layer.norm1.eps == 1e-6 and layer.batch_first is True and layer.norm_first is False


@pytest.mark.parametrize(
    "rest, keywords",
    [
        ((True,), {"batch_first": True}),
        ((False, True), {"norm_first": True}),
        ((True, True, "cpu"), {"batch_first": True, "norm_first": True, "device": "cpu"}),
        ((True, False, None, mt.float64), {"batch_first": True, "dtype": mt.float64}),
        ((np.bool_(True),), {"batch_first": True}),
    ],
)
def test_lucid_positional_order_is_kept(rest, keywords):
    ours = nn.TransformerEncoderLayer(*HEAD, *rest, layer_norm_eps=1e-6)
    theirs = torch.nn.TransformerEncoderLayer(
        *HEAD, layer_norm_eps=1e-6, **{k: _torch_value(v) for k, v in keywords.items()}
    )
    assert config(ours) == config(theirs)


@pytest.mark.parametrize("sixth", [0, 1, 2, np.int64(1), None, "cpu"])
def test_a_sixth_argument_that_could_mean_either_order_is_refused(sixth):
    with pytest.raises(TypeError) as info:
        nn.TransformerEncoderLayer(*HEAD, sixth, True)
    message = str(info.value)
    assert "6th positional argument" in message
    assert "activation, batch_first, norm_first, device, dtype" in message  # the Lucid order
    assert "activation, layer_norm_eps, batch_first, norm_first, bias, device, dtype" in message  # PyTorch's


@pytest.mark.parametrize(
    "rest, keywords, name",
    [
        ((1e-6,), {"layer_norm_eps": 1e-3}, "layer_norm_eps"),
        ((1e-6, True), {"batch_first": True}, "batch_first"),
        ((1e-6, True, False, False), {"bias": False}, "bias"),
        ((True,), {"batch_first": False}, "batch_first"),
        ((True, False, "cpu"), {"device": None}, "device"),
    ],
)
def test_an_argument_given_by_position_and_keyword_is_refused(rest, keywords, name):
    with pytest.raises(TypeError, match=f"multiple values for argument '{name}'"):
        nn.TransformerEncoderLayer(*HEAD, *rest, **keywords)


@pytest.mark.parametrize("rest", [(True, False, None, None, 1e-6), (1e-6, True, False, True, None, None, 3)])
def test_too_many_positional_arguments_are_refused(rest):
    with pytest.raises(TypeError, match="too many positional arguments"):
        nn.TransformerEncoderLayer(*HEAD, *rest)


def test_keyword_calls_are_unaffected():
    keywords = {"layer_norm_eps": 1e-6, "batch_first": True, "norm_first": True, "bias": False, "device": "cpu"}
    ours = nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, dropout=0.0, **keywords)
    theirs = torch.nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, dropout=0.0, **keywords)
    assert config(ours) == config(theirs)


def test_transformer_with_an_int_flag_still_builds_its_encoder_layers():
    """nn.Transformer passes its options to the encoder layer by keyword, so a truthy int
    batch_first (as PyTorch accepts) is not taken for an ambiguous positional argument."""
    model = nn.Transformer(16, 4, 1, 1, 32, 0.0, batch_first=1)
    assert model.encoder.layers[0].batch_first is True


def _parameters(cls) -> list:
    return [(p.name, p.kind, p.default) for p in inspect.signature(cls).parameters.values()]


@pytest.mark.parametrize("name", ["TransformerDecoderLayer", "Transformer"])
def test_decoder_layer_and_transformer_have_pytorchs_positional_order(name):
    """Their positional order is PyTorch's, so PyTorch's positional calls mean the same here."""
    ours, theirs = _parameters(getattr(nn, name)), _parameters(getattr(torch.nn, name))
    assert [p[:2] for p in ours] == [p[:2] for p in theirs]
    defaults = {n: d for n, _, d in theirs if n != "activation"}  # (PyTorch's default is F.relu, ours 'relu')
    assert {n: d for n, _, d in ours if n != "activation"} == defaults


def test_decoder_layer_pytorch_positional_call_matches_torch():
    rest = (1e-6, True, True, False, "cpu")
    ours, theirs = nn.TransformerDecoderLayer(*HEAD, *rest), torch.nn.TransformerDecoderLayer(*HEAD, *rest)
    assert config(ours) == config(theirs) and ours.norm3.eps == theirs.norm3.eps == 1e-6

"""Read a Hugging Face BERT checkpoint (``model.safetensors``) into a ``BertModel``.

The checkpoint names each weight after the PyTorch module that held it in
``transformers``' ``BertModel``; minitensor's layers are PyTorch's
``nn.TransformerEncoderLayer``.  The renaming, per encoder layer i
(``bert.`` in front of every name is accepted too)::

    encoder.layer.i.attention.self.{query,key,value}   -> layers.i.self_attn.in_proj_{weight,bias}
                                                          (the three (E, E) weights stacked into (3E, E))
    encoder.layer.i.attention.output.dense             -> layers.i.self_attn.out_proj
    encoder.layer.i.attention.output.LayerNorm         -> layers.i.norm1
    encoder.layer.i.intermediate.dense                 -> layers.i.linear1
    encoder.layer.i.output.dense                       -> layers.i.linear2
    encoder.layer.i.output.LayerNorm                   -> layers.i.norm2
    embeddings.LayerNorm                               -> embeddings.norm
    embeddings.{word,position,token_type}_embeddings   -> the same names

Hugging Face's LayerNorm parameters may be called ``gamma``/``beta`` in old
checkpoints; they are renamed to ``weight``/``bias``.  The pooler, the
pre-training heads (``cls.*``) and the ``position_ids`` buffer are not used.

>>> names = {"encoder.layer.0.output.dense.weight": 0, "embeddings.LayerNorm.gamma": 0}
>>> [rename(name) for name in names]
['layers.0.linear2.weight', 'embeddings.norm.weight']
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ._optional import require
from .bert import BertModel

# Suffixes of one encoder layer: checkpoint name -> minitensor name (Q/K/V are handled apart).
_LAYER_NAMES = {
    "attention.output.dense": "self_attn.out_proj",
    "attention.output.LayerNorm": "norm1",
    "intermediate.dense": "linear1",
    "output.dense": "linear2",
    "output.LayerNorm": "norm2",
}
_LAYER = re.compile(r"encoder\.layer\.(\d+)\.(.+)\.(weight|bias)$")
_QKV = ("query", "key", "value")
_UNUSED = re.compile(r"(pooler\..*|cls\..*|embeddings\.position_ids)$")


def rename(name: str) -> str | None:
    """The minitensor name of a checkpoint weight; None for unused ones (pooler, heads, position ids, Q/K/V parts).

    Raises ValueError for a name that belongs to no known BERT module.
    """
    name = name.removeprefix("bert.").replace("LayerNorm.gamma", "LayerNorm.weight")
    name = name.replace("LayerNorm.beta", "LayerNorm.bias")
    if _UNUSED.match(name):
        return None
    if name.startswith("embeddings."):
        return name.replace("embeddings.LayerNorm.", "embeddings.norm.")
    match = _LAYER.match(name)
    if match:
        index, module, kind = match.groups()
        if module in _LAYER_NAMES:
            return f"layers.{index}.{_LAYER_NAMES[module]}.{kind}"
        if module.removeprefix("attention.self.") in _QKV:
            return None  # stacked by _stack_qkv
    raise ValueError(f"unexpected weight {name!r}: not part of a BERT encoder")


def convert_state_dict(tensors: dict, num_layers: int) -> dict:
    """A BERT checkpoint's arrays (name -> ndarray) as a ``BertModel`` state dict.

    Q, K and V of layer i become ``layers.i.self_attn.in_proj_weight`` =
    concat([Wq, Wk, Wv]) (3E, E) and ``in_proj_bias`` = concat([bq, bk, bv]) (3E).

    Raises:
        ValueError: an unknown weight name, or a missing query/key/value weight.
    """
    tensors = {name.removeprefix("bert."): array for name, array in tensors.items()}
    state = {}
    for name, array in tensors.items():
        new_name = rename(name)
        if new_name is not None:
            state[new_name] = array
    for i in range(num_layers):
        for kind in ("weight", "bias"):
            state[f"layers.{i}.self_attn.in_proj_{kind}"] = _stack_qkv(tensors, i, kind)
    return state


def _stack_qkv(tensors: dict, layer: int, kind: str) -> np.ndarray:
    names = [f"encoder.layer.{layer}.attention.self.{part}.{kind}" for part in _QKV]
    missing = [name for name in names if name not in tensors]
    if missing:
        raise ValueError(f"missing weight(s) {', '.join(missing)}")
    return np.concatenate([tensors[name] for name in names])


def load_bert_weights(model: BertModel, path: str | Path) -> BertModel:
    """Copy the weights of the safetensors file ``path`` into ``model`` (every parameter must be found).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: a weight is unknown, missing, or of the wrong shape (the message names ``path``).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"load_bert_weights: {str(path)!r} does not exist")
    safetensors_numpy = require("safetensors.numpy", "reading model.safetensors")
    try:
        tensors = safetensors_numpy.load_file(str(path))
    except Exception as err:  # safetensors raises its own error types for a corrupt file
        raise ValueError(f"load_bert_weights: cannot read {str(path)!r} as safetensors: {err}") from err
    try:
        model.load_state_dict(convert_state_dict(tensors, model.config.num_hidden_layers))
    except (RuntimeError, ValueError) as err:
        raise ValueError(f"load_bert_weights: {str(path)!r} does not fit the model: {err}") from err
    return model

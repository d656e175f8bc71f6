"""``BertModel``: BERT's encoder built from minitensor's ``nn`` layers.

BERT (Devlin et al., 2019) is a stack of Post-LN Transformer encoder layers
on top of three summed embeddings::

    x = LayerNorm(word_emb[ids] + position_emb[0..L-1] + token_type_emb[type_ids])
    for each layer:                      # nn.TransformerEncoderLayer, norm_first=False
        x = norm1(x + SelfAttn(x, key_padding_mask))
        x = norm2(x + linear2(gelu(linear1(x))))

The padding positions of a batch are masked out as *keys* (nobody attends to
them); their own output rows are computed but meaningless, and the pooling
ignores them.

>>> config = BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=2,
...                     num_attention_heads=2, intermediate_size=16)
>>> model = BertModel(config).eval()
>>> ids = np.array([[2, 7, 9, 3], [2, 5, 3, 0]])          # (N, L), 0 = padding
>>> model(ids, attention_mask=ids != 0).shape              # (N, L, hidden_size)
(2, 4, 8)
"""

from __future__ import annotations

import numpy as np

from .. import nn
from ..tensor import Tensor
from .config import ACTIVATIONS, BertConfig


class BertEmbeddings(nn.Module):
    """Word + position + token-type embeddings, then LayerNorm and dropout.

    Shapes: ``input_ids`` (N, L) int -> (N, L, hidden_size).
    """

    def __init__(self, config: BertConfig, dtype=None) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, dtype=dtype)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size, dtype=dtype)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size, dtype=dtype)
        self.norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps, dtype=dtype)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, input_ids: np.ndarray, token_type_ids: np.ndarray | None = None) -> Tensor:
        length = input_ids.shape[-1]
        if length > self.position_embeddings.num_embeddings:
            raise ValueError(
                f"BertEmbeddings: sequences may have at most {self.position_embeddings.num_embeddings} tokens "
                f"(max_position_embeddings), got {length}"
            )
        x = self.word_embeddings(input_ids) + self.position_embeddings(np.arange(length))
        if token_type_ids is None:
            x = x + self.token_type_embeddings.weight[0]  # every token is of sentence A
        else:
            x = x + self.token_type_embeddings(token_type_ids)
        return self.dropout(self.norm(x))


class BertModel(nn.Module):
    """BERT's encoder: ``BertEmbeddings`` then ``num_hidden_layers`` ``nn.TransformerEncoderLayer``s.

    Each layer is ``TransformerEncoderLayer(hidden_size, num_attention_heads,
    intermediate_size, activation=hidden_act, layer_norm_eps=layer_norm_eps,
    batch_first=True)`` (Post-LN), with dropout ``hidden_dropout_prob`` and
    attention dropout ``attention_probs_dropout_prob`` (both off in eval mode).
    BERT's pooler (a dense layer on the [CLS] token) is not part of it:
    sentence embeddings pool all tokens instead.

    Args:
        config: the sizes (``BertConfig``).
        dtype: parameter dtype (default ``mt.get_default_dtype()``).

    Attributes: ``embeddings`` (BertEmbeddings), ``layers`` (ModuleList of
    TransformerEncoderLayer).  Load weights with ``load_bert_weights``.
    """

    def __init__(self, config: BertConfig, dtype=None) -> None:
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config, dtype=dtype)
        self.layers = nn.ModuleList([self._layer(config, dtype) for _ in range(config.num_hidden_layers)])

    @staticmethod
    def _layer(config: BertConfig, dtype) -> nn.TransformerEncoderLayer:
        layer = nn.TransformerEncoderLayer(
            config.hidden_size,
            config.num_attention_heads,
            config.intermediate_size,
            dropout=config.hidden_dropout_prob,
            activation=ACTIVATIONS[config.hidden_act],
            batch_first=True,
            dtype=dtype,
            layer_norm_eps=config.layer_norm_eps,
        )
        layer.self_attn.dropout = config.attention_probs_dropout_prob
        return layer

    def forward(
        self, input_ids: np.ndarray, attention_mask: np.ndarray | None = None, token_type_ids: np.ndarray | None = None
    ) -> Tensor:
        """The last layer's hidden states.

        Args:
            input_ids: (N, L) integer token ids.
            attention_mask: (N, L), 1/True at real tokens and 0/False at padding
                (Hugging Face's convention), or None when nothing is padded.
            token_type_ids: (N, L) segment ids, or None for all zeros.

        Returns:
            (N, L, hidden_size).
        """
        input_ids = _as_ids(input_ids, "input_ids")
        padding = None
        if attention_mask is not None:
            mask = np.asarray(attention_mask)
            if mask.shape != input_ids.shape:
                raise ValueError(
                    f"BertModel: attention_mask must have the shape of input_ids {input_ids.shape}, got {mask.shape}"
                )
            padding = mask == 0  # True = padding = may NOT be attended to
        x = self.embeddings(input_ids, None if token_type_ids is None else _as_ids(token_type_ids, "token_type_ids"))
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=padding)
        return x


def _as_ids(ids, name: str) -> np.ndarray:
    """A 2-D integer array (N, L), or TypeError/ValueError naming ``name``."""
    array = np.asarray(ids)
    if array.dtype.kind not in "iu":
        raise TypeError(f"BertModel: {name} must hold integer ids, got dtype {array.dtype}")
    if array.ndim != 2:
        raise ValueError(f"BertModel: {name} must be 2-D (N, L), got shape {array.shape}")
    return array

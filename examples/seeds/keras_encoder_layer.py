"""Seed 001: the Keras walk-through of a Transformer encoder layer, in minitensor.

The seed subclasses ``tf.keras.layers.Layer`` with ``call(x, training, mask)`` and
``get_config()``.  Here the same interface wraps ``nn.TransformerEncoderLayer``
(LayerNorm epsilon 1e-6 as in the seed): ``training`` switches dropout on or
off through ``train()``/``eval()``.  Sizes as in the seed: batch 64, sequence 50,
d_model 512, 8 heads, dff 2048, dropout 0.1.

Run:  python examples/seeds/keras_encoder_layer.py
"""

from __future__ import annotations

import minitensor as mt
import minitensor.nn as nn


class TransformerEncoderLayer(nn.Module):
    """Keras-style interface: ``layer(x, training, mask=None)`` and ``get_config()``.  x: (N, S, d_model)."""

    def __init__(self, d_model: int, num_heads: int, dff: int, dropout_rate: float = 0.1, name: str = "") -> None:
        super().__init__()
        self.d_model, self.num_heads, self.dff = d_model, num_heads, dff
        self.dropout_rate, self.name = dropout_rate, name
        self.layer = nn.TransformerEncoderLayer(
            d_model, num_heads, dff, dropout_rate, batch_first=True, layer_norm_eps=1e-6
        )

    def forward(self, x: mt.Tensor, training: bool, mask: mt.Tensor | None = None) -> mt.Tensor:
        """``mask``: optional (N, S) padding mask, True at padding positions."""
        self.train(training)  # dropout only while training
        return self.layer(x, src_key_padding_mask=mask)

    def get_config(self) -> dict:
        """The layer's configuration, as Keras' ``get_config``."""
        return {
            "name": self.name,
            "d_model": self.d_model,
            "num_heads": self.num_heads,
            "dff": self.dff,
            "dropout_rate": self.dropout_rate,
        }


def main() -> None:
    mt.manual_seed(0)
    batch_size, input_seq_len, d_model, num_heads, dff, dropout_rate = 64, 50, 512, 8, 2048, 0.1
    sample_input = mt.rand(batch_size, input_seq_len, d_model)  # uniform, like tf.random.uniform
    encoder_layer = TransformerEncoderLayer(d_model, num_heads, dff, dropout_rate, name="my_encoder_layer")

    with mt.no_grad():  # forward passes only: no graph needed
        output_tensor = encoder_layer(sample_input, training=False)
        output_tensor_train = encoder_layer(sample_input, training=True)

    print(f"Input shape: {sample_input.shape}")
    print(f"Output shape (inference): {output_tensor.shape}")
    print(f"Output shape (training): {output_tensor_train.shape}")
    assert sample_input.shape == output_tensor.shape == output_tensor_train.shape
    print("Layer Configuration:")
    print(encoder_layer.get_config())


if __name__ == "__main__":
    main()

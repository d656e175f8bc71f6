"""Seed 004: the two examples of Lucid's ``TransformerEncoderLayer`` page, in minitensor.

1. A Post-LN layer (the default), sequence-first layout (seq_len, batch, d_model).
2. A Pre-LN layer with GELU, batch-first layout and no dropout.

Run:  python examples/seeds/lucid_examples.py
"""

from __future__ import annotations

import minitensor as mt
import minitensor.nn as nn


def main() -> None:
    mt.manual_seed(0)
    # Basic Post-LN encoder layer (default).
    layer = nn.TransformerEncoderLayer(d_model=512, nhead=8)
    src = mt.randn(20, 4, 512)  # sequence-first layout: (seq_len, batch, d_model)
    out = layer(src)
    print(f"Post-LN output shape: {out.shape}")

    # Pre-LN variant with GELU and batch_first layout.
    layer = nn.TransformerEncoderLayer(
        d_model=256,
        nhead=4,
        dim_feedforward=1024,
        dropout=0.0,
        activation="gelu",
        batch_first=True,
        norm_first=True,
    )
    src = mt.randn(2, 15, 256)  # (batch, seq, d_model)
    out = layer(src)
    print(f"Pre-LN output shape: {out.shape}")

    layer.eval()  # inference: all three dropouts off through the training flag
    print(f"eval mode, dropouts training: {[d.training for d in (layer.dropout1, layer.dropout2, layer.dropout3)]}")


if __name__ == "__main__":
    main()

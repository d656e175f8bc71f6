"""Draw the figures of the docs.  ``python docs/make_figures.py`` rewrites them;
tests/docs/test_figures.py redraws each and checks it equals the committed file, so a
figure cannot go stale when the graph, the layout or the drawing changes.

A figure is drawn by minitensor itself (no Graphviz) and holds nothing that varies
from run to run: no addresses, no timings, no values (only names and shapes).
"""

from __future__ import annotations

from pathlib import Path

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.viz import make_dot

DOCS = Path(__file__).resolve().parent


def encoder_layer_graph(module_by_module: bool = False) -> str:
    """The SVG of one training step's graph of a small ``nn.TransformerEncoderLayer``:
    forward in train mode (dropout on), then a mean squared error against a target.

    ``module_by_module``: a do-nothing forward hook on every sub-module makes the layer
    call them one by one instead of running its fused sub-layer ops, so the picture shows
    the residual adds, the layer norms, the dropouts and the feed-forward's linears."""
    mt.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.1, batch_first=True)
    layer.train()
    if module_by_module:
        for name, module in layer.named_modules():
            if name:
                module.register_forward_hook(lambda module, args, output: None)
    x = mt.randn(2, 5, 8)  # (N, S, E)
    target = mt.randn(2, 5, 8)
    loss = F.mse_loss(layer(x), target)
    return make_dot(loss, params=dict(layer.named_parameters())).svg() + "\n"


FIGURES = {
    "encoder_layer_graph.svg": encoder_layer_graph,
    "encoder_layer_graph_modules.svg": lambda: encoder_layer_graph(module_by_module=True),
}


def main() -> None:
    for name, draw in FIGURES.items():
        (DOCS / name).write_text(draw(), encoding="utf-8")
        print(f"wrote docs/{name}")


if __name__ == "__main__":
    main()

"""The milestone: the demo's Transformer classifier trained end to end on a workbook's own ops.

The model is ``minitensor.demo``'s ``RepeatDetector`` (same initial weights, same task:
"does a letter repeat?"), but its forward pass is the workbook's: the embedding is
its indexing, each layer its ``transformer.encoder_layer`` over its attention, layer
norm, matmul and broadcasting, the pooling its mean, the loss its cross-entropy; the
backward pass is its engine, the update its Adam step.  The run is the demo's
``--quick`` one (150 steps of 64 sequences, lr 1e-2 with warmup) and must reach its
bar (80 % on 1,000 held-out sequences).
"""

from __future__ import annotations

import numpy as np

import minitensor as mt
from minitensor.demo.model import RepeatDetector
from minitensor.demo.run import BATCH_SIZE, NHEAD, QUICK, TEST_SIZE
from minitensor.demo.task import LENGTH, VOCAB_SIZE, make_batch, sequence_ids

from .ops import build


class WorkbookClassifier:
    """RepeatDetector's weights, run through the workbook's ops: tokens (N, L) -> logits (N, 2)."""

    def __init__(self, wb, seed: int = 0, d_model: int = 32, layers: int = 2) -> None:
        mt.manual_seed(seed)
        demo = RepeatDetector(VOCAB_SIZE, LENGTH, d_model, NHEAD, layers)  # (for its initial weights)
        self.params = dict(demo.named_parameters())
        self.positions = demo.positions
        self.layers = [
            {k.split(".", 3)[3]: p for k, p in self.params.items() if k.startswith(f"encoder.layers.{i}.")}
            for i in range(layers)
        ]
        self.wb, self.ops = wb, build(wb)

    def __call__(self, tokens: np.ndarray) -> mt.Tensor:
        ops = self.ops
        h = ops.add(ops.index(self.params["embedding.weight"], tokens), self.positions[: tokens.shape[1]])
        for p in self.layers:
            h = self.wb.transformer.encoder_layer(h, p, ops, NHEAD)
        return ops.linear(ops.mean(h, dim=1), self.params["head.weight"], self.params["head.bias"])


def train(wb, steps: int = QUICK["steps"], lr: float = QUICK["lr"], seed: int = 0) -> float:
    """Train as ``python -m minitensor.demo --quick`` does, on workbook ``wb``; the held-out accuracy."""
    rng = np.random.default_rng(seed)
    test_tokens, test_labels = make_batch(rng, TEST_SIZE)
    model = WorkbookClassifier(wb, seed)
    ops = model.ops
    optimizer = ops.adamw(list(model.params.values()), lr=lr, weight_decay=0.01)
    scheduler = mt.optim.lr_scheduler.LinearWarmup(optimizer, warmup_steps=steps // 10, total_steps=steps)
    held_out = sequence_ids(test_tokens)
    for _ in range(steps):
        tokens, labels = make_batch(rng, BATCH_SIZE)
        unseen = ~np.isin(sequence_ids(tokens), held_out)
        loss = ops.cross_entropy(model(tokens[unseen]), labels[unseen])
        optimizer.zero_grad()
        ops.backward(loss)
        optimizer.step()
        scheduler.step()
    with mt.no_grad():
        predicted = model(test_tokens).argmax(dim=-1).numpy()
    return float(np.mean(predicted == test_labels))

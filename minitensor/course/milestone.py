"""The milestone: the demo's Transformer classifier trained end to end on a workbook's own ops.

The model is ``minitensor.demo``'s ``RepeatDetector`` (same initial weights, same task:
"does a letter repeat?"), but its forward pass is the workbook's: the embedding is
its indexing, each layer its ``transformer.encoder_layer`` over its attention, layer
norm, matmul and broadcasting, the pooling its mean, the loss its cross-entropy; the
backward pass is its engine, the update its Adam step.  The run is the demo's
``--quick`` one (150 steps of 64 sequences, lr 1e-2 with warmup) and must reach its
bar (80 % on 1,000 held-out sequences).

The grader draws the data (``training_data``); the student's process trains on it
(``train_weights``) and sends back the weights; the grader measures their accuracy with
minitensor's own classifier (``held_out_accuracy``), on sequences the student's process
never sees.
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass
class TrainingData:
    """The demo's ``--quick`` run's data: its held-out sequences and its training batches (without them)."""

    test_tokens: np.ndarray  # (TEST_SIZE, L) int64
    test_labels: np.ndarray  # (TEST_SIZE,)
    batches: list  # [(tokens (n, L), labels (n,))] per step, n <= BATCH_SIZE


def training_data(steps: int = QUICK["steps"], seed: int = 0) -> TrainingData:
    """Drawn as ``python -m minitensor.demo --quick`` draws them (made by the grader, sent to the student's process)."""
    rng = np.random.default_rng(seed)
    test_tokens, test_labels = make_batch(rng, TEST_SIZE)
    held_out, batches = sequence_ids(test_tokens), []
    for _ in range(steps):
        tokens, labels = make_batch(rng, BATCH_SIZE)
        unseen = ~np.isin(sequence_ids(tokens), held_out)
        batches.append((tokens[unseen], labels[unseen]))
    return TrainingData(test_tokens, test_labels, batches)


def train_weights(wb, batches: list, lr: float = QUICK["lr"], seed: int = 0) -> dict:
    """Train as the demo's ``--quick`` run does, on workbook ``wb``'s ops: the weights, ``{name: array}``."""
    model = WorkbookClassifier(wb, seed)
    ops = model.ops
    optimizer = ops.adamw(list(model.params.values()), lr=lr, weight_decay=0.01)
    steps = len(batches)
    scheduler = mt.optim.lr_scheduler.LinearWarmup(optimizer, warmup_steps=steps // 10, total_steps=steps)
    for tokens, labels in batches:
        loss = ops.cross_entropy(model(tokens), labels)
        optimizer.zero_grad()
        ops.backward(loss)
        optimizer.step()
        scheduler.step()
    return {name: p.numpy().copy() for name, p in model.params.items()}


def classifier() -> RepeatDetector:
    """The demo's classifier, whose parameters the milestone trains (names and shapes of ``train_weights``)."""
    return RepeatDetector(VOCAB_SIZE, LENGTH, 32, NHEAD, 2)


def held_out_accuracy(weights: dict, data: TrainingData) -> float:
    """The accuracy of the demo's classifier (minitensor's own) with ``weights`` on the held-out sequences."""
    model = classifier()
    model.load_state_dict({name: mt.from_numpy(np.asarray(w, dtype=np.float32)) for name, w in weights.items()})
    model.eval()
    with mt.no_grad():
        predicted = model(data.test_tokens).argmax(dim=-1).numpy()
    return float(np.mean(predicted == data.test_labels))

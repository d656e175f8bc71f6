"""``python -m minitensor.demo --task digits``: a small CNN learns real handwritten digits in seconds.

The data: the 1797 handwritten digits of 8 x 8 pixels (0..16) that scikit-learn ships
(``data/digits.csv.gz``, from the UCI "Optical recognition of handwritten digits" set; its
origin and BSD 3-Clause licence are in ``data/digits_LICENSE.txt``).  A fixed fifth of them
(360 images) is held out: the model never trains on it, and the accuracy is measured there.

The model is LeNet's pattern at the data's size: two convolutions that find strokes, then two
fully connected layers that read the digit off them.  LeNet shrinks the image between the
convolutions with a subsampling layer; here the convolutions do it themselves with a stride of 2
(an "all-convolutional" network: it learns its own downsampling).

    (N, 1, 8, 8) -conv 3x3, 16-> (N, 16, 8, 8) -ReLU, conv 3x3 stride 2, 32-> (N, 32, 4, 4)
    -ReLU, flatten-> (N, 512) -linear-> (N, 64) -ReLU, linear-> (N, 10) logits

It prints a progress bar, the held-out accuracy, the confusion matrix, and draws the first
layer's 16 learned filters and some misclassified digits (a PNG with ``--out DIR`` when
matplotlib is installed; as text otherwise).
"""

from __future__ import annotations

import argparse
import gzip
import time
from pathlib import Path

import numpy as np

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

from .display import ProgressBar, save_digits_png, text_images

DATA = Path(__file__).resolve().parent / "data" / "digits.csv.gz"
HELD_OUT = 360  # images never trained on (a fifth of the set)
BATCH_SIZE = 64
FULL = {"steps": 600, "lr": 3e-3, "bar": 0.97}
QUICK = {"steps": 150, "lr": 3e-3, "bar": 0.90}  # a couple of seconds, for CI


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """The 1797 digits: images (1797, 1, 8, 8) float32 in [0, 1] and labels (1797,) int64."""
    with gzip.open(DATA, "rt") as file:
        table = np.loadtxt(file, delimiter=",", dtype=np.int64)
    images = (table[:, :64] / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    return images, table[:, 64]


def split(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(training indices, held-out indices): a fixed shuffle (the same whatever ``--seed``)."""
    order = np.random.default_rng(1998).permutation(n)
    return order[HELD_OUT:], order[:HELD_OUT]


class DigitCNN(nn.Module):
    """Two convolutions and two linear layers: (N, 1, 8, 8) images -> (N, 10) logits."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, stride=2, padding=1)
        self.fc1 = nn.Linear(32 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x: mt.Tensor) -> mt.Tensor:
        x = F.relu(self.conv2(F.relu(self.conv1(x))))
        return self.fc2(F.relu(self.fc1(x.reshape(x.shape[0], -1))))


def predict(model: DigitCNN, images: np.ndarray) -> np.ndarray:
    """The predicted digit of each image (eval mode, no graph)."""
    model.eval()
    with mt.no_grad():
        predicted = model(mt.tensor(images)).argmax(dim=-1).numpy()
    model.train()
    return predicted


def train(model: DigitCNN, images: np.ndarray, labels: np.ndarray, steps: int, lr: float, rng) -> None:
    """``steps`` AdamW steps on shuffled mini-batches (a new shuffle each epoch), the learning rate
    decaying linearly to 0; the progress bar shows running averages of the loss and accuracy."""
    optimizer = mt.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    schedule = mt.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1 - step / steps)
    bar = ProgressBar(steps)
    loss_avg, acc_avg = np.log(10.0), 0.1  # running averages for the bar, from chance level
    order, at = rng.permutation(len(images)), 0
    for step in range(1, steps + 1):
        if at + BATCH_SIZE > len(order):
            order, at = rng.permutation(len(images)), 0
        batch, at = order[at : at + BATCH_SIZE], at + BATCH_SIZE
        logits = model(mt.tensor(images[batch]))
        loss = F.cross_entropy(logits, mt.tensor(labels[batch]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        batch_acc = np.mean(logits.argmax(dim=-1).numpy() == labels[batch])
        loss_avg, acc_avg = 0.9 * loss_avg + 0.1 * loss.item(), 0.9 * acc_avg + 0.1 * batch_acc
        bar.update(step, loss_avg, acc_avg)


def confusion_matrix(labels: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """(10, 10) counts: row = the true digit, column = the predicted one."""
    counts = np.zeros((10, 10), dtype=np.int64)
    np.add.at(counts, (labels, predicted), 1)
    return counts


def format_confusion(counts: np.ndarray) -> str:
    """The matrix as a table, zeros shown as '.' so that the mistakes stand out."""
    lines = ["true \\ predicted " + "".join(f"{d:>4}" for d in range(10))]
    for digit, row in enumerate(counts):
        lines.append(f"{digit:>16} " + "".join(f"{c:>4}" if c else "   ." for c in row))
    return "\n".join(lines)


def show_pictures(model: DigitCNN, images, labels, predicted, out_dir: Path | None) -> None:
    """The first layer's filters and up to 8 misclassified digits: as text, and as ``digits.png`` in
    ``out_dir`` when it is given and matplotlib is installed."""
    filters = model.conv1.weight.detach().numpy()[:, 0]  # (16, 3, 3)
    print("\nThe first layer's 16 learned 3x3 filters (each scaled alone: @@ its largest weight, blank its smallest):")
    print(text_images(filters, [f"f{i}" for i in range(len(filters))]))
    wrong = np.flatnonzero(predicted != labels)[:8]
    if len(wrong):
        print(f"\n{len(wrong)} of the misclassified held-out digits (true -> predicted):")
        print(text_images(images[wrong, 0], [f"{labels[i]}->{predicted[i]}" for i in wrong]))
    else:
        print("\nNo held-out digit is misclassified.")
    if out_dir is None:
        return
    path = out_dir / "digits.png"
    captions = [f"true {labels[i]}, said {predicted[i]}" for i in wrong]
    if save_digits_png(filters, images[wrong, 0], captions, path):
        print(f"filters and misclassified digits drawn in {path}")
    else:
        print("digits.png not written: matplotlib is not installed (pip install matplotlib to get the PNG)")


def run_digits(args: argparse.Namespace, out_dir: Path | None) -> int:
    """Train on the digits, evaluate on the held-out ones, show the pictures; the exit status."""
    mt.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    images, labels = load_digits()
    train_idx, test_idx = split(len(images))
    model = DigitCNN()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"Data: {len(images)} handwritten digits of 8x8 pixels (scikit-learn's copy of UCI's set, BSD-3); "
          f"{len(train_idx)} to train on, {len(test_idx)} held out")  # fmt: skip
    print(f"Model: conv 3x3 (16) -> conv 3x3 stride 2 (32) -> linear 64 -> 10, {n_params:,} parameters; "
          f"AdamW, lr {args.lr:g}, {args.steps} steps of {BATCH_SIZE}")  # fmt: skip
    start = time.perf_counter()
    train(model, images[train_idx], labels[train_idx], args.steps, args.lr, rng)
    print(f"trained in {time.perf_counter() - start:.1f} s")
    predicted = predict(model, images[test_idx])
    acc = float(np.mean(predicted == labels[test_idx]))
    print(f"held-out accuracy: {acc:.2%} on {len(test_idx)} unseen digits (bar: {args.bar:.0%})")
    print("\nConfusion matrix of the held-out digits:")
    print(format_confusion(confusion_matrix(labels[test_idx], predicted)))
    show_pictures(model, images[test_idx], labels[test_idx], predicted, out_dir)
    if acc < args.bar:
        print(f"\nFAIL: accuracy {acc:.2%} (bar {args.bar:.0%}); try more --steps")
        return 1
    print(f"\nPASS: {acc:.2%} >= {args.bar:.0%} in {time.perf_counter() - start:.1f} s")
    return 0

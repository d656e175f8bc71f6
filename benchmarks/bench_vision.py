"""Vision layers, forward + backward, minitensor vs PyTorch in the same run (float32, 2 threads).

    python benchmarks/bench_vision.py                    # every case at batch 1, 8 and 64
    python benchmarks/bench_vision.py --only depthwise   # cases whose name contains "depthwise"
    python benchmarks/bench_vision.py --batches 1 64 --repeat 9

``CASES`` is the table: one row per layer setting (name, family, input shape of one image, the
layer made from a library's ``nn``), run at each batch size of ``--batches``.  A step is: clear
the gradients, run the layer on a fixed float32 input that requires its gradient, ``backward`` of
a fixed random gradient of the output.  Last comes a training step of a LeNet-5 on 28 x 28 images
at batch 64 (``lenet5``: forward, cross-entropy, backward, an SGD step; its subsampling layers are
LeNet-5's own trainable ones, 2 x 2 stride-2 depthwise convolutions, since pooling layers are not
on this branch).  The two libraries take turns (``time_rounds``: ``--repeat`` rounds, each timing
a loop of about ``--sample-ms`` on each library, the order alternating), so a change of machine
load hits both; each library's median over the rounds is shown, and the spread of the per-round
ratio (min-max).  Before timing, the outputs and all gradients are compared with the layers'
weights copied from PyTorch's (to 1e-4 of each array's largest element: float32 rounding): a case
that disagrees is marked ``DIFFERS``.

Targets (printed as met or not, never asserted): the geometric mean of the layers' ratios <= 1.0,
no layer above 2x, the LeNet-5 step <= 0.8x.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import NamedTuple

import host
import numpy as np
from bench_ops import geometric_mean

import minitensor as mt

try:
    import torch
except ImportError:
    torch = None

TARGET_GMEAN, TARGET_MAX, TARGET_LENET = 1.0, 2.0, 0.8


class Case(NamedTuple):
    name: str
    family: str
    image: tuple  # the input's shape without the batch dim
    layer: Callable  # (nn) -> the module, made the same way from either library's nn


# The table.  Convolutions: the common kernel sizes, a strided one, a 1x1 projection, a depthwise one.
CASES = [
    Case("conv2d 3x3, 32->32, 32x32", "conv", (32, 32, 32), lambda nn: nn.Conv2d(32, 32, 3, padding=1)),
    Case("conv2d 5x5, 16->32, 32x32", "conv", (16, 32, 32), lambda nn: nn.Conv2d(16, 32, 5, padding=2)),
    Case("conv2d 1x1, 64->64, 16x16", "conv", (64, 16, 16), lambda nn: nn.Conv2d(64, 64, 1)),
    Case("conv2d 3x3 stride 2, 32->64", "conv", (32, 32, 32), lambda nn: nn.Conv2d(32, 64, 3, stride=2, padding=1)),
    Case("depthwise 3x3, 64, 32x32", "conv", (64, 32, 32), lambda nn: nn.Conv2d(64, 64, 3, padding=1, groups=64)),
]


def lenet5(nn):
    """LeNet-5 (LeCun et al. 1998) for 1 x 28 x 28 images, from a library's ``nn``: the first
    convolution padded to keep 28 x 28, each subsampling layer a trainable 2 x 2 stride-2 depthwise
    convolution (LeNet-5's own: a weight and a bias per channel, here one per pixel of the window)."""

    class LeNet5(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.s2 = nn.Conv2d(1, 6, 5, padding=2), nn.Conv2d(6, 6, 2, stride=2, groups=6)
            self.c3, self.s4 = nn.Conv2d(6, 16, 5), nn.Conv2d(16, 16, 2, stride=2, groups=16)
            self.f5, self.f6, self.out = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10)
            self.relu = nn.ReLU()

        def forward(self, x):
            x = self.s2(self.relu(self.c1(x)))
            x = self.s4(self.relu(self.c3(x)))
            x = self.relu(self.f5(x.reshape(x.shape[0], -1)))
            return self.out(self.relu(self.f6(x)))

    return LeNet5()


def make_step(lib, module, x: np.ndarray, grad: np.ndarray):
    """(step, output and gradients for the comparison): ``step()`` clears the gradients, runs the
    layer and its backward."""
    leaf = lib.tensor(x, requires_grad=True)
    g = lib.tensor(grad)
    params = list(module.parameters())

    def step():
        leaf.grad = None
        for p in params:
            p.grad = None
        out = module(leaf)
        out.backward(g)
        return out

    return step, [leaf, *params]


def make_training_step(lib, model, x: np.ndarray, labels: np.ndarray):
    """(step, parameters): ``step()`` is one SGD training step of ``model`` on the batch; it returns
    the loss."""
    images, targets = lib.tensor(x), lib.tensor(labels)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(images), targets)
        loss.backward()
        optimizer.step()
        return loss

    return step, list(model.parameters())


def same_results(mt_step, mt_leaves, torch_step, torch_leaves) -> bool:
    """The same output and gradients, to float32 rounding at the scale of each array (a weight's
    gradient sums over the whole batch: its elements near 0 carry the large elements' rounding)."""
    pairs = [(mt_step().numpy(), torch_step().detach().numpy())]
    pairs += [(a.grad.numpy(), b.grad.numpy()) for a, b in zip(mt_leaves, torch_leaves)]
    return all(a.shape == b.shape and np.abs(a - b).max() <= 1e-4 * max(1.0, np.abs(b).max()) for a, b in pairs)


def time_rounds(steps: dict, repeat: int, sample_ms: float) -> dict:
    """name -> per-round seconds per step, the steps taking turns (alternating order)."""
    loops = {}
    for name, step in steps.items():
        for _ in range(2):  # warm-up (compiles, fills caches)
            step()
        start = time.perf_counter()
        step()
        loops[name] = max(1, int(sample_ms / 1000 / max(time.perf_counter() - start, 1e-7)))
    samples = {name: [] for name in steps}
    names = list(steps)
    for r in range(repeat):
        for name in names if r % 2 == 0 else names[::-1]:
            start = time.perf_counter()
            for _ in range(loops[name]):
                steps[name]()
            samples[name].append((time.perf_counter() - start) / loops[name])
    return samples


def bench(case: Case, batch: int, repeat: int, sample_ms: float) -> dict:
    """One row: medians, the per-round ratios and whether the results agree."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, *case.image)).astype(np.float32)
    torch.manual_seed(0)
    theirs = case.layer(torch.nn)
    ours = case.layer(mt.nn)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    with torch.no_grad():
        out_shape = tuple(theirs(torch.tensor(x)).shape)
    grad = rng.standard_normal(out_shape).astype(np.float32)
    mt_step, mt_leaves = make_step(mt, ours, x, grad)
    torch_step, torch_leaves = make_step(torch, theirs, x, grad)
    agree = same_results(mt_step, mt_leaves, torch_step, torch_leaves)
    samples = time_rounds({"mt": mt_step, "torch": torch_step}, repeat, sample_ms)
    ratios = [a / b for a, b in zip(samples["mt"], samples["torch"])]
    return {
        "case": case,
        "batch": batch,
        "mt": statistics.median(samples["mt"]),
        "torch": statistics.median(samples["torch"]),
        "spread": (min(ratios), max(ratios)),
        "agree": agree,
    }


def bench_lenet(batch: int, repeat: int, sample_ms: float) -> dict:
    """The LeNet-5 training step's row (its results compared after one step from the same weights)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 10, batch)
    torch.manual_seed(0)
    theirs, ours = lenet5(torch.nn), lenet5(mt.nn)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    mt_step, mt_params = make_training_step(mt, ours, x, labels)
    torch_step, torch_params = make_training_step(torch, theirs, x, labels)
    first = (float(mt_step().item()), float(torch_step().item()))
    agree = abs(first[0] - first[1]) <= 1e-5 * max(1.0, abs(first[1])) and all(
        np.abs(a.detach().numpy() - b.detach().numpy()).max() <= 1e-5 for a, b in zip(mt_params, torch_params)
    )
    samples = time_rounds({"mt": mt_step, "torch": torch_step}, repeat, sample_ms)
    ratios = [a / b for a, b in zip(samples["mt"], samples["torch"])]
    return {
        "case": Case("LeNet-5 training step, 28x28", "train", (1, 28, 28), lenet5),
        "batch": batch,
        "mt": statistics.median(samples["mt"]),
        "torch": statistics.median(samples["torch"]),
        "spread": (min(ratios), max(ratios)),
        "agree": agree,
    }


def report(rows: list) -> str:
    """The Markdown table, the geometric mean and the target lines."""
    lines = [
        "| case | batch | minitensor µs | PyTorch µs | ratio | ratio per round (min-max) |",
        "|---|---:|---:|---:|---:|---|",
    ]
    ratios = []
    for row in rows:
        ratio = row["mt"] / row["torch"]
        ratios.append(ratio)
        flag = "" if row["agree"] else " DIFFERS"
        low, high = row["spread"]
        lines.append(
            f"| {row['case'].name} | {row['batch']} | {row['mt'] * 1e6:.0f} | {row['torch'] * 1e6:.0f} | "
            f"{ratio:.2f}{flag} | {low:.2f}-{high:.2f} |"
        )
    layers = [(r, t) for r, t in zip(rows, ratios) if r["case"].family != "train"]
    lines.append("")
    if layers:
        gmean = geometric_mean([t for _, t in layers])
        worst = max((t, f"{r['case'].name} at batch {r['batch']}") for r, t in layers)
        above = [f"{r['case'].name} at batch {r['batch']}: {t:.2f}" for r, t in layers if t > TARGET_MAX]
        lines += [
            f"geometric mean {gmean:.2f} over {len(layers)} cases; slowest: {worst[1]} {worst[0]:.2f}x",
            f"- target: geometric mean <= {TARGET_GMEAN}: {'met' if gmean <= TARGET_GMEAN else 'NOT met'}",
            f"- target: no case above {TARGET_MAX}x: " + ("met" if not above else "NOT met (" + "; ".join(above) + ")"),
        ]
    for r, t in zip(rows, ratios):
        if r["case"].family == "train":
            verdict = "met" if t <= TARGET_LENET else "NOT met"
            lines.append(f"- target: LeNet-5 step <= {TARGET_LENET}x: {verdict} ({t:.2f})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 64], help="batch sizes")
    parser.add_argument("--repeat", type=int, default=7, help="rounds of samples per case (median shown)")
    parser.add_argument("--sample-ms", type=float, default=30.0, help="length of one timed sample (ms)")
    parser.add_argument("--only", nargs="*", default=[], help="only cases whose name contains one of these")
    parser.add_argument("--threads", type=int, default=2, help="threads of both libraries (default 2)")
    parser.add_argument("--no-lenet", action="store_true", help="skip the LeNet-5 training step")
    opts = parser.parse_args()
    if torch is None:
        parser.error("the table compares with PyTorch, which is not installed")
    if opts.repeat < 1 or opts.threads < 1 or min(opts.batches) < 1:
        parser.error("--repeat, --threads and --batches must be at least 1")
    torch.set_num_threads(opts.threads)
    mt.set_num_threads(opts.threads)
    print(host.machine(torch, opts.threads), flush=True)
    print(f"at the start: {host.state()}", flush=True)
    cases = [c for c in CASES if not opts.only or any(s in c.name for s in opts.only)]
    rows = []
    for case in cases:
        for batch in opts.batches:
            rows.append(bench(case, batch, opts.repeat, opts.sample_ms))
            print(f"  {case.name} at batch {batch}: {rows[-1]['mt'] / rows[-1]['torch']:.2f}", flush=True)
    if not opts.no_lenet:
        rows.append(bench_lenet(64, opts.repeat, opts.sample_ms))
        print(f"  LeNet-5 training step at batch 64: {rows[-1]['mt'] / rows[-1]['torch']:.2f}", flush=True)
    print()
    print(report(rows), flush=True)
    print(f"\nat the end: {host.state()}")


if __name__ == "__main__":
    main()

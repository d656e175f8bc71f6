"""Vision layers and two training steps, minitensor vs PyTorch in the same run (float32, 2 threads).

    python benchmarks/bench_vision.py                    # every case at batch 1, 8 and 64, the steps, memory
    python benchmarks/bench_vision.py --only depthwise   # cases whose name contains "depthwise"
    python benchmarks/bench_vision.py --batches 1 64 --repeat 9 --no-train --no-memory

``CASES`` is the per-op table: one row per layer setting (name, family, input shape of one image,
the layer made from a library's ``nn``): convolutions (3x3, 5x5, 1x1, strided, depthwise), max and
average pooling (fixed and adaptive), batch norm in training and eval mode, interpolation and
padding, each run at every batch size of ``--batches``.  A step is: clear the gradients, run the
layer on a fixed float32 input that requires its gradient, ``backward`` of a fixed random gradient
of the output.  Then ``TRAININGS``: a training step (forward, cross-entropy, backward, an SGD step
with momentum) of a LeNet-5 on 28 x 28 images at batch 64 and of a small CIFAR ResNet (3 stages of
two BN-ReLU 3x3 basic blocks, 16/32/64 channels) on 32 x 32 images at batch 32, the models in
``vision_models.py``.  The two libraries take turns (``time_rounds``: ``--repeat`` rounds, each
timing a loop of about ``--sample-ms`` on each library, the order alternating), so a change of
machine load hits both; each turn starts once the other library's threads are quiet and after one
untimed step (``host.settle``: OpenBLAS's workers poll for ~0.1 s after a product, and PyTorch's
step timed in that time ran 2-3x its own); each library's median over the rounds is shown, and the spread of the
per-round ratio (min-max).  Before timing, the outputs and all gradients (a training step: the loss
and the parameters after one step) are compared with the weights copied from PyTorch's (to 1e-4 of
each array's largest element: float32 rounding): a case that disagrees is marked ``DIFFERS``.

Memory (``peak_memory``): the ResNet step's peak memory, each library in a fresh Python process of
its own (``--memory-child``), ``--repeat`` processes each, alternating.  A process builds the model,
runs two steps (kernels loaded, optimizer state made), then measures the resident memory (Linux
``VmRSS``), resets the process's high-water mark (``/proc/self/clear_refs``) and runs three steps:
the step's peak is the high-water mark (``VmHWM``) minus the memory before, i.e. the activations,
gradients and temporaries a step holds at once beyond the model, its optimizer state and the
batch.  So that the resident memory follows what is allocated, both processes run with glibc's
malloc returning freed memory at once (``MALLOC_MMAP_THRESHOLD_=65536``, ``MALLOC_TRIM_THRESHOLD_=0``,
and ``MINITENSOR_MALLOC=default``: minitensor otherwise keeps freed memory for reuse,
``kernels/runtime/malloc.py``); allocations in both libraries' caches and pools count as used.

Targets (printed as met or not, never asserted): the geometric mean of the layers' ratios <= 1.0,
no layer above 2x, the LeNet-5 step <= 0.8x, the ResNet step <= 1.2x, its peak memory <= 2x.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import NamedTuple

import host
import numpy as np
from bench_ops import geometric_mean
from vision_models import cifar_resnet, lenet5

import minitensor as mt

try:
    import torch
except ImportError:
    torch = None

TARGET_GMEAN, TARGET_MAX, TARGET_MEMORY = 1.0, 2.0, 2.0


class Case(NamedTuple):
    name: str
    family: str
    image: tuple  # the input's shape without the batch dim
    layer: Callable  # (nn) -> the module, made the same way from either library's nn


IMAGES = (32, 32, 32)  # (C, H, W) of the pooling, normalisation, resampling and padding cases

# The table.  Convolutions: the common kernel sizes, a strided one, a 1x1 projection, a depthwise one.
CASES = [
    Case("conv2d 3x3, 32->32, 32x32", "conv", (32, 32, 32), lambda nn: nn.Conv2d(32, 32, 3, padding=1)),
    Case("conv2d 5x5, 16->32, 32x32", "conv", (16, 32, 32), lambda nn: nn.Conv2d(16, 32, 5, padding=2)),
    Case("conv2d 1x1, 64->64, 16x16", "conv", (64, 16, 16), lambda nn: nn.Conv2d(64, 64, 1)),
    Case("conv2d 3x3 stride 2, 32->64", "conv", (32, 32, 32), lambda nn: nn.Conv2d(32, 64, 3, stride=2, padding=1)),
    Case("depthwise 3x3, 64, 32x32", "conv", (64, 32, 32), lambda nn: nn.Conv2d(64, 64, 3, padding=1, groups=64)),
    Case("max_pool2d 2x2, 32x32", "pooling", IMAGES, lambda nn: nn.MaxPool2d(2)),
    Case("max_pool2d 3x3 s2 p1, 32x32", "pooling", IMAGES, lambda nn: nn.MaxPool2d(3, 2, 1)),
    Case("avg_pool2d 2x2, 32x32", "pooling", IMAGES, lambda nn: nn.AvgPool2d(2)),
    Case("avg_pool2d 3x3 s1 p1, 32x32", "pooling", IMAGES, lambda nn: nn.AvgPool2d(3, 1, 1)),
    Case("adaptive_avg_pool2d 1, 32x32", "pooling", IMAGES, lambda nn: nn.AdaptiveAvgPool2d(1)),
    Case("adaptive_max_pool2d 7, 32x32", "pooling", IMAGES, lambda nn: nn.AdaptiveMaxPool2d(7)),
    Case("batch_norm2d train, 32x32", "normalisation", IMAGES, lambda nn: nn.BatchNorm2d(32)),
    Case("batch_norm2d eval, 32x32", "normalisation", IMAGES, lambda nn: nn.BatchNorm2d(32).eval()),
    Case("batch_norm1d train, 64x256", "normalisation", (64, 256), lambda nn: nn.BatchNorm1d(64)),
    Case("interpolate nearest x2, 32x32", "resampling", IMAGES, lambda nn: nn.Upsample(scale_factor=2)),
    Case("interpolate bilinear x2, 32x32", "resampling", IMAGES,
         lambda nn: nn.Upsample(scale_factor=2, mode="bilinear")),
    Case("pad reflect 2, 32x32", "padding", IMAGES, lambda nn: nn.ReflectionPad2d(2)),
    Case("pad replicate 1, 32x32", "padding", IMAGES, lambda nn: nn.ReplicationPad2d(1)),
    Case("pad circular 1, 32x32", "padding", IMAGES, lambda nn: nn.CircularPad2d(1)),
    Case("pad constant 1, 32x32", "padding", IMAGES, lambda nn: nn.ZeroPad2d(1)),
]  # fmt: skip


class Training(NamedTuple):
    name: str
    model: Callable  # (nn) -> the model (vision_models.py)
    image: tuple
    batch: int
    target: float  # the ratio to PyTorch the issue asks for


TRAININGS = [
    Training("LeNet-5 training step, 28x28", lenet5, (1, 28, 28), 64, 0.8),
    Training("CIFAR ResNet training step, 32x32", cifar_resnet, (3, 32, 32), 32, 1.2),
]
RESNET = TRAININGS[1]  # (the step whose peak memory is measured)


def copied_model(training: Training) -> tuple:
    """(PyTorch's model, minitensor's with PyTorch's initial weights and buffers)."""
    torch.manual_seed(0)
    theirs, ours = training.model(torch.nn), training.model(mt.nn)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return theirs, ours


def batch(training: Training, seed: int = 0) -> tuple:
    """(float32 images (batch, *image), int64 labels (batch,)) of a training step."""
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((training.batch, *training.image)).astype(np.float32)
    return images, rng.integers(0, 10, training.batch)


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


def close(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal to float32 rounding at the scale of the arrays (a weight's gradient sums over the whole
    batch: its elements near 0 carry the large elements' rounding)."""
    return a.shape == b.shape and np.abs(a - b).max() <= 1e-4 * max(1.0, np.abs(b).max())


def same_results(mt_step, mt_leaves, torch_step, torch_leaves) -> bool:
    """The same output and gradients."""
    pairs = [(mt_step().numpy(), torch_step().detach().numpy())]
    pairs += [(a.grad.numpy(), b.grad.numpy()) for a, b in zip(mt_leaves, torch_leaves)]
    return all(close(a, b) for a, b in pairs)


def same_training_step(mt_step, mt_params, torch_step, torch_params) -> bool:
    """The same loss, and the same parameters after the step."""
    pairs = [(np.array(mt_step().item()), np.array(torch_step().item()))]
    pairs += [(a.detach().numpy(), b.detach().numpy()) for a, b in zip(mt_params, torch_params)]
    return all(close(a, b) for a, b in pairs)


def time_rounds(steps: dict, repeat: int, sample_ms: float) -> dict:
    """name -> per-round seconds per step, the steps taking turns (alternating order), each turn from a
    machine the other left quiet (``host.settle``)."""
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
            host.settle(steps[name])
            start = time.perf_counter()
            for _ in range(loops[name]):
                steps[name]()
            samples[name].append((time.perf_counter() - start) / loops[name])
    return samples


def timed_row(name: str, family: str, n: int, mt_step, torch_step, agree: bool, repeat: int, sample_ms: float) -> dict:
    """One row: medians, the per-round ratios and whether the results agree."""
    samples = time_rounds({"mt": mt_step, "torch": torch_step}, repeat, sample_ms)
    ratios = [a / b for a, b in zip(samples["mt"], samples["torch"])]
    return {
        "name": name,
        "family": family,
        "batch": n,
        "mt": statistics.median(samples["mt"]),
        "torch": statistics.median(samples["torch"]),
        "spread": (min(ratios), max(ratios)),
        "agree": agree,
    }


def bench(case: Case, n: int, repeat: int, sample_ms: float) -> dict:
    """A layer's row at batch n."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, *case.image)).astype(np.float32)
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
    return timed_row(case.name, case.family, n, mt_step, torch_step, agree, repeat, sample_ms)


def bench_training(training: Training, repeat: int, sample_ms: float) -> dict:
    """A training step's row (its results compared after one step from the same weights)."""
    x, labels = batch(training)
    theirs, ours = copied_model(training)
    mt_step, mt_params = make_training_step(mt, ours, x, labels)
    torch_step, torch_params = make_training_step(torch, theirs, x, labels)
    agree = same_training_step(mt_step, mt_params, torch_step, torch_params)
    return timed_row(training.name, "train", training.batch, mt_step, torch_step, agree, repeat, sample_ms)


# ------------------------------------------------------------------ peak memory
def _status(field: str) -> int:
    """A field of /proc/self/status (``VmRSS``, ``VmHWM``), in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def step_peak_bytes(step: Callable, steps: int = 3) -> int:
    """The resident memory's high-water mark over ``steps`` calls of ``step()`` above the resident
    memory before them (Linux: the mark is reset through /proc/self/clear_refs)."""
    before = _status("VmRSS")
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    for _ in range(steps):
        step()
    return _status("VmHWM") - before


def memory_child(library: str) -> int:
    """In a fresh process: the ResNet step's peak bytes in one library (see the module docstring)."""
    lib = mt if library == "minitensor" else torch
    if lib is torch:
        torch.manual_seed(0)
    x, labels = batch(RESNET)
    step, _ = make_training_step(lib, RESNET.model(lib.nn), x, labels)
    for _ in range(2):
        step()
    return step_peak_bytes(step)


def peak_memory(repeat: int, threads: int) -> dict:
    """library -> the ResNet step's peak bytes in each of ``repeat`` fresh processes, alternating."""
    env = dict(os.environ, MINITENSOR_MALLOC="default", MALLOC_MMAP_THRESHOLD_="65536", MALLOC_TRIM_THRESHOLD_="0")
    peaks = {"minitensor": [], "torch": []}
    for r in range(repeat):
        for library in list(peaks) if r % 2 == 0 else list(peaks)[::-1]:
            command = [sys.executable, __file__, "--memory-child", library, "--threads", str(threads)]
            result = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            peaks[library].append(json.loads(result.stdout.splitlines()[-1])["peak"])
    return peaks


# ------------------------------------------------------------------ the report
def report(rows: list, memory: dict | None = None) -> str:
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
            f"| {row['name']} | {row['batch']} | {row['mt'] * 1e6:.0f} | {row['torch'] * 1e6:.0f} | "
            f"{ratio:.2f}{flag} | {low:.2f}-{high:.2f} |"
        )
    layers = [(r, t) for r, t in zip(rows, ratios) if r["family"] != "train"]
    lines.append("")
    if layers:
        gmean = geometric_mean([t for _, t in layers])
        worst = max((t, f"{r['name']} at batch {r['batch']}") for r, t in layers)
        above = [f"{r['name']} at batch {r['batch']}: {t:.2f}" for r, t in layers if t > TARGET_MAX]
        lines += [
            f"geometric mean {gmean:.2f} over {len(layers)} cases; slowest: {worst[1]} {worst[0]:.2f}x",
            f"- target: geometric mean <= {TARGET_GMEAN}: {'met' if gmean <= TARGET_GMEAN else 'NOT met'}",
            f"- target: no case above {TARGET_MAX}x: " + ("met" if not above else "NOT met (" + "; ".join(above) + ")"),
        ]
    targets = {t.name: t.target for t in TRAININGS}
    for r, t in zip(rows, ratios):
        if r["family"] == "train":
            goal = targets[r["name"]]
            lines.append(f"- target: {r['name']} <= {goal}x: {'met' if t <= goal else 'NOT met'} ({t:.2f})")
    if memory:
        ours, theirs = statistics.median(memory["minitensor"]), statistics.median(memory["torch"])
        ratios = sorted(a / b for a, b in zip(memory["minitensor"], memory["torch"]))
        verdict = "met" if ours <= TARGET_MEMORY * theirs else "NOT met"
        lines.append(
            f"- target: {RESNET.name} peak memory <= {TARGET_MEMORY}x: {verdict} (minitensor {ours / 2**20:.1f} MB, "
            f"PyTorch {theirs / 2**20:.1f} MB, {ours / theirs:.2f}x; per process pair {ratios[0]:.2f}-{ratios[-1]:.2f})"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 64], help="batch sizes")
    parser.add_argument("--repeat", type=int, default=7, help="rounds of samples per case (median shown)")
    parser.add_argument("--sample-ms", type=float, default=30.0, help="length of one timed sample (ms)")
    parser.add_argument("--only", nargs="*", default=[], help="only cases whose name contains one of these")
    parser.add_argument("--threads", type=int, default=2, help="threads of both libraries (default 2)")
    parser.add_argument("--no-train", action="store_true", help="skip the training steps")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak memory of the ResNet step")
    parser.add_argument("--memory-child", choices=["minitensor", "torch"], help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if torch is None:
        parser.error("the table compares with PyTorch, which is not installed")
    if opts.repeat < 1 or opts.threads < 1 or min(opts.batches) < 1:
        parser.error("--repeat, --threads and --batches must be at least 1")
    torch.set_num_threads(opts.threads)
    mt.set_num_threads(opts.threads)
    if opts.memory_child:
        print(json.dumps({"peak": memory_child(opts.memory_child)}))
        return
    print(host.machine(torch, opts.threads), flush=True)
    print(f"at the start: {host.state()}", flush=True)
    cases = [c for c in CASES if not opts.only or any(s in c.name for s in opts.only)]
    rows = []
    for case in cases:
        for n in opts.batches:
            rows.append(bench(case, n, opts.repeat, opts.sample_ms))
            print(f"  {case.name} at batch {n}: {rows[-1]['mt'] / rows[-1]['torch']:.2f}", flush=True)
    for training in [] if opts.no_train else TRAININGS:
        rows.append(bench_training(training, opts.repeat, opts.sample_ms))
        print(f"  {training.name} at batch {training.batch}: {rows[-1]['mt'] / rows[-1]['torch']:.2f}", flush=True)
    memory = None if opts.no_memory else peak_memory(opts.repeat, opts.threads)
    print()
    print(report(rows, memory), flush=True)
    print(f"\nat the end: {host.state()}")


if __name__ == "__main__":
    main()

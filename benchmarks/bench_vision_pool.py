"""Pooling, normalisation, interpolation and padding, forward + backward, minitensor vs PyTorch in
the same run (float32, each library on 2 threads), in bench_ops.py's table-of-cases style.

    python benchmarks/bench_vision_pool.py                   # every case, 3 runs of 7 rounds
    python benchmarks/bench_vision_pool.py --only pool       # cases whose name contains "pool"
    python benchmarks/bench_vision_pool.py --runs 1          # one run (no spread)

Each case runs one op of ``nn.functional`` on a float32 image batch (8, 32, 32, 32), 2^18 elements,
(BatchNorm1d: (256, 1024)) and is timed as one step: clear the gradients, run the op, ``backward`` of a
fixed random gradient.  The two libraries take turns (``bench_ops.time_pair``), and the outputs
and gradients are compared before timing (a case that disagrees is marked ``DIFFERS``).  With
``--runs`` > 1 the table shows, per case, the median ratio of the runs and their range (the machine
is shared: one run's ratio moves by 10-20 %).  Targets: geometric mean <= 1.0 and no case above 2x
(printed as met or not, never asserted).  PyTorch's OpenMP threads wait by spinning, so on a busy
machine (see the load average printed at the start and end) its times grow several-fold and the
ratios flatter minitensor: compare runs on a quiet machine, or with ``--threads 1`` (one thread each).
"""

from __future__ import annotations

import argparse
import statistics

import host
import numpy as np
from bench_ops import geometric_mean, make_step, same_results, time_pair
from op_cases import Case

import minitensor as mt
import minitensor.nn.functional as mF

try:
    import torch
    import torch.nn.functional as tF
except ImportError:
    torch = tF = None

F32 = np.float32
IMAGES = (8, 32, 32, 32)  # (N, C, H, W): 2^18 float32 elements


def _images(rng, *_):
    return (rng.standard_normal(IMAGES, dtype=F32),)


def _batch_norm_inputs(rng, *_):
    c = IMAGES[1]
    x = rng.standard_normal(IMAGES, dtype=F32) * 2 + 1
    return x, rng.standard_normal(c, dtype=F32), rng.standard_normal(c, dtype=F32), np.zeros(c, F32), np.ones(c, F32)


def _features(rng, *_):
    return (
        rng.standard_normal((256, 1024), dtype=F32),
        rng.standard_normal(1024, dtype=F32),
        rng.standard_normal(1024, dtype=F32),
        np.zeros(1024, F32),
        np.ones(1024, F32),
    )


CASES = [
    Case("max_pool2d 2x2", "pooling", _images, lambda lib, F, x: F.max_pool2d(x, 2)),
    Case("max_pool2d 3x3 s2 p1", "pooling", _images, lambda lib, F, x: F.max_pool2d(x, 3, 2, 1)),
    Case("avg_pool2d 2x2", "pooling", _images, lambda lib, F, x: F.avg_pool2d(x, 2)),
    Case("avg_pool2d 3x3 s1 p1", "pooling", _images, lambda lib, F, x: F.avg_pool2d(x, 3, 1, 1)),
    Case("adaptive_avg_pool2d 1", "pooling", _images, lambda lib, F, x: F.adaptive_avg_pool2d(x, 1)),
    Case("adaptive_max_pool2d 7", "pooling", _images, lambda lib, F, x: F.adaptive_max_pool2d(x, 7)),
    Case("batch_norm2d train", "normalisation", _batch_norm_inputs,
         lambda lib, F, x, w, b, m, v: F.batch_norm(x, m, v, w, b, training=True), constants=(3, 4)),
    Case("batch_norm2d eval", "normalisation", _batch_norm_inputs,
         lambda lib, F, x, w, b, m, v: F.batch_norm(x, m, v, w, b, training=False), constants=(3, 4)),
    Case("batch_norm1d train", "normalisation", _features,
         lambda lib, F, x, w, b, m, v: F.batch_norm(x, m, v, w, b, training=True), constants=(3, 4)),
    Case("interpolate nearest x2", "resampling", _images, lambda lib, F, x: F.interpolate(x, scale_factor=2)),
    Case("interpolate bilinear x2", "resampling", _images,
         lambda lib, F, x: F.interpolate(x, scale_factor=2, mode="bilinear")),
    Case("pad reflect 2", "padding", _images, lambda lib, F, x: F.pad(x, (2, 2, 2, 2), mode="reflect")),
    Case("pad replicate 1", "padding", _images, lambda lib, F, x: F.pad(x, (1, 1, 1, 1), mode="replicate")),
    Case("pad circular 1", "padding", _images, lambda lib, F, x: F.pad(x, (1, 1, 1, 1), mode="circular")),
    Case("pad constant 1", "padding", _images, lambda lib, F, x: F.pad(x, (1, 1, 1, 1))),
]  # fmt: skip


def bench(cases: list, repeat: int, sample_ms: float) -> dict:
    """case name -> minitensor / PyTorch ratio of the median step times (and whether they agree)."""
    ratios = {}
    for case in cases:
        rng = np.random.default_rng(0)
        arrays = case.inputs(rng)
        out_shape = case.run(mt, mF, *[mt.tensor(a) for a in arrays]).shape
        grad = rng.standard_normal(out_shape).astype(F32)
        mt_step, mt_leaves = make_step(case, mt, mF, arrays, grad)
        torch_step, torch_leaves = make_step(case, torch, tF, arrays, grad)
        agree = same_results(case, mt_step, mt_leaves, torch_step, torch_leaves)
        times = time_pair({"mt": mt_step, "torch": torch_step}, repeat, sample_ms)
        ratios[case.name] = (times["mt"], times["torch"], agree)
    return ratios


def report(cases: list, runs: list) -> str:
    """The Markdown table: per case the median times and ratio over the runs, and the ratios' range."""
    lines = [
        f"### {IMAGES} float32 images, forward + backward, {len(runs)} run(s)",
        "",
        "| op | family | minitensor µs | PyTorch µs | ratio (median) | ratios (min-max) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    medians = []
    for case in cases:
        values = [run[case.name] for run in runs]
        ratios = [m / t for m, t, _ in values]
        ratio = statistics.median(ratios)
        medians.append(ratio)
        t_mt, t_torch = statistics.median(v[0] for v in values), statistics.median(v[1] for v in values)
        flag = "" if all(v[2] for v in values) else " DIFFERS"
        lines.append(f"| {case.name} | {case.family} | {t_mt * 1e6:.0f} | {t_torch * 1e6:.0f} | {ratio:.2f}{flag} | "
                     f"{min(ratios):.2f}-{max(ratios):.2f} |")  # fmt: skip
    gmean = geometric_mean(medians)
    above = [f"{c.name} {r:.2f}" for c, r in zip(cases, medians) if r > 2.0]
    lines += [
        "",
        f"geometric mean of the median ratios {gmean:.2f} over {len(cases)} cases",
        f"- target: geometric mean <= 1.0: {'met' if gmean <= 1.0 else 'NOT met'}",
        f"- target: no case above 2x: {'met' if not above else 'NOT met (' + ', '.join(above) + ')'}",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="rounds of samples per case (median taken)")
    parser.add_argument("--sample-ms", type=float, default=20.0, help="length of one timed sample (ms)")
    parser.add_argument("--runs", type=int, default=3, help="whole runs over the cases (median and range shown)")
    parser.add_argument("--only", nargs="*", default=[], help="only cases whose name contains one of these")
    parser.add_argument("--threads", type=int, default=2, help="threads of each library (default 2)")
    opts = parser.parse_args()
    if torch is None:
        parser.error("this benchmark compares with PyTorch, which is not installed")
    if min(opts.repeat, opts.runs, opts.threads) < 1:
        parser.error("--repeat, --runs and --threads must be at least 1")
    torch.set_num_threads(opts.threads)
    mt.set_num_threads(opts.threads)
    print(host.machine(torch, opts.threads), flush=True)
    print(f"at the start: {host.state()}", flush=True)
    cases = [c for c in CASES if not opts.only or any(s in c.name for s in opts.only)]
    runs = [bench(cases, opts.repeat, opts.sample_ms) for _ in range(opts.runs)]
    print(report(cases, runs), flush=True)
    print(f"at the end: {host.state()}")


if __name__ == "__main__":
    main()

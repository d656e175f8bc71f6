"""Time one TransformerEncoderLayer step: minitensor (jit and NumPy paths) vs PyTorch.

    python benchmarks/bench_encoder.py            # all four configs
    python benchmarks/bench_encoder.py --quick    # tiny and small only

Setting: float32, batch_first=True, post-LN, ReLU, dropout 0, 2 threads for
everyone (numba, BLAS, torch).  "forward" is eval mode under no_grad (PyTorch
on its default inference path); "fwd+bwd" is train mode, forward then backward
of a fixed random upstream gradient.  Each layer is put in its mode once,
before timing.

Measurements take turns: after a warm-up, the steps of a config (minitensor
jit, minitensor NumPy path, PyTorch; forward and fwd+bwd) run in turns of
~50 ms each, round after round, so a change of machine load hits all rows
alike; each time is the median over all calls.  The ratio to PyTorch compares
times from the same run.  The targets are printed as met or not, never
asserted.  Load average and versions are printed with the table.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "2")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import host  # noqa: E402
import numpy as np  # noqa: E402

import minitensor as mt  # noqa: E402
import minitensor.nn as nn  # noqa: E402

try:
    import torch
except ImportError:  # the benchmark still runs, without the PyTorch rows
    torch = None

# name: (N, S, E, H, FF)
CONFIGS = {
    "tiny": (2, 12, 64, 8, 128),
    "small": (8, 64, 128, 4, 512),
    "medium": (16, 128, 256, 8, 1024),
    "large": (8, 512, 512, 8, 2048),
}
# name: (max ratio fwd+bwd, max ratio forward) — minitensor time / PyTorch time
TARGETS = {"tiny": (0.40, 0.55), "small": (0.70, 1.0), "medium": (0.95, 1.05), "large": (1.0, 1.0)}
JIT, NUMPY = "minitensor (jit)", "minitensor (NumPy path)"


def layer_flops(n: int, s: int, e: int, ff: int) -> float:
    """Multiply-adds x2 of one forward pass (projections, attention GEMMs, FFN)."""
    tokens = n * s
    return 2.0 * (tokens * e * 3 * e + 2 * n * s * s * e + tokens * e * e + 2 * tokens * e * ff)


def minitensor_steps(cfg: tuple, state: dict, x: np.ndarray, dy: np.ndarray, jit: bool) -> tuple:
    """(forward, fwd+bwd) closures for minitensor layers (one in eval, one in train mode) with the given weights."""
    n, s, e, h, ff = cfg
    layers = []
    for training in (False, True):
        layer = nn.TransformerEncoderLayer(e, h, ff, dropout=0.0, batch_first=True)
        layer.load_state_dict(state)
        layers.append(layer.train(training))
    eval_layer, train_layer = layers
    src, grad = mt.from_numpy(x), mt.from_numpy(dy)

    def forward():
        mt.set_jit_enabled(jit)
        with mt.no_grad():
            eval_layer(src)

    def train_step():
        mt.set_jit_enabled(jit)
        inp = mt.from_numpy(x).requires_grad_()
        train_layer.zero_grad()
        train_layer(inp).backward(grad)

    return forward, train_step


def torch_steps(cfg: tuple, x: np.ndarray, dy: np.ndarray) -> tuple:
    """(forward, fwd+bwd) closures and the state dict of PyTorch layers (eval and train)."""
    n, s, e, h, ff = cfg
    train_layer = torch.nn.TransformerEncoderLayer(e, h, ff, dropout=0.0, batch_first=True).train()
    eval_layer = torch.nn.TransformerEncoderLayer(e, h, ff, dropout=0.0, batch_first=True).eval()
    eval_layer.load_state_dict(train_layer.state_dict())
    src, grad = torch.from_numpy(x), torch.from_numpy(dy)

    def forward():
        with torch.no_grad():
            eval_layer(src)

    def train_step():
        inp = src.clone().requires_grad_()
        train_layer.zero_grad(set_to_none=True)
        train_layer(inp).backward(grad)

    state = {k: v.detach().numpy().copy() for k, v in train_layer.state_dict().items()}
    return forward, train_step, state


def time_in_turns(steps: dict, min_time: float, turn_time: float = 0.05, warmup_time: float = 0.5) -> dict:
    """Median wall time (ms) of one call of each step.

    Warm-up: each step runs for ``warmup_time`` seconds (at least 3 calls;
    PyTorch's first hundred steps are slow).  Then the steps take turns: a
    turn starts once the other step's thread pools are quiet (``host.settle``)
    and calls one step for ``turn_time`` seconds (at least three times); it
    keeps all calls but the first two: at the large config the first calls
    pay for faulting in again the hundreds of MB the other step gave back to
    the OS (measured: a large fwd+bwd step right after the other
    implementation's took up to 1.5x its time in a row).  Turns go round
    until every step has had ``min_time`` seconds.
    """
    for step in steps.values():
        _repeat(step, warmup_time, 3)
    times = {name: [] for name in steps}
    spent = dict.fromkeys(steps, 0.0)
    while min(spent.values()) < min_time:
        for name, step in steps.items():
            host.settle()
            calls = _repeat(step, turn_time, 3)
            times[name].extend(calls[2:])
            spent[name] += sum(calls)
    return {name: 1000 * statistics.median(ts) for name, ts in times.items()}


def _repeat(step, seconds: float, at_least: int) -> list:
    """Call ``step`` for ``seconds`` (at least ``at_least`` times); the duration of each call."""
    calls = []
    start = time.perf_counter()
    while len(calls) < at_least or time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        step()
        calls.append(time.perf_counter() - t0)
    return calls


def bench_config(name: str, min_time: float) -> list:
    """Rows (config, impl, mode, ms, GFLOP/s, ratio) for one config; ratio None without PyTorch."""
    cfg = CONFIGS[name]
    n, s, e, h, ff = cfg
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, s, e)).astype(np.float32)
    dy = rng.standard_normal((n, s, e)).astype(np.float32)
    flops = layer_flops(n, s, e, ff)
    steps = {}
    if torch is not None:
        t_fwd, t_train, state = torch_steps(cfg, x, dy)
    else:
        state = nn.TransformerEncoderLayer(e, h, ff, dropout=0.0, batch_first=True).state_dict()
    previous = mt.jit_enabled()
    for impl, jit in ((JIT, True), (NUMPY, False)):
        steps[impl, "forward"], steps[impl, "fwd+bwd"] = minitensor_steps(cfg, state, x, dy, jit)
    torch_name = None
    if torch is not None:
        torch_name = "PyTorch " + torch.__version__
        steps[torch_name, "forward"], steps[torch_name, "fwd+bwd"] = t_fwd, t_train
    try:
        ms = time_in_turns(steps, min_time)
    finally:
        mt.set_jit_enabled(previous)
    rows = []
    for impl, mode in steps:
        mult = 3 if mode == "fwd+bwd" else 1  # backward: two GEMMs per forward GEMM
        ratio = ms[impl, mode] / ms[torch_name, mode] if torch_name else None  # None: no PyTorch
        rows.append((name, impl, mode, ms[impl, mode], mult * flops / ms[impl, mode] / 1e6, ratio))
    return rows


def format_row(row: tuple) -> str:
    """One Markdown table row; the ratio is "n/a" when PyTorch is absent (None)."""
    name, impl, mode, ms, gflops, ratio = row
    return f"| {name} | {impl} | {mode} | {ms:.3f} | {gflops:.2f} | {'n/a' if ratio is None else f'{ratio:.2f}'} |"


def targets_report(rows: list) -> list:
    """Lines saying, per config and mode, whether minitensor (jit) met its target."""
    lines = []
    for name, impl, mode, _ms, _gf, ratio in rows:
        if impl != JIT or ratio is None:  # (no PyTorch: no ratio)
            continue
        limit = TARGETS[name][0 if mode == "fwd+bwd" else 1]
        verdict = "met" if ratio <= limit else "NOT met"
        lines.append(f"- {name} {mode}: ratio {ratio:.2f} (target <= {limit:.2f}): {verdict}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny and small configs only")
    parser.add_argument("--min-time", type=float, default=1.0, help="seconds of timing per measurement")
    parser.add_argument("--configs", nargs="*", choices=list(CONFIGS), help="configs to run")
    args = parser.parse_args()
    names = args.configs or (["tiny", "small"] if args.quick else list(CONFIGS))
    if torch is not None:
        torch.set_num_threads(2)
    print(host.machine(torch))
    print(f"at the start: {host.state()}", flush=True)
    print("| config | implementation | mode | ms | GFLOP/s | ratio to PyTorch |")
    print("|---|---|---|---:|---:|---:|")
    rows = []
    for name in names:
        for row in bench_config(name, args.min_time):
            rows.append(row)
            print(format_row(row), flush=True)
    print()
    print("\n".join(targets_report(rows)) or "(no PyTorch: no ratios)")
    print(f"at the end: {host.state()}")


if __name__ == "__main__":
    main()

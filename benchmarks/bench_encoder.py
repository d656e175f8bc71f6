"""Time one TransformerEncoderLayer step: minitensor (jit and NumPy paths) vs PyTorch.

    python benchmarks/bench_encoder.py            # all four configs
    python benchmarks/bench_encoder.py --quick    # tiny and small only

Setting: float32, batch_first=True, post-LN, ReLU, dropout 0, 2 threads for
everyone (numba, BLAS, torch).  "forward" is eval mode under no_grad (PyTorch
on its default inference path); "fwd+bwd" is train mode, forward then backward
of a fixed random upstream gradient.  Each time is the median of repeats after
warm-up; all rows of a config are measured in the same run, so the ratio to
PyTorch compares like with like.  The targets are printed as met or not, never
asserted.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "2")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

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
TARGETS = {"tiny": (0.40, 0.60), "small": (1.0, 1.3), "medium": (1.2, 1.4), "large": (1.1, 1.2)}


def layer_flops(n: int, s: int, e: int, ff: int) -> float:
    """Multiply-adds x2 of one forward pass (projections, attention GEMMs, FFN)."""
    tokens = n * s
    return 2.0 * (tokens * e * 3 * e + 2 * n * s * s * e + tokens * e * e + 2 * tokens * e * ff)


def median_ms(step, min_time: float = 1.0, min_repeats: int = 5, warmup: int = 3) -> float:
    """Median wall time of ``step()`` in ms, after warm-up, over >= min_time seconds."""
    for _ in range(warmup):
        step()
    times = []
    start = time.perf_counter()
    while len(times) < min_repeats or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
        if len(times) >= 1000:
            break
    return 1000 * statistics.median(times)


def minitensor_steps(cfg: tuple, state: dict, x: np.ndarray, dy: np.ndarray):
    """(forward, fwd+bwd) closures for a minitensor layer with the given weights."""
    n, s, e, h, ff = cfg
    layer = nn.TransformerEncoderLayer(e, h, ff, dropout=0.0, batch_first=True)
    layer.load_state_dict(state)
    src = mt.from_numpy(x)

    def forward():
        layer.eval()
        with mt.no_grad():
            layer(src)

    def train_step():
        layer.train()
        inp = mt.from_numpy(x).requires_grad_()
        layer.zero_grad()
        layer(inp).backward(dy)

    return forward, train_step


def torch_steps(cfg: tuple, x: np.ndarray, dy: np.ndarray):
    """(forward, fwd+bwd) closures and the state dict of a PyTorch layer."""
    n, s, e, h, ff = cfg
    layer = torch.nn.TransformerEncoderLayer(e, h, ff, dropout=0.0, batch_first=True)
    src, grad = torch.from_numpy(x), torch.from_numpy(dy)

    def forward():
        layer.eval()
        with torch.no_grad():
            layer(src)

    def train_step():
        layer.train()
        inp = src.clone().requires_grad_()
        layer.zero_grad(set_to_none=True)
        layer(inp).backward(grad)

    state = {k: v.detach().numpy().copy() for k, v in layer.state_dict().items()}
    return forward, train_step, state


def bench_config(name: str, min_time: float) -> list:
    """Rows (config, impl, mode, ms, GFLOP/s, ratio) for one config."""
    cfg = CONFIGS[name]
    n, s, e, h, ff = cfg
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, s, e)).astype(np.float32)
    dy = rng.standard_normal((n, s, e)).astype(np.float32)
    flops = layer_flops(n, s, e, ff)
    if torch is not None:
        t_fwd, t_train, state = torch_steps(cfg, x, dy)
    else:
        state = nn.TransformerEncoderLayer(e, h, ff, dropout=0.0, batch_first=True).state_dict()
    impls = {}
    m_fwd, m_train = minitensor_steps(cfg, state, x, dy)
    with mt.jit_disabled():
        impls["minitensor (NumPy path)"] = (median_ms(m_fwd, min_time), median_ms(m_train, min_time))
    impls["minitensor (jit)"] = (median_ms(m_fwd, min_time), median_ms(m_train, min_time))
    if torch is not None:
        impls["PyTorch " + torch.__version__] = (median_ms(t_fwd, min_time), median_ms(t_train, min_time))
    ref = impls.get("PyTorch " + torch.__version__) if torch is not None else None
    rows = []
    for impl, (fwd_ms, train_ms) in impls.items():
        for mode, ms, mult, k in (("forward", fwd_ms, 1, 0), ("fwd+bwd", train_ms, 3, 1)):
            ratio = ms / ref[k] if ref else float("nan")
            rows.append((name, impl, mode, ms, mult * flops / ms / 1e6, ratio))
    return rows


def targets_report(rows: list) -> list:
    """Lines saying, per config and mode, whether minitensor (jit) met its target."""
    lines = []
    for name, impl, mode, _ms, _gf, ratio in rows:
        if impl != "minitensor (jit)" or ratio != ratio:  # skip NaN (no PyTorch)
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
    print(f"numpy {np.__version__}, minitensor {mt.__version__}, torch {torch.__version__ if torch else 'absent'}")
    print("| config | implementation | mode | ms | GFLOP/s | ratio to PyTorch |")
    print("|---|---|---|---:|---:|---:|")
    rows = []
    for name in names:
        for row in bench_config(name, args.min_time):
            rows.append(row)
            print("| {} | {} | {} | {:.3f} | {:.2f} | {:.2f} |".format(*row), flush=True)
    print()
    print("\n".join(targets_report(rows)) or "(no PyTorch: no ratios)")


if __name__ == "__main__":
    main()

"""The 10-op chain of ``bench_ops.py --chain``: minitensor vs NumPy vs PyTorch.

The chain (x, w, c: (n, n); b: (n,); all float32, all needing gradients)::

    h = x @ w;  a = h + b;  t = tanh(a);  u = t * c;  e = exp(u)
    s = e + 1;  q = u / s;  r = q - t;    loss = sum(r * r)

is timed three ways, each computing the loss and the gradients of x, w, b, c:

- minitensor: the ops above on Tensors, then ``loss.backward()``;
- NumPy: the same arithmetic with a hand-written backward (no autograd at all),
  the floor that any autograd on NumPy pays on top of;
- PyTorch (when installed, 2 threads): the ops above, then ``loss.backward()``.

After a warm-up, each implementation is timed in ``--repeat`` samples of about
10 ms; the table shows the median, in µs per iteration and per op (10 ops),
ratios of medians to NumPy and to PyTorch from the same run, and the best
sample.  A large gap between median and best means the machine was busy: on a
loaded 2-core machine PyTorch's two OpenMP threads can stall for a scheduler
time slice (10-20 ms) per iteration (the header shows the load average; try
``--torch-threads 1`` to see the difference).  Nothing is asserted: these are
measurements.  The gradients of the three versions are compared once before
timing, so the three really do the same work.

Run:  python benchmarks/bench_ops.py --chain [--repeat 25] [--torch-threads 2]
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import minitensor as mt

try:
    import torch
except ImportError:  # the benchmark runs without PyTorch; its column is left out
    torch = None

N_OPS = 10


def make_inputs(n: int, seed: int = 0) -> dict:
    """x, w, c of shape (n, n) and b of shape (n,), float32, scaled to keep tanh/exp tame."""
    rng = np.random.default_rng(seed)
    scale = np.float32(1 / np.sqrt(n))
    return {
        "x": rng.standard_normal((n, n), dtype=np.float32),
        "w": rng.standard_normal((n, n), dtype=np.float32) * scale,
        "b": rng.standard_normal(n, dtype=np.float32),
        "c": rng.standard_normal((n, n), dtype=np.float32),
    }


def step_numpy(x, w, b, c) -> tuple:
    """Loss and gradients (dx, dw, db, dc) with a hand-written backward."""
    a = x @ w + b
    t = np.tanh(a)
    u = t * c
    e = np.exp(u)
    s = e + 1
    q = u / s
    r = q - t
    loss = np.sum(r * r)
    dr = 2 * r
    du = dr / s
    ds = -dr * u / (s * s)
    du += ds * e
    dt = du * c - dr
    dc = du * t
    da = dt * (1 - t * t)
    return loss, da @ w.T, x.T @ da, da.sum(axis=0), dc


def step_minitensor(x, w, b, c) -> tuple:
    """The same chain on minitensor Tensors; gradients via ``backward()``."""
    for p in (x, w, b, c):
        p.grad = None
    h = x @ w
    a = h + b
    t = a.tanh()
    u = t * c
    e = u.exp()
    s = e + 1.0
    q = u / s
    r = q - t
    loss = (r * r).sum()
    loss.backward()
    return loss, x.grad, w.grad, b.grad, c.grad


def step_torch(x, w, b, c) -> tuple:
    """The same chain in PyTorch."""
    for p in (x, w, b, c):
        p.grad = None
    h = x @ w
    a = h + b
    t = a.tanh()
    u = t * c
    e = u.exp()
    s = e + 1.0
    q = u / s
    r = q - t
    loss = (r * r).sum()
    loss.backward()
    return loss, x.grad, w.grad, b.grad, c.grad


def implementations(arrays: dict) -> dict:
    """name -> (step function, its arguments) for every available implementation."""
    args = [arrays[k] for k in "xwbc"]
    impls = {
        "NumPy (hand-written backward)": (step_numpy, args),
        "minitensor": (step_minitensor, [mt.tensor(a, requires_grad=True) for a in args]),
    }
    if torch is not None:
        impls["PyTorch"] = (step_torch, [torch.tensor(a, requires_grad=True) for a in args])
    return impls


def _as_float64(value) -> np.ndarray:
    """A NumPy float64 copy of an array, a minitensor Tensor or a PyTorch tensor."""
    if hasattr(value, "detach"):
        value = value.detach().numpy()
    return np.asarray(value, dtype=np.float64)


def check_same_gradients(impls: dict) -> None:
    """All implementations give the same float32 loss and gradients (else the timing compares different work)."""
    labels = ["loss", "dx", "dw", "db", "dc"]
    results = {}
    for name, (step, args) in impls.items():
        values = step(*args)
        for label, v in zip(labels, values):
            if "float32" not in str(v.dtype):
                raise RuntimeError(f"{name}: {label} has dtype {v.dtype}, expected float32 throughout")
        results[name] = [_as_float64(v) for v in values]
    reference = results["NumPy (hand-written backward)"]
    for name, values in results.items():
        for label, got, want in zip(labels, values, reference):
            if not np.allclose(got, want, rtol=1e-3, atol=1e-4):
                raise RuntimeError(f"{name}: {label} differs from NumPy's by {np.max(np.abs(got - want)):.3g}")


def _warm_up(step, args: list) -> float:
    """Call ``step`` for at least 50 calls and 0.3 s; return the fastest of 10 more calls (seconds).

    A long warm-up matters: PyTorch's first few dozen backward passes can be 100x
    slower than the later ones.
    """
    start, calls = time.perf_counter(), 0
    while calls < 50 or time.perf_counter() - start < 0.3:
        step(*args)
        calls += 1
    fastest = float("inf")
    for _ in range(10):
        start = time.perf_counter()
        step(*args)
        fastest = min(fastest, time.perf_counter() - start)
    return fastest


def time_samples(step, args: list, repeat: int) -> list:
    """``repeat`` samples (seconds per call of ``step(*args)``), each timing a loop of about 10 ms."""
    loops = max(1, int(0.01 / max(_warm_up(step, args), 1e-9)))
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(loops):
            step(*args)
        samples.append((time.perf_counter() - start) / loops)
    return samples


def table(n: int, samples: dict) -> str:
    """A Markdown table of one size's timings: medians, ratios of medians, and the best sample."""
    median = {name: statistics.median(values) for name, values in samples.items()}
    ref_np = median["NumPy (hand-written backward)"]
    ref_torch = median.get("PyTorch")
    lines = [
        f"### {n}x{n}, float32, forward + backward of {N_OPS} ops",
        "",
        "| implementation | µs / iteration | µs / op | × NumPy | × PyTorch | best µs / iteration |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, sec in median.items():
        vs_torch = f"{sec / ref_torch:.2f}" if ref_torch else "n/a"
        best = min(samples[name]) * 1e6
        lines.append(
            f"| {name} | {sec * 1e6:.1f} | {sec * 1e6 / N_OPS:.1f} | {sec / ref_np:.2f} | {vs_torch} | {best:.1f} |"
        )
    return "\n".join(lines)


def run_chain(sizes: list, repeat: int) -> None:
    """Print the chain's table for each size n (inputs n x n)."""
    print(f"median of {repeat} samples per implementation\n")
    for n in sizes:
        impls = implementations(make_inputs(n))
        check_same_gradients(impls)
        samples = {name: time_samples(step, args, repeat) for name, (step, args) in impls.items()}
        print(table(n, samples), end="\n\n")

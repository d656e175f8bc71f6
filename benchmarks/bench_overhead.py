"""The fixed cost of one op: a 0-d ``a + b`` with grad, forward and per backward node, vs PyTorch.

    python benchmarks/bench_overhead.py             # 9 rounds
    python benchmarks/bench_overhead.py --rounds 15

On 0-d float32 tensors the arithmetic is nothing, so what is timed is the library's own work:
``Function.apply`` (unwrap, record a node, wrap) in the forward, and the engine's walk in the
backward.  Two measurements per library:

- **forward**: ``a + b`` with ``a`` and ``b`` requiring grad, in a loop of ``--ops`` calls;
- **backward per node**: ``y = a; y = y + b`` ``--ops`` times (a chain of ``--ops`` Add nodes),
  then ``y.backward()``, timed alone and divided by the number of nodes.

The two libraries take turns round after round (the order alternates), so a change of machine
load hits both; each round gives one time per measurement, and the table shows the median over
the rounds with the spread (lowest-highest).  Targets (issue "Speed, round 3"): forward <= 2.0 us
and backward <= 2.5 us per node, printed as met or not, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time

import host

import minitensor as mt

try:
    import torch
except ImportError:  # minitensor's rows only
    torch = None

TARGETS = {"forward": 2.0, "backward per node": 2.5}  # microseconds, minitensor


def forward_us(lib, ops: int) -> float:
    """Microseconds per ``a + b`` (0-d, both requiring grad), over a loop of ``ops`` calls."""
    a, b = lib.tensor(1.5, requires_grad=True), lib.tensor(0.5, requires_grad=True)
    start = time.perf_counter()
    for _ in range(ops):
        a + b
    return (time.perf_counter() - start) / ops * 1e6


def backward_us(lib, ops: int) -> float:
    """Microseconds per node of ``backward()`` through a chain of ``ops`` 0-d Add nodes."""
    a, b = lib.tensor(1.5, requires_grad=True), lib.tensor(0.5, requires_grad=True)
    y = a
    for _ in range(ops):
        y = y + b
    start = time.perf_counter()
    y.backward()
    elapsed = time.perf_counter() - start
    assert float(b.grad) == ops, "the chain's gradient is wrong"
    return elapsed / ops * 1e6


def one_round(libs: list, ops: int) -> dict:
    """{(library name, measurement): microseconds} for one round, libraries in the given order."""
    times = {}
    for name, lib in libs:
        times[name, "forward"] = min(forward_us(lib, ops) for _ in range(3))
        times[name, "backward per node"] = min(backward_us(lib, ops) for _ in range(3))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=9, help="alternating rounds (median and spread shown)")
    parser.add_argument("--ops", type=int, default=2000, help="ops per timed loop / nodes per chain")
    args = parser.parse_args()
    libs = [("minitensor", mt)] + ([("PyTorch", torch)] if torch is not None else [])
    if torch is not None:
        torch.set_num_threads(1)  # (0-d work: threads only add their start-up)
    print(host.machine(torch, 1 if torch is not None else None))
    print(host.state())
    one_round(libs, args.ops)  # warm-up
    rounds = [one_round(libs if i % 2 == 0 else libs[::-1], args.ops) for i in range(args.rounds)]
    print(f"\n{args.rounds} alternating rounds, {args.ops} ops each; median (lowest-highest), microseconds")
    print(f"{'':20s}" + "".join(f"{name:>24s}" for name, _ in libs) + ("   ratio" if torch is not None else ""))
    for what, target in TARGETS.items():
        cells, medians = "", {}
        for name, _ in libs:
            values = [r[name, what] for r in rounds]
            medians[name] = statistics.median(values)
            cells += f"{f'{medians[name]:.2f} ({min(values):.2f}-{max(values):.2f})':>24s}"
        ratio = f"{medians['minitensor'] / medians['PyTorch']:8.2f}" if torch is not None else ""
        verdict = "met" if medians["minitensor"] <= target else "NOT met"
        print(f"{what:20s}{cells}{ratio}   target <= {target} us: {verdict}")
    print(host.state())


if __name__ == "__main__":
    main()

"""What a second thread gets beside a busy process: matrix products on one and two threads, quiet and busy.

    python benchmarks/bench_busy_core.py                  # ~1 ms of serial work between products
    python benchmarks/bench_busy_core.py --serial 50000   # ~0.1 ms

Why.  ``bench_load.py``'s target for a training step beside a busy process
(busy / quiet <= 1.3) can only be met if the step's second thread still gets
work done on the core that the busy process shares with it.  This measures
that for the building block of a training step, a matrix product (rows x 128
by 128 x 512, the GPT-sized step's feed-forward product, at three row counts:
parallel regions of ~0.25, ~1 and ~4 ms), with serial NumPy work between the
products as in a step (``np.exp`` of ``--serial`` float32s), for NumPy's BLAS
and PyTorch, on one and two threads.  "busy" is ``bench_load.Spinner`` (a
pure-Python loop in a process of its own); conditions alternate over
``--rounds`` rounds.  minitensor's thread policy is switched off here: the
thread counts are the ones named.

Printed: the median time of a product per library, thread count and
condition, the serial work's, and for each library and size "2 threads busy
/ 1 thread busy": at 1.0 or above the second thread gains nothing beside the
busy process, and a step then has one core's worth of threads there, so its
busy / quiet is at least its own one-thread / two-thread ratio (the policy,
``kernels/runtime/threads.py``, runs everything on one thread then).  Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time

import bench_load
import host
import numpy as np

import minitensor as mt

try:
    import torch
except ImportError:  # the PyTorch rows are left out
    torch = None

ROWS = (256, 1024, 4096)
INNER, OUTER = 128, 512


def _numpy_product(rows: int, threads: int):
    """A call of NumPy's (rows, INNER) @ (INNER, OUTER) float32 product on ``threads`` BLAS threads."""
    a = np.random.default_rng(0).standard_normal((rows, INNER)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((INNER, OUTER)).astype(np.float32)

    def product():
        mt.set_num_threads(threads)
        a @ b

    return product


def _torch_product(rows: int, threads: int):
    """The same product in PyTorch on ``threads`` threads."""
    a, b = torch.randn(rows, INNER), torch.randn(INNER, OUTER)

    def product():
        torch.set_num_threads(threads)
        a @ b

    return product


def _median_ms(product, seconds: float, between: np.ndarray) -> tuple:
    """Median times (ms) of ``product`` and of the serial work ``np.exp(between)`` done before each
    call, over calls for ``seconds``."""
    product()  # (warm-up; sets the thread count)
    products, serial = [], []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        start = time.perf_counter()
        np.exp(between)
        middle = time.perf_counter()
        product()
        products.append(time.perf_counter() - middle)
        serial.append(middle - start)
    return statistics.median(products) * 1e3, statistics.median(serial) * 1e3


def measure(products: dict, rounds: int, turn: float, serial: int) -> dict:
    """(name, condition) -> (product ms, serial ms), medians over all rounds; quiet and busy alternate,
    products take turns."""
    between = np.random.default_rng(2).standard_normal(serial).astype(np.float32)
    times = {(name, cond): [] for name in products for cond in ("quiet", "busy")}
    for cond in bench_load.conditions(rounds):
        with bench_load.condition(cond):
            for name, product in products.items():
                times[name, cond].append(_median_ms(product, turn, between))
    return {key: tuple(statistics.median(part) for part in zip(*v)) for key, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4, help="quiet/busy rounds (alternating)")
    parser.add_argument("--turn", type=float, default=0.3, help="seconds per product per round")
    parser.add_argument(
        "--serial", type=int, default=500_000, help="elements of the np.exp between two products (~1 ms per 500,000)"
    )
    opts = parser.parse_args()
    mt.set_thread_policy(False)
    most = mt.get_num_threads()
    print(host.machine(torch, torch.get_num_threads() if torch else None), flush=True)
    print(f"at the start: {host.state()}", flush=True)
    libraries = {"NumPy (minitensor's BLAS)": _numpy_product}
    if torch is not None:
        libraries["PyTorch"] = _torch_product
    products = {(lib, rows, t): make(rows, t) for lib, make in libraries.items() for rows in ROWS for t in (1, 2)}
    ms = measure(products, opts.rounds, opts.turn, opts.serial)
    print("| product | library | threads | quiet ms | busy ms | 2 threads / 1 thread, busy | serial: quiet ms | busy |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for lib, rows, t in products:
        (quiet, serial_quiet), (busy, serial_busy) = ms[(lib, rows, t), "quiet"], ms[(lib, rows, t), "busy"]
        second = f"{busy / ms[(lib, rows, 1), 'busy'][0]:.2f}" if t == 2 else ""
        print(f"| {rows} x {INNER} x {OUTER} | {lib} | {t} | {quiet:.3f} | {busy:.3f} | {second} "
              f"| {serial_quiet:.3f} | {serial_busy:.3f} |")  # fmt: skip
    mt.set_num_threads(most)
    mt.set_thread_policy(True)
    print(f"at the end: {host.state()}")


if __name__ == "__main__":
    main()

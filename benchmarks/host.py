"""How busy and how fast the machine is right now: one line to print beside a benchmark's results.

The machines these benchmarks run on are often shared virtual machines whose speed changes
by 2-3x from one minute to the next, for every library alike (on the 2-core VM of
docs/performance.md a 1024 x 1024 float32 GEMM ran at ~180 GFLOP/s on one day and at 62-97
on another).  Ratios to PyTorch from one run stay comparable; absolute times do not.  So the
benchmarks print, at their start and end, the load average and the speed of one matrix
product (``gemm_gflops``: NumPy's, at the BLAS's current thread setting, median of 9), and
their first line names the machine (``machine``: the CPU with its widest SIMD instructions,
which decide how fast NumPy's and the kernels' loops are, and the versions).
"""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import statistics
import time

import numpy as np

import minitensor as mt

# The benchmarks time the compiled kernels from their first call: a kernel not in numba's disk cache
# yet compiles then and the call waits, where a program would run its NumPy reference meanwhile
# (README, "Kernels: the JIT switch").
mt.set_jit_wait(True)


def gemm_gflops(size: int = 1024, repeats: int = 9) -> float:
    """GFLOP/s of a (size, size) @ (size, size) float32 product: the median of ``repeats`` timings."""
    a = np.random.default_rng(0).random((size, size), dtype=np.float32)
    a @ a  # (warm-up: the BLAS's threads start)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        a @ a
        times.append(time.perf_counter() - start)
    return 2.0 * size**3 / statistics.median(times) / 1e9


QUIET_SLICE = 0.005  # seconds per look at this process's threads (``settle``)
QUIET_LONGEST = 0.3  # seconds ``settle`` waits at most (OpenBLAS's workers poll for ~0.1 s: docs/performance.md)


def settle(step=None) -> float:
    """Start a library's turn from a machine its rival left quiet: wait until this process's own
    threads are idle, then call ``step`` once, untimed (it wakes its own thread pools); the seconds
    waited.

    Why.  After a multi-threaded product NumPy's OpenBLAS keeps its workers polling for ~0.1 s of a
    core each.  Measured on the 2-core VM (2026-11-29): a PyTorch training step started in that time
    ran 2-3x its own time (LeNet-5: 7.5 ms instead of 2.4, the CIFAR ResNet 28-112 ms instead of 24),
    so benchmarks that switch libraries more often than every 0.1 s timed PyTorch beside
    minitensor's idle BLAS threads.  Idle: the process took under a fifth of a core in a
    ``QUIET_SLICE`` of sleep (polling threads take a whole one)."""
    start = time.perf_counter()
    while time.perf_counter() - start < QUIET_LONGEST:
        cpu, wall = time.process_time(), time.perf_counter()
        time.sleep(QUIET_SLICE)
        if time.process_time() - cpu < 0.2 * (time.perf_counter() - wall):
            break
    waited = time.perf_counter() - start
    if step is not None:
        step()
    return waited


def state() -> str:
    """'load average 0.60, 0.86, 1.18; 1024 x 1024 float32 GEMM at 87 GFLOP/s'."""
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return f"load average {load}; 1024 x 1024 float32 GEMM at {gemm_gflops():.0f} GFLOP/s"


def cpu() -> str:
    """The CPU's model name and its widest SIMD ('AMD EPYC (AVX2)'), from /proc/cpuinfo where there is one."""
    from minitensor.kernels.runtime.cpu import cpu as cpu_info

    info = cpu_info()
    simd = "AVX-512" if "avx512f" in info["flags"] else "AVX2" if "avx2" in info["flags"] else None
    return f"{info['model']} ({simd})" if simd else info["model"]


def blas_kernels() -> str:
    """Which of its kernels NumPy's OpenBLAS runs ('OpenBLAS Haswell kernels, OPENBLAS_CORETYPE=Haswell'),
    or '' for another BLAS.  An OpenBLAS built for many CPUs picks them from the CPU's model, or
    from ``OPENBLAS_CORETYPE``: on an AVX-512 CPU its "Haswell" (AVX2) kernels run products at about
    half the speed of its "SkylakeX" ones (docs/performance.md), so the numbers depend on it."""
    from minitensor.kernels.runtime import blas

    core = blas.core_name()
    if not core:
        return ""
    forced = os.environ.get("OPENBLAS_CORETYPE")
    return f"OpenBLAS {core} kernels" + (f", OPENBLAS_CORETYPE={forced}" if forced else "")


def machine(torch=None, threads=None) -> str:
    """One line: date and time, CPU, CPU count, versions (PyTorch's when the module ``torch`` is
    given, with its thread count ``threads`` when given), NumPy's BLAS kernels."""
    torch_text = f"torch {torch.__version__}" if torch is not None else "torch absent"
    if torch is not None and threads is not None:
        torch_text += f" ({threads} threads)"
    numba = importlib.metadata.version("numba")
    return (
        f"{datetime.datetime.now():%Y-%m-%d %H:%M}, {cpu()}, {os.cpu_count()} CPUs; "
        f"Python {platform.python_version()}, numpy {np.__version__}, numba {numba}, minitensor {mt.__version__}, "
        f"{torch_text}; {blas_kernels() or 'NumPy BLAS not OpenBLAS'}"
    )

"""benchmarks/host.py: the line on the machine's load and speed that the benchmarks print."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest


@pytest.fixture
def host(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import host

    yield host
    sys.modules.pop("host", None)


def test_the_state_line_names_the_load_and_the_gemm_speed(host) -> None:
    line = host.state()
    match = re.fullmatch(r"load average (\S+, \S+, \S+); 1024 x 1024 float32 GEMM at (\d+) GFLOP/s", line)
    assert match, line
    assert int(match.group(2)) > 0


def test_gemm_speed_counts_two_flops_per_multiply_add(host, monkeypatch) -> None:
    ticks = iter(range(100))
    monkeypatch.setattr(host.time, "perf_counter", lambda: next(ticks) * 0.5)  # every product takes 0.5 s
    assert host.gemm_gflops(size=100, repeats=3) == pytest.approx(2 * 100**3 / 0.5 / 1e9)


def test_the_machine_line_names_the_cpu_its_simd_and_the_versions(host, monkeypatch) -> None:
    import numpy as np

    line = host.machine()
    pattern = (
        r"\d{4}-\d\d-\d\d \d\d:\d\d, .+, \d+ CPUs; Python \S+, numpy \S+, numba \S+, minitensor \S+, torch absent; .+"
    )
    assert re.fullmatch(pattern, line), line
    assert f"numpy {np.__version__}," in line
    assert line.endswith("; " + (host.blas_kernels() or "NumPy BLAS not OpenBLAS"))

    class FakeTorch:
        __version__ = "9.9"

    assert ", torch 9.9 (3 threads); " in host.machine(FakeTorch, 3)
    from minitensor.kernels.runtime import cpu

    for text, expected in (
        ("model name\t: Some CPU\nflags\t\t: fpu avx2 fma\n", "Some CPU (AVX2)"),
        ("model name\t: Big\nflags\t\t: avx2 avx512f\n\nmodel name\t: x\n", "Big (AVX-512)"),
        ("model name\t: Old\nflags\t\t: fpu sse2\n", "Old"),
    ):
        monkeypatch.setattr(cpu, "cpu", lambda text=text: cpu.parse(text))
        assert host.cpu() == expected


def test_blas_kernels_names_openblas_choice_and_the_variable_that_forced_it(host, monkeypatch) -> None:
    from minitensor.kernels.runtime import blas

    if "get" not in blas.thread_functions():
        pytest.skip("NumPy's BLAS is not OpenBLAS")
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Foo")  # (read by OpenBLAS when it loaded: only named here)
    assert re.fullmatch(r"OpenBLAS \w+ kernels, OPENBLAS_CORETYPE=Foo", host.blas_kernels())
    monkeypatch.delenv("OPENBLAS_CORETYPE")
    assert re.fullmatch(r"OpenBLAS \w+ kernels", host.blas_kernels())


def test_settle_waits_for_polling_threads_then_calls_the_step(host, monkeypatch) -> None:
    """On a clock of its own (a real spinning thread loses its core now and then on a loaded machine,
    which ``settle`` rightly reads as quiet): a thread of the process takes a whole core for its first
    0.08 s, as OpenBLAS's polling workers do; ``settle`` waits until it stops, then calls the step."""
    import types

    clock = {"wall": 0.0, "cpu": 0.0}
    stop = 0.08

    def sleep(seconds: float) -> None:
        start, clock["wall"] = clock["wall"], clock["wall"] + seconds
        clock["cpu"] += max(0.0, min(clock["wall"], stop) - start)  # (the poller's core while it polls)

    fake = types.SimpleNamespace(perf_counter=lambda: clock["wall"], process_time=lambda: clock["cpu"], sleep=sleep)
    monkeypatch.setattr(host, "time", fake)
    calls = []
    waited = host.settle(lambda: calls.append(clock["wall"]))
    assert stop <= waited <= stop + 2 * host.QUIET_SLICE
    assert calls == [clock["wall"]] and calls[0] >= stop
    assert host.settle() == pytest.approx(host.QUIET_SLICE)  # (nothing polling: one look)

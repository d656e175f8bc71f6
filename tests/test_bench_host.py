"""benchmarks/host.py: the line on the machine's load and speed that the benchmarks print."""

from __future__ import annotations

import io
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
    pattern = r"\d{4}-\d\d-\d\d \d\d:\d\d, .+, \d+ CPUs; Python \S+, numpy \S+, numba \S+, minitensor \S+, torch absent"
    assert re.fullmatch(pattern, line), line
    assert f"numpy {np.__version__}," in line

    class FakeTorch:
        __version__ = "9.9"

    assert host.machine(FakeTorch, 3).endswith(", torch 9.9 (3 threads)")
    for text, expected in (
        ("model name\t: Some CPU\nflags\t\t: fpu avx2 fma\n", "Some CPU (AVX2)"),
        ("model name\t: Big\nflags\t\t: avx2 avx512f\n\nmodel name\t: x\n", "Big (AVX-512)"),
    ):
        monkeypatch.setattr(host, "open", lambda *a, text=text, **k: io.StringIO(text), raising=False)
        assert host.cpu() == expected

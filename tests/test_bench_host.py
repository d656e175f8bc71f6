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

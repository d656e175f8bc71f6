"""benchmarks/bench_load.py's measuring loop and floor, with stub steps (no model is trained)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_load.py"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPT.parent))  # (its sibling module host.py)
    spec = importlib.util.spec_from_file_location("bench_load", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Spinner:
    """Stands in for the busy process: records which condition is on."""

    busy = False

    def __enter__(self):
        _Spinner.busy = True
        return self

    def __exit__(self, *exc):
        _Spinner.busy = False


def test_conditions_alternate_and_the_first_step_settles_untimed_after_each_switch(bench, monkeypatch) -> None:
    monkeypatch.setattr(bench, "Spinner", _Spinner)
    clock = {"now": 0.0}
    monkeypatch.setattr(bench.time, "perf_counter", lambda: clock["now"])
    calls = {"policy": [], "other": []}

    def stepper(name, busy_seconds, quiet_seconds):
        def step():
            calls[name].append(_Spinner.busy)
            clock["now"] += busy_seconds if _Spinner.busy else quiet_seconds

        return step

    quiet, busy = 2.0**-7, 2.0**-6  # (binary fractions: the stub clock adds them up exactly)
    steps = {"policy": stepper("policy", busy, quiet), "other": stepper("other", 2 * busy, quiet)}
    medians = bench.measure(steps, rounds=2, turn=2.0**-3, settle=2.0**-2)
    assert medians == {
        ("policy", "quiet"): quiet,
        ("policy", "busy"): busy,
        ("other", "quiet"): quiet,
        ("other", "busy"): 2 * busy,
    }
    warm_up = 64  # 0.5 s of quiet steps
    turns = {"policy": 2 * (8 + 16), "other": 2 * (4 + 16)}  # two turns per condition: 1/8 s each
    settled = 2 * (16 + 32)  # 1/4 s after each of the two switches to busy and the two to quiet
    assert calls["policy"].count(True) == 2 * 16 + 2 * 8
    assert len(calls["policy"]) == warm_up + settled + turns["policy"]
    assert len(calls["other"]) == warm_up + turns["other"]  # (only the first step settles)


def test_floor_of_busy_over_quiet(bench, monkeypatch) -> None:
    monkeypatch.setattr(bench.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    # quiet 10 ms, 1 thread 15 ms: 5 ms run on both cores; beside a busy process they get 4/3 cores
    assert bench._floor(10.0, 15.0).startswith("fair-share floor of busy / quiet on 2 cores: 1.25 (1 thread 1.50x")
    assert bench._floor(10.0, 10.0).startswith("fair-share floor of busy / quiet on 2 cores: 1.00")

"""benchmarks/bench_load.py's and bench_busy_core.py's measuring loops and bench_load's floor, with stub
steps and products (no model is trained, no product timed)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

FOLDER = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(monkeypatch, name: str):
    """The benchmark script ``name`` as a fresh module (its sibling modules importable)."""
    monkeypatch.syspath_prepend(str(FOLDER))
    spec = importlib.util.spec_from_file_location(name, FOLDER / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def bench(monkeypatch):
    return _load(monkeypatch, "bench_load")


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
    monkeypatch.setattr(bench.host, "settle", lambda step=None: 0.0)  # (waits on the real clock: none here)
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


def test_busy_core_times_products_and_the_serial_work_between_them_apart(monkeypatch) -> None:
    bench = _load(monkeypatch, "bench_busy_core")
    monkeypatch.setattr(bench.bench_load, "Spinner", _Spinner)
    clock = {"now": 0.0}
    monkeypatch.setattr(bench.time, "perf_counter", lambda: clock["now"])
    serial = {False: 2.0**-10, True: 2.0**-9}  # quiet, busy (binary fractions: the stub clock adds them up exactly)

    def exp(x):
        assert x.size == 1000
        clock["now"] += serial[_Spinner.busy]

    monkeypatch.setattr(bench.np, "exp", exp)
    busy_calls = []

    def product(quiet, busy):
        def call():
            busy_calls.append(_Spinner.busy)
            clock["now"] += busy if _Spinner.busy else quiet

        return call

    products = {"one": product(2.0**-8, 2.0**-8), "two": product(2.0**-9, 2.0**-7)}
    ms = bench.measure(products, rounds=2, turn=2.0**-4, serial=1000)
    assert ms == {
        ("one", "quiet"): (1000 * 2.0**-8, 1000 * 2.0**-10),
        ("one", "busy"): (1000 * 2.0**-8, 1000 * 2.0**-9),
        ("two", "quiet"): (1000 * 2.0**-9, 1000 * 2.0**-10),
        ("two", "busy"): (1000 * 2.0**-7, 1000 * 2.0**-9),
    }
    assert True in busy_calls and False in busy_calls and not _Spinner.busy


def test_conditions_alternate_their_order_every_round(bench) -> None:
    assert bench.conditions(3) == ["quiet", "busy", "busy", "quiet", "quiet", "busy"]

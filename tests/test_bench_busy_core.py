"""benchmarks/bench_busy_core.py's measuring loop, with stub products and a stub clock (no product is timed)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_busy_core.py"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPT.parent))  # (its sibling modules host.py and bench_load.py)
    spec = importlib.util.spec_from_file_location("bench_busy_core", SCRIPT)
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


def test_products_and_the_serial_work_between_them_are_timed_apart_per_condition(bench, monkeypatch) -> None:
    monkeypatch.setattr(bench, "Spinner", _Spinner)
    clock = {"now": 0.0}
    monkeypatch.setattr(bench.time, "perf_counter", lambda: clock["now"])
    serial = {"quiet": 2.0**-10, "busy": 2.0**-9}  # (binary fractions: the stub clock adds them up exactly)

    def exp(x):
        assert x.size == 1000
        clock["now"] += serial["busy" if _Spinner.busy else "quiet"]

    monkeypatch.setattr(bench.np, "exp", exp)
    conditions = []

    def product(quiet, busy):
        def call():
            conditions.append(_Spinner.busy)
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
    assert conditions.count(True) > 0 and conditions.count(False) > 0

"""benchmarks/bench_encoder.py without PyTorch prints "n/a" in the ratio column, not "nan".

The benchmark itself is not run: its timing and stepping functions are replaced by stubs, so only
the table logic (rows, formatting, the targets report) runs, in well under a second.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_encoder.py"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPT.parent))  # (its sibling module host.py)
    saved = dict(os.environ)  # (the script sets thread-count variables at import)
    spec = importlib.util.spec_from_file_location("bench_encoder", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    os.environ.clear()
    os.environ.update(saved)
    return module


def _stub_timing(bench, monkeypatch, torch_present: bool) -> None:
    def step():
        pass

    monkeypatch.setattr(bench, "minitensor_steps", lambda *args: (step, step))
    monkeypatch.setattr(bench, "time_in_turns", lambda steps, min_time: {key: 2.0 for key in steps})
    if torch_present:
        monkeypatch.setattr(bench, "torch_steps", lambda *args: (step, step, {}))
    else:
        monkeypatch.setattr(bench, "torch", None)


def test_without_pytorch_the_ratio_column_says_n_a(bench, monkeypatch):
    _stub_timing(bench, monkeypatch, torch_present=False)
    rows = bench.bench_config("tiny", min_time=0.0)
    assert len(rows) == 4 and all(row[-1] is None for row in rows)
    lines = [bench.format_row(row) for row in rows]
    assert all(line.endswith("| n/a |") for line in lines)
    assert not any("nan" in line for line in lines)
    assert bench.targets_report(rows) == []


def test_with_pytorch_the_ratio_is_printed(bench, monkeypatch):
    pytest.importorskip("torch")
    _stub_timing(bench, monkeypatch, torch_present=True)
    rows = bench.bench_config("tiny", min_time=0.0)
    jit_rows = [row for row in rows if row[1] == bench.JIT]
    assert [row[-1] for row in jit_rows] == [1.0, 1.0]
    assert bench.format_row(jit_rows[0]).endswith("| 1.00 |")
    assert len(bench.targets_report(rows)) == 2

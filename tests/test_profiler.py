"""mt.profiler: per-op forward and backward times, the table, the Chrome trace, nothing when off."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import _profiling


def _ten_matmuls():
    a = mt.randn(16, 16, requires_grad=True)
    y = a
    for _ in range(10):
        y = y @ a
    (y * mt.randn(16, 16)).sum().backward()
    return a


def test_a_loop_of_matmuls_records_each_forward_and_backward():
    with mt.profiler.profile() as prof:
        _ten_matmuls()
    counts = {row.key: row.count for row in prof.key_averages()}
    assert counts["Matmul"] == 10 and counts["MatmulBackward"] == 10
    assert counts["Mul"] == 1 and counts["MulBackward"] == 1 and counts["SumBackward"] == 1
    kinds = {e.name: e.kind for e in prof.events()}
    assert kinds["Matmul"] == "forward" and kinds["MatmulBackward"] == "backward"
    for e in prof.events():
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total + 1e-9 and e.start_us >= 0


def test_nothing_is_recorded_outside_the_context():
    with mt.profiler.profile() as prof:
        pass
    assert _profiling.active is None
    _ten_matmuls()
    assert prof.events() == [] and list(prof.key_averages()) == []
    with pytest.raises(ValueError):  # a failing block still turns the profiler off
        with mt.profiler.profile():
            raise ValueError("boom")
    assert _profiling.active is None


def test_no_grad_inference_and_modules_are_recorded():
    mt.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0).eval()
    with mt.profiler.profile() as prof, mt.no_grad():
        layer(mt.randn(5, 3, 8))
    names = {row.key for row in prof.key_averages()}
    assert {"SelfAttention", "FeedForward", "AddLayerNorm"} <= names  # the fused inference path's ops
    assert not any(name.endswith("Backward") for name in names)


def test_nested_ranges_split_self_and_total_time():
    with mt.profiler.profile() as prof:
        with mt.profiler.record_function("outer"):
            _ten_matmuls()
    rows = {row.key: row for row in prof.key_averages()}
    outer = rows["outer"]
    inner_total = sum(r.cpu_time_total for key, r in rows.items() if key != "outer")
    assert outer.count == 1
    assert outer.cpu_time_total >= inner_total
    assert outer.self_cpu_time_total == pytest.approx(outer.cpu_time_total - inner_total, abs=1.0)
    with mt.profiler.record_function("ignored when off"):
        pass


def test_table_sorts_limits_and_rejects_unknown_keys():
    with mt.profiler.profile() as prof:
        _ten_matmuls()
    averages = prof.key_averages()
    table = averages.table(sort_by="self_cpu_time_total", row_limit=3)
    lines = table.splitlines()
    assert "Self CPU %" in lines[1] and "# of Calls" in lines[1]
    body = lines[3:6]
    assert len(body) == 3 and lines[6].startswith("---") and lines[7].startswith("Self CPU time total")
    want = sorted(averages, key=lambda r: r.self_cpu_time_total, reverse=True)[:3]
    assert [line.split()[0] for line in body] == [r.key for r in want]
    by_count = averages.table(sort_by="count", row_limit=-1).splitlines()
    assert by_count[3].split()[0] in ("Matmul", "MatmulBackward") and by_count[3].split()[-1] == "10"
    assert len(by_count) == 3 + len(averages) + 2
    with pytest.raises(ValueError, match="sort_by must be None or one of"):
        averages.table(sort_by="speed")


def test_chrome_trace_loads_and_has_the_events(tmp_path):
    with mt.profiler.profile() as prof:
        _ten_matmuls()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    assert len(events) == len(prof.events())
    assert sum(e["name"] == "MatmulBackward" for e in events) == 10
    for e in events:
        assert e["ph"] == "X" and e["dur"] >= 0 and e["ts"] >= 0 and isinstance(e["pid"], int)
        assert isinstance(e["tid"], int) and e["cat"] in ("forward", "backward")
    forward = [e for e in events if e["cat"] == "forward"]
    backward = [e for e in events if e["cat"] == "backward"]
    assert max(e["ts"] for e in forward) <= min(e["ts"] for e in backward)  # backward after forward


def test_other_threads_are_recorded_under_their_thread_id():
    def work():
        mt.randn(4, 4) @ mt.randn(4, 4)

    with mt.profiler.profile() as prof:
        t = threading.Thread(target=work)
        t.start()
        t.join()
        work()
    threads = {e.thread for e in prof.events() if e.name == "Matmul"}
    assert len(threads) == 2


def test_a_second_profiler_inside_the_first_is_refused():
    with mt.profiler.profile():
        with pytest.raises(RuntimeError, match="already recording"):
            with mt.profiler.profile():
                pass


def test_results_are_the_same_with_the_profiler_on():
    mt.manual_seed(3)
    a = mt.randn(4, 4, requires_grad=True)
    ((a @ a).tanh().sum()).backward()
    want = a.grad.numpy().copy()
    a.grad = None
    with mt.profiler.profile():
        ((a @ a).tanh().sum()).backward()
    np.testing.assert_array_equal(a.grad.numpy(), want)


def test_docstring_examples_run(tmp_path, monkeypatch):
    import doctest

    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(mt.profiler, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0

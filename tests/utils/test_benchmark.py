"""minitensor.utils.benchmark: Timer (timeit, blocked_autorange, adaptive_autorange) and Measurement,
whose statistics and printed summary are PyTorch's (torch.utils.benchmark as the oracle)."""

from __future__ import annotations

import doctest
import re

import numpy as np
import pytest

import minitensor as mt
from minitensor.utils import benchmark
from minitensor.utils.benchmark import common, timer

SPEC = dict(stmt="x @ x", setup="x = torch.randn(8, 8)", label="mm", sub_label="8x8", description="float32")


def _without_address(text: str) -> str:
    return re.sub(r"<[\w.]+Measurement object at 0x[0-9a-f]+>", "<Measurement>", text)


@pytest.mark.parametrize(
    "raw_times, number",
    [([2.1e-4, 2.0e-4, 2.2e-4, 2.05e-4], 100), ([3e-3], 10), ([1.0, 1.5], 1), ([5e-7, 9e-7, 5.1e-7, 5e-7, 5.2e-7], 1)],
)
def test_measurement_statistics_and_summary_equal_pytorchs(raw_times, number):
    torch = pytest.importorskip("torch")
    from torch.utils.benchmark.utils import common as torch_common

    got = common.Measurement(number, raw_times, common.TaskSpec(**SPEC, num_threads=2))
    want = torch_common.Measurement(number, raw_times, torch_common.TaskSpec(**SPEC, num_threads=2))
    for name in ("mean", "median", "iqr", "significant_figures", "has_warnings", "times", "title"):
        assert getattr(got, name) == pytest.approx(getattr(want, name), rel=1e-12), name
    assert _without_address(repr(got)) == _without_address(repr(want))
    assert got.meets_confidence(0.3) == want.meets_confidence(0.3)
    assert got.stmt == "x @ x" and got.num_threads == 2  # the task's fields read through
    assert torch is not None


def test_timeit_times_one_block_after_setup():
    m = benchmark.Timer("y = x * 2", setup="x = mt.ones(4)", globals={"mt": mt}).timeit(50)
    assert m.number_per_run == 50 and len(m.raw_times) == 1 and m.median == m.raw_times[0] / 50 > 0
    assert "1 measurement, 50 runs , 1 thread" in repr(m)


def test_blocked_autorange_spends_about_min_run_time():
    m = benchmark.Timer("x.sum()", setup="x = torch.ones(16)").blocked_autorange(min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02 and m.number_per_run >= 1 and len(m.times) >= 1


def test_adaptive_autorange_stops_within_its_bounds():
    m = benchmark.Timer("x + x", setup="x = torch.ones(4)").adaptive_autorange(min_run_time=0.01, max_run_time=0.3)
    assert len(m.times) >= 1 and sum(m.raw_times) < 1.0


def test_num_threads_is_set_while_timing_and_restored():
    seen = []
    before = mt.get_num_threads()
    t = benchmark.Timer("seen.append(mt.get_num_threads())", globals={"mt": mt, "seen": seen}, num_threads=1)
    t.timeit(3)
    assert set(seen) == {1} and mt.get_num_threads() == before


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="only a `str` stmt"):
        benchmark.Timer(lambda: None)
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        benchmark.Timer("pass", global_setup="int x;")
    with pytest.raises(ValueError, match="language must be 'python'"):
        benchmark.Timer("pass", language="cpp")
    with pytest.raises(ValueError, match="num_threads must be a positive int"):
        benchmark.Timer("pass", num_threads=0)
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        benchmark.Timer("pass").repeat()


def test_merge_pools_the_times_of_one_task():
    spec = common.TaskSpec("a", "pass")
    merged = common.Measurement.merge([common.Measurement(2, [2.0], spec), common.Measurement(1, [3.0, 5.0], spec)])
    assert len(merged) == 1 and merged[0].times == [1.0, 3.0, 5.0]


def test_units():
    assert common.select_unit(2e-8) == ("ns", 1e-9) and common.select_unit(0.5) == ("ms", 1e-3)
    assert common.trim_sigfig(123.456, 2) == 120.0 and np.isclose(common.trim_sigfig(0.012345, 3), 0.0123)


@pytest.mark.parametrize("module", [benchmark, common, timer])
def test_docstring_examples_run(module):
    result = doctest.testmod(module, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0

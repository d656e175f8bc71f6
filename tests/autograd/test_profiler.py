"""mt.autograd.profiler: PyTorch's older profiler name and signature over minitensor's profiler."""

from __future__ import annotations

import doctest

import pytest

import minitensor as mt
import minitensor.autograd.profiler as autograd_profiler


def test_profile_records_ops_and_user_ranges_and_prints_a_table():
    a = mt.randn(8, 8, requires_grad=True)
    with mt.autograd.profiler.profile(record_shapes=True, with_stack=True, profile_memory=True) as prof:
        with mt.autograd.profiler.record_function("step"):
            (a @ a).sum().backward()
    keys = {row.key: row.count for row in prof.key_averages(group_by_input_shape=True)}
    assert keys["Matmul"] == 1 and keys["MatmulBackward"] == 1 and keys["step"] == 1
    table = prof.table(sort_by="self_cpu_time_total", row_limit=3)
    assert table == prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=3) and "Matmul" in str(prof)
    assert prof.self_cpu_time_total == pytest.approx(sum(e.self_cpu_time_total for e in prof.events()))


def test_disabled_profile_records_nothing():
    with mt.autograd.profiler.profile(enabled=False) as prof:
        mt.randn(4) * 2
    assert prof.events() == []


def test_cuda_is_refused():
    with pytest.raises(RuntimeError, match="CPU only"):
        mt.autograd.profiler.profile(use_cuda=True)
    with pytest.raises(RuntimeError, match="CPU only"):
        mt.autograd.profiler.profile(use_device="cuda")


def test_same_recording_as_the_profiler():
    assert mt.autograd.profiler.record_function is mt.profiler.record_function
    assert issubclass(mt.autograd.profiler.profile, mt.profiler.profile)


def test_docstring_examples_run():
    result = doctest.testmod(autograd_profiler, extraglobs={"mt": mt})
    assert result.attempted > 0 and result.failed == 0

"""The thread policy (kernels/threads.py): the thread count follows the machine's free cores."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import minitensor as mt
from minitensor.kernels.runtime import blas, dispatch, threads


@pytest.fixture
def fake_machine(monkeypatch):
    """A 2-core machine whose /proc/stat readings and BLAS calls the test controls.

    ``machine["busy"]``: busy seconds of both cores so far; ``machine["own"]``: this process's CPU
    seconds; ``machine["clock"]``: the time; ``machine["set"]``: the BLAS thread counts set, in order.
    """
    machine = {"busy": 0.0, "own": 0.0, "clock": 100.0, "set": [], "proc_stat": True}
    monkeypatch.setattr(threads, "_cpus", lambda: {0, 1})
    monkeypatch.setattr(
        threads, "_cpu_seconds", lambda: (machine["busy"], machine["own"]) if machine["proc_stat"] else None
    )
    monkeypatch.setattr(threads.time, "monotonic", lambda: machine["clock"])
    monkeypatch.setattr(threads, "_blas_threads", lambda: 2)
    monkeypatch.setattr(threads, "_set_blas_threads", machine["set"].append)
    monkeypatch.setattr(threads, "_state", {"enabled": True, "due": 0.0, "threads": None, "most": None, "last": None})
    return machine


def advance(machine: dict, seconds: float, others: float, own: float) -> int:
    """Let ``seconds`` pass with ``others`` cores busy elsewhere and ``own`` cores busy here; then threads()."""
    machine["clock"] += seconds
    machine["busy"] += seconds * (others + own)
    machine["own"] += seconds * own
    return threads.threads()


def test_a_quiet_machine_keeps_the_blas_setting(fake_machine) -> None:
    assert threads.threads() == 2
    assert advance(fake_machine, 0.2, others=0.0, own=2.0) == 2  # our own threads are not "others"
    assert fake_machine["set"] == []


def test_a_busy_core_leaves_one_thread_and_a_free_one_gives_it_back(fake_machine) -> None:
    threads.threads()
    assert advance(fake_machine, 0.2, others=1.0, own=1.0) == 1
    assert fake_machine["set"] == [1]
    assert advance(fake_machine, 0.05, others=0.0, own=1.0) == 1  # no new reading within CHECK_EVERY
    assert advance(fake_machine, 0.2, others=0.1, own=1.0) == 2
    assert fake_machine["set"] == [1, 2]


def test_never_more_than_the_blas_setting_nor_fewer_than_one(fake_machine) -> None:
    threads.threads()
    assert advance(fake_machine, 0.2, others=2.0, own=0.5) == 1
    assert advance(fake_machine, 0.2, others=-1.0, own=0.0) == 2  # (clock-tick noise can go below 0)


def test_without_proc_stat_nothing_changes(fake_machine) -> None:
    fake_machine["proc_stat"] = False
    threads.threads()
    assert advance(fake_machine, 0.2, others=2.0, own=0.0) == 2
    assert fake_machine["set"] == []


def test_switching_the_policy_off_restores_the_blas_setting(fake_machine) -> None:
    threads.threads()
    advance(fake_machine, 0.2, others=1.0, own=1.0)
    mt.set_thread_policy(False)
    try:
        assert not mt.thread_policy_enabled()
        assert threads.threads() == 2
        assert fake_machine["set"] == [1, 2]
    finally:
        mt.set_thread_policy(True)
    assert fake_machine["set"] == [1, 2, 1]
    assert threads.threads() == 1


def test_set_thread_policy_rejects_non_bools() -> None:
    with pytest.raises(TypeError, match="enabled must be a bool, got str"):
        mt.set_thread_policy("yes")


def test_one_thread_picks_the_serial_kernel(fake_machine, monkeypatch) -> None:
    monkeypatch.setattr(dispatch, "_launch", {"seconds": 50e-6})
    x = np.zeros(1 << 20, dtype=np.float32)  # ~1 ms of work at the default 1 ns per element
    previous = mt.jit_enabled()
    mt.set_jit_enabled(True)
    try:
        threads.threads()
        assert dispatch.choose(x, "reference", "serial", "parallel") == "parallel"
        advance(fake_machine, 0.2, others=1.0, own=1.0)
        assert dispatch.choose(x, "reference", "serial", "parallel") == "serial"
    finally:
        mt.set_jit_enabled(previous)


def test_a_blas_without_thread_functions_is_left_alone(monkeypatch) -> None:
    monkeypatch.setattr(blas, "_threads", {"searched": True})
    assert threads._blas_threads() is None
    threads._set_blas_threads(1)  # a no-op, no error
    with blas.single_threaded():
        assert np.allclose(np.ones((2, 2)) @ np.ones((2, 2)), 2.0)


def test_a_first_reading_inside_single_threaded_keeps_the_blas_setting(monkeypatch) -> None:
    """A kernel's first use inside ``blas.single_threaded()`` (numba's loading reads the policy) must
    not record the temporary 1 thread as the BLAS's own setting."""
    setting = {"threads": 2}
    fake = {"searched": True, "get": lambda: setting["threads"], "set": lambda n: setting.update(threads=n)}
    monkeypatch.setattr(blas, "_threads", fake)
    monkeypatch.setattr(threads, "_state", {"enabled": True, "due": 0.0, "threads": None, "most": None, "last": None})
    with blas.single_threaded():
        assert setting["threads"] == 1
        threads.threads()  # (what a first kernel call inside would do)
    assert threads._state["most"] == 2 and setting["threads"] == 2


def test_the_real_machine_reading_is_sane() -> None:
    busy, own = threads._cpu_seconds() or (0.0, 0.0)
    assert busy >= 0 and own > 0
    assert 1 <= threads.threads() <= max(1, threads._state["most"])


def test_set_num_threads_caps_the_blas_and_the_kernels(fake_machine, monkeypatch) -> None:
    monkeypatch.setattr(dispatch, "_launch", {"seconds": 50e-6})
    x = np.zeros(1 << 20, dtype=np.float32)  # ~1 ms of work: parallel on two free cores
    previous = mt.jit_enabled()
    mt.set_jit_enabled(True)
    try:
        assert mt.get_num_threads() == 2
        mt.set_num_threads(1)
        assert (mt.get_num_threads(), threads.threads(), fake_machine["set"]) == (1, 1, [1])
        assert dispatch.choose(x, "reference", "serial", "parallel") == "serial"
        assert advance(fake_machine, 0.2, others=0.0, own=1.0) == 1  # a quiet machine stays under the cap
        mt.set_thread_policy(False)
        assert threads.threads() == 1 and fake_machine["set"][-1] == 1  # the cap holds with the policy off
        mt.set_thread_policy(True)
        mt.set_num_threads(2)
        assert dispatch.choose(x, "reference", "serial", "parallel") == "parallel"
        assert advance(fake_machine, 0.2, others=1.0, own=1.0) == 1  # the policy still lowers it
    finally:
        mt.set_thread_policy(True)
        mt.set_jit_enabled(previous)


@pytest.mark.parametrize("count", [0, -1, 1.5, True, "2"])
def test_set_num_threads_rejects_bad_counts(count) -> None:
    with pytest.raises(ValueError, match=r"set_num_threads: count must be an int >= 1, got"):
        mt.set_num_threads(count)


def test_numbas_pool_starts_with_the_blas_thread_count() -> None:
    pytest.importorskip("numba")
    code = (
        "import numba; from minitensor.kernels.runtime import dispatch, threads; dispatch.launch_seconds(); "
        "print(numba.get_num_threads(), min(threads._blas_threads() or 1, numba.config.NUMBA_NUM_THREADS))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True)
    pool, expected = out.stdout.split()
    assert pool == expected


def test_set_num_threads_caps_numbas_pool() -> None:
    numba = pytest.importorskip("numba")
    dispatch.launch_seconds()  # (starts the pool)
    before = mt.get_num_threads()
    try:
        mt.set_num_threads(1)
        assert numba.get_num_threads() == 1
    finally:
        mt.set_num_threads(before)
    assert numba.get_num_threads() == min(before, numba.config.NUMBA_NUM_THREADS)


def test_torch_set_num_threads_is_minitensors() -> None:
    from minitensor.compat import _torch

    assert _torch.set_num_threads is mt.set_num_threads and _torch.get_num_threads is mt.get_num_threads


@pytest.mark.parametrize(
    ("value", "enabled"), [(None, True), ("1", True), ("0", False), (" Off ", False), ("no", False)]
)
def test_the_environment_variable_sets_the_default_of_a_process(value, enabled) -> None:
    env = {k: v for k, v in os.environ.items() if k != "MINITENSOR_THREAD_POLICY"}
    if value is not None:
        env["MINITENSOR_THREAD_POLICY"] = value
    code = "import minitensor as mt; print(mt.thread_policy_enabled())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600, check=True)
    assert out.stdout.strip() == str(enabled)


def test_busy_time_counts_user_system_interrupts_and_steal_not_nice_idle_or_iowait() -> None:
    """``/proc/stat``'s columns: user nice system idle iowait irq softirq steal guest guest_nice; the
    niced processes (the background compiler) yield their cores, so they are not busy time."""
    stat = (
        "cpu  999 999 999 999 999 999 999 999 0 0\n"
        "cpu0 100 1000 20 5000 300 3 2 5 0 0\n"
        "cpu1 200 50 10 6000 0 0 0 0 0 0\n"
        "cpu2 7 7 7 7 7 7 7 7 0 0\n"
        "intr 12345\n"
    )
    assert threads._busy_seconds(stat, {0, 1}, 100) == (100 + 20 + 3 + 2 + 5 + 200 + 10) / 100

"""``kernels.runtime.blas_threads``: tasks on NumPy's BLAS threads, their records and the arrays they read."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from minitensor.kernels.runtime import blas, blas_threads
from minitensor.kernels.runtime.blas_threads import contiguous, record, records, scalar, split, view

FIELDS = blas_threads.HEAD + 3 * blas_threads.SLOT


@pytest.mark.parametrize("work,threads", [(10, 2), (7, 3), (2, 2), (1, 2), (0, 2), (5, 1)])
def test_split_covers_the_work_once_in_even_ranges(work, threads) -> None:
    ranges = split(work, threads)
    assert len(ranges) == threads
    assert [i for start, stop in ranges for i in range(start, stop)] == list(range(work))
    sizes = [stop - start for start, stop in ranges]
    assert max(sizes) - min(sizes) <= 1


def test_records_hold_ranges_scalar_and_each_array() -> None:
    a = np.zeros((2, 3, 4, 10), np.float32)[..., ::2]  # strided
    r = records([(0, 1), (1, 2)], [a, None], scalar=-2.5)
    assert r.shape == (2, blas_threads.HEAD + 2 * blas_threads.SLOT) and r.dtype == np.int64
    assert r[:, :2].tolist() == [[0, 1], [1, 2]]
    assert (r.view(np.float64)[:, 2] == -2.5).all()
    head = blas_threads.HEAD
    assert r[0, head] == a.ctypes.data
    assert r[0, head + 1 : head + 5].tolist() == list(a.shape)
    assert r[0, head + 5 : head + 9].tolist() == list(a.strides)
    assert (r[:, head + 9 :] == 0).all()  # (the None slot)
    assert (r[0, 2:] == r[1, 2:]).all()


def _task_body(pointer):
    """out[i] = scalar * a[i] + b[i] for i in the row's range of dim 0 (a strided, b and out contiguous)."""
    row = record(pointer, FIELDS)
    a, b, out = view(row, 0, np.float64), contiguous(row, 1, np.float64), contiguous(row, 2, np.float64)
    s = scalar(pointer)
    for i in range(row[0], row[1]):
        out[i] = s * a[i] + b[i]


@pytest.fixture(scope="module")
def task():
    if not blas_threads.available():
        pytest.skip("NumPy's BLAS is not OpenBLAS on pthreads here")
    return blas_threads.cfunc(_task_body)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_task_reads_and_writes_the_arrays_of_its_range(task, rng, threads, two_blas_threads) -> None:
    a = rng.standard_normal((5, 2, 3, 8))[..., 1::2]  # strides that are not C-contiguous
    b = rng.standard_normal((5, 2, 3, 4))
    out = np.full((5, 2, 3, 4), np.nan)
    blas_threads.run(task, records(split(5, threads), [a, b, out], scalar=0.5))
    np.testing.assert_array_equal(out, 0.5 * a + b)


def test_blas_is_single_threaded_inside_a_region_and_restored_after(task, rng, two_blas_threads) -> None:
    """Tasks call BLAS themselves: while a region runs BLAS is on one thread (a multi-threaded
    product started on a worker would wait for a free worker forever), and afterwards as before."""
    functions = blas.thread_functions()
    seen = []
    real = blas_threads._state["run"]
    before = functions["get"]()
    blas_threads._state["run"] = lambda *args: (seen.append(functions["get"]()), real(*args))[1]
    try:
        a = rng.standard_normal((2, 1, 1, 3))
        blas_threads.run(task, records(split(2, 2), [a, a, np.empty_like(a)], scalar=1.0))
    finally:
        blas_threads._state["run"] = real
    assert seen == [1] and functions["get"]() == before


def test_no_more_rows_than_blas_threads(task, rng) -> None:
    threads = blas.thread_functions()["get"]()
    a = rng.standard_normal((threads + 1, 1, 1, 1))
    with pytest.raises(ValueError, match=f"{threads + 1} record rows for {threads} BLAS threads"):
        blas_threads.run(task, records(split(threads + 1, threads + 1), [a, a, a], scalar=1.0))


def test_not_available_without_openblas_pthreads(monkeypatch) -> None:
    """A BLAS without ``gotoblas_pthread`` (Accelerate, MKL, an OpenMP OpenBLAS): not available,
    and the callers take numba's threads."""
    monkeypatch.setattr(blas_threads, "_state", {"searched": False, "run": None})
    monkeypatch.setattr(blas, "_libraries", lambda: [])
    assert not blas_threads.available()


_FAILING = """
import numpy as np
import minitensor as mt
from minitensor.kernels import attention
from minitensor.kernels.runtime import blas_threads
from minitensor.kernels.runtime.blas_threads import fail, record, records, split

mt.set_num_threads(2)
mt.set_thread_policy(False)
assert blas_threads.available()


def body(pointer):
    row = record(pointer, blas_threads.HEAD)
    try:
        if row[0] > 0:  # (the worker's row)
            np.empty(1 << 62)[0] = 1.0
    except Exception:
        fail(row)


try:
    blas_threads.run(blas_threads.cfunc(body), records(split(2, 2), []))
except RuntimeError as error:
    print("task:", error)
# attention's task: scores too large to allocate (zero-stride views of one element stand for the heads)
huge = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape=(1, 2, 1 << 31, 8), strides=(0, 0, 0, 0))
try:
    attention._forward_threaded(huge, huge, huge, None, np.float32(1), None, None, huge)
except RuntimeError as error:
    print("attention:", error)
"""


def test_a_failing_task_raises_instead_of_hanging(tmp_path) -> None:
    """A task that fails on a worker (here: memory it cannot allocate) marks its row; ``run`` raises
    RuntimeError after the region.  (Raised inside the task, numba would wait for the GIL the caller
    holds: the process would hang, hence the subprocess and its timeout.)"""
    if not blas_threads.available():
        pytest.skip("NumPy's BLAS is not OpenBLAS on pthreads here")
    script = tmp_path / "failing_task.py"
    script.write_text(_FAILING)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "task: run: a task failed on BLAS's threads (rows [1]" in done.stdout
    assert "attention: run: a task failed on BLAS's threads (rows [0, 1]" in done.stdout

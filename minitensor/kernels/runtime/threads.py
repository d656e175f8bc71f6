"""The thread policy: NumPy's BLAS and the parallel kernels use only the cores that are free.

Why.  A parallel region (a multi-threaded GEMM in OpenBLAS, a ``parallel=True``
kernel) splits its work over threads and waits for the last one.  When another
process keeps a core busy, the thread that landed there waits for the scheduler
(milliseconds) and the region takes as long as the slowest share: on a 2-core
machine with one busy core, a training step on 2 threads took 3-5x its quiet
time, and 1.0-1.1x on 1 thread.  On a quiet machine the threads pay off.  So the
count follows the machine: every ``CHECK_EVERY`` seconds (at most; the check is
made when an op asks, one clock read per call otherwise) :func:`threads` reads
how much CPU time the other processes took since the last check
(``/proc/stat``: the busy time of the cores this process may run on, minus this
process's own CPU time; niced processes, which yield their cores, do not count)
and uses ``round(free cores)`` threads, at least 1 and
at most the BLAS's own setting at the first check (``OPENBLAS_NUM_THREADS``, or
one per core).  NumPy's BLAS is set to that count (``openblas_set_num_threads``),
and ``dispatch.parallel_pays`` never takes a parallel kernel when it is 1.

Where ``/proc/stat`` or the OpenBLAS functions are missing (macOS, Windows,
another BLAS), nothing changes: the BLAS keeps its own setting and the kernels
their own thresholds.  ``set_thread_policy(False)`` switches the policy off
(the BLAS goes back to its setting), ``thread_policy_enabled()`` tells.
``set_num_threads(n)`` (PyTorch's ``torch.set_num_threads``) caps both at ``n``
threads, the policy on or off; ``get_num_threads()`` is the cap.  The environment
variable ``MINITENSOR_THREAD_POLICY=0`` makes "off" the default of a process: for runs
that must repeat bit for bit on a machine whose load changes (OpenBLAS's results depend
on its thread count).

>>> n = threads()
>>> 1 <= n <= (os.cpu_count() or 1)
True
"""

from __future__ import annotations

import os
import sys
import time

CHECK_EVERY = 0.1  # seconds between two readings of /proc/stat (20-75 µs each, as measured on two VMs)
_OFF = ("0", "false", "no", "off")  # values of MINITENSOR_THREAD_POLICY that switch the policy off
# threads: the policy's count; most: the BLAS's own setting or set_num_threads's; last: (time, busy s, own CPU s)
_state = {
    "enabled": os.environ.get("MINITENSOR_THREAD_POLICY", "1").strip().lower() not in _OFF,
    "due": 0.0,
    "threads": None,
    "most": None,
    "last": None,
}


def thread_policy_enabled() -> bool:
    """True when the thread count follows the machine's free cores (the default)."""
    return _state["enabled"]


def set_thread_policy(enabled: bool) -> None:
    """Switch the thread policy on (True) or off (False: BLAS and kernels keep their own threads)."""
    if not isinstance(enabled, (bool, int)):
        raise TypeError(f"set_thread_policy: enabled must be a bool, got {type(enabled).__name__}")
    if _state["most"] is not None and bool(enabled) != _state["enabled"]:
        _set_blas_threads(_state["threads"] if enabled else _state["most"])
    _state["enabled"] = bool(enabled)


def set_num_threads(count: int) -> None:
    """Use at most ``count`` threads for NumPy's BLAS and the parallel kernels (1: all serial)."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"set_num_threads: count must be an int >= 1, got {count!r}")
    threads()  # (the first reading records the BLAS's own setting)
    _state["most"] = _state["threads"] = count  # (the policy's next reading may lower it again)
    _set_blas_threads(count)
    cap_numba_threads()


def cap_numba_threads() -> None:
    """Cap numba's running thread pool (if any) at ``get_num_threads()``: its parallel kernels split
    their work over that many threads."""
    numba = sys.modules.get("numba")
    try:
        numba.threading_layer()  # ValueError until the pool runs (AttributeError: numba not loaded)
    except (AttributeError, ValueError):
        return
    numba.set_num_threads(min(get_num_threads(), numba.config.NUMBA_NUM_THREADS))


def get_num_threads() -> int:
    """The most threads BLAS and the parallel kernels may use (the BLAS's own setting unless
    ``set_num_threads`` changed it)."""
    threads()
    return _state["most"]


def threads() -> int:
    """The number of threads a parallel region may use now (see the module docstring)."""
    now = time.monotonic()
    if now >= _state["due"]:
        _state["due"] = now + CHECK_EVERY
        _update(now)
    return _state["threads"] if _state["enabled"] else _state["most"]


def _update(now: float) -> None:
    """Read the machine's load since the last reading and set the thread count from it."""
    if _state["most"] is None:
        _state["most"] = _blas_threads() or len(_cpus())
        _state["threads"] = _state["most"]
    reading = _cpu_seconds()
    if reading is None:  # no /proc/stat: keep the BLAS's own setting
        return
    last, _state["last"] = _state["last"], (now, *reading)
    if last is None:
        return
    others = ((reading[0] - last[1]) - (reading[1] - last[2])) / (now - last[0])  # cores busy elsewhere
    count = max(1, min(_state["most"], round(len(_cpus()) - others)))
    if count != _state["threads"]:
        if _state["enabled"]:
            _set_blas_threads(count)
        _state["threads"] = count


def _cpus() -> set:
    return os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))


def _cpu_seconds() -> tuple | None:
    """(busy seconds of the cores this process may use, this process's CPU seconds), or None."""
    try:
        with open("/proc/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return _busy_seconds(stat, _cpus(), os.sysconf("SC_CLK_TCK")), time.process_time()


def _busy_seconds(stat: str, cpus: set, tick: int) -> float:
    """The busy seconds of ``cpus`` in the text of ``/proc/stat``: user, system, interrupts and steal
    (guest is in user); not idle and iowait, and not nice: niced processes (the background compiler,
    ``background.py``, among them) take a core only when the threads of this process leave it."""
    busy = 0
    for line in stat.splitlines():
        name, *fields = line.split()
        if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
            ticks = [int(v) for v in fields]
            busy += sum(ticks[:8]) - ticks[1] - ticks[3] - ticks[4]  # (user nice system idle iowait irq softirq steal)
    return busy / tick


def _blas_threads() -> int | None:
    get = _blas_functions().get("get")
    return get() if get is not None else None


def _set_blas_threads(count: int) -> None:
    set_ = _blas_functions().get("set")
    if set_ is not None:
        set_(count)


def _blas_functions() -> dict:
    from . import blas

    return blas.thread_functions()

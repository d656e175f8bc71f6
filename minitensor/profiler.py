"""Where does the time go?  ``mt.profiler.profile`` times every op, as torch.profiler's basics.

Inside the ``with`` block every op's forward (named after its Function, e.g. ``Matmul``) and
every backward a graph node runs (``MatmulBackward``) is timed; ``record_function(name)``
adds a range of your own.  Outside, nothing is recorded and nothing is paid: the core tests
one module attribute per op (``autograd/_profiling.py``).

>>> import minitensor as mt
>>> a = mt.randn(8, 8, requires_grad=True)
>>> with mt.profiler.profile() as prof:
...     y = a
...     for _ in range(3):
...         y = y @ a
...     y.sum().backward()
>>> {e.key: e.count for e in prof.key_averages() if "Matmul" in e.key}
{'Matmul': 3, 'MatmulBackward': 3}
>>> table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
>>> prof.export_chrome_trace("trace.json")  # doctest: +SKIP

Times: ``CPU total`` includes the ops an op ran inside itself; ``Self CPU`` does not.
The trace is Chrome's trace event format ("X" events, microseconds): open it in
chrome://tracing or https://ui.perfetto.dev.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass

from .autograd import _profiling

__all__ = ["FunctionEvent", "FunctionEventAvg", "profile", "record_function"]

_SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "self_cpu_time", "count")


@dataclass
class FunctionEvent:
    """One timed call: ``name``, ``kind`` ('forward', 'backward' or 'user'), start and
    duration in microseconds from the start of the profile, self time (without nested
    events), thread id."""

    name: str
    kind: str
    start_us: float
    cpu_time_total: float
    self_cpu_time_total: float
    thread: int


@dataclass
class FunctionEventAvg:
    """All calls of one name: ``key``, ``count``, total and self time (microseconds)."""

    key: str
    count: int = 0
    cpu_time_total: float = 0.0
    self_cpu_time_total: float = 0.0

    @property
    def cpu_time(self) -> float:
        """Average total time per call (microseconds)."""
        return self.cpu_time_total / self.count

    @property
    def self_cpu_time(self) -> float:
        return self.self_cpu_time_total / self.count


class profile:  # noqa: N801  (torch.profiler.profile's name)
    """Record the ops run inside ``with profile() as prof:`` (all threads).

    ``activities`` and ``record_shapes`` are accepted for code written for torch.profiler
    (minitensor runs on the CPU; shapes are not recorded).
    """

    def __init__(self, activities=None, record_shapes: bool = False) -> None:
        self._events: list = []
        self._local = threading.local()  # per thread: the stack of open events
        self._lock = threading.Lock()
        self._origin = 0

    def __enter__(self) -> profile:
        if _profiling.active is not None:
            raise RuntimeError("profile: another profiler is already recording; nest record_function instead")
        self._events = []
        self._origin = time.perf_counter_ns()
        _profiling.active = self
        return self

    def __exit__(self, *exc) -> None:
        _profiling.active = None

    def time(self, name: str, kind: str, fn, *args, **kwargs):
        """Call ``fn(*args, **kwargs)`` and record how long it took (the core calls this)."""
        stack = self._stack()
        stack.append(0)  # time spent in events nested inside this one
        start = time.perf_counter_ns()
        try:
            return fn(*args, **kwargs)
        finally:
            self._close(name, kind, start, stack)

    def _stack(self) -> list:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def _close(self, name: str, kind: str, start: int, stack: list) -> None:
        duration = time.perf_counter_ns() - start
        nested = stack.pop()
        if stack:
            stack[-1] += duration
        event = FunctionEvent(
            name, kind, (start - self._origin) / 1e3, duration / 1e3, (duration - nested) / 1e3, threading.get_ident()
        )
        with self._lock:
            self._events.append(event)

    def events(self) -> list:
        """Every recorded call, in the order they ended."""
        return list(self._events)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        """One row per name (op forward, op backward, user range), in order of first appearance.

        ``group_by_input_shape`` and ``group_by_stack_n`` are accepted for PyTorch's code; shapes and
        stacks are not recorded, so the rows are grouped by name only."""
        rows = {}
        for e in self._events:
            row = rows.get(e.name)
            if row is None:
                row = rows[e.name] = FunctionEventAvg(e.name)
            row.count += 1
            row.cpu_time_total += e.cpu_time_total
            row.self_cpu_time_total += e.self_cpu_time_total
        return EventList(rows.values())

    def export_chrome_trace(self, path) -> None:
        """Write the events as a Chrome trace (JSON: "X" events, ts and dur in microseconds)."""
        pid = os.getpid()
        trace = [
            {"name": e.name, "cat": e.kind, "ph": "X", "ts": e.start_us, "dur": e.cpu_time_total, "pid": pid,
             "tid": e.thread}
            for e in self._events
        ]  # fmt: skip
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)


class record_function:  # noqa: N801  (torch.profiler.record_function's name)
    """Time a block of your own under ``name`` (a no-op when no profiler is recording).

    >>> with mt.profiler.profile() as prof:
    ...     with mt.profiler.record_function("my block"):
    ...         _ = mt.randn(3) * 2
    >>> [e.key for e in prof.key_averages()]
    ['Mul', 'my block']
    """

    def __init__(self, name: str) -> None:
        self.name = str(name)
        self._open = None

    def __enter__(self) -> record_function:
        prof = _profiling.active
        if prof is not None:
            stack = prof._stack()
            stack.append(0)
            self._open = (prof, stack, time.perf_counter_ns())
        return self

    def __exit__(self, *exc) -> None:
        if self._open is not None:
            prof, stack, start = self._open
            prof._close(self.name, "user", start, stack)
            self._open = None


class EventList(list):
    """The rows of ``key_averages()``; ``table()`` prints them as torch.profiler does."""

    def table(self, sort_by: str | None = None, row_limit: int = 100) -> str:
        """A text table: name, self CPU % and time, CPU total % and time, average, number of calls.

        Args:
            sort_by: None (order of first appearance) or one of ``cpu_time_total``,
                ``self_cpu_time_total``, ``cpu_time`` (average), ``self_cpu_time``, ``count``
                (largest first).
            row_limit: at most this many rows (-1: all).
        """
        if sort_by is not None and sort_by not in _SORT_KEYS:
            raise ValueError(f"table: sort_by must be None or one of {', '.join(_SORT_KEYS)}, got {sort_by!r}")
        rows = list(self)
        if sort_by is not None:
            rows.sort(key=lambda r: getattr(r, sort_by), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        self_total = sum(r.self_cpu_time_total for r in self) or 1.0
        width = max([len("Name")] + [len(r.key) for r in rows]) + 2
        heads = ("Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls")
        rule = "-" * width + ("  " + "-" * 12) * len(heads)
        lines = [rule, "Name".ljust(width) + "".join(f"  {h:>12}" for h in heads), rule]
        for r in rows:
            cells = (
                f"{100 * r.self_cpu_time_total / self_total:.2f}%",
                _format_us(r.self_cpu_time_total),
                f"{100 * r.cpu_time_total / self_total:.2f}%",
                _format_us(r.cpu_time_total),
                _format_us(r.cpu_time),
                str(r.count),
            )
            lines.append(r.key.ljust(width) + "".join(f"  {c:>12}" for c in cells))
        lines += [rule, f"Self CPU time total: {_format_us(sum(r.self_cpu_time_total for r in self))}"]
        return "\n".join(lines)


def _format_us(us: float) -> str:
    """Microseconds as torch.profiler prints them: '812.000us', '3.412ms', '1.250s'."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"

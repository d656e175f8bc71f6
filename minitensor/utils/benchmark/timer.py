"""``Timer``: time a statement as PyTorch's ``torch.utils.benchmark.Timer`` does.

``timeit(number)`` times one block of ``number`` runs (after a warm-up of ``number // 100``);
``blocked_autorange(min_run_time=0.2)`` first grows the block size by tens until one block takes
at least 1/1000 of ``min_run_time`` with the timer's own overhead below 0.01 %, then times blocks
until ``min_run_time`` seconds have passed; ``adaptive_autorange(threshold=0.1)`` keeps timing
blocks until the IQR is below ``threshold`` times the median (at least ``min_run_time``, at most
``max_run_time`` seconds).  All run with ``num_threads`` threads (``mt.set_num_threads``, the BLAS
and the numba kernels), restored afterwards.

>>> t = Timer("x @ x", setup="x = mt.randn(16, 16)", globals={"mt": mt}, label="matmul")
>>> m = t.timeit(100)
>>> m.number_per_run, len(m.times), m.title
(100, 1, 'matmul')
"""

from __future__ import annotations

import contextlib
import textwrap
import timeit as _timeit
from collections.abc import Callable

import numpy as np

from ... import get_num_threads, set_num_threads
from .common import Measurement, TaskSpec

__all__ = ["Timer", "timer"]

timer = _timeit.default_timer


@contextlib.contextmanager
def _threads(n: int):
    before = get_num_threads()
    set_num_threads(n)
    try:
        yield
    finally:
        set_num_threads(before)


def _dedent(code: str) -> str:
    code = textwrap.dedent(code)
    return (code[1:] if code and code[0] == "\n" else code).rstrip()


class Timer:
    """Time ``stmt`` after running ``setup`` once, with the names of ``globals`` in scope.

    Args:
        stmt, setup: Python source (strings); ``setup`` runs once before timing.
        global_setup: C++ only in PyTorch; given here it raises ValueError, as PyTorch's Python timer.
        timer: the clock (default: ``timeit.default_timer``).
        globals: the names the code sees; ``torch`` defaults to minitensor, so PyTorch's examples run.
        label, sub_label, description, env: names shown in the summary.
        num_threads: threads used while timing (default 1, as PyTorch).
        language: 'python' only (C++ timing needs PyTorch's C++ toolchain).
    """

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = timer,
        globals: dict | None = None,  # noqa: A002  (PyTorch's name)
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: str = "python",
    ) -> None:
        if not isinstance(stmt, str):
            raise ValueError(f"Timer: only a `str` stmt is supported, got {type(stmt).__name__}")
        if str(getattr(language, "name", language)).lower() not in ("python", "py"):
            raise ValueError(f"Timer: language must be 'python' (minitensor has no C++ timing), got {language!r}")
        if global_setup:
            raise ValueError(
                f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply be moved to `setup`."
            )
        if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError(f"Timer: num_threads must be a positive int, got {num_threads!r}")
        import minitensor  # (the root package, imported by now: the default `torch` of the statements)

        self._globals = dict(globals or {})
        self._globals.setdefault("torch", minitensor)
        stmt, setup = _dedent(stmt), _dedent(setup)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(
            stmt=stmt, setup=setup, global_setup=global_setup, label=label, sub_label=sub_label,
            description=description, env=env, num_threads=num_threads,
        )  # fmt: skip

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One block of ``number`` runs (after a warm-up block of ``number // 100``, at least 2)."""
        with _threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            block = self._timeit(number=number)
        return Measurement(number_per_run=number, raw_times=[block], task_spec=self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measurement_loop(self, number: int, stop_hook, min_run_time: float, max_run_time=None, callback=None) -> list:
        total, can_stop, times = 0.0, False, []
        with _threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop_hook(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        """Grow the block by tens until the timer's overhead is negligible and a block takes long enough."""
        with _threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                taken = self._timeit(number)
                if (overhead / taken <= 1e-4 and taken >= min_run_time / 1000) or taken > min_run_time:
                    break
                if number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> Measurement:
        """Blocks of an estimated size until ``min_run_time`` seconds have been spent timing."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda times: True, min_run_time, callback=callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(
        self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0, callback=None
    ) -> Measurement:
        """Blocks until the IQR is below ``threshold`` times the median (after 4 blocks and ``min_run_time``),
        or ``max_run_time`` seconds have passed."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times: list) -> bool:
            if len(times) > 3:
                return Measurement(number, times, self._task_spec).meets_confidence(threshold=threshold)
            return False

        times = self._measurement_loop(number, stop_hook, min_run_time, max_run_time, callback=callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

"""What a benchmark measured: ``TaskSpec`` (what was timed) and ``Measurement`` (the times and their summary),
as PyTorch's ``torch.utils.benchmark.utils.common``, printed the same way.

>>> m = Measurement(number_per_run=100, raw_times=[2.1e-4, 2.0e-4, 2.2e-4, 2.05e-4],
...                 task_spec=TaskSpec(stmt="x @ x", setup="pass"))
>>> print(str(m).split("\\n", 1)[1])
x @ x
  Median: 2.08 us
  IQR:    0.09 us (2.04 to 2.12)
  4 measurements, 100 runs per measurement, 1 thread
"""

from __future__ import annotations

import collections
import dataclasses
import math
import textwrap
from collections.abc import Iterable

import numpy as np

__all__ = ["Measurement", "TaskSpec", "select_unit", "trim_sigfig", "unit_to_english"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What was timed: the statement, its setup, and the labels that name it in a summary."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (with its sub-label), else the statement."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        if self.setup == "pass" or not self.setup:
            return ""
        return f"setup:\n{textwrap.indent(self.setup, '  ')}" if "\n" in self.setup else f"setup: {self.setup}"

    def summarize(self) -> str:
        """The title, the description and the setup, one section a line (multi-line ones followed by a blank)."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join([f"{i}\n" if "\n" in i else i for i in sections if i])


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The result of a ``Timer`` run: ``raw_times`` (seconds per block of ``number_per_run`` runs).

    ``times`` are per run; ``mean``, ``median`` and ``iqr`` (interquartile range) summarise them
    (quantiles interpolated linearly, as ``torch.quantile``).  ``print(m)`` gives PyTorch's summary,
    with its warning when the IQR is over 10 % (or 25 %) of the median.  The task's fields
    (``stmt``, ``label``, ``num_threads`` ...) read through.
    """

    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict | None = None

    def __post_init__(self) -> None:
        self._sorted_times: tuple = ()
        self._warnings: tuple = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name: str):
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self) -> list:
        """Seconds per run, one per measured block."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """How many digits of the median the spread of the middle half of the times supports (1 to 4)."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = np.array(self._sorted_times[n // 4 : math.ceil(3 * n / 4)])
        interval = max(1.645 * middle.std() / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        return min(max(math.floor(math.log10(self._median / interval)), 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self) -> None:
        if self.raw_times and not self._sorted_times:
            self._sorted_times = tuple(sorted(self.times))
            times = np.array(self._sorted_times, dtype=np.float64)
            self._median, self._p25, self._p75 = (float(np.quantile(times, q)) for q in (0.5, 0.25, 0.75))
            self._mean = float(times.mean())
            if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
                self._add_warning("This suggests significant environmental influence.")
            elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
                self._add_warning("This could indicate system fluctuation.")

    def _add_warning(self, msg: str) -> None:
        rel_iqr = self.iqr / self.median * 100
        self._warnings += (
            f"  WARNING: Interquartile range is {rel_iqr:.1f}% of the median measurement.\n           {msg}",
        )

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """Whether the IQR is below ``threshold`` times the median."""
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str:
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        """PyTorch's summary: the task, the median, the IQR (with 4 or more blocks), the counts, any warning."""
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [
            object.__repr__(self),
            self.task_spec.summarize(),
            f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}",
        ]
        if n >= 4:
            lines.append(
                f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to {self._p75 / scale:.2f})"
            )
        lines.append(
            f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
            f"{'per measurement,' if n > 1 else ','} {self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        )
        return "\n".join(lines + list(self._warnings)).strip()

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list:
        """One Measurement per task, holding the per-run times of all the measurements of that task."""
        grouped = collections.defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].append(m)
        return [
            Measurement(number_per_run=1, raw_times=[t for m in group for t in m.times], task_spec=spec)
            for spec, group in grouped.items()
        ]


def select_unit(t: float) -> tuple:
    """The unit to print ``t`` seconds in, and its scale: ('ns', 1e-9), ('us', 1e-6), ('ms', 1e-3) or ('s', 1)."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s") if t > 0 else "ns"
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures."""
    magnitude = math.ceil(math.log10(abs(x)))
    scale = 10 ** (magnitude - n)
    return float(round(x / scale) * scale)

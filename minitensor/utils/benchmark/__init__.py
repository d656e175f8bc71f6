"""``minitensor.utils.benchmark``, PyTorch's ``torch.utils.benchmark``: ``Timer`` and ``Measurement``.

- ``timer.py``: ``Timer`` (``timeit``, ``blocked_autorange``, ``adaptive_autorange``);
- ``common.py``: ``TaskSpec`` and ``Measurement`` (times, mean, median, IQR, PyTorch's printed summary).

>>> import minitensor as mt
>>> from minitensor.utils import benchmark
>>> m = benchmark.Timer("a + a", setup="a = torch.ones(8)").blocked_autorange(min_run_time=0.01)
>>> m.median > 0, m.num_threads
(True, 1)
"""

from __future__ import annotations

from .common import Measurement, TaskSpec, select_unit
from .timer import Timer

__all__ = ["Measurement", "TaskSpec", "Timer", "select_unit"]

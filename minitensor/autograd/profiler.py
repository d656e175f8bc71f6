"""``torch.autograd.profiler``: the older name of minitensor's profiler (``minitensor.profiler``), as in
PyTorch's tutorials: ``with torch.autograd.profiler.profile() as prof: ...`` then
``print(prof.key_averages().table(sort_by="self_cpu_time_total"))``.

The recording is ``minitensor.profiler``'s (every op's forward and backward, ``record_function``
ranges); this ``profile`` takes the older signature (``enabled``, ``use_cuda``, ``record_shapes`` ...)
and adds ``table()`` and ``str(prof)`` as PyTorch's does.

>>> import minitensor as mt
>>> with mt.autograd.profiler.profile() as prof:
...     with mt.autograd.profiler.record_function("forward"):
...         y = mt.randn(4, 4) @ mt.randn(4, 4)
>>> sorted(row.key for row in prof.key_averages())
['Matmul', 'forward']
"""

from __future__ import annotations

from .. import profiler as _profiler
from ..profiler import EventList, FunctionEvent, FunctionEventAvg, record_function

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "profile", "record_function"]


class profile(_profiler.profile):  # noqa: N801  (PyTorch's name)
    """Record the ops run inside ``with profile() as prof:``; nothing is recorded with ``enabled=False``.

    ``use_cuda=True`` or a ``use_device`` other than 'cpu' raises (minitensor has no GPU); ``record_shapes``,
    ``with_flops``, ``profile_memory``, ``with_stack``, ``with_modules`` and the other options of PyTorch's
    signature are accepted and not recorded.
    """

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device: str | None = None,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        use_kineto: bool = False,
        use_cpu: bool = True,
        **kwargs,
    ) -> None:
        if use_cuda or use_device not in (None, "cpu"):
            raise RuntimeError(
                f"profile: minitensor runs on the CPU only, got use_cuda={use_cuda}, use_device={use_device!r}"
            )
        super().__init__(record_shapes=record_shapes)
        self.enabled = bool(enabled)

    def __enter__(self) -> profile:
        return super().__enter__() if self.enabled else self

    def __exit__(self, *exc) -> None:
        if self.enabled:
            super().__exit__(*exc)

    @property
    def self_cpu_time_total(self) -> float:
        """The self time of every recorded event, summed (microseconds)."""
        return sum(e.self_cpu_time_total for e in self.events())

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs) -> str:
        """``key_averages().table(sort_by, row_limit)`` (PyTorch's other column options are accepted)."""
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit)

    def __str__(self) -> str:
        return self.table()

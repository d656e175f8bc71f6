"""An elementwise kernel's flat arrays split over NumPy's BLAS threads, each thread running the serial
kernel on its range of elements (``Kernel.map``'s two-thread path).

Why not the kernels' numba ``parallel`` versions: waking numba's pool costs ~100 µs on a small VM
(``dispatch.launch_seconds``: 103 µs on the 2-core AMD VM), so they pay only from ~0.4 ms of work,
and most elementwise passes of a training step or of a 2^17-element op are shorter.  A region on
BLAS's threads costs ~15-50 µs (``blas_threads.LAUNCH_SECONDS``), and its workers are the ones
that poll after a product anyway.  A split costs ~25-50 µs here (the region, its record, the
checks), so it pays for a few hundred µs of work (``dispatch.SPLIT_NS``).  Measured on 2^17 float32
values (median of 300, one thread / two): tan 272-275 / 184-190 µs (PyTorch's two threads
143-188), log1p 183 / 140, log 158 / 128, expm1 140 / 119, tanh 146 / 130, sin 133 / 116.

The task of a kernel is a numba ``cfunc`` made once per (kernel, dtype, number of arrays): it reads
its range and the arrays from its record row (``blas_threads.records``) and calls the kernel's
compiled dispatcher on the slices; numba's disk cache keeps it (0.55 s to compile, 3 ms to load),
and while it compiles in the background the caller runs the kernel serially.

>>> import numpy as np
>>> split_map(None, (np.zeros(4), np.zeros(4)))   # no kernel: nothing to split
False
"""

from __future__ import annotations

import importlib

import numpy as np

from . import blas_threads
from .blas_threads import HEAD, SLOT, contiguous, fail, record, records, split
from .jit import LazyKernel


def split_map(kernel, arrays: tuple) -> bool:
    """Run ``kernel(*arrays)`` (a ``LazyKernel`` on flat C-contiguous arrays of one dtype, the output
    last) over BLAS's threads, each on its share of the elements; False, with nothing run, where it
    cannot (no kernel, no BLAS threads, one share, mixed dtypes, its task still compiling)."""
    if not isinstance(kernel, LazyKernel) or not blas_threads.available() or not blas_threads.one_dtype(*arrays):
        return False
    if getattr(importlib.import_module(kernel.__module__), kernel.__name__, None) is not kernel:
        return False  # (the task finds the kernel by its module and name)
    count = blas_threads.shares(arrays[-1].size)
    if count < 2:
        return False
    task = _task(kernel.__module__, kernel.__name__, arrays[-1].dtype.char, len(arrays))
    if task is None:
        return False
    blas_threads.run(task, records(split(arrays[-1].size, count), [a.reshape(1, 1, 1, -1) for a in arrays]))
    return True


@blas_threads.task_factory
def _task(module: str, name: str, dtype_char: str, count: int):
    """The task running ``module.name``'s serial kernel on elements [start, stop) of its ``count``
    arrays (slots 0 .. count - 1, each a flat array as (1, 1, 1, n)) of the dtype ``dtype_char``
    ('f', 'd')."""
    kernel = getattr(importlib.import_module(module), name).compiled()
    dtype = np.dtype(dtype_char).type
    if count == 2:

        def task(pointer):
            row = record(pointer, HEAD + SLOT * 2)
            x, out = contiguous(row, 0, dtype)[0, 0, 0], contiguous(row, 1, dtype)[0, 0, 0]
            try:
                kernel(x[row[0] : row[1]], out[row[0] : row[1]])
            except Exception:  # (reported by ``blas_threads.run``)
                fail(row)

    else:

        def task(pointer):
            row = record(pointer, HEAD + SLOT * 3)
            x, y = contiguous(row, 0, dtype)[0, 0, 0], contiguous(row, 1, dtype)[0, 0, 0]
            out = contiguous(row, 2, dtype)[0, 0, 0]
            try:
                kernel(x[row[0] : row[1]], y[row[0] : row[1]], out[row[0] : row[1]])
            except Exception:
                fail(row)

    return task

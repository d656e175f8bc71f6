"""A serial kernel's arrays split by rows over NumPy's BLAS threads, each thread running the kernel on
its range of rows: the elements of flat arrays (``Kernel.map``), the rows of (R, D) arrays and their
(R,) row values (``Kernel.rows``: softmax and the other row kernels).

Why not the kernels' numba ``parallel`` versions: waking numba's pool costs ~100 µs on a small VM
(``dispatch.launch_seconds``: 103 µs on the 2-core AMD VM), so they pay only from ~0.4 ms of work,
and most passes of a training step or of a 2^17-element op are shorter.  A region on BLAS's
threads costs a few µs while its workers poll (after a product or the last region; on the 2-core
AMD VM they sleep within ~1-10 ms: a tanh split of 2^16 values took 64 µs back to back, 82 after
1 ms idle, 194 after 10 ms), and a split ~26 µs beyond half the work with its checks and record.
So in a loop of its own a split pays from ~55 µs of work; beside another library's spinning
threads only later (``dispatch.SPLIT_NS``).  Measured on that VM (median of 400, one thread / two,
float32): tanh 72.7 / 60.1 µs at 2^16 values, 146 / 99 at 2^17; tan 136 / 93, 273 / 162;
log_softmax of 256 / 512 / 2048 rows of 256 66 / 59, 132 / 95, 532 / 306.

The task of a kernel is a numba ``cfunc`` made once per (kernel, dtype, the arrays' numbers of dims):
it reads its range and the arrays from its record row (``blas_threads.records``) and calls the
kernel's compiled dispatcher on the arrays' rows in that range; numba's disk cache keeps it (0.55 s
to compile, 3 ms to load), and while it compiles in the background the caller runs the kernel
serially.  Each share's rows are the rows the serial kernel would give them: the values are the
serial kernel's, bit for bit.

>>> import numpy as np
>>> split_rows(None, (np.zeros(4), np.zeros(4)))   # no kernel: nothing to split
False
"""

from __future__ import annotations

import importlib

import numpy as np

from . import blas_threads
from .blas_threads import HEAD, SLOT, contiguous, fail, record, split
from .jit import LazyKernel, njit


def split_rows(kernel, arrays: tuple) -> bool:
    """Run ``kernel(*arrays)`` (a ``LazyKernel`` on two to four C-contiguous arrays of one dtype, 1-D or
    2-D, all of as many rows: their first dim) over BLAS's threads, each on its share of the rows;
    False, with nothing run, where it cannot (no kernel, no BLAS threads, one share, mixed dtypes,
    its task still compiling).  (Its checks and record take ~10 µs of the ~26 a split costs.)"""
    if not 2 <= len(arrays) <= 4 or not isinstance(kernel, LazyKernel) or not blas_threads.available():
        return False
    x = arrays[0]
    rows, dtype = x.shape[0], x.dtype
    for a in arrays:
        if a.dtype != dtype or a.shape[0] != rows or not a.flags.c_contiguous:
            return False
    count = blas_threads.shares(rows)
    if count < 2 or not _findable(kernel):
        return False
    task = _task(kernel.__module__, kernel.__name__, dtype.char, "".join([_DIMS[a.ndim] for a in arrays]))
    if task is None:
        return False
    slots = [a.reshape(_AS_SLOT[a.ndim] + a.shape) for a in arrays]  # (the 4-D slots of a record)
    blas_threads.run(task, blas_threads.records(split(rows, count), slots), calls_blas=False)
    return True


_DIMS = {1: "1", 2: "2"}
_AS_SLOT = {1: (1, 1, 1), 2: (1, 1)}  # the leading 1s that make an array a record's 4-D slot
_findable_kernels: set = set()  # (the kernels found under their module and name: a fact of the code)


def _findable(kernel) -> bool:
    """Whether ``kernel`` is its module's attribute of its name: the task finds it there."""
    if kernel in _findable_kernels:
        return True
    if getattr(importlib.import_module(kernel.__module__), kernel.__name__, None) is not kernel:
        return False
    _findable_kernels.add(kernel)
    return True


@njit(inline="always")
def _flat_rows(row, slot, dtype):
    """Elements [start, stop) of the 1-D array in ``slot`` (as (1, 1, 1, n))."""
    return contiguous(row, slot, dtype)[0, 0, 0][row[0] : row[1]]


@njit(inline="always")
def _matrix_rows(row, slot, dtype):
    """Rows [start, stop) of the 2-D array in ``slot`` (as (1, 1, R, D))."""
    return contiguous(row, slot, dtype)[0, 0][row[0] : row[1]]


@blas_threads.task_factory
def _task(module: str, name: str, dtype_char: str, dims: str):
    """The task running ``module.name``'s serial kernel on rows [start, stop) of its arrays (slot k
    holds array k: 1-D where ``dims[k]`` is '1', 2-D where '2') of the dtype ``dtype_char`` ('f', 'd')."""
    kernel = getattr(importlib.import_module(module), name).compiled()
    dtype = np.dtype(dtype_char).type
    a, b, c, d = (_matrix_rows if n == "2" else _flat_rows for n in dims.ljust(4, "1"))
    fields = HEAD + SLOT * len(dims)
    if len(dims) == 2:

        def task(pointer):
            row = record(pointer, fields)
            try:
                kernel(a(row, 0, dtype), b(row, 1, dtype))
            except Exception:  # (reported by ``blas_threads.run``)
                fail(row)

    elif len(dims) == 3:

        def task(pointer):
            row = record(pointer, fields)
            try:
                kernel(a(row, 0, dtype), b(row, 1, dtype), c(row, 2, dtype))
            except Exception:
                fail(row)

    else:

        def task(pointer):
            row = record(pointer, fields)
            try:
                kernel(a(row, 0, dtype), b(row, 1, dtype), c(row, 2, dtype), d(row, 3, dtype))
            except Exception:
                fail(row)

    return task

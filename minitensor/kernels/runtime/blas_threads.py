"""Parallel kernels on NumPy's BLAS threads: one thread pool for the products and the work between them.

Why.  After a multi-threaded matrix product OpenBLAS's worker threads keep
polling for the next one for ~0.1 s before they sleep (docs/performance.md,
"OpenBLAS's threads keep spinning after a call").  A numba ``parallel=True``
kernel started in that time, e.g. attention right after the projections,
shares a core with a thread that only waits, and loses to its serial version.
OpenBLAS's thread server, though, runs any C function ``f(void *)``:
``gotoblas_pthread(n, f, args, stride)`` calls ``f(args + i * stride)`` for
i < n, the first on the calling thread and the others on BLAS's workers, and
returns when all have returned.  So a kernel whose work splits into ranges
runs there as a numba ``cfunc`` of one pointer: the work lands on the threads
that are polling anyway, and no second pool competes with them.

The pointer is one row of a *record* array (int64, one row per thread), made
by :func:`records` from the threads' ranges (:func:`split`) and the arrays::

    [start, stop, scalar, failed, slot 0 (address, 4 sizes, 4 strides in bytes), slot 1, ...]

``start``/``stop`` is the thread's range of work, ``scalar`` a float64 (its
bits), ``failed`` 0 until the task fails, and each slot one 4-D array.  A
task must not raise: numba would report the error by taking the GIL, which
the caller holds while it waits for the workers, and the process would hang.
So a task catches every exception (``except Exception: fail(row)``) and
:func:`run` raises RuntimeError after the region.  Inside the task,
:func:`record` reads the row and :func:`view` makes a slot's array again: the
same memory, shape and strides the caller's array has (:func:`contiguous`
for a C-contiguous array, which numba then knows it is).  While a region runs,
BLAS is single-threaded (``blas.single_threaded``): the tasks call BLAS
themselves, and a multi-threaded product started on a worker would wait for a
free worker forever.

:func:`available` is False where NumPy's BLAS is not OpenBLAS on its pthreads
server (an OpenMP build, Accelerate, MKL): the callers then run numba's
``parallel=True`` kernels instead.

>>> a = np.zeros((1, 2, 3, 4))
>>> r = records(split(5, 2), [a], scalar=0.5)
>>> r[:, :2].tolist(), float(r.view(np.float64)[0, 2]), r[0, HEAD + 1 : HEAD + 5].tolist()
([[0, 2], [2, 5]], 0.5, [1, 2, 3, 4])
"""

from __future__ import annotations

import ctypes

import numpy as np

from . import blas
from .jit import CFuncFactory, njit
from .threads import threads

SLOT = 9  # int64 fields of one array in a record: address, 4 sizes, 4 strides
# What a region costs (the ``launch`` of ``dispatch.choose``), measured on the 2-core VM of docs/performance.md:
# two tasks with nothing to do took 14-17 µs in a loop, 46 right after a 2-thread product (the
# worker polling), the record of an attention pass 17-22 µs.  (After the process slept, a region
# took ~0.56 ms, a 512 x 512 product of OpenBLAS's own ~0.8 ms more than hot: both wake a worker.)
LAUNCH_SECONDS = 50e-6
HEAD = 4  # start, stop, scalar, failed
_state = {"searched": False, "run": None}


def available() -> bool:
    """True when tasks can run on NumPy's BLAS threads (OpenBLAS's pthreads server found)."""
    if not _state["searched"]:
        _state["searched"] = True
        if blas.available():
            _state["run"] = _find_pthread()
    return _state["run"] is not None


def _find_pthread():
    """OpenBLAS's ``gotoblas_pthread`` as a ctypes function that keeps the GIL while it runs (so no
    other Python thread changes BLAS's thread count meanwhile), or None."""
    for handle in blas._libraries():
        try:
            run = ctypes.PyDLL(handle._name).gotoblas_pthread
            parallel = _get_parallel(handle)
        except (AttributeError, OSError):
            continue
        if parallel == 1:  # 1: pthreads (0: sequential, 2: OpenMP)
            run.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
            run.restype = ctypes.c_int
            return run
    return None


def _get_parallel(handle) -> int:
    """OpenBLAS's ``openblas_get_parallel()`` under one of the names NumPy's builds export."""
    for prefix, suffix, _ in blas._CANDIDATES:
        function = getattr(handle, f"{prefix}openblas_get_parallel{suffix}", None)
        if function is not None:
            function.restype = ctypes.c_int
            return function()
    raise AttributeError("openblas_get_parallel")


def records(ranges, arrays, scalar: float = 0.0) -> np.ndarray:
    """The (len(ranges), HEAD + SLOT * len(arrays)) int64 record array: row i holds ``ranges[i]``,
    ``scalar`` and each 4-D array of ``arrays`` in its slot (address, sizes, strides; any strides;
    None leaves its slot zero).  (Made from one Python list: ~6 µs for two arrays, a part of what a
    region costs.)"""
    fields = [0, 0, int(np.float64(scalar).view(np.int64)), 0]
    for a in arrays:
        fields += [0] * SLOT if a is None else [a.ctypes.data, *a.shape, *a.strides]
    rows = []
    for start, stop in ranges:
        fields[0], fields[1] = start, stop
        rows += fields
    return np.array(rows, np.int64).reshape(len(ranges), len(fields))


def split(work: int, threads: int) -> list:
    """[start, stop) ranges that split ``work`` items over ``threads`` as evenly as they go."""
    bounds = [work * i // threads for i in range(threads + 1)]
    return list(zip(bounds[:-1], bounds[1:]))


def shares(work: int) -> int:
    """How many threads share ``work`` items: the policy's count (``threads.threads``), at most
    BLAS's own when tasks run on its threads, at most ``work``."""
    return max(1, min(threads(), blas_threads() if available() else threads(), work))


def one_dtype(*arrays) -> bool:
    """Whether the arrays (None skipped) share one dtype: a task reads its array slots in one dtype
    (``contiguous(row, slot, dtype)``), so other mixes take the caller's other path."""
    dtypes = {a.dtype for a in arrays if a is not None}
    return len(dtypes) <= 1


def blas_threads() -> int:
    """How many threads NumPy's BLAS uses now: the most rows :func:`run` takes (it may be set below
    minitensor's own count from outside, e.g. by threadpoolctl)."""
    return blas.thread_functions()["get"]()


def run(task, r: np.ndarray, calls_blas: bool = True) -> None:
    """Run the cfunc ``task`` on each row of ``r``, one row per BLAS thread; return when all are done.
    At most as many rows as BLAS has threads (a row beyond would wait for a worker that is not there).
    A task that calls no BLAS itself (``calls_blas=False``: an elementwise or row kernel) runs without
    setting BLAS single-threaded around the region (two calls, ~3 µs)."""
    threads = blas_threads()
    if len(r) > threads:
        raise ValueError(f"run: {len(r)} record rows for {threads} BLAS threads (at most one row a thread)")
    if calls_blas:
        with blas.single_threaded():
            _state["run"](len(r), task.address, r.ctypes.data, r.strides[0])
    else:
        _state["run"](len(r), task.address, r.ctypes.data, r.strides[0])
    if r[:, 3].any():
        raise RuntimeError(f"run: a task failed on BLAS's threads (rows {np.flatnonzero(r[:, 3]).tolist()}; "
                           "e.g. out of memory): its outputs are incomplete")  # fmt: skip


def cfunc(py_func):
    """``py_func(pointer)`` compiled as a task now: a C function of one pointer (cached on disk)."""
    return task_factory(lambda: py_func).compile_now()


def task_factory(make):
    """Decorator: ``make(*args)`` (a few plain values: a dtype's name, flags) returns a task's Python
    function; the decorated ``make(*args)`` returns it compiled (once per ``args``, from the disk cache
    or compiled), or None while it compiles in the background (``jit.CFuncFactory``)."""
    return CFuncFactory(make, "void(voidptr)", before=_bind)


# ------------------------------------------------------------------ inside a task
def _address_as_pointer(typing_context, address):  # (made a numba intrinsic on first use)
    """An int64 address as a ``void *`` (LLVM's inttoptr)."""
    from numba import types

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.voidptr))

    return types.voidptr(types.int64), codegen


@njit(inline="always")
def record(pointer, fields):
    """The task's row of the record: ``fields`` int64s at ``pointer``."""
    return _carray(pointer, (fields,), np.int64)


@njit(inline="always")
def fail(row):
    """Mark the task's row as failed (its ``except`` clause: see the module docstring)."""
    row[3] = 1


@njit(inline="always")
def scalar(pointer):
    """The record's float64 ``scalar``."""
    return _carray(pointer, (HEAD,), np.float64)[2]


@njit(inline="always")
def view(row, slot, dtype):
    """The 4-D array in ``slot`` of the record row ``row``, with elements of ``dtype``."""
    s = HEAD + SLOT * slot
    base = _carray(_pointer(row[s]), (1,), dtype)
    shape = (row[s + 1], row[s + 2], row[s + 3], row[s + 4])
    strides = (row[s + 5], row[s + 6], row[s + 7], row[s + 8])
    return np.lib.stride_tricks.as_strided(base, shape=shape, strides=strides)


@njit(inline="always")
def contiguous(row, slot, dtype):
    """The C-contiguous 4-D array in ``slot`` (typed so: kernels may reshape it), its strides unread."""
    s = HEAD + SLOT * slot
    return _carray(_pointer(row[s]), (row[s + 1], row[s + 2], row[s + 3], row[s + 4]), dtype)


@njit(inline="always")
def optional_contiguous(row, slot, dtype):
    """``contiguous``, or None where the slot is empty (None in ``records``): numba's Optional of
    the array, one compiled task for both (``shared_types.py``)."""
    return contiguous(row, slot, dtype) if row[HEAD + SLOT * slot] != 0 else None


@njit(inline="always")
def optional_view(row, slot, dtype):
    """``view``, or None where the slot is empty (as ``optional_contiguous``)."""
    return view(row, slot, dtype) if row[HEAD + SLOT * slot] != 0 else None


def _carray(*args):  # replaced by numba.carray when numba loads (see _bind)
    raise RuntimeError("minitensor: numba is not loaded")


def _pointer(*args):
    raise RuntimeError("minitensor: numba is not loaded")


def _bind(numba) -> None:
    """Give the task helpers numba's ``carray`` and the pointer intrinsic (before a task compiles)."""
    from numba.extending import intrinsic

    globals()["_carray"] = numba.carray
    globals()["_pointer"] = intrinsic(_address_as_pointer)

"""How a kernel runs: its NumPy reference, its serial numba kernel, a parallel one, and the choice.

Every kernel module declares each of its kernels once, as a ``Kernel``::

    _SOFTMAX = Kernel(_softmax_rows_numpy, _softmax_block, _softmax_rows_parallel, ns=0.6)

- ``reference``: plain NumPy with the kernel's signature, the definition the tests hold the
  kernels to (and what runs with the JIT off);
- ``serial``: the numba kernel, on all the rows at once: a row kernel's *block* function (the work
  of one block of rows; called on all of them it is the serial kernel, there is no wrapper);
- ``parallel`` (optional): the block function over blocks of ``BLOCK`` rows in a ``prange`` loop,
  for inputs big enough to pay for waking the threads;
- ``ns``: the serial kernel's time per element of the array it runs on, in nanoseconds (measured
  on one AVX-512 core; within a factor of two is enough), from which ``parallel_pays`` decides;
- ``numpy_simd`` (optional): the NumPy ufunc the reference calls (``"exp"``), for a kernel written
  because NumPy has no SIMD loop for it on some CPUs, where NumPy's AVX-512 loop is faster than the
  kernel: the reference runs on arrays of ``NUMPY_FROM`` elements or more, of the dtypes NumPy has
  that loop for here (``cpu.numpy_avx512``).

and runs it with ``on(x)(...)`` (the implementation for the array ``x``, then called),
``map(x)`` or ``map(grad, y)`` (an elementwise kernel on flat arrays), ``rows(*arrays)`` (a row
kernel on (R, D) arrays and (R,) row values) or ``along(x, dim, ...)`` (a row kernel along a dim).
The choice, per call: the reference when the JIT is off (``mt.set_jit_enabled(False)``,
``MINITENSOR_DISABLE_JIT=1``), ``x`` is empty or not float32/float64, or NumPy's own loop is the
faster here (``numpy_simd``); else the parallel kernel when it pays (``parallel_pays``: the serial
time is at least ``PAYS_FROM`` launches of the thread pool, and the thread policy allows more than
one thread), else the serial one, which ``map``, ``rows`` and ``along`` split by rows over BLAS's
threads from ``SPLIT_NS`` of work (``row_split.py``).

Why the parallel wrappers are written by hand, beside their block.  numba's disk cache
(``cache=True``: a later process loads the compiled kernel instead of compiling it again, ~1 s
each) only works for module-level functions: a wrapper made by a factory (a closure over the block
function) and a generic driver that takes the jitted block as an argument both miss the cache and
compile again in every process (checked with numba 0.68: each run writes a new cache entry for
them, where a module-level kernel loads its first one).  So each kernel module keeps its
3-4 line ``prange`` loop over blocks as a module-level function, and this module makes only the
dispatch, never a numba function (``_wake`` below is the one kernel here: it measures a launch).

The rows layout shared by the row kernels (``as_rows``, ``from_rows``): the dim a kernel works
along moved last, the array seen as a C-contiguous (rows, D) block.

>>> k = Kernel("reference", "serial", "parallel", ns=0.5)
>>> k.on(np.zeros(8, np.int64))       # not a kernel dtype
'reference'
>>> rows, moved_shape = as_rows(np.zeros((2, 3, 4)), 1)
>>> rows.shape, moved_shape
((8, 3), (2, 4, 3))
"""

from __future__ import annotations

import math
import time

import numpy as np

from . import blas, jit, row_split
from .cpu import numpy_avx512
from .jit import LazyKernel, njit, prange
from .threads import threads
from .transpose import contiguous

KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
MIN_LAUNCH = 20e-6  # seconds: no machine wakes its threads faster, so less work never goes parallel
PAYS_FROM = 4  # launches' worth of serial work from which a parallel kernel is faster (parallel_pays)
# elements from which NumPy's AVX-512 loop beats a ``numpy_simd`` kernel: below, the errstate around the
# reference's call (~1.5 µs) costs more than the faster loop saves (0.1-0.7 ns an element in float32)
NUMPY_FROM = 16384
# a map or row kernel's serial ns (``ns`` * elements) from which it splits over BLAS's threads
# (``row_split.py``).  A split costs ~26 µs beyond half the work, so in a loop of its own it pays from
# ~55 µs (2-core AMD VM: tanh 72.7 -> 60.1 µs at 2^16, 146 -> 99 at 2^17); beside another library's
# threads it pays later: in bench_ops (PyTorch's samples between ours) splits from 75 µs made the
# softmax family at 2^17 1.6-2.0x PyTorch against 1.3 unsplit, the maps no better.  So 150 µs.
SPLIT_NS = 150e3
_launch = {"seconds": None}  # what one parallel launch costs here (launch_seconds, measured once)
_numpy_loops = {"enabled": True}  # False: the kernels run where NumPy's loop is the faster too (numpy_loops)


class Kernel:
    """One kernel's implementations, ``reference``, ``serial`` and ``parallel`` (or None), which take
    the same arguments, and the choice between them per call (see the module docstring).
    ``launch``: what starting ``parallel`` costs, in seconds, when it does not run on numba's pool
    (default: numba's, ``launch_seconds()``); ``numpy_simd``: the ufunc whose AVX-512 loop beats the
    kernel (the module docstring)."""

    __slots__ = ("reference", "serial", "parallel", "ns", "launch", "numpy_simd")

    def __init__(
        self, reference, serial, parallel=None, *, ns: float = 1.0, launch: float | None = None, numpy_simd=None
    ) -> None:
        self.reference, self.serial, self.parallel = reference, serial, parallel
        self.ns, self.launch, self.numpy_simd = ns, launch, numpy_simd
        for version in (serial, parallel):
            if isinstance(version, LazyKernel) and version.fallback is None:
                version.fallback = reference  # (runs while the kernel compiles in the background: jit.py)

    def on(self, x: np.ndarray):
        """The implementation to run on the array ``x`` (its size and dtype decide; it need not be
        an argument itself): the caller writes ``kernel.on(x)(x, out, ...)``."""
        if not jit._state["enabled"] or x.size == 0 or x.dtype not in KERNEL_DTYPES:
            return self.reference
        if self.numpy_simd is not None and x.size >= NUMPY_FROM and _numpy_loops["enabled"]:
            if x.dtype in numpy_avx512(self.numpy_simd):
                return self.reference
        if self.parallel is not None and parallel_pays(x.size * self.ns * 1e-9, self.launch):
            return self.parallel
        return self.serial

    def map(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        """An elementwise kernel on flat arrays: ``out = f(x)`` by ``implementation(x, out)``, or, given
        ``y``, ``out = f(x, y)`` by ``implementation(x, y, out)`` (a backward pass: ``(grad, y)``).  x and
        y of one shape and dtype, any layout (``ravel()`` copies a non-contiguous one, and a broadcast one,
        which ``reshape(-1)`` would keep as a stride-0 view that a kernel runs 20x slower on); out a new
        array of the last one's shape and dtype.  Where the serial kernel would run long enough to pay
        for a region on BLAS's threads (``SPLIT_NS`` of work), its elements are split over them
        (``row_split.py``).  (Two arguments, not ``*arrays``: packing and unpacking them would cost
        ~0.25 µs, a twentieth of a small op.)"""
        if y is None:
            out = np.empty(x.shape, x.dtype)
            run, flat_x, flat_out = self.on(x), x.ravel(), out.ravel()
            if run is self.serial and x.size * self.ns >= SPLIT_NS and row_split.split_rows(run, (flat_x, flat_out)):
                return out
            run(flat_x, flat_out)
        else:
            out = np.empty(y.shape, y.dtype)
            run, flat_x, flat_y, flat_out = self.on(y), x.ravel(), y.ravel(), out.ravel()
            if (
                run is self.serial
                and y.size * self.ns >= SPLIT_NS
                and row_split.split_rows(run, (flat_x, flat_y, flat_out))
            ):
                return out
            run(flat_x, flat_y, flat_out)
        return out

    def along(self, x: np.ndarray, dim: int, *others: np.ndarray) -> np.ndarray:
        """A row kernel ``implementation(rows, *other_rows, out)`` applied along ``dim`` of ``x`` (and
        of ``others``, arrays of x's shape, e.g. a gradient); the result in x's layout and dtype."""
        rows, _ = as_rows(x, dim)
        other_rows = [as_rows(o, dim)[0] for o in others]
        result, out = _empty_result(x, dim, rows.shape)
        self.rows(rows, *other_rows, out)
        return result

    def rows(self, *arrays: np.ndarray) -> None:
        """A row kernel ``implementation(*arrays)`` on C-contiguous (R, D) arrays and (R,) row values
        of the first one's dtype, its outputs among them; split over BLAS's threads by rows where the
        serial kernel would run long enough (``SPLIT_NS``, as ``map``)."""
        x = arrays[0]
        run = self.on(x)
        if run is self.serial and x.size * self.ns >= SPLIT_NS and row_split.split_rows(run, arrays):
            return
        run(*arrays)


def flat_operand(a, like: np.ndarray) -> np.ndarray:
    """``a`` (an array or NumPy scalar that broadcasts to ``like``'s shape) as an elementwise kernel reads
    it: a flat array of like's shape and dtype, or a 1-element array when it is one value throughout (a
    size-1 array, a number, or an all-stride-0 view: the gradient ``sum`` and ``mean`` hand back).  A
    kernel indexes it ``a[i if full else 0]`` with ``full = a.size > 1`` set before its loop (LLVM then
    makes two vectorised loops).  Why not ``ravel()`` the broadcast view: the copy (~8 µs at 2^17
    float32) costs as much as the kernel, and a numba loop reading the stride-0 view is 6x slower."""
    if a.size == 1 or (a.size and not any(a.strides)):
        return np.full(1, a[(0,) * a.ndim], like.dtype)
    if a.shape != like.shape or a.dtype != like.dtype:
        return np.broadcast_to(a, like.shape).astype(like.dtype).ravel()
    return a.ravel()


class BlasKernel(Kernel):
    """A ``Kernel`` whose numba versions call NumPy's BLAS (``blas.gemm``): where numba finds no BLAS
    to call (``blas.available()``), the reference runs instead."""

    __slots__ = ()

    def on(self, x: np.ndarray):
        run = Kernel.on(self, x)
        return self.reference if run is not self.reference and not blas.available() else run


def numpy_loops(enabled: bool) -> bool:
    """Let ``Kernel.on`` pick NumPy's own loop where it is the faster (True, the default) or not (False:
    the kernels run on every CPU, as the tests of the kernels need); returns the previous setting."""
    previous, _numpy_loops["enabled"] = _numpy_loops["enabled"], bool(enabled)
    return previous


def choose(x: np.ndarray, reference, serial, parallel=None, ns: float = 1.0, launch: float | None = None):
    """What ``Kernel(reference, serial, parallel, ns=ns, launch=launch).on(x)`` picks, without making
    the Kernel: for a choice whose ``ns`` or implementations depend on the call (attention's, from
    the shapes of its heads).  A numba kernel picked gets ``reference`` as its fallback."""
    if not jit._state["enabled"] or x.size == 0 or x.dtype not in KERNEL_DTYPES:
        return reference
    run = parallel if parallel is not None and parallel_pays(x.size * ns * 1e-9, launch) else serial
    if isinstance(run, LazyKernel) and run.fallback is None:
        run.fallback = reference  # (runs while the kernel compiles in the background: jit.py)
    return run


def parallel_pays(serial_seconds: float, launch: float | None = None) -> bool:
    """True when splitting ``serial_seconds`` of work over the threads saves more than it costs.

    A launch costs ``launch`` or ``launch_seconds()`` (numba's threads wake up), and two threads save
    at most half the work, in practice about a third (memory bandwidth, each block's own start): so
    it pays from ``PAYS_FROM`` launches' worth of work, when the thread policy (``threads.threads()``)
    allows more than one thread.
    """
    if serial_seconds < PAYS_FROM * MIN_LAUNCH:
        return False
    return threads() > 1 and serial_seconds >= PAYS_FROM * (launch_seconds() if launch is None else launch)


def launch_seconds() -> float:
    """What one launch of a parallel kernel costs on this machine, measured on the first call: the
    median of 9 launches of a kernel with nothing to do.  Waking numba's sleeping threads takes
    ~10 µs on a desktop, but ~100 µs on a virtual machine whose idle cores halt (measured on the
    2-core VM of docs/performance.md), so the work that pays for threads differs tenfold.  Infinite
    (nothing pays) before numba is loaded and while the kernel that measures it compiles in the
    background (``jit.py``)."""
    if _launch["seconds"] is None:
        out = np.zeros(64)
        if not (jit.numba_loaded() or jit.jit_waits()) or not _wake.ready(out):  # (no parallel kernel until measured)
            return math.inf
        _wake(out)  # start the pool
        times = []
        for _ in range(9):
            start = time.perf_counter()
            _wake(out)
            times.append(time.perf_counter() - start)
        _launch["seconds"] = max(MIN_LAUNCH, sorted(times)[len(times) // 2])
    return _launch["seconds"]


@njit(parallel=True)
def _wake(out):
    """A parallel kernel with (almost) nothing to do: its run time is the launch cost."""
    for i in prange(out.size):
        out[i] += 1.0


# ------------------------------------------------------------------ the rows layout
def as_rows(x: np.ndarray, dim: int) -> tuple:
    """(C-contiguous (rows, D) array with ``dim`` last, x's shape with ``dim`` moved last): a view
    when ``dim`` is already last and ``x`` is contiguous, else a copy.  (A reduction over ``dim``
    has the shape ``moved_shape[:-1]``.)"""
    if x.ndim <= 1:
        return np.ascontiguousarray(x).reshape(1, -1), x.shape
    moved = x if dim % x.ndim == x.ndim - 1 else np.moveaxis(x, dim, -1)
    rows = contiguous(moved).reshape(math.prod(moved.shape[:-1]), moved.shape[-1])
    return rows, moved.shape


def as_rows_shape(x: np.ndarray, dim: int) -> tuple:
    """The ``moved_shape`` that ``as_rows(x, dim)`` gives, without moving anything."""
    if x.ndim <= 1:
        return x.shape
    d = dim % x.ndim
    return x.shape[:d] + x.shape[d + 1 :] + (x.shape[d],)


def from_rows(rows: np.ndarray, moved_shape: tuple, dim: int, like: np.ndarray) -> np.ndarray:
    """The inverse of ``as_rows``: ``rows`` in ``like``'s layout (``dim`` back in its place);
    ``rows`` itself when ``dim`` is last and it has like's shape already."""
    if like.ndim <= 1 or dim % like.ndim == like.ndim - 1:
        return rows if rows.shape == like.shape else rows.reshape(like.shape)
    return np.moveaxis(rows.reshape(moved_shape), -1, dim)


def _empty_result(x: np.ndarray, dim: int, rows_shape: tuple) -> tuple:
    """``(result, result_rows)``: a new array for a result in x's layout and its (rows, D) view for a
    kernel.  With ``dim`` last the result owns its memory (as a gradient, the autograd engine keeps
    it without a copy); else it is a view of the rows with ``dim`` moved back."""
    if x.ndim <= 1 or dim % x.ndim == x.ndim - 1:
        result = np.empty(x.shape, x.dtype)
        return result, result.reshape(rows_shape)
    result_rows = np.empty(rows_shape, x.dtype)
    return from_rows(result_rows, as_rows_shape(x, dim), dim, x), result_rows

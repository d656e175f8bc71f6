"""The JIT switch and lazy numba compilation.

Every kernel in this package is a plain Python function written in the
subset numba compiles, decorated with ``@njit(...)`` from this module.  The
decorator does not import numba: the first call of a kernel does (importing
numba costs ~0.6 s, so ``import minitensor`` stays fast), compiles it with
``cache=True`` (later processes load it from disk) and remembers it.  A
kernel may call another kernel: numba sees the compiled one.

Each kernel has a NumPy reference beside it with the same signature, and
each kernel module has plain functions (``softmax_forward``, ...) that pick
one per call with ``choose(x, reference, serial, parallel)``:

- ``mt.set_jit_enabled(False)`` or ``with mt.jit_disabled():`` selects the
  NumPy references at run time;
- the environment variable ``MINITENSOR_DISABLE_JIT=1`` makes that the default;
- ``mt.jit_enabled()`` says which is active.

Threads.  A kernel compiled with ``parallel=True`` runs on numba's thread
pool, right between NumPy's BLAS calls that run on OpenBLAS's pool.  With
GNU OpenMP (numba's usual pool on Linux) the idle workers spin for a few
milliseconds after each kernel and steal the cores from the next matrix
product (measured on 2 cores: +50% to +100% on a GEMM, relu, GEMM chain).
So before numba starts its pool, ``OMP_WAIT_POLICY=PASSIVE`` is set for the
moment the pool starts (only if you have not set it yourself; the variable is
restored afterwards, so nothing else in the process sees it).
"""

from __future__ import annotations

import functools
import os
import threading

import numpy as np

_state = {"enabled": os.environ.get("MINITENSOR_DISABLE_JIT", "0").strip().lower() in ("", "0", "false", "no")}
_compile_lock = threading.RLock()  # re-entrant: compiling a kernel compiles the kernels it calls


def jit_enabled() -> bool:
    """True when kernels run numba-compiled code, False when they run the NumPy references."""
    return _state["enabled"]


def set_jit_enabled(enabled: bool) -> None:
    """Switch every kernel between its numba version (True) and its NumPy reference (False)."""
    if not isinstance(enabled, (bool, int)):
        raise TypeError(f"set_jit_enabled: enabled must be a bool, got {type(enabled).__name__}")
    _state["enabled"] = bool(enabled)


class jit_disabled:
    """``with mt.jit_disabled():`` (or as a decorator) runs the NumPy reference paths."""

    def __enter__(self) -> None:
        self._prev = jit_enabled()
        set_jit_enabled(False)

    def __exit__(self, *exc) -> None:
        set_jit_enabled(self._prev)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with jit_disabled():
                return fn(*args, **kwargs)

        return wrapper


PARALLEL_MIN = 1 << 15  # elements; below this a parallel launch (~10-30 us) costs more than it saves
_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def choose(x: np.ndarray, reference, serial, parallel=None):
    """The implementation to run on array ``x``: ``reference`` (NumPy) when the JIT is off, ``x`` is
    empty or not float32/float64; else ``parallel`` for large ``x`` (when given), else ``serial``.

    The three take the same arguments, so the caller writes ``choose(x, ...)(x, out, ...)``.
    """
    if not _state["enabled"] or x.size == 0 or x.dtype not in _KERNEL_DTYPES:
        return reference
    if parallel is not None and x.size >= PARALLEL_MIN:
        return parallel
    return serial


class LazyKernel:
    """A function compiled by numba on its first call (``cache=True``)."""

    def __init__(self, py_func, options: dict) -> None:
        self.py_func = py_func
        self.options = options
        self._compiled = None
        functools.update_wrapper(self, py_func)

    def compiled(self):
        """The numba dispatcher, compiling (or loading from the disk cache) on first use."""
        if self._compiled is None:
            with _compile_lock:
                if self._compiled is None:
                    import numba

                    if self.options.get("parallel"):
                        _start_threads(numba)
                    # The module's ``prange`` is plain ``range`` until numba is loaded.
                    self.py_func.__globals__["prange"] = numba.prange
                    self._compiled = numba.njit(cache=True, **self.options)(self.py_func)
        return self._compiled

    def __call__(self, *args):
        return self.compiled()(*args)

    @property
    def _numba_type_(self):
        """What numba sees when another kernel calls this one: the compiled dispatcher."""
        return self.compiled()._numba_type_


def njit(py_func=None, **options):
    """Decorator: ``@njit`` or ``@njit(parallel=True)`` -> a ``LazyKernel`` (numba imported on first call)."""
    if py_func is not None:
        return LazyKernel(py_func, options)
    return functools.partial(LazyKernel, options=options)


def prange(*args):
    """``range`` until numba is loaded; a kernel module's ``prange`` is then ``numba.prange``."""
    return range(*args)


def _start_threads(numba) -> None:
    """Start numba's thread pool with OpenMP's passive wait policy (see the module docstring)."""
    if os.environ.get("OMP_WAIT_POLICY") is not None:
        numba.get_num_threads()
        return
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        numba.get_num_threads()  # launches the pool (a no-op once it runs)
    finally:
        del os.environ["OMP_WAIT_POLICY"]

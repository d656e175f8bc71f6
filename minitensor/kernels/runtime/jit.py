"""The JIT switch and lazy numba compilation.

Every kernel in this package is a plain Python function written in the
subset numba compiles, decorated with ``@njit(...)`` from this module.  The
decorator does not import numba: the first call of a kernel does (importing
numba costs ~0.6 s, so ``import minitensor`` stays fast), compiles it with
``cache=True`` (later processes load it from disk) and remembers it.  A
kernel may call another kernel: numba sees the compiled one.

Each kernel has a NumPy reference beside it with the same signature, and
each kernel module declares the two (and a parallel version, where there is
one) as a ``dispatch.Kernel``, which picks one per call:

- ``mt.set_jit_enabled(False)`` or ``with mt.jit_disabled():`` selects the
  NumPy references at run time;
- the environment variable ``MINITENSOR_DISABLE_JIT=1`` makes that the default;
- ``mt.jit_enabled()`` says which is active.

Threads.  A kernel compiled with ``parallel=True`` runs on numba's thread
pool, right between NumPy's matrix products, which run on OpenBLAS's own
threads.  On numba's usual OpenMP layer (GNU OpenMP on Linux) idle workers
spin for milliseconds after each kernel and take the cores from the next
matrix product: measured on 2 cores, a 64K-element softmax kernel followed
by a 512x512 GEMM took 8 ms per pair instead of 2.  (Setting
``OMP_WAIT_POLICY=PASSIVE`` cures it, but only before the OpenMP library is
loaded, and PyTorch, for one, loads it at import.)  So the kernels start
numba's pool on its "workqueue" layer, whose workers sleep on a condition
variable, unless ``NUMBA_THREADING_LAYER`` chooses a layer or a pool already
runs.  (workqueue does not support parallel kernels launched from several
threads at once; minitensor's kernels hold the GIL, so they never are.)
Attention's heads avoid the second pool altogether where they can: they run
on OpenBLAS's own threads (``blas_threads.py``), and their ``Kernel`` takes that
launch cost instead of numba's (its ``launch`` argument).
"""

from __future__ import annotations

import functools
import os
import threading

from .threads import cap_numba_threads

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
                    numba = load_numba()
                    if self.options.get("parallel"):
                        _start_threads(numba)
                    # The module's ``prange`` is plain ``range`` until numba is loaded.
                    self.py_func.__globals__["prange"] = numba.prange
                    self._compiled = numba.njit(cache=True, **self.options)(self.py_func)
        return self._compiled

    def __call__(self, *args):
        return self.compiled()(*args)

    @property
    def targetoptions(self) -> dict:
        """The decorator's options: where numba's inliner looks for ``inline="always"`` when another
        kernel calls this one (without it the call stays a call, and the caller's loop does not vectorise)."""
        return self.options

    @property
    def _numba_type_(self):
        """What numba sees when another kernel calls this one: the compiled dispatcher."""
        return self.compiled()._numba_type_


def load_numba():
    """Import numba (once), make NumPy's BLAS callable from kernels (``blas.register``) and stamp the
    kernels' disk cache with all kernel files (``cache.py``); returns numba."""
    import numba

    from . import blas, cache

    with _compile_lock:
        blas.register()
        cache.install(numba)
    return numba


def njit(py_func=None, **options):
    """Decorator: ``@njit`` or ``@njit(parallel=True)`` -> a ``LazyKernel`` (numba imported on first call)."""
    if py_func is not None:
        return LazyKernel(py_func, options)
    return functools.partial(LazyKernel, options=options)


def prange(*args):
    """``range`` until numba is loaded; a kernel module's ``prange`` is then ``numba.prange``."""
    return range(*args)


def _start_threads(numba) -> None:
    """Start numba's thread pool on its "workqueue" layer (see the module docstring), unless
    ``NUMBA_THREADING_LAYER`` chooses one or the pool already runs."""
    if "NUMBA_THREADING_LAYER" not in os.environ:
        try:
            numba.threading_layer()  # the running layer; ValueError while none is
        except ValueError:
            numba.config.THREADING_LAYER = "workqueue"
    numba.get_num_threads()  # launches the pool (a no-op once it runs)
    cap_numba_threads()

"""The JIT switch and lazy numba compilation.

Every kernel in this package is a plain Python function written in the
subset numba compiles, decorated with ``@njit(...)`` from this module.  The
decorator does not import numba: the first call of a kernel does (importing
numba costs ~0.6 s, so ``import minitensor`` stays fast), compiles it with
``cache=True`` (later processes load it from disk) and remembers it.

Each kernel has a NumPy reference beside it with the same signature;
``dispatch(jitted, reference)`` picks one per call:

- ``mt.set_jit_enabled(False)`` or ``with mt.jit_disabled():`` selects the
  NumPy references at run time;
- the environment variable ``MINITENSOR_DISABLE_JIT=1`` makes that the default;
- ``mt.jit_enabled()`` says which is active.
"""

from __future__ import annotations

import functools
import os
import threading

_state = {"enabled": os.environ.get("MINITENSOR_DISABLE_JIT", "0").strip().lower() in ("", "0", "false", "no")}
_compile_lock = threading.Lock()


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
                    import numba

                    # The module's ``prange`` is plain ``range`` until numba is loaded.
                    self.py_func.__globals__["prange"] = numba.prange
                    self._compiled = numba.njit(cache=True, **self.options)(self.py_func)
        return self._compiled

    def __call__(self, *args):
        return self.compiled()(*args)


def njit(**options):
    """Decorator: ``@njit(parallel=True)`` -> a ``LazyKernel`` (numba imported on first call)."""

    def wrap(py_func):
        return LazyKernel(py_func, options)

    return wrap


def prange(*args):
    """``range`` until numba is loaded; a kernel module's ``prange`` is then ``numba.prange``."""
    return range(*args)

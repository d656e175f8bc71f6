"""The JIT switch and lazy numba compilation, without waiting for the compiler.

Every kernel in this package is a plain Python function written in the
subset numba compiles, decorated with ``@njit(...)`` from this module.  The
decorator does not import numba: the first call of a kernel does (importing
numba costs ~0.6 s, so ``import minitensor`` stays fast).  numba makes machine
code for each combination of argument types a kernel is called with (float32
or float64, contiguous or not, an optional array or None): a *specialisation*,
0.1 to 16 s of compiling each, saved in numba's disk cache (``cache=True``,
``cache.py``), from which a later process loads it in milliseconds.  A kernel
may call another kernel: numba sees the compiled one (for its arguments' plain types:
``f(x, 0)`` there compiles ``f`` for an int64, as ``f(x, i)`` does).  A kernel may declare
arguments that may be None (``@njit(optional={"mask": "q"})``), arrays of any layout
(``any_layout=``) or read-only (``read_only=``): one specialisation then serves them all
(``shared_types.py``).

Each kernel has a NumPy reference beside it with the same signature, and
each kernel module declares the two (and a parallel version, where there is
one) as a ``dispatch.Kernel``, which picks one per call and gives the kernel
its reference as its ``fallback``:

- ``mt.set_jit_enabled(False)`` or ``with mt.jit_disabled():`` selects the
  NumPy references at run time;
- the environment variable ``MINITENSOR_DISABLE_JIT=1`` makes that the default;
- ``mt.jit_enabled()`` says which is active.

No waiting for the compiler.  When a kernel is called with argument types it has
no machine code for, and none is in the disk cache, the call runs its fallback
(the NumPy reference) and the specialisation is compiled by a background process
(``background.py``) into the disk cache; a later call with those types finds it
there, loads it and runs it.  So on a fresh machine a program starts at the speed
of the NumPy references and switches kernel by kernel as they arrive; the results
of the two agree to rounding (the tests hold them to it), not bit for bit.  There it
does not even import numba (0.2-0.6 s) until the first kernel has arrived: a kernel with
no index file in the disk cache (``cache.has_index``) runs its reference until the
background process answers (``LazyKernel._before_numba``).
``MINITENSOR_JIT_WAIT=1`` in the environment, or ``mt.set_jit_wait(True)``, makes
every such call compile in the process and wait instead (for benchmarks, and for
runs that must repeat bit for bit from the first call).  A kernel without a fallback
(a helper called only from other kernels) always compiles where it is called.

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
import importlib
import os
import sys
import threading

from . import background, cache, shared_types
from .threads import cap_numba_threads

_TRUE = ("1", "true", "yes", "on")
_state = {"enabled": os.environ.get("MINITENSOR_DISABLE_JIT", "0").strip().lower() in ("", "0", "false", "no")}
_compiling = {"wait": os.environ.get("MINITENSOR_JIT_WAIT", "0").strip().lower() in _TRUE}
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


def jit_waits() -> bool:
    """True when a kernel's first call with new argument types compiles them and waits; False (the
    default) when it runs the NumPy reference while a background process compiles them."""
    return _compiling["wait"]


def set_jit_wait(wait: bool) -> None:
    """True: a kernel's first call with new argument types compiles in this process and waits (the
    environment variable ``MINITENSOR_JIT_WAIT=1`` makes it the default); False: the NumPy reference
    runs meanwhile and a background process compiles (see the module docstring)."""
    if not isinstance(wait, (bool, int)):
        raise TypeError(f"set_jit_wait: wait must be a bool, got {type(wait).__name__}")
    _compiling["wait"] = bool(wait)


class _NotCached(Exception):
    """Raised in place of compiling, where only numba's disk cache may be read (``_from_cache``)."""


def _refuse_to_compile(*args, **kwargs):
    raise _NotCached


def _from_cache(made, load):
    """``load()`` (numba's own path: machine code from the disk cache, else a compilation) with the
    compiler of ``made`` (a dispatcher or cfunc) refused: its result, or None where numba would have
    compiled.  Where the function has no cache index file yet (a fresh machine), None at once:
    numba's look-up would cost ~40 ms (it refreshes its target's registries first)."""
    index = getattr(getattr(made._cache, "_cache_file", None), "_index_path", None)
    if index is not None and not os.path.exists(index):
        return None
    compiler = made._compiler
    compiler.compile = _refuse_to_compile  # (an instance attribute hides the method until deleted)
    try:
        return load()
    except _NotCached:
        return None
    finally:
        del compiler.compile


def _machine_code(pending: dict, key, load, compile_here, target, args: tuple):
    """The machine code of a specialisation (``key``): ``compile_here()`` when the process waits for
    compilation; else from the disk cache (``load()``, never compiling), or None while the background
    process compiles it (the request, for a call of the kernel or factory ``target`` with ``args``, is
    sent on first sight and remembered in ``pending``); once it has answered, ``compile_here()``
    loads it (or, had it failed there, compiles)."""
    if _compiling["wait"]:
        return compile_here()
    handle = pending.get(key)
    if handle is None:
        code = load()
        if code is not None:
            return code
        handle = _background_request(target, args)
        if handle is None:  # (no background process here, or it could not find or call the kernel)
            return compile_here()
        pending[key] = handle
        return None
    if background.finished(handle) is None:
        return None
    del pending[key]
    return compile_here()


class LazyKernel:
    """A function compiled by numba on its first call (``cache=True``); with a ``fallback`` (its
    NumPy reference, same signature), a call whose argument types are not compiled yet runs the
    fallback while they compile in the background (see the module docstring)."""

    def __init__(self, py_func, options: dict) -> None:
        self.py_func = py_func
        self.options = dict(options)
        # arguments compiled once for several types (``shared_types.py``)
        declared = {key: self.options.pop(key) for key in shared_types.DECLARATIONS if key in self.options}
        self._shared = shared_types.rules(py_func, **declared)
        self.fallback = None
        self._compiled = None
        self._numba_compile = None  # numba's own compile-for-these-arguments method of the dispatcher
        self._pending: dict = {}  # argument types -> the background request compiling them
        self._first_request = None  # the background request made before numba was imported for it
        self._uncached = None  # True when no index file of the kernel is in the disk cache (asked once)
        functools.update_wrapper(self, py_func)

    def compiled(self):
        """The numba dispatcher, made (importing numba) on first use."""
        if self._compiled is None:
            with _compile_lock:
                if self._compiled is None:
                    numba = load_numba()
                    if self.options.get("parallel"):
                        _start_threads(numba)
                    # The module's ``prange`` is plain ``range`` until numba is loaded.
                    self.py_func.__globals__["prange"] = numba.prange
                    dispatcher = numba.njit(cache=True, **self.options)(self.py_func)
                    cache.guard_saves(dispatcher._cache)
                    if self._shared:
                        shared_types.share(dispatcher, self._shared, numba.core.types)
                    shared_types.plain_calls(dispatcher, numba.core.types)
                    # numba calls ``_compile_for_args`` for argument types it has no machine code for
                    self._numba_compile = dispatcher._compile_for_args
                    dispatcher._compile_for_args = self._new_types
                    self._compiled = dispatcher
        return self._compiled

    def __call__(self, *args):
        return (self._compiled or self._before_numba(args))(*args)  # (no method call once compiled)

    def _before_numba(self, args: tuple):
        """What a call runs before the kernel has its dispatcher: the dispatcher (``compiled()``,
        importing numba), except on a fresh machine.  There, where numba is not loaded yet, the
        process does not wait and nothing of this kernel is in the disk cache (``cache.has_index``),
        the fallback runs while the background process compiles these argument types, until it
        answers: a short first run need not pay numba's import (0.2-0.6 s) for kernels it will not
        get in time."""
        if self.fallback is None or _compiling["wait"] or numba_loaded():
            return self.compiled()
        if self._first_request is None:
            if self._uncached is None:  # (asked once: later, the background process's answer tells)
                self._uncached = not cache.has_index(self.py_func)
            if not self._uncached:
                return self.compiled()
            with _compile_lock:
                handle = _background_request(self, args)
                if handle is None:  # (no background process here)
                    return self.compiled()
                self._first_request = handle
        return self.fallback if background.finished(self._first_request) is None else self.compiled()

    def ready(self, *args) -> bool:
        """True when a call with these arguments runs machine code now (loaded from the disk cache,
        or compiled here when the process waits for compilation); else False, and the background
        process compiles it."""
        dispatcher = self.compiled()
        if tuple(dispatcher.typeof_pyval(a) for a in args) in dispatcher.overloads:
            return True
        with _compile_lock:
            return self._code(args) is not None

    def _new_types(self, *args):
        """(The dispatcher's ``_compile_for_args``.)  What numba runs for argument types it has no
        machine code for: the machine code, or the fallback while the background process compiles
        it; without a fallback, numba's own compilation (the call waits)."""
        with _compile_lock:
            if self.fallback is None:
                return self._numba_compile(*args)
            code = self._code(args)
        return self.fallback if code is None else code

    def _code(self, args: tuple):
        dispatcher, compile_here = self._compiled, functools.partial(self._numba_compile, *args)
        return _machine_code(
            self._pending,
            _types_key(dispatcher, args),
            lambda: _from_cache(dispatcher, compile_here),
            compile_here,
            self,
            args,
        )

    @property
    def targetoptions(self) -> dict:
        """The decorator's options: where numba's inliner looks for ``inline="always"`` when another
        kernel calls this one (without it the call stays a call, and the caller's loop does not vectorise)."""
        return self.options

    @property
    def _numba_type_(self):
        """What numba sees when another kernel calls this one: the compiled dispatcher."""
        return self.compiled()._numba_type_


class CFuncFactory:
    """``factory(*args)``: the numba ``cfunc`` (a C function with ``signature``) of the Python function
    that ``make(*args)`` returns, made once per ``args`` (a few plain values: a dtype's name, flags):
    loaded from the disk cache or compiled; None while the background process compiles it (the caller
    then runs something else).  ``before(numba)`` runs before a cfunc is made (e.g. to bind the
    intrinsics it uses)."""

    def __init__(self, make, signature: str, before=None) -> None:
        self.make, self.signature, self.before = make, signature, before
        self._made: dict = {}  # args -> the compiled cfunc
        self._unready: dict = {}  # args -> the cfunc not compiled yet (its machine code on the way)
        self._pending: dict = {}  # args -> the background request compiling it
        self._uncached: dict = {}  # args -> True when no index file of its cfunc is in the disk cache
        functools.update_wrapper(self, make)

    def __call__(self, *args):
        made = self._made.get(args)
        if made is None:
            with _compile_lock:
                made = self._made.get(args) or self._make(args, wait=False)
        return made

    def compile_now(self, *args):
        """``factory(*args)``, compiled in this process if need be (the call waits)."""
        with _compile_lock:
            return self._made.get(args) or self._make(args, wait=True)

    def _make(self, args: tuple, wait: bool):
        """The compiled cfunc for ``args`` (``wait``: compiled here if need be), or None while the
        background process compiles it."""
        cfunc = self._unready.pop(args, None)
        if cfunc is None:
            if not (wait or _compiling["wait"] or numba_loaded()) and self._compiling_before_numba(args):
                return None
            numba = load_numba()
            if self.before is not None:
                self.before(numba)
            cfunc = _new_cfunc(numba, self.make(*args), self.signature)

        def compile_here():
            cfunc.compile()  # (from the disk cache, else compiling)
            return cfunc

        if wait:
            made = compile_here()
        else:
            made = _machine_code(
                self._pending,
                args,
                lambda: _from_cache(cfunc, compile_here),
                compile_here,
                self,
                args,
            )
        if made is None:
            self._unready[args] = cfunc
        else:
            self._made[args] = made
        return made

    def _compiling_before_numba(self, args: tuple) -> bool:
        """True while the background process compiles the cfunc for ``args`` and nothing of it is in
        the disk cache: a fresh machine, where numba is not imported for it (``LazyKernel._before_numba``).
        The request stays in ``_pending``, where ``_machine_code`` finds it once numba is loaded."""
        if args not in self._uncached:
            self._uncached[args] = not cache.has_index(self.make(*args))
        if not self._uncached[args]:
            return False
        handle = self._pending.get(args)
        if handle is None:
            handle = _background_request(self, args)
            if handle is None:
                return False
            self._pending[args] = handle
        return background.finished(handle) is None


def compile_request(module: str, name: str, args: list) -> bool:
    """(In the background process, ``background.serve``.)  Compile the kernel or cfunc ``name`` of
    ``module`` for ``args`` (stand-ins of the caller's types) into the disk cache; True when done."""
    set_jit_wait(True)
    target = getattr(importlib.import_module(module), name)
    if isinstance(target, LazyKernel):
        target.compiled()._compile_for_args(*args)
    else:
        target(*args)
    return True


def _types_key(dispatcher, args: tuple) -> tuple:
    """A key for the numba types of ``args`` (numba's own fingerprints: ~0.4 µs an array)."""
    try:
        return tuple(map(_fingerprint[0], args))
    except (ValueError, TypeError, IndexError):
        return tuple(map(dispatcher.typeof_pyval, args))


def _background_request(target, args: tuple):
    """The background process's handle for compiling the kernel or factory ``target`` for ``args``
    (``background.request``), or None where it cannot (no such process, or ``target`` is not a global
    of its module where that process would look for it)."""
    name = _name_in_module(target)
    return None if name is None else background.request(target.__wrapped__.__module__, name, args)


def _name_in_module(obj) -> str | None:
    """The name under which ``obj`` (a kernel or a factory) is a global of its module (where the
    background process finds it), or None where it is not one (e.g. replaced by a test)."""
    module = sys.modules.get(obj.__wrapped__.__module__)
    name = obj.__wrapped__.__name__
    if getattr(module, name, None) is obj:
        return name
    if module is None:
        return None
    return next((key for key, value in vars(module).items() if value is obj), None)


_fingerprint: list = []  # numba's ``compute_fingerprint`` (once numba is loaded)


def numba_loaded() -> bool:
    """True once this process has loaded numba for its kernels (``load_numba``)."""
    return bool(_fingerprint)


def load_numba():
    """Import numba (once), make NumPy's BLAS callable from kernels (``blas.register``) and stamp the
    kernels' disk cache with all kernel files (``cache.py``); returns numba."""
    import numba
    from numba import _dispatcher

    from . import blas

    with _compile_lock:
        blas.register()
        cache.install(numba)
        if not _fingerprint:
            _fingerprint.append(_dispatcher.compute_fingerprint)
    return numba


def _new_cfunc(numba, py_func, signature: str):
    """numba's ``CFunc`` for ``py_func``, caching on disk, not compiled yet (``numba.cfunc`` would)."""
    from numba.core.ccallback import CFunc

    made = CFunc(py_func, numba.core.sigutils.normalize_signature(signature), {}, {})
    made.enable_caching()
    cache.guard_saves(made._cache)
    return made


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

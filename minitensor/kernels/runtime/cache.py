"""numba's disk cache for the kernels, made stale by a change to any kernel file.

numba saves each compiled kernel (``cache=True``) with a hash of the source
file the kernel is written in, and loads it again while that file is
unchanged.  But a kernel compiled from ``attention.py`` has ``_exp.py``'s exp
and ``_rows.py``'s row max compiled into it: change those files (a new
version of minitensor, or an edit while you study a kernel) and numba would
keep loading the attention kernel with the old exp.

So the kernels of ``minitensor/kernels/`` are cached under one stamp for all of
them: the hash of every ``.py`` file in that folder and in ``runtime/`` (the
BLAS calls and the dispatch the kernels compile in).  Any change to any of them
compiles every kernel again on its next first call.  :func:`install` adds the
locators that do this in front of numba's own (numba's in-tree, user-provided
``NUMBA_CACHE_DIR`` and user-wide locators, with the stamp replaced); a
function outside ``kernels/`` is left to numba's.

Where the cache is: numba's in-tree locator first, a ``__pycache__`` folder beside each
kernel file (``minitensor/kernels/__pycache__/*.nbi, *.nbc``) when that folder is writable
(a clone, an editable install, a user's site-packages); else ``~/.cache/numba/``.
``NUMBA_CACHE_DIR`` puts it elsewhere.  A fresh clone has none (``__pycache__`` is not
in git).

Several processes write one cache (``pytest -n 2``, a program and its background
compiler, ``background.py``).  numba adds an entry by reading the function's index,
adding to it and writing it back, and names the new data file after the index's size: two
processes doing it at once would lose one entry or point it at the other's data.  So
:func:`guard_saves` makes each write of a kernel's cache entry hold a lock file in the
cache folder (``fcntl.flock``; Windows has none and keeps numba's behaviour) and
``SAVING`` in the process (a background compiler that must stop waits for a write to end).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import os
import sys
import threading

try:
    import fcntl
except ImportError:  # (Windows)
    fcntl = None

KERNELS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # minitensor/kernels
_STAMPED = (KERNELS_DIR, os.path.join(KERNELS_DIR, "runtime"))  # the folders whose files are stamped
LOCK_FILE = "minitensor-cache.lock"  # in the cache folder: held while an entry is written
SAVING = threading.RLock()  # held while this process writes a cache entry


@functools.lru_cache(maxsize=1)
def kernels_stamp() -> bytes:
    """sha256 over the names and contents of the ``.py`` files of ``kernels/`` and ``kernels/runtime/``
    (read once per process)."""
    digest = hashlib.sha256()
    for folder in _STAMPED:
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as f:
                    relative = os.path.relpath(os.path.join(folder, name), KERNELS_DIR)
                    digest.update(relative.encode() + b"\0" + f.read() + b"\0")
    return digest.digest()


class _KernelStamp:
    """Mixin for a numba cache locator: this package's kernels only, stamped by all kernel files."""

    def get_source_stamp(self):
        return kernels_stamp()

    @classmethod
    def from_function(cls, py_func, py_file):
        if os.path.dirname(os.path.abspath(py_file)) not in _STAMPED:
            return None
        return super().from_function(py_func, py_file)


def has_index(py_func) -> bool:
    """Whether numba's disk cache may hold machine code of the kernel ``py_func``: its index file is
    where numba's locators would put it (``NUMBA_CACHE_DIR`` when set; else the in-tree
    ``__pycache__`` when writable; else the user-wide ``~/.cache/numba``), named as numba names it.
    Asked without importing numba.  False on a fresh machine: ``jit.py`` then does not import numba
    for the kernel until the background process has compiled it.  (Where this guessed the place
    wrong, False costs one background request, never a wrong result.)"""
    if not sys.platform.startswith("linux"):
        return True  # (numba's user-wide folder lies elsewhere there: "may")
    source = inspect.getfile(py_func)
    stem = os.path.splitext(os.path.basename(source))[0]
    name = f"{stem}.{py_func.__qualname__}".replace("<", "").replace(">", "")
    version = f"py{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"
    folder = os.path.dirname(os.path.abspath(source))
    subpath = f"{os.path.basename(folder)}_{hashlib.sha1(folder.encode()).hexdigest()}"  # (numba's)
    in_tree = os.path.join(folder, "__pycache__")
    if os.environ.get("NUMBA_CACHE_DIR"):
        cache_folder = os.path.join(os.environ["NUMBA_CACHE_DIR"], subpath)
    elif os.access(in_tree if os.path.isdir(in_tree) else folder, os.W_OK):
        cache_folder = in_tree
    else:
        user_wide = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
        cache_folder = os.path.join(user_wide, "numba", subpath)
    return os.path.exists(os.path.join(cache_folder, f"{name}-{py_func.__code__.co_firstlineno}.{version}.nbi"))


def install(numba) -> bool:
    """Put the kernel locators first in numba's list (once); False where numba's caching differs."""
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    names = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
    bases = [getattr(caching, n, None) or getattr(caching, "_" + n, None) for n in names]
    if impl is None or None in bases:
        return False
    if any(issubclass(c, _KernelStamp) for c in impl._locator_classes):
        return True
    locators = [type("Kernel" + base.__name__.lstrip("_"), (_KernelStamp, base), {}) for base in bases]
    impl._locator_classes = locators + list(impl._locator_classes)
    return True


def guard_saves(function_cache) -> None:
    """Make the cache entry writes of numba's ``function_cache`` (a dispatcher's or cfunc's ``_cache``)
    hold ``SAVING`` and the cache folder's lock file (see the module docstring)."""
    index = getattr(function_cache, "_cache_file", None)
    folder = getattr(function_cache, "cache_path", None)
    save = getattr(index, "save", None)
    if save is None or folder is None:
        return  # (no disk cache for this function, or a numba whose caching differs)

    def locked_save(key, data) -> None:
        with SAVING, _folder_lock(folder):
            save(key, data)

    index.save = locked_save


@contextlib.contextmanager
def _folder_lock(folder: str):
    """Hold ``LOCK_FILE`` in ``folder`` (an exclusive ``flock``; nothing where there is no fcntl)."""
    if fcntl is None:
        yield
        return
    fd = os.open(os.path.join(folder, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # (releases the lock)

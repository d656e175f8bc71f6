"""Memory reuse: glibc's malloc settings, chosen at import, and ``owned``: may an array be kept
without a copy?

Why the malloc settings.  Every op returns a new array, and a training step frees and allocates the
same sizes again and again.  glibc's malloc hands arrays from 128 KiB up to
the kernel (``mmap``) or trims the heap as soon as the free memory at its top
passes a threshold it raises on its own as it goes.  Either way the next array
of that size comes back as fresh pages, and the first write to each 4 KiB
page costs a page fault: cheap on a desktop, ~2 µs in a virtual machine.
Measured on the 2-core VM of docs/performance.md: making two copies of a
256 x 512 float32 array and dropping them took 640 µs with glibc's defaults
(256 page faults) and 33 µs with the settings below; one SiLU forward and
backward on that array 1,235 µs (480 faults) and 365 µs (none).

So, on Linux with glibc, minitensor sets at import

- ``M_MMAP_THRESHOLD`` to 32 MiB (glibc's largest): arrays below it come from
  the heap, where freed memory is reused without new page faults;
- ``M_TRIM_THRESHOLD`` to 256 MiB: the heap gives memory back to the system
  only when that much is free at its top.

The cost: a process keeps up to 256 MiB of freed memory for reuse instead of
returning it at once.  ``MINITENSOR_MALLOC=default`` (set before the import)
leaves glibc's settings alone; elsewhere (macOS, Windows, musl) nothing changes.

``owned(array, like, holders)``: a gradient the autograd engine hands to a leaf's ``.grad`` is
copied unless no one else can reach it; then the leaf takes it as it is, as PyTorch's
AccumulateGrad does (a copy of a parameter-sized array per leaf and backward saved).  "No one
else" is told by the reference count, as NumPy itself elides temporaries.
"""

from __future__ import annotations

import ctypes
import os
import sys

import numpy as np

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20


def tune_malloc() -> bool:
    """Set glibc's thresholds (see the module docstring); True when they were set."""
    if os.environ.get("MINITENSOR_MALLOC", "").strip().lower() == "default" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # glibc only: musl's mallopt does nothing  # noqa: B018
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


TUNED = tune_malloc()


def owned(array, like: np.ndarray, holders: int = 1) -> bool:
    """True when ``array`` is a NumPy array that owns its memory (C-contiguous, writeable, not a
    view), has ``like``'s shape and dtype, and no one holds it but the caller: its ``holders``
    references (the caller's variables on the way here, counted by the caller) and this call's
    own.  Not a seed gradient the user passed, not a saved array, not another leaf's gradient,
    not one a hook kept.  (Call it directly: a wrapper's frame would be one holder more.)"""
    return (
        type(array) is np.ndarray
        and array.base is None
        and array.flags.c_contiguous
        and array.flags.writeable
        and array.shape == like.shape
        and array.dtype == like.dtype
        and sys.getrefcount(array) <= holders + 2  # (+ this call's argument and getrefcount's own)
    )

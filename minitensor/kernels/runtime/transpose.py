"""C-order copies of arrays whose matrices are stored transposed, on BLAS's ``omatcopy``.

A gradient often arrives transposed: ``y = x.mT`` (or ``x.transpose(-1, -2)``, ``x.t()``) hands back
``grad.mT``, a view whose last two axes are swapped.  A row kernel, or a convolution, wants it in
C order, and NumPy's strided copy of a transposed 256 x 512 float32 array takes ~105 µs on the
2-core VM of docs/performance.md (each read a different cache line); OpenBLAS's out-of-place
transposition ``cblas_somatcopy`` copies it by blocks in ~20 µs (128 x 256: 7 against 23; 1024 x
1024: 0.41 ms against 3.7).  :func:`contiguous` is ``np.ascontiguousarray`` with that one layout
taken by BLAS: float32 matrices of a stack, each stored transposed and at least ``MIN_ELEMENTS``
(128 x 128: even; below, the call costs more than NumPy's copy).  Its float64 twin ``domatcopy``
is 0.5-5x NumPy's time there (OpenBLAS 0.3.31's Haswell kernels): float64 stays with NumPy, as
does everything where NumPy's BLAS has no ``omatcopy``.

>>> a = np.arange(6.0).reshape(2, 3).T
>>> contiguous(a).flags.c_contiguous, bool((contiguous(a) == a).all())
(True, True)
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from . import blas

MIN_ELEMENTS = 128 * 128  # per matrix: from here omatcopy (a ctypes call, ~2 µs) beats NumPy's copy
_ROW_MAJOR, _TRANS = 101, 112
_found: dict = {}  # "searched", "float32": the ctypes function of cblas_somatcopy


def _somatcopy():
    """NumPy's BLAS's ``cblas_somatcopy`` (a ctypes function), or None where it has none."""
    if "searched" not in _found:
        _found["searched"] = True
        for handle in blas._libraries():
            for prefix, suffix, int_type in blas._CANDIDATES:
                function = getattr(handle, f"{prefix}cblas_somatcopy{suffix}", None)
                if function is None:
                    continue
                integer = ctypes.c_int64 if int_type == "int64" else ctypes.c_int32
                function.argtypes = [ctypes.c_int, ctypes.c_int, integer, integer, ctypes.c_float, ctypes.c_void_p,
                                     integer, ctypes.c_void_p, integer]  # fmt: skip
                function.restype = None
                _found["float32"] = function
                return function
    return _found.get("float32")


def contiguous(a: np.ndarray) -> np.ndarray:
    """``np.ascontiguousarray(a)``: ``a`` itself when it is C-contiguous, else a C-order copy; a
    stack of float32 matrices each stored transposed (``a.swapaxes(-1, -2)`` C-contiguous) is
    copied by BLAS's ``somatcopy``, one call per matrix."""
    if a.flags.c_contiguous or a.dtype != np.float32 or a.ndim < 2 or a.shape[-1] * a.shape[-2] < MIN_ELEMENTS:
        return np.ascontiguousarray(a)
    stored = a.swapaxes(-1, -2)  # (..., n, m): how the matrices lie in memory, if transposed
    function = _somatcopy() if stored.flags.c_contiguous else None
    if function is None:
        return np.ascontiguousarray(a)
    out = np.empty(a.shape, a.dtype)
    rows, cols = stored.shape[-2], stored.shape[-1]  # each stored matrix; out's are (cols, rows)
    source, target = stored.reshape(-1, rows, cols), out.reshape(-1, cols, rows)
    step, base, address = rows * cols * a.itemsize, source.ctypes.data, target.ctypes.data
    for i in range(math.prod(a.shape[:-2])):
        function(_ROW_MAJOR, _TRANS, rows, cols, 1.0, base + i * step, cols, address + i * step, rows)
    return out

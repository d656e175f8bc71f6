"""Matrix products on BLAS from inside numba kernels, without SciPy.

numba compiles ``np.dot`` to a call of SciPy's BLAS, and SciPy is not a
dependency of minitensor.  NumPy, though, is linked to a BLAS (its wheels
bundle OpenBLAS), and a kernel can call any C function whose address LLVM
knows by name.  So on numba's first use :func:`register` looks up NumPy's
``cblas_sgemm``/``cblas_dgemm``, gives their addresses to LLVM under the
names below and declares them to numba as external functions; a kernel then
calls :func:`gemm` on 2-D array views.  The compiled code refers to the
functions by name only, so it is cached on disk like any kernel.

When no such function is found (a NumPy linked to a BLAS this module does
not know), :func:`available` is False and the callers run their NumPy
matrix products instead.

>>> a = np.arange(6.0).reshape(2, 3)
>>> c = np.zeros((2, 2))
>>> if available():
...     gemm(a, False, a, True, c, 0.0)          # c = a @ aᵀ
... else:
...     c[...] = a @ a.T
>>> c
array([[ 5., 14.],
       [14., 50.]])
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os

import numpy as np

from .jit import njit
from .threads import threads as policy_threads

# (name prefix, name suffix, integer type) of the CBLAS builds this module knows, the
# 64-bit-integer ones first: NumPy's wheels (scipy-openblas64), other ILP64 builds, plain LP64.
_CANDIDATES = (("scipy_", "64_", "int64"), ("", "64_", "int64"), ("", "", "int32"))
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
# found: [_find_gemm()'s answer] once asked; core: core_name()'s answer once asked
_state = {"registered": False, "available": False, "found": None, "core": None}
_threads = {}  # "get", "set": the BLAS's process-wide thread count, when it can be set (thread_functions)


def _libraries() -> list:
    """ctypes handles to search: NumPy's core extension (``dlsym`` on it also searches the
    libraries it is linked to) and the BLAS libraries bundled beside NumPy."""
    from numpy._core import _multiarray_umath

    root = os.path.dirname(os.path.dirname(np.__file__))
    paths = [_multiarray_umath.__file__]
    for folder in ("numpy.libs", os.path.join("numpy", ".dylibs")):
        paths += sorted(glob.glob(os.path.join(root, folder, "*blas*")))
    handles = []
    for path in paths:
        try:
            handles.append(ctypes.CDLL(path))
        except OSError:
            continue
    return handles


def _functions(*names: str) -> tuple | None:
    """(the ctypes functions ``names`` of NumPy's BLAS, its integer type name): the first library and
    build (``_CANDIDATES``' prefix and suffix) that has all of them, or None."""
    for handle in _libraries():
        for prefix, suffix, int_type in _CANDIDATES:
            try:
                return [getattr(handle, f"{prefix}{name}{suffix}") for name in names], int_type
            except AttributeError:
                continue
    return None


def thread_functions() -> dict:
    """NumPy's BLAS's ``openblas_get_num_threads``/``openblas_set_num_threads`` as {"get", "set"}
    (ctypes functions; found once, without numba), or {} when it has none."""
    if "searched" not in _threads:
        _threads["searched"] = True
        found = _functions("openblas_get_num_threads", "openblas_set_num_threads")
        if found is not None:
            (get, set_), _ = found
            get.restype, set_.argtypes = ctypes.c_int, [ctypes.c_int]
            _threads.update(get=get, set=set_)
    return _threads


def core_name() -> str:
    """The kernels NumPy's OpenBLAS runs ('Haswell', 'SkylakeX', 'Zen', ...: an OpenBLAS built for many
    CPUs picks them from the CPU's model, or from ``OPENBLAS_CORETYPE``), or '' for another BLAS
    (asked once, without numba)."""
    if _state["core"] is None:
        found = _functions("openblas_get_corename")
        if found is None:
            _state["core"] = ""
        else:
            (name,), _ = found
            name.restype = ctypes.c_char_p
            _state["core"] = name().decode()
    return _state["core"]


def _find_gemm() -> tuple | None:
    """(address of sgemm, address of dgemm, integer type name) of NumPy's CBLAS, or None."""
    found = _functions("cblas_sgemm", "cblas_dgemm")
    if found is None:
        return None
    functions, int_type = found
    return (*(ctypes.cast(f, ctypes.c_void_p).value for f in functions), int_type)


def register() -> bool:
    """Find NumPy's CBLAS gemm, make it callable from kernels (once); True when it was found.

    Called when numba is first loaded, before any kernel is compiled or loaded from the cache.
    """
    if not _state["registered"]:
        _state["registered"] = True
        found = _found()
        if found is not None:
            import llvmlite.binding
            from numba import types

            s_address, d_address, int_type = found
            llvmlite.binding.add_symbol("minitensor_cblas_sgemm", s_address)
            llvmlite.binding.add_symbol("minitensor_cblas_dgemm", d_address)
            i, p = getattr(types, int_type), types.voidptr
            for name, real in (("sgemm", types.float32), ("dgemm", types.float64)):
                signature = types.void(types.int32, types.int32, types.int32, i, i, i, real, p, i, p, i, real, p, i)
                globals()[f"_{name}"] = types.ExternalFunction(f"minitensor_cblas_{name}", signature)
            _state["available"] = True
    return _state["available"]


def available() -> bool:
    """True when kernels can call BLAS: NumPy's CBLAS gemm was found.  Asked without numba: a kernel
    that runs compiled code has loaded numba, and ``load_numba`` registers the gemm first."""
    return _found() is not None


def _found() -> tuple | None:
    """``_find_gemm()``, searched once."""
    if _state["found"] is None:
        _state["found"] = [_find_gemm()]
    return _state["found"][0]


def _sgemm(*args):  # replaced by the external functions in ``register``
    raise RuntimeError("minitensor: BLAS is not registered")


_dgemm = _sgemm


@njit
def _leading_dim(x):
    """BLAS's leading dimension of the row-major 2-D view ``x``: its row stride in elements (a
    single row, or none, has any stride: its width then)."""
    if x.shape[0] <= 1:
        return max(1, x.shape[1])
    return max(1, x.strides[0] // x.itemsize)


@njit(any_layout=("a", "b", "c"), read_only=("a", "b"))
def gemm(a, trans_a, b, trans_b, c, beta):
    """c = op(a) @ op(b) + beta * c, op(x) = xᵀ when its flag is set, else x.

    All three are 2-D views of the same float dtype whose rows are contiguous
    (unit stride along the last dim; any stride between rows): e.g. one head of
    a (N, L, H, d) array.  ``c`` is (M, N); op(a) is (M, K) and op(b) is (K, N).
    """
    m, n = c.shape
    k = a.shape[0] if trans_a else a.shape[1]
    if m == 0 or n == 0:
        return
    lda, ldb, ldc = _leading_dim(a), _leading_dim(b), _leading_dim(c)
    ta = _TRANS if trans_a else _NO_TRANS
    tb = _TRANS if trans_b else _NO_TRANS
    if c.itemsize == 4:  # float32
        _sgemm(
            _ROW_MAJOR, ta, tb, m, n, k, np.float32(1), a.ctypes, lda, b.ctypes, ldb, np.float32(beta), c.ctypes, ldc
        )
    else:
        _dgemm(_ROW_MAJOR, ta, tb, m, n, k, 1.0, a.ctypes, lda, b.ctypes, ldb, np.float64(beta), c.ctypes, ldc)


@contextlib.contextmanager
def single_threaded():
    """``with single_threaded():`` NumPy's BLAS runs each call on one thread.

    For kernels that call BLAS from numba's threads, one head each: nested BLAS
    threads would only compete for the same cores.  OpenBLAS's setting is
    process-wide (its ``_local`` variant is too, outside OpenMP builds), so a
    BLAS call of another Python thread in the meantime also runs single-threaded.
    The thread policy takes its first reading (if it has none yet) before: a first reading
    inside would take the 1 set here for the BLAS's own setting, and cap the process at 1.
    """
    policy_threads()
    functions = thread_functions()
    get, set_ = functions.get("get"), functions.get("set")
    previous = get() if get is not None else 1
    if previous > 1:
        set_(1)
    try:
        yield
    finally:
        if previous > 1:
            set_(previous)

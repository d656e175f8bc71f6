"""Run a computation on the numba kernels only, or on the NumPy references only.

- ``jitted(fn)``: ``fn()`` with the JIT on and every NumPy reference of the
  kernel modules (each ``Kernel``'s, and every ``*_numpy`` function) replaced by
  a function that fails, so a result really comes from a numba kernel (a
  comparison of the reference with itself would pass silently otherwise).
- ``reference(fn)``: ``fn()`` with the JIT off; ``reference_only(fn, *modules)`` the same with the
  numba kernels of ``modules`` refused (the JIT switch really selects the references).
- ``both_paths(fn)``: ``(jitted(fn), reference(fn))``, NumPy's RuntimeWarnings silenced.

Gradchecks (float64) run on the serial kernels: the parallel ones run the same block
functions on parts of the rows, and are compared with the references in float32.
"""

from __future__ import annotations

import contextlib
import importlib
import warnings

import numpy as np

import minitensor as mt
from minitensor.kernels.runtime import blas_threads, dispatch
from minitensor.kernels.runtime.dispatch import Kernel

# The kernel modules whose ``*_numpy`` references ``jitted`` refuses.
MODULES = tuple(
    importlib.import_module(f"minitensor.kernels.{name}")
    for name in ("activation", "attention", "attention_softmax", "batch_norm", "bce", "bessel", "cdist",
                 "class_targets", "column_sums", "constant_pad", "conv", "conv_depthwise", "cross", "ctc",
                 "divergence", "dot_tiles", "elu", "erf", "erfinv", "exp2", "exp_log", "expand", "expm1", "gamma",
                 "gelu", "glu", "group_norm", "hyperbolic", "hypot", "im2col", "inverse_trig", "layer_norm", "log1p",
                 "logaddexp", "logit", "lu", "matmul", "modulo", "pdist", "piecewise", "pointwise", "pool", "product",
                 "resample", "rms_norm", "robust_loss", "running_extremum", "scaled", "softmax", "softplus", "tanh",
                 "total", "triangular_solve", "trig", "where", "window_mean")
)  # fmt: skip

# (kernel, dtype) pairs for the comparisons with the NumPy references: both dtypes on the serial
# kernels, float32 (the dtype that needs the speed) on the parallel ones.  Each (kernel, dtype,
# argument types) combination is a separate numba compilation (~1 s), so the full cross product
# would triple the suite's time on a fresh machine.  Use with ``indirect=["kernel"]``.
MODES = [("serial", "float32"), ("serial", "float64"), ("parallel", "float32")]

# (on_blas_threads, dtype) pairs for the tests of work split over two threads, by the same rule: the
# tasks on BLAS's threads run the serial bodies (both dtypes); numba's ``_parallel`` kernels are
# prange loops over those bodies (float32: a float64 one costs 2-8 s of compiling and runs the same
# float64 bodies).  Use with ``@pytest.mark.parametrize("on_blas_threads,dtype", SPLITS, ids=SPLIT_IDS)``.
SPLITS = [(True, "float32"), (True, "float64"), (False, "float32")]
SPLIT_IDS = ["blas-threads-float32", "blas-threads-float64", "numba-threads-float32"]


def _refuse(name: str):
    def refused(*args, **kwargs):
        raise AssertionError(f"the NumPy reference {name} ran on the JIT path")

    return refused


@contextlib.contextmanager
def references_refused():
    """Replace the reference of every ``Kernel`` of the kernel modules, and every ``*_numpy`` function
    in them, by a function that raises."""
    saved = []
    for module in MODULES:
        for name, value in vars(module).copy().items():
            if isinstance(value, Kernel):
                saved.append((value, "reference", value.reference))
                value.reference = _refuse(f"{module.__name__}.{name}.reference")
            elif isinstance(value, dict) and all(isinstance(v, Kernel) for v in value.values()):
                for key, kernel in value.items():  # (kernels by an argument, e.g. gelu.py's by ``approximate``)
                    saved.append((kernel, "reference", kernel.reference))
                    kernel.reference = _refuse(f"{module.__name__}.{name}[{key!r}].reference")
            elif name.endswith("_numpy") and callable(value):
                saved.append((module, name, value))
                setattr(module, name, _refuse(f"{module.__name__}.{name}"))
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


def jitted(fn):
    """fn() on the numba kernels only (JIT on, the NumPy references refused, also where NumPy's own
    loop is the faster on this CPU: ``dispatch.numpy_loops``)."""
    previous, loops = mt.jit_enabled(), dispatch.numpy_loops(False)
    mt.set_jit_enabled(True)
    try:
        with references_refused():
            return fn()
    finally:
        mt.set_jit_enabled(previous)
        dispatch.numpy_loops(loops)


def reference(fn):
    """fn() on the NumPy references (JIT off)."""
    with mt.jit_disabled():
        return fn()


def reference_only(fn, *modules):
    """fn() with the JIT off and the numba versions of every ``Kernel`` of ``modules`` replaced by a
    function that fails: the JIT switch really selects the references."""
    kernels = [k for m in modules for k in vars(m).values() if isinstance(k, Kernel)]
    saved = [(k, k.serial, k.parallel) for k in kernels]
    for k in kernels:
        k.serial = _refuse(f"{k.reference.__name__}'s kernel")
        k.parallel = None if k.parallel is None else k.serial
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return reference(fn)
    finally:
        for k, serial, parallel in saved:
            k.serial, k.parallel = serial, parallel


def both_paths(fn) -> tuple:
    """(fn() on the numba kernels only, fn() on the NumPy references), to compare.  NumPy's
    RuntimeWarnings are silenced: the references meet overflow, inf - inf and 0 * inf on the special
    inputs (±inf, NaN, huge values) whose results the tests compare."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return jitted(fn), reference(fn)


def tolerance(dtype) -> dict:
    """assert_allclose tolerances between the two paths for ``dtype``."""
    return {"rtol": 2e-5, "atol": 2e-6} if dtype == "float32" else {"rtol": 1e-11, "atol": 1e-13}


def assert_strided_input_as_its_copy(kernel, low: float, high: float) -> None:
    """``kernel`` (one float32 array -> one array, compiled) of a strided (4, 10) view of values in [low, high]:
    a new C-contiguous array of the view's shape, equal to the kernel of the view's contiguous copy."""
    x = np.linspace(low, high, 120, dtype=np.float32).reshape(4, 30)[:, ::3]
    got = jitted(lambda: kernel(x))
    assert got.shape == (4, 10) and got.flags.c_contiguous
    np.testing.assert_array_equal(got, jitted(lambda: kernel(np.ascontiguousarray(x))))


def ulps(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in units of the last place of ``got``'s dtype at ``exact`` (exact: float64
    or long double)."""
    spacing = np.spacing(np.abs(exact).astype(got.dtype)).astype(np.float64)
    return np.abs(got.astype(np.float64) - exact) / spacing


def assert_kernel_equals_reference(got: np.ndarray, expected: np.ndarray, dtype: str) -> None:
    """Both of ``dtype``, equal within ``tolerance(dtype)`` (NaN where NaN, the same infinities), and the
    same sign on the zeros."""
    assert got.dtype == expected.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, expected, **tolerance(dtype))
    zeros = expected == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(expected[zeros]))


def assert_same_values(got: np.ndarray, expected: np.ndarray) -> None:
    """Equal, and the same sign bits (-0.0 is not 0.0) except on NaN, whose sign bit is whatever
    the arithmetic gave."""
    np.testing.assert_array_equal(got, expected)
    signed = ~np.isnan(expected)
    np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(expected[signed]))


def counted_splits(monkeypatch, on_blas_threads: bool, module, parallel_names) -> list:
    """A list that gets one entry per pass split over the threads (its thread count, 2 on numba's):
    on BLAS's threads (``blas_threads.run`` counted), or with ``on_blas_threads`` False on numba's
    (BLAS's threads made unavailable, ``module``'s kernels ``parallel_names`` counted)."""
    runs = []
    if on_blas_threads:
        run = blas_threads.run
        monkeypatch.setattr(blas_threads, "run", lambda task, r, **kw: runs.append(len(r)) or run(task, r, **kw))
    else:
        monkeypatch.setattr(blas_threads, "available", lambda: False)
        for name in parallel_names:
            kernel = getattr(module, name)
            monkeypatch.setattr(module, name, lambda *a, k=kernel: runs.append(2) or k(*a))
    return runs

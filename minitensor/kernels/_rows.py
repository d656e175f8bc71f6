"""Small helpers shared by the kernels: reductions over the rows of a 2-D block, and blocks of rows.

Every kernel works on a *block* of rows (a 2-D array) at a time: one call of
a helper does one pass over all rows of the block, so the cost of a call
(~50 ns in numba) is paid per block, not per row.  A kernel that makes several
passes over its rows makes them over a *piece* of ``piece_rows(D)`` rows (about
``PIECE`` elements) at a time, so that the second pass finds the piece in the cache.

The sums are compiled with ``fastmath={"reassoc"}`` (they may add in any
order), which lets LLVM use SIMD lanes for them; numba compiles each helper
with its own flags, so the elementwise loops of the kernels that call them
keep the exact order of their operations.

The row max needs more: numba compiles ``max(m, v)`` (or ``v if v > m else m``)
to a compare and a select, which LLVM does not vectorise as a reduction
(it would need the function-wide "no NaNs" setting, which numba never
sets).  So ``row_max`` calls ``maximum``, LLVM's ``llvm.maximum``
intrinsic, which it does vectorise (``vmaxps`` on 16 float32 lanes, 5x
faster than the scalar loop); it propagates NaN, as ``np.maximum`` and
PyTorch's max do.  ``row_min`` likewise, with ``minimum``.  ``row_nanmax``
skips NaN (``np.nanmax``; LLVM's ``maxnum``, a third faster): the shift of the
softmax kernels, whose exp pass gives a NaN row anyway.  ``fma(a, b, c)`` is
``a * b + c`` rounded once (``llvm.fma``: the FMA instruction, or the C library's
``fma`` on a machine without one), for the argument reduction of ``trig.py``.
A kernel of another module that calls these is decorated with ``calls_intrinsics``.
"""

from __future__ import annotations

from .runtime.jit import LazyKernel, load_numba, njit

BLOCK = 64  # rows per block of a parallel kernel (each block has its own scratch)
PIECE = 16384  # elements per piece of rows: 64 KiB of float32, a few such arrays fit in the L2 cache


def maximum(a, b):
    """The larger of two floats of the same type, NaN when either is NaN; inside kernels only
    (replaced by an intrinsic when numba is loaded: ``_define_intrinsics``)."""
    raise RuntimeError("maximum runs inside numba kernels only")


def minimum(a, b):
    """The smaller of two floats of the same type, NaN when either is NaN; inside kernels only."""
    raise RuntimeError("minimum runs inside numba kernels only")


def fmax(a, b):
    """The larger of two floats of the same type, the other one when one is NaN (``np.fmax``);
    inside kernels only."""
    raise RuntimeError("fmax runs inside numba kernels only")


def fma(a, b, c):
    """``a * b + c`` rounded once, for floats of one type; inside kernels only."""
    raise RuntimeError("fma runs inside numba kernels only")


_PLACEHOLDERS = {"maximum": maximum, "minimum": minimum, "fmax": fmax, "fma": fma}
_LLVM_NAMES = {"maximum": "llvm.maximum", "minimum": "llvm.minimum", "fmax": "llvm.maxnum", "fma": "llvm.fma"}


def _define_intrinsics() -> None:
    """Make ``maximum``, ``minimum``, ``fmax`` and ``fma`` the intrinsics that call ``llvm.maximum``,
    ``llvm.minimum``, ``llvm.maxnum`` and ``llvm.fma`` (once, loading numba)."""
    if _state["defined"]:
        return
    numba = load_numba()
    from llvmlite import ir
    from numba.core import cgutils
    from numba.extending import intrinsic

    def codegen_for(name: str):
        def codegen(context, builder, signature, args):
            kind = args[0].type
            full_name = f"{name}.f32" if kind == ir.FloatType() else f"{name}.f64"
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(kind, [kind] * len(args)), full_name)
            return builder.call(fn, args)

        return codegen

    def floats(*types) -> bool:
        return isinstance(types[0], numba.types.Float) and all(t == types[0] for t in types)

    def typer_for(name: str):
        codegen = codegen_for(name)
        if name == "llvm.fma":

            def typer(typingctx, a, b, c):
                return (a(a, b, c), codegen) if floats(a, b, c) else None

        else:

            def typer(typingctx, a, b):
                return (a(a, b), codegen) if floats(a, b) else None

        typer.__name__ = name.replace(".", "_")
        return typer

    for short, name in _LLVM_NAMES.items():
        globals()[short] = intrinsic(typer_for(name))
    _state["defined"] = True


_state = {"defined": False}


class _CallsIntrinsics(LazyKernel):
    """A kernel that calls ``maximum``, ``minimum``, ``fmax`` or ``fma``: they are defined (in the
    kernel's module too) before it compiles."""

    def compiled(self):
        _define_intrinsics()
        names = self.py_func.__globals__
        for short, placeholder in _PLACEHOLDERS.items():
            if names.get(short) is placeholder:
                names[short] = globals()[short]
        return super().compiled()


def calls_intrinsics(py_func=None, **options):
    """Decorator, as ``njit``, for a kernel (of any module) that calls ``maximum``, ``minimum``,
    ``fmax`` or ``fma`` (imported from this module)."""
    if py_func is not None:
        return _CallsIntrinsics(py_func, options)
    return lambda fn: _CallsIntrinsics(fn, options)


def _row_max(x, out):
    """out[i] = max(x[i]) for each row of the 2-D ``x``; NaN when the row holds a NaN."""
    for i in range(x.shape[0]):
        row = x[i]
        m = row[0]
        for j in range(row.size):
            m = maximum(m, row[j])
        out[i] = m


def _row_min(x, out):
    """out[i] = min(x[i]) for each row of the 2-D ``x``; NaN when the row holds a NaN."""
    for i in range(x.shape[0]):
        row = x[i]
        m = row[0]
        for j in range(row.size):
            m = minimum(m, row[j])
        out[i] = m


def _row_nanmax(x, out):
    """out[i] = the largest non-NaN value of x[i] (NaN when all are NaN), as ``np.nanmax``."""
    for i in range(x.shape[0]):
        row = x[i]
        m = row[0]
        for j in range(row.size):
            m = fmax(m, row[j])
        out[i] = m


row_max = _CallsIntrinsics(_row_max, {})
row_min = _CallsIntrinsics(_row_min, {})
row_nanmax = _CallsIntrinsics(_row_nanmax, {})


@njit
def piece_rows(n):
    """Rows per piece of a row kernel, for rows of ``n`` elements: about ``PIECE`` elements, at least
    one row."""
    return max(1, PIECE // max(n, 1))


@njit(fastmath={"reassoc", "contract"})
def row_sum(x, out):
    """out[i] = sum(x[i]), accumulated in float64."""
    for i in range(x.shape[0]):
        total = 0.0
        for j in range(x.shape[1]):
            total += x[i, j]
        out[i] = total


@njit(fastmath={"reassoc", "contract"})
def row_dot(x, y, out):
    """out[i] = sum(x[i] * y[i]), accumulated in float64."""
    for i in range(x.shape[0]):
        total = 0.0
        for j in range(x.shape[1]):
            total += x[i, j] * y[i, j]
        out[i] = total


@njit
def clear(a):
    """a[:] = 0 for a 1-D array, as a plain loop (in a parallel kernel, ``np.zeros`` or ``a[:] = 0``
    would become one more parallel region, each a launch of the thread pool)."""
    for j in range(a.shape[0]):
        a[j] = 0.0


@njit
def add_rows(parts, out):
    """out += the sum of the rows of the 2-D ``parts`` (a plain loop, see ``clear``)."""
    for k in range(parts.shape[0]):
        for j in range(parts.shape[1]):
            out[j] += parts[k, j]


@njit
def rows_of(a, start, stop):
    """``a[start:stop]``, or None when ``a`` is None (numba drops the dead branch at compile time)."""
    if a is None:
        return None
    return a[start:stop]


@njit
def blocks(rows):
    """The number of blocks of ``BLOCK`` rows (the last one may be shorter)."""
    return (rows + BLOCK - 1) // BLOCK

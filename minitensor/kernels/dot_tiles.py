"""A matrix product of rows, ``c = a · bᵀ (+ beta · c)``, in numba: the small products BLAS is slow at.

Both operands are read along their rows (a (M, K), b (N, K), the sums over K), so every entry of c
is a dot product of two contiguous rows.  The kernel keeps the sums of a tile of c in registers
while it walks K, four rows of a against four rows of b (16 sums) where the CPU has 32 vector
registers (AVX-512), against two (8 sums) where it has 16 (AVX2: there the 16 sums and the 8 rows'
vectors spill, and the 4 x 2 tiles run 1.4-1.7x faster, 70-87 GFLOP/s a core of the AMD EPYC (Zen 3)
VM against 47-51); LLVM turns each sum into a vector of partial sums (``fastmath`` lets it reorder
the additions) with fused multiply-adds, at the machine's full vector width.  The rows of c beyond
the last tile, and its columns, take one row (or column) against four columns (rows) at a time.

Why not BLAS.  A call of OpenBLAS's GEMM on a convolution's one-image product (16 x 1,024 by
1,024 x 144, the weight gradient of a 16-channel 3x3 layer at 32 x 32) runs ~57 GFLOP/s on one
core of the 2-core VM (its Haswell kernels, as the shell selects them, and the per-call
packing); these tiles run the same product at ~118, and 100-165 on the other one-image products
of ``conv_gemm``.  Where the sum is short (K < 128, e.g. the input gradient's sum over 16 output
channels), each tile's sums are mostly the final reduction of the vectors, and where b is too
large for the cache the rows are read again for every four rows of a: BLAS wins there
(:func:`pays` says where it does not).  Whole products (:func:`product`, a linear layer's) take the
tiles only on a machine like that one, where numba's vectors are wider than BLAS's kernels'
(:func:`tiles_beat_blas`): elsewhere BLAS's packed GEMM is up to 2.7x faster.

>>> a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(4, 3)
>>> c = np.empty((2, 4))
>>> dot_rows(a, b, c, 0.0)
>>> bool(np.array_equal(c, a @ b.T))
True
"""

from __future__ import annotations

import functools

import numpy as np

from .runtime import blas, blas_threads, jit
from .runtime.blas_threads import HEAD, SLOT, contiguous, fail, record, records, scalar, split
from .runtime.cpu import cpu
from .runtime.dispatch import Kernel
from .runtime.jit import njit
from .runtime.transpose import contiguous as contiguous_rows

TILE = 4  # rows of a per tile (and of b with 32 vector registers: 16 sums and the 8 rows' vectors fit them)
# Where the tiles beat BLAS's per-call products (one core and two of the 2-core VM, conv_gemm's weight
# gradients): sums of at least MIN_SUM terms (64 and 100 lose: the tiles' final reductions dominate), b
# up to MAX_B_BYTES (at 9.4 MB it no longer stays in the cache: 0.9x BLAS).
MIN_SUM = 128
MAX_B_BYTES = 4 << 20


@njit(inline="always")
def pays(k_count: int, b_bytes: int) -> bool:
    """True where ``dot_rows`` beats BLAS on a product whose sums have ``k_count`` terms and whose
    b has ``b_bytes``."""
    return k_count >= MIN_SUM and b_bytes <= MAX_B_BYTES


@njit(inline="always")
def _store(c, m: int, n: int, total, beta: float) -> None:
    """c[m, n] = total + beta * c[m, n], not reading c when beta is 0 (it may hold anything)."""
    c[m, n] = total if beta == 0.0 else total + beta * c[m, n]


@njit(inline="always")
def _store_pair(c, m: int, n: int, s0, s1, beta: float) -> None:
    """c[m, n : n + 2] = (s0, s1) + beta * c[m, n : n + 2]."""
    _store(c, m, n, s0, beta)
    _store(c, m, n + 1, s1, beta)


@njit(inline="always")
def _store_row(c, m: int, n: int, s0, s1, s2, s3, beta: float) -> None:
    """c[m, n : n + 4] = (s0, s1, s2, s3) + beta * c[m, n : n + 4]."""
    _store(c, m, n, s0, beta)
    _store(c, m, n + 1, s1, beta)
    _store(c, m, n + 2, s2, beta)
    _store(c, m, n + 3, s3, beta)


@njit(fastmath={"reassoc", "contract"})
def dot_rows_4x4(a, b, c, beta: float) -> None:
    """c (M, N) = a (M, K) · b (N, K)ᵀ + beta · c on 4 x 4 tiles (16 sums): for 32 vector registers."""
    m_count, k_count = a.shape
    zero = c.dtype.type(0)
    m_tiles, n_tiles = m_count - m_count % 4, b.shape[0] - b.shape[0] % 4
    for m in range(0, m_tiles, 4):
        a0, a1, a2, a3 = a[m], a[m + 1], a[m + 2], a[m + 3]
        for n in range(0, n_tiles, 4):
            b0, b1, b2, b3 = b[n], b[n + 1], b[n + 2], b[n + 3]
            s00 = s01 = s02 = s03 = s10 = s11 = s12 = s13 = zero
            s20 = s21 = s22 = s23 = s30 = s31 = s32 = s33 = zero
            for k in range(k_count):
                x0, x1, x2, x3 = a0[k], a1[k], a2[k], a3[k]
                y0, y1, y2, y3 = b0[k], b1[k], b2[k], b3[k]
                s00 += x0 * y0
                s01 += x0 * y1
                s02 += x0 * y2
                s03 += x0 * y3
                s10 += x1 * y0
                s11 += x1 * y1
                s12 += x1 * y2
                s13 += x1 * y3
                s20 += x2 * y0
                s21 += x2 * y1
                s22 += x2 * y2
                s23 += x2 * y3
                s30 += x3 * y0
                s31 += x3 * y1
                s32 += x3 * y2
                s33 += x3 * y3
            _store_row(c, m, n, s00, s01, s02, s03, beta)
            _store_row(c, m + 1, n, s10, s11, s12, s13, beta)
            _store_row(c, m + 2, n, s20, s21, s22, s23, beta)
            _store_row(c, m + 3, n, s30, s31, s32, s33, beta)
    _edges(a, b, c, m_tiles, n_tiles, beta)


@njit(fastmath={"reassoc", "contract"})
def dot_rows_4x2(a, b, c, beta: float) -> None:
    """c (M, N) = a (M, K) · b (N, K)ᵀ + beta · c on 4 x 2 tiles (8 sums): for 16 vector registers."""
    m_count, k_count = a.shape
    zero = c.dtype.type(0)
    m_tiles, n_tiles = m_count - m_count % 4, b.shape[0] - b.shape[0] % 2
    for m in range(0, m_tiles, 4):
        a0, a1, a2, a3 = a[m], a[m + 1], a[m + 2], a[m + 3]
        for n in range(0, n_tiles, 2):
            b0, b1 = b[n], b[n + 1]
            s00 = s01 = s10 = s11 = s20 = s21 = s30 = s31 = zero
            for k in range(k_count):
                x0, x1, x2, x3 = a0[k], a1[k], a2[k], a3[k]
                y0, y1 = b0[k], b1[k]
                s00 += x0 * y0
                s01 += x0 * y1
                s10 += x1 * y0
                s11 += x1 * y1
                s20 += x2 * y0
                s21 += x2 * y1
                s30 += x3 * y0
                s31 += x3 * y1
            _store_pair(c, m, n, s00, s01, beta)
            _store_pair(c, m + 1, n, s10, s11, beta)
            _store_pair(c, m + 2, n, s20, s21, beta)
            _store_pair(c, m + 3, n, s30, s31, beta)
    _edges(a, b, c, m_tiles, n_tiles, beta)


@njit(inline="always")
def _edges(a, b, c, m_tiles: int, n_tiles: int, beta: float) -> None:
    """The entries of c outside the tiles: the columns from ``n_tiles`` on, one by one against four
    rows of a at a time; the rows from ``m_tiles`` on, one by one against four columns at a time."""
    m_count, n_count = c.shape
    for m in range(0, m_tiles, 4):
        for n in range(n_tiles, n_count):
            for i, total in enumerate(_four_dots(b[n], a[m], a[m + 1], a[m + 2], a[m + 3])):
                _store(c, m + i, n, total, beta)
    four = n_count - n_count % 4
    for m in range(m_tiles, m_count):
        for n in range(0, four, 4):
            s0, s1, s2, s3 = _four_dots(a[m], b[n], b[n + 1], b[n + 2], b[n + 3])
            _store_row(c, m, n, s0, s1, s2, s3, beta)
        for n in range(four, n_count):
            _single(a, b, c, m, n, beta)


def registers_for_4x4(flags) -> bool:
    """Whether a CPU with the extensions ``flags`` has the 32 vector registers a 4 x 4 tile needs (AVX-512)."""
    return "avx512f" in flags


# c (M, N) = a (M, K) · b (N, K)ᵀ + beta · c; a and b C-contiguous rows (any strides work, slower): the
# tile this machine's registers hold
dot_rows = dot_rows_4x4 if registers_for_4x4(cpu()["flags"]) else dot_rows_4x2


@njit(inline="always", fastmath={"reassoc", "contract"})
def _four_dots(x, y0, y1, y2, y3) -> tuple:
    """(x · y0, x · y1, x · y2, x · y3), four dot products sharing the row x."""
    s0 = s1 = s2 = s3 = x.dtype.type(0)
    for k in range(x.shape[0]):
        s0 += x[k] * y0[k]
        s1 += x[k] * y1[k]
        s2 += x[k] * y2[k]
        s3 += x[k] * y3[k]
    return s0, s1, s2, s3


@njit(inline="always", fastmath={"reassoc", "contract"})
def _single(a, b, c, m: int, n: int, beta: float) -> None:
    """c[m, n], one dot product."""
    total = c.dtype.type(0)
    x, y = a[m], b[n]
    for k in range(a.shape[1]):
        total += x[k] * y[k]
    _store(c, m, n, total, beta)


def dot_rows_numpy(a: np.ndarray, b: np.ndarray, c: np.ndarray, beta: float) -> None:
    """The reference: the same product by NumPy (BLAS)."""
    c[...] = a @ b.T if beta == 0.0 else a @ b.T + beta * c


# ------------------------------------------------------------------ whole products (``product``)
# Where a whole product a @ bᵀ on the tiles beats OpenBLAS's GEMM (one thread and two, on BLAS's threads;
# measured 2026-11-29 on the 2-core AMD VM, OpenBLAS's Haswell kernels): sums of 512 terms 211 GFLOP/s a core
# against 128, of 256 ~170 against 128; of 128 they tie (130).  Below ~16 M multiply-adds a product is too
# short for the region of two threads (~50 µs) and the per-call costs to matter.
PRODUCT_MIN_SUM = 256
PRODUCT_MIN_MACS = 1 << 24
_PRODUCT = Kernel(dot_rows_numpy, dot_rows)
# The tiles win only where numba's loops get wider vectors than BLAS's kernels: on an AMD CPU with AVX-512
# (LLVM compiles for its full 512-bit width) beside OpenBLAS's AVX2 kernels (its "Haswell" or "Zen" ones, as
# an OPENBLAS_CORETYPE or an OpenBLAS that does not know the CPU selects them).  On an Intel Xeon VM
# (Emerald Rapids, 2026-11-29) LLVM prefers 256-bit vectors there: the tiles ran products at 0.37-0.67x the
# speed of OpenBLAS's SkylakeX (AVX-512) kernels and at 0.73-0.93x its Haswell ones.
AVX2_BLAS_KERNELS = ("haswell", "zen")


def tiles_beat_blas(cpu_vendor: str, cpu_flags, blas_kernels: str) -> bool:
    """Whether whole products on the tiles beat BLAS on a CPU of ``cpu_vendor`` ('AuthenticAMD') with the
    extensions ``cpu_flags`` beside BLAS's ``blas_kernels`` ('Haswell', 'SkylakeX', ...; '' when not
    OpenBLAS): an AMD CPU with AVX-512 and OpenBLAS's AVX2 kernels (see above)."""
    return cpu_vendor == "AuthenticAMD" and "avx512f" in cpu_flags and blas_kernels.lower() in AVX2_BLAS_KERNELS


@functools.cache
def tiles_beat_blas_here() -> bool:
    """``tiles_beat_blas`` for this machine (asked once)."""
    info = cpu()
    return tiles_beat_blas(info["vendor"], info["flags"], blas.core_name())


def product(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``a @ bᵀ`` for a (M, K), b (N, K), into ``out`` (M, N; a new array when None): on the tiles where
    they beat BLAS's GEMM (``tiles_pay``; b copied into C order if it is not, e.g. a weight's
    transpose: a linear layer's input gradient ``g @ W`` is ``product(g, W.T)``), over the threads
    the policy allows (BLAS's own, each a band of rows of out); else NumPy's matmul.  Returns out."""
    if out is None:
        out = np.empty((a.shape[0], b.shape[0]), np.result_type(a, b))
    if not tiles_pay(a, b, out):
        return np.matmul(a, b.T, out=out)
    b = contiguous_rows(b)
    count = blas_threads.shares(a.shape[0] // TILE)
    task = _rows_task(a.dtype.name) if count > 1 and blas_threads.available() else None
    if task is None:
        if count > 1:  # (the task compiling in the background, or no BLAS threads: BLAS's own threads)
            return np.matmul(a, b.T, out=out)
        _PRODUCT.on(a)(a, b, out, 0.0)
        return out
    bands = [(TILE * start, TILE * stop) for start, stop in split(a.shape[0] // TILE, count)]
    bands[-1] = (bands[-1][0], a.shape[0])  # (the last band takes the rows beyond the last tile)
    blas_threads.run(task, records(bands, [x.reshape(1, 1, *x.shape) for x in (a, b, out)]))
    return out


def tiles_pay(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> bool:
    """Whether ``product`` runs on the tiles: the JIT on, on a machine where they beat BLAS
    (``tiles_beat_blas_here``); a and out C-contiguous 2-D arrays, b 2-D, of one float dtype and shapes
    that fit; sums of at least ``PRODUCT_MIN_SUM`` terms, ``PRODUCT_MIN_MACS`` multiply-adds in all; b
    within the cache (``MAX_B_BYTES``).  (Shapes that do not fit go to NumPy's matmul, which says why.)"""
    if a.ndim != 2 or a.shape[1] < PRODUCT_MIN_SUM or not jit.jit_enabled():  # (the usual answer, first)
        return False
    if not tiles_beat_blas_here():
        return False
    m, k = a.shape
    return (
        b.ndim == 2
        and b.shape[1] == k
        and out.shape == (m, b.shape[0])
        and a.dtype == b.dtype == out.dtype
        and a.dtype.kind == "f"
        and a.dtype.itemsize in (4, 8)
        and m * b.shape[0] * k >= PRODUCT_MIN_MACS
        and b.nbytes <= MAX_B_BYTES
        and a.flags.c_contiguous
        and out.flags.c_contiguous
    )


@blas_threads.task_factory
def _rows_task(dtype_name: str):
    """The task computing the band of rows [start, stop) of ``c = a @ bᵀ``: slots a, b, c (each 2-D
    array as (1, 1, rows, cols))."""
    dtype = np.dtype(dtype_name).type

    def task(pointer):
        row = record(pointer, HEAD + SLOT * 3)
        a, b, c = contiguous(row, 0, dtype), contiguous(row, 1, dtype), contiguous(row, 2, dtype)
        try:
            dot_rows(a[0, 0, row[0] : row[1]], b[0, 0], c[0, 0, row[0] : row[1]], scalar(pointer))
        except Exception:  # (e.g. no memory: reported by ``blas_threads.run``)
            fail(row)

    return task

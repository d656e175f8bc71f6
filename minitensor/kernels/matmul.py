"""Stacked matrix products ``(..., m, k) @ (..., k, n)``: one BLAS call per matrix, made from numba.

``np.matmul`` on stacked operands also multiplies matrix by matrix, but measured
on the 2-core AVX-512 machine of docs/performance.md it was slower than the same
BLAS calls made one by one from a kernel for some shapes ((8, 32, 512) @
(8, 512, 256): 730-750 µs against 480-500; as fast for others).  And a backward's
transposed operand (``grad @ bᵀ``, ``aᵀ @ grad``) is a view NumPy must copy first,
where BLAS only needs a transpose flag (that product with ``b`` stored transposed:
3,200 µs against 700).

``batched_matmul`` loops over the matrices in a kernel (``_products``) and calls
NumPy's own ``cblas_sgemm``/``cblas_dgemm`` (``blas.gemm``) on 2-D views: the
operands are broadcast over the batch dims without copies (``_stacked.blas_4d``),
and an operand whose matrices are stored transposed is passed as such, with the
transpose flag.  Matrices of fewer than ``MIN_MACS`` multiply-adds stay with
``np.matmul``, whose own loops beat a BLAS call there (1,000 products of 4 x 4
matrices: 31 µs vs 52 µs), and so does everything the kernel does not take (the
JIT off, other dtypes, mixed dtypes, empty operands, no BLAS for numba).

The reference, ``_products_numpy``, runs ``np.matmul`` on the same operands (with
the JIT off, or where numba finds no BLAS); ``tests/kernels/test_matmul_kernel.py``
holds the two equal.

>>> a = np.ones((2, 40, 40), np.float32)
>>> batched_matmul(a, a)[1, 0, :3]
array([40., 40., 40.], dtype=float32)
"""

from __future__ import annotations

import math

import numpy as np

from ._stacked import blas_4d, shape_4d
from .runtime.blas import gemm
from .runtime.dispatch import BlasKernel
from .runtime.jit import njit

MIN_MACS = 32 * 32 * 32  # multiply-adds per matrix from which a BLAS call per matrix beats np.matmul


@njit(any_layout=("a", "b"), read_only=("a", "b"))
def _products(a, trans_a, b, trans_b, out):
    """out[i, h] = op(a[i, h]) @ op(b[i, h]) for every (i, h) pair; op(x) is xᵀ where its flag is set."""
    b2 = out.shape[1]
    for t in range(out.shape[0] * b2):
        i, h = t // b2, t % b2
        gemm(a[i, h], trans_a, b[i, h], trans_b, out[i, h], 0.0)


def _products_numpy(a, trans_a, b, trans_b, out) -> None:
    out[...] = _matmul(np.swapaxes(a, -1, -2) if trans_a else a, np.swapaxes(b, -1, -2) if trans_b else b)


def batched_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul(a, b)`` for arrays ``a`` (..., m, k) and ``b`` (..., k, n) (1-D operands as NumPy
    takes them); the result as NumPy's, computed by ``_products`` where it pays.  Two stacks need no
    stacked product: a ``b`` whose matrices are all one (a broadcast view: a weight shared by a
    batch, as vmap makes it) multiplies ``a``'s rows in one GEMM, and products over k = 1 (outer
    products, as in per-example weight gradients) are a broadcast multiplication (exactly: one term)."""
    if min(a.ndim, b.ndim) < 2 or max(a.ndim, b.ndim) < 3 or a.shape[-1] != b.shape[-2]:
        return _matmul(a, b)
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    shared = _one_matrix(b)
    if shared is not None and np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) == a.shape[:-2]:
        out = np.empty(a.shape[:-1] + (n,), np.result_type(a, b))  # (a's rows @ the one matrix: one GEMM)
        np.matmul(a.reshape(math.prod(a.shape[:-1]), k), shared, out=out.reshape(-1, n))
        return out
    if k == 1:
        return a * b
    if a.dtype != b.dtype or a.size == 0 or b.size == 0 or m * k * n < MIN_MACS:
        return _matmul(a, b)
    lead = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    out = np.empty(lead + (m, n), a.dtype)
    (a4, trans_a), (b4, trans_b) = _operand(a, lead), _operand(b, lead)
    _PRODUCTS.on(a)(a4, trans_a, b4, trans_b, out.reshape(shape_4d(out.shape)))
    return out


def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul(a, b)``, an operand BLAS cannot read copied first: ``np.matmul`` of a transposed
    stacked view, or of a matrix or vector with a stride of 0 (a broadcast: the gradient that
    ``y.sum()`` hands back) or a negative one, skips BLAS and runs 3-30x slower than the copy and
    BLAS (a (512, 256) broadcast times a vector: 58 µs, copied 14).  A 2-D transposed view BLAS
    takes with a flag."""
    return np.matmul(_blas_ready(a), _blas_ready(b))


def _blas_ready(x: np.ndarray) -> np.ndarray:
    """x, or a C-contiguous copy where NumPy's matmul would not hand it to BLAS (see ``_matmul``)."""
    contiguous = x.flags.c_contiguous
    if contiguous or x.ndim > 2:  # (the usual operand, at once: this runs on every product)
        return x if contiguous else np.ascontiguousarray(x)
    if x.size > 1 and (min(x.strides) <= 0 or x.itemsize not in x.strides):
        return np.ascontiguousarray(x)
    return x


def _one_matrix(x: np.ndarray) -> np.ndarray | None:
    """x's one matrix when x (..., k, n) repeats it over its batch dims (each of stride 0 or size 1),
    else None."""
    if x.strides[0] != 0 and x.shape[0] != 1:  # (the usual stack, at once: this runs on every stacked product)
        return None
    if 0 not in x.shape and all(stride == 0 or size == 1 for size, stride in zip(x.shape[:-2], x.strides[:-2])):
        return x[(0,) * (x.ndim - 2)]
    return None


def _operand(x: np.ndarray, lead: tuple) -> tuple:
    """(x as (B1, B2, R, C) matrices BLAS can read, False), or (the stored (B1, B2, C, R), True)
    when x's matrices are transposed views of contiguous ones (no copy either way)."""
    if x.shape[-1] > 1 and x.shape[-2] > 1 and x.strides[-2] == x.itemsize:
        return blas_4d(np.swapaxes(x, -1, -2), lead), True
    return blas_4d(x, lead), False


_PRODUCTS = BlasKernel(_products_numpy, _products)

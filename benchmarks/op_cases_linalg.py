"""Cases for linear algebra: products of vectors and matrices (dot, outer, kron, tensordot,
cdist, ...) and the matrix functions (det, inverse, cholesky, qr, svd, ...).

The matrix functions run on a batch of r * c // 256 well-conditioned 16 x 16 matrices
(512 of them at 2^17 elements, one at 16 x 16): the identity plus a small random part,
whose eigenvalues stay near 1 (det > 0, distinct singular values); cholesky gets
symmetric positive definite ones.
"""

from __future__ import annotations

import numpy as np
from op_inputs import F32, Case, normal_pair

N = 16  # the matrices' size


def _matrices(rng, r, c):
    """(r * c // 256, 16, 16): I + a random part of spectral norm about 0.4."""
    noise = rng.standard_normal((max(1, r * c // N**2), N, N), dtype=F32) * F32(0.2 / np.sqrt(N))
    return (np.eye(N, dtype=F32) + noise,)


def _spd(rng, r, c):
    """(r * c // 256, 16, 16) symmetric positive definite: A A^T / 16 + I."""
    a = rng.standard_normal((max(1, r * c // N**2), N, N), dtype=F32)
    return (a @ a.transpose(0, 2, 1) / F32(N) + np.eye(N, dtype=F32),)


def _flat_pair(rng, r, c):
    """Two vectors of r * c elements."""
    return rng.standard_normal(r * c, dtype=F32), rng.standard_normal(r * c, dtype=F32)


def _short_vectors(rng, r, c):
    """Vectors of r and c elements (their outer product has r * c)."""
    return rng.standard_normal(r, dtype=F32), rng.standard_normal(c, dtype=F32)


def _kron(rng, r, c):
    """a (r // 16, c // 16) and b (16, 16): their Kronecker product is r x c."""
    return rng.standard_normal((max(1, r // 16), max(1, c // 16)), dtype=F32), rng.standard_normal((16, 16), dtype=F32)


def _chain(rng, r, c):
    """x (r, c) @ w1 (c, c // 2) @ w2 (c // 2, c // 2)."""
    w1 = rng.standard_normal((c, c // 2), dtype=F32) / np.sqrt(F32(c))
    w2 = rng.standard_normal((c // 2, c // 2), dtype=F32) / np.sqrt(F32(c // 2))
    return rng.standard_normal((r, c), dtype=F32), w1, w2


def _tensordot(rng, r, c):
    """x (r // 4, 4, c) and w (4, c, c // 4): contracted over the last two dims of x."""
    w = rng.standard_normal((4, c, max(1, c // 4)), dtype=F32) / np.sqrt(F32(4 * c))
    return rng.standard_normal((max(1, r // 4), 4, c), dtype=F32), w


def _triples(rng, r, c):
    """Two arrays of r * c // 3 3-vectors (cross)."""
    n = max(1, r * c // 3)
    return rng.standard_normal((n, 3), dtype=F32), rng.standard_normal((n, 3), dtype=F32)


def _qr(lib, F, a):
    q, r = lib.qr(a)
    return q + r


def _svd(lib, F, a):
    """The singular values (U and V are defined up to signs)."""
    return lib.svd(a)[1]


CASES = [
    # products
    Case("dot", "linalg", _flat_pair, lambda lib, F, u, v: lib.dot(u, v)),
    Case("vdot", "linalg", _flat_pair, lambda lib, F, u, v: lib.vdot(u, v)),
    Case("inner", "linalg", normal_pair, lambda lib, F, x, y: lib.inner(x[:16], y)),
    Case("outer", "linalg", _short_vectors, lambda lib, F, u, v: lib.outer(u, v)),
    Case("ger", "linalg", _short_vectors, lambda lib, F, u, v: lib.ger(u, v)),
    Case("kron", "linalg", _kron, lambda lib, F, a, b: lib.kron(a, b)),
    Case("tensordot", "linalg", _tensordot, lambda lib, F, x, w: lib.tensordot(x, w, dims=2)),
    Case("chain_matmul", "linalg", _chain, lambda lib, F, x, w1, w2: lib.chain_matmul(x, w1, w2)),
    Case("cross", "linalg", _triples, lambda lib, F, u, v: lib.cross(u, v, dim=1)),
    Case("cdist", "linalg", normal_pair, lambda lib, F, x, y: lib.cdist(x, y)),
    # matrix functions
    Case("det", "linalg", _matrices, lambda lib, F, a: lib.det(a)),
    Case("logdet", "linalg", _matrices, lambda lib, F, a: lib.logdet(a)),
    Case("slogdet", "linalg", _matrices, lambda lib, F, a: lib.slogdet(a)[1]),
    Case("inverse", "linalg", _matrices, lambda lib, F, a: lib.inverse(a)),
    Case("pinverse", "linalg", _matrices, lambda lib, F, a: lib.pinverse(a)),
    Case("matrix_power", "linalg", _matrices, lambda lib, F, a: lib.matrix_power(a, 3)),
    Case("cholesky", "linalg", _spd, lambda lib, F, a: lib.cholesky(a)),
    Case("qr", "linalg", _matrices, _qr),
    Case("svd", "linalg", _matrices, _svd),
]

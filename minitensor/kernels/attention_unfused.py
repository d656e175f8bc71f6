"""Scaled dot-product attention's passes on NumPy's products (``np.matmul`` on any leading dims),
the softmax between them by ``softmax_scores`` (the row kernels when the JIT is on, NumPy when it
is off).

They are the reference the fused kernels of ``attention.py`` are tested against (with the JIT off),
the path the JIT takes where those kernels do not pay (small inputs, one head) or cannot run (no
BLAS found for numba), and the path they take while they compile in the background.
"""

from __future__ import annotations

import math

import numpy as np

from .attention_softmax import _transposed, softmax_scores, softmax_scores_backward

_CHUNK_BYTES = 8 << 20  # scores per chunk when P is not kept (a few MB stay in the last-level cache)


def forward_unfused(q, k, v, mask, scale, drop, p, out) -> None:
    """As ``attention._forward_heads``.  Without ``p``, large scores with batch dims are made a few batch
    entries at a time in one buffer (no large temporary, and each chunk is still in the cache
    for the second product)."""
    k_t = _transposed(k)
    lead, rows = out.shape[:-2], q.shape[-2]
    if p is not None or not lead or math.prod(lead) * rows * k_t.shape[-1] * q.itemsize <= _CHUNK_BYTES:
        return _softmax_product(np.matmul(q, k_t, out=p), mask, scale, drop, v, out)
    q, k_t, v = (np.broadcast_to(a, lead + a.shape[-2:]) for a in (q, k_t, v))
    mask, drop = (None if a is None else np.broadcast_to(a, lead + (rows, k_t.shape[-1])) for a in (mask, drop))
    step = max(1, _CHUNK_BYTES // max(1, math.prod(lead[1:]) * rows * k_t.shape[-1] * q.itemsize))
    buffer = np.empty((min(step, lead[0]),) + lead[1:] + (rows, k_t.shape[-1]), q.dtype)
    for i in range(0, lead[0], step):
        chunk = slice(i, min(lead[0], i + step))
        s = np.matmul(q[chunk], k_t[chunk], out=buffer[: chunk.stop - i])
        _softmax_product(s, _rows(mask, chunk), scale, _rows(drop, chunk), v[chunk], out[chunk])


def _softmax_product(s, mask, scale, drop, v, out) -> None:
    """out = (softmax(scale * s + mask) * drop) @ v, the softmax in place on the scores ``s``."""
    softmax_scores(s, mask, scale)
    np.matmul(s if drop is None else s * drop, v, out=out)


def _rows(a, chunk):
    return None if a is None else a[chunk]


def backward_unfused(g, q, k, v, p, drop, scale, dq, dk, dv) -> None:
    """As ``attention._backward_heads``."""
    if dv is not None:
        np.matmul(np.swapaxes(p if drop is None else p * drop, -1, -2), g, out=dv)
    if dq is not None or dk is not None:
        ds = softmax_scores_backward(p, np.matmul(g, _transposed(v)), drop, scale)
        if dq is not None:
            np.matmul(ds, k, out=dq)
        if dk is not None:
            np.matmul(np.swapaxes(ds, -1, -2), q, out=dk)

"""Scaled dot-product attention on stacked heads: fused kernels that call BLAS for the products.

For queries ``q`` (..., L, D), keys ``k`` (..., S, D), values ``v`` (..., S, Dv)
(the leading dims: batch and heads), one kernel call (``_forward_heads``) does,
for each head of its range (a group of heads at a time, see ``GROUP_BYTES``)::

    S   = q @ kᵀ                                     BLAS (``blas.gemm``, from numba)
    P   = softmax(scale * S + mask)                  in place, while S is in the cache
    out = (P * dropout) @ v                          BLAS

``mask`` is an additive float mask broadcastable to
(..., L, S) (0: may attend, -inf: may not; bool masks, key padding and the
causal mask arrive in this form).  A row whose keys are all masked has
all-zero probabilities, so its output is 0 and it passes no gradient back:
no NaN.  ``dropout`` is None or the inverted-dropout multipliers (0 or
1/(1-p)) of the same shape as P.

Backward (``_backward_heads``), with ``G = d(loss)/d(out)``, for each head::

    dV = (P * dropout)ᵀ @ G                          BLAS
    dP = G @ vᵀ                                      BLAS
    dS = scale * P * (dP * dropout - rowsum(dP * dropout * P))
    dQ = dS @ k,   dK = dSᵀ @ q                      BLAS

The heads are 2-D views into the projections (rows of a (N, L, 3E) array):
BLAS reads and writes them in place, nothing is transposed or copied.

With enough work (``_implementation``) the heads are split over the threads,
each thread calling BLAS single-threaded: on NumPy's BLAS threads themselves
(``_forward_threaded``/``_backward_threaded``, via ``runtime/blas_threads.py``), where
no pool of numba's competes with OpenBLAS's polling workers; where that is not
available, on numba's (the ``_parallel`` kernels), only for passes longer than
the time OpenBLAS's threads keep spinning after a call (``BLAS_SPIN_SECONDS``).

The reference (JIT off) is the unfused path (``attention_unfused.py``): NumPy's ``np.matmul`` on all
heads at once, the softmax between the products in NumPy.  With the JIT on
the unfused path runs the softmax in a row kernel (``attention_softmax.py``: blocks of 64
rows in the L1/L2 cache, a SIMD ``exp`` from ``_exp.py``, parallel over the
blocks of all heads); it is taken where ``runtime/blas.py`` finds no BLAS for numba,
and for a single head with much work (parallel over its rows).

>>> q = k = v = np.eye(2)[None]               # one head, L = S = D = 2
>>> out, p = attention_forward(q, k, v, None, 1.0, None)
>>> p.round(3)
array([[[0.731, 0.269],
        [0.269, 0.731]]])
"""

from __future__ import annotations

import math

import numpy as np

from ._stacked import blas_4d
from .attention_softmax import (
    _as_4d,
    _mask_4d,
    _normalize_rows,
    _scale_and_mask,
    _softmax_grad_block,
)
from .attention_unfused import backward_unfused, forward_unfused
from .runtime import blas, blas_threads
from .runtime.blas import gemm
from .runtime.blas_threads import (
    HEAD,
    SLOT,
    contiguous,
    fail,
    optional_contiguous,
    optional_view,
    record,
    records,
    scalar,
    split,
    view,
)
from .runtime.dispatch import choose
from .runtime.jit import jit_enabled, njit, prange
from .runtime.threads import threads

# When the heads go parallel (``_implementation``).  The serial forward takes ~``HEAD_NS`` a head
# (two BLAS calls, the softmax's per-row costs) plus ~``FLOP_NS`` a flop of its products (measured
# from 16 heads of 12 x 12 x 8 to 128 of 128 x 128 x 32).  In a training step or an encoder layer,
# though, the BLAS calls just before attention (the projections) leave OpenBLAS's worker thread
# spinning on the other core for ~0.1 s (2^28 clock ticks, its THREAD_TIMEOUT) before it sleeps,
# and numba's threads share that core with it.  Measured with one head per thread against the
# serial kernels (docs/performance.md, "Results, 2026-11-28"): training steps (bench_load) took
# 1.39x (demo), 1.02x (course), 1.04x (GPT) as long, encoder layers forward / fwd+bwd 1.11x / 1.12x
# (small), 1.09x / 1.05x (medium, ~11 ms passes), and only the large layer (~170 ms passes) gained
# (0.80x / 0.91x).  So numba's parallel kernels are taken only for passes of at least
# ``BLAS_SPIN_SECONDS``.  On BLAS's own threads (``blas_threads``) the spinning worker is the one
# that takes the work, so there ``choose`` decides, from the products' time (``FLOP_NS``) only,
# against what a region costs (``blas_threads.LAUNCH_SECONDS``), for heads whose products take
# longer than their fixed costs (``HEAD_NS``): those costs did not shrink on two threads (the demo
# step's 256 heads of 8 x 8 x 8: forward 397 µs a layer on two threads against 272 on one,
# backward 673 against 472; 4,000 such heads 2.26 against 2.27 ms; many tiny BLAS calls at once,
# e.g. contending for OpenBLAS's buffers, are a likely cause), while the course's (32 x 32 x 16)
# and GPT step's heads gained.
HEAD_NS = 1000.0
FLOP_NS = 0.04
BLAS_SPIN_SECONDS = 0.1
# Many heads (``MANY_HEADS``) whose two products take at most ``SMALL_HEAD_MACS`` multiply-adds
# (L * S * (D + Dv)) take the unfused pass: a BLAS call costs ~0.14 µs however small (8 x 8 x 8),
# and the fused pass makes two a head forward and four backward, where NumPy's matmul multiplies
# all the stacked heads in one call with loops of its own (and a fixed cost of its own, which few
# heads do not repay).  Measured on the serial passes (unfused / fused, forward and backward), 256
# heads: 8 x 8 x 8 (the demo's) 0.78 / 0.70, 16 x 16 x 8 0.88 / 0.77, 16 x 16 x 16 0.96 / 0.84;
# 32 x 32 x 8 1.00 / 0.99; the course's 128 of 32 x 32 x 16 1.02 / 0.94, 64 of 64 x 64 x 32 1.55 / 1.06.
# Heads of 8 x 8 x 8: 16 of them 1.31 / 1.27, 32 1.02 / 0.97, 64 0.65 / 0.79.
SMALL_HEAD_MACS = 16 * 16 * 32
MANY_HEADS = 32


# ------------------------------------------------------------------ the fused kernels, a group of heads at a time
# One call does a pass of attention over a range of the (batch, head) pairs: for each pair the two
# matrix products go to BLAS (``blas.gemm``, on the head's 2-D views: no copies of strided heads).
# Heads go in groups whose scores fit ``GROUP_BYTES``: the softmax (or its backward) runs over the
# rows of all the group's heads at once (small heads would make short passes) while the scores are
# still in the cache (large heads' scores would not be, were all heads' made first).  The serial
# pass is one call over all heads; the threaded ones give each thread a range.
GROUP_BYTES = 256 << 10
# Argument types each pass is compiled once for (``runtime/shared_types.py``): the heads as views of any
# layout, the inputs read-only, and None or an array for the arguments that may be None (with the
# argument whose dtype and dims they share), not once per combination the callers meet.  (Not the
# parallel passes' None: numba hands a parallel loop its arrays unwrapped, and None fails there.)
_FORWARD_VIEWS = {"any_layout": ("q", "k", "v", "out"), "read_only": ("q", "k", "v", "mask", "drop")}
_BACKWARD_VIEWS = {"any_layout": ("g", "q", "k", "v", "dq", "dk", "dv"), "read_only": ("g", "q", "k", "v", "p", "drop")}
_FORWARD_OPTIONAL = {"mask": "q", "drop": "q", "p": "q"}
_BACKWARD_OPTIONAL = {"drop": "p", "dq": "q", "dk": "k", "dv": "v"}


@njit
def _head(a, i, h):
    """a[i, h], or None when ``a`` is None (numba drops the dead branch at compile time)."""
    if a is None:
        return None
    return a[i, h]


@njit
def _mask_head(mask, i, h):
    """The (L or 1, S) mask of head (i, h) of the mask from ``_mask_4d``, or None."""
    if mask is None:
        return None
    return mask[i if mask.shape[0] > 1 else 0, h if mask.shape[1] > 1 else 0]


@njit
def _dropped(p, drop, buffer):
    """p * drop written into ``buffer`` (of p's shape), or p itself when ``drop`` is None."""
    if drop is None:
        return p
    for r in range(p.shape[0]):
        for c in range(p.shape[1]):
            buffer[r, c] = p[r, c] * drop[r, c]
    return buffer


@njit
def _drop_buffer(drop, rows, cols, like):
    """A (rows, cols) array for ``_dropped`` (empty when there is no dropout)."""
    return np.empty((rows if drop is not None else 0, cols), like.dtype)


@njit
def _group_size(rows, cols, itemsize):
    """How many heads of (rows, cols) scores make a group (at least one)."""
    return max(1, GROUP_BYTES // max(1, rows * cols * itemsize))


@njit
def _scratch(p, count, rows, cols, like):
    """A (count, rows, cols) array for a group's scores when P is not kept (else an empty one)."""
    return np.empty((count if p is None else 0, rows, cols), like.dtype)


@njit
def _group(p, scratch, first, last):
    """The (last - first, L, S) scores of heads [first, last): P's rows when P is kept, else scratch."""
    if p is None:
        return scratch[: last - first]
    return p.reshape(p.shape[0] * p.shape[1], p.shape[2], p.shape[3])[first:last]


@njit(error_model="numpy")
def _softmax_group(s, mask, scale, first, b2):
    """P = softmax(scale * S + mask) in place on the scores ``s`` (G, L, S) of the heads first,
    first + 1, ...: ``_softmax_block``'s arithmetic, over all the group's rows at once."""
    flat = s.reshape(s.shape[0] * s.shape[1], s.shape[2])
    if mask is None and scale > 0:
        _normalize_rows(flat, scale)
        return
    for j in range(s.shape[0]):
        _scale_and_mask(s[j], _mask_head(mask, (first + j) // b2, (first + j) % b2), scale)
    _normalize_rows(flat, s.dtype.type(1))


@njit
def _softmax_grad_group(p, ds, drop, scale, first, b2):
    """ds <- the softmax backward (``_softmax_grad_block``) on the (G, L, S) P and dP of the heads
    first, first + 1, ..., over all their rows at once (dP times the heads' dropout first)."""
    if drop is not None:
        for j in range(ds.shape[0]):
            d = drop[(first + j) // b2, (first + j) % b2]
            for r in range(ds.shape[1]):
                for c in range(ds.shape[2]):
                    ds[j, r, c] *= d[r, c]
    rows = ds.shape[0] * ds.shape[1]
    _softmax_grad_block(p.reshape(rows, p.shape[2]), ds.reshape(rows, ds.shape[2]), None, scale)


@njit(error_model="numpy", optional=_FORWARD_OPTIONAL, **_FORWARD_VIEWS)
def _forward_heads(q, k, v, mask, scale, drop, p, out, start, stop):
    """Heads [start, stop) of the flattened (B1, B2) pairs, a group at a time: S = q @ kᵀ for each
    head into ``p`` (or a scratch array when ``p`` is None), P = softmax(scale * S + mask) over the
    group's rows, then out = (P * drop) @ v for each head."""
    b2, rows, cols = q.shape[1], q.shape[2], k.shape[2]
    size = _group_size(rows, cols, q.itemsize)
    scratch = _scratch(p, min(size, stop - start), rows, cols, q)
    buffer = _drop_buffer(drop, rows, cols, q)
    for first in range(start, stop, size):
        last = min(stop, first + size)
        s = _group(p, scratch, first, last)
        for t in range(first, last):
            gemm(q[t // b2, t % b2], False, k[t // b2, t % b2], True, s[t - first], 0.0)
        _softmax_group(s, mask, scale, first, b2)
        for t in range(first, last):
            i, h = t // b2, t % b2
            gemm(_dropped(s[t - first], _head(drop, i, h), buffer), False, v[i, h], False, out[i, h], 0.0)


@njit(parallel=True, error_model="numpy", **_FORWARD_VIEWS)
def _forward_heads_parallel(q, k, v, mask, scale, drop, p, out):
    """The forward pass of all heads, one at a time on numba's threads (BLAS single-threaded:
    ``blas.single_threaded``)."""
    for t in prange(q.shape[0] * q.shape[1]):
        _forward_heads(q, k, v, mask, scale, drop, p, out, t, t + 1)


@njit(optional=_BACKWARD_OPTIONAL, **_BACKWARD_VIEWS)
def _backward_heads(g, q, k, v, p, drop, scale, dq, dk, dv, start, stop):
    """Heads [start, stop), a group at a time: dv = (P * drop)ᵀ @ g, dS = the softmax backward of
    g @ vᵀ (over the group's rows at once), dq = dS @ k, dk = dSᵀ @ q (each skipped when None)."""
    b2, rows, cols = q.shape[1], p.shape[2], p.shape[3]
    size = _group_size(rows, cols, p.itemsize)
    need_ds = dq is not None or dk is not None
    ds_group = np.empty((min(size, stop - start) if need_ds else 0, rows, cols), p.dtype)
    p3 = p.reshape(p.shape[0] * b2, rows, cols)
    buffer = _drop_buffer(drop, rows, cols, p)
    for first in range(start, stop, size):
        last = min(stop, first + size)
        for t in range(first, last):
            i, h = t // b2, t % b2
            if dv is not None:
                gemm(_dropped(p[i, h], _head(drop, i, h), buffer), True, g[i, h], False, dv[i, h], 0.0)
            if need_ds:
                gemm(g[i, h], False, v[i, h], True, ds_group[t - first], 0.0)
        if not need_ds:
            continue
        ds = ds_group[: last - first]
        _softmax_grad_group(p3[first:last], ds, drop, scale, first, b2)
        for t in range(first, last):
            i, h = t // b2, t % b2
            if dq is not None:
                gemm(ds[t - first], False, k[i, h], False, dq[i, h], 0.0)
            if dk is not None:
                gemm(ds[t - first], True, q[i, h], False, dk[i, h], 0.0)


@njit(parallel=True, **_BACKWARD_VIEWS)
def _backward_heads_parallel(g, q, k, v, p, drop, scale, dq, dk, dv):
    """The backward pass of all heads, one at a time on numba's threads (BLAS single-threaded)."""
    for t in prange(q.shape[0] * q.shape[1]):
        _backward_heads(g, q, k, v, p, drop, scale, dq, dk, dv, t, t + 1)


@njit(error_model="numpy", optional=_FORWARD_OPTIONAL, **_FORWARD_VIEWS)
def _forward_serial(q, k, v, mask, scale, drop, p, out):
    """The forward pass of all heads on this thread."""
    _forward_heads(q, k, v, mask, scale, drop, p, out, 0, q.shape[0] * q.shape[1])


@njit(optional=_BACKWARD_OPTIONAL, **_BACKWARD_VIEWS)
def _backward_serial(g, q, k, v, p, drop, scale, dq, dk, dv):
    """The backward pass of all heads on this thread."""
    _backward_heads(g, q, k, v, p, drop, scale, dq, dk, dv, 0, q.shape[0] * q.shape[1])


# ------------------------------------------------------------------ the heads split over the threads
# On NumPy's BLAS threads (``blas_threads``: one task a thread, each running the range kernel on its
# heads), else on numba's (the ``_parallel`` kernels).  Record slots: the arrays in the kernels'
# argument order; the scale is the record's scalar.
_FORWARD = ("q", "k", "v", "mask", "drop", "p", "out")
_BACKWARD = ("g", "q", "k", "v", "p", "drop", "dq", "dk", "dv")


def _forward_threaded(q, k, v, mask, scale, drop, p, out) -> None:
    """The forward pass of all heads, split over the threads."""
    arrays = (q, k, v, mask, drop, p, out)
    if not (blas_threads.available() and _contiguous(mask, drop, p)):
        with blas.single_threaded():
            _forward_heads_parallel(*arrays[:4], scale, *arrays[4:])
        return
    task = _forward_task(q.dtype.name)
    if task is None:  # (compiling in the background: jit.py)
        _forward_serial(q, k, v, mask, scale, drop, p, out)
        return
    blas_threads.run(task, _records(q, arrays, scale))


def _backward_threaded(g, q, k, v, p, drop, scale, dq, dk, dv) -> None:
    """The backward pass of all heads, split over the threads."""
    arrays = (g, q, k, v, p, drop, dq, dk, dv)
    if not (blas_threads.available() and _contiguous(p, drop)):
        with blas.single_threaded():
            _backward_heads_parallel(*arrays[:6], scale, *arrays[6:])
        return
    task = _backward_task(q.dtype.name)
    if task is None:  # (compiling in the background: jit.py)
        _backward_serial(g, q, k, v, p, drop, scale, dq, dk, dv)
        return
    blas_threads.run(task, _records(q, arrays, scale))


def _contiguous(*arrays) -> bool:
    """Whether the arrays the tasks read as C-contiguous (mask, dropout, P) are so (or None)."""
    return all(a is None or a.flags.c_contiguous for a in arrays)


def _records(q, arrays: tuple, scale) -> np.ndarray:
    """The record rows of a pass: the (batch, head) pairs split over the policy's threads (at most
    BLAS's own count)."""
    heads = q.shape[0] * q.shape[1]
    count = max(1, min(threads(), blas_threads.blas_threads(), heads))
    return records(split(heads, count), arrays, float(scale))


@blas_threads.task_factory
def _forward_task(dtype_name: str):
    """The task running ``_forward_heads`` on one record row (one per dtype: mask, dropout and P
    are None or arrays as their slots say)."""
    dtype = np.dtype(dtype_name).type

    def task(pointer):
        row = record(pointer, HEAD + SLOT * len(_FORWARD))
        mask, drop = optional_contiguous(row, 3, dtype), optional_contiguous(row, 4, dtype)
        p = optional_contiguous(row, 5, dtype)
        q, k, v, out = view(row, 0, dtype), view(row, 1, dtype), view(row, 2, dtype), view(row, 6, dtype)
        try:
            _forward_heads(q, k, v, mask, dtype(scalar(pointer)), drop, p, out, row[0], row[1])
        except Exception:  # (e.g. no memory for the scratch: reported by ``blas_threads.run``)
            fail(row)

    return task


@blas_threads.task_factory
def _backward_task(dtype_name: str):
    """The task running ``_backward_heads`` on one record row (one per dtype: dropout and the
    gradients are None or arrays as their slots say)."""
    dtype = np.dtype(dtype_name).type

    def task(pointer):
        row = record(pointer, HEAD + SLOT * len(_BACKWARD))
        g, q, k, v = view(row, 0, dtype), view(row, 1, dtype), view(row, 2, dtype), view(row, 3, dtype)
        p, drop = contiguous(row, 4, dtype), optional_contiguous(row, 5, dtype)
        dq, dk, dv = optional_view(row, 6, dtype), optional_view(row, 7, dtype), optional_view(row, 8, dtype)
        try:
            _backward_heads(g, q, k, v, p, drop, dtype(scalar(pointer)), dq, dk, dv, row[0], row[1])
        except Exception:  # (as in _forward_task)
            fail(row)

    return task


# While a fused pass compiles in the background (runtime/jit.py), its calls run these instead.
_forward_serial.fallback = _forward_heads_parallel.fallback = forward_unfused
_backward_serial.fallback = _backward_heads_parallel.fallback = backward_unfused


# ------------------------------------------------------------------ forward and backward
def attention_forward(q, k, v, mask, scale: float, dropout, out=None, keep_probs: bool = True) -> tuple:
    """(out, P): out = (P * dropout) @ v, written into ``out`` when given (e.g. a view of merged
    heads).  P is None with ``keep_probs=False`` (no gradient will need it): the scores then
    live in a scratch array per head (or per chunk of heads).

    q (..., L, D), k (..., S, D), v (..., S, Dv) broadcast over their leading dims; ``mask`` and
    ``dropout`` broadcast to (..., L, S).  Brings them to the form of ``heads_forward`` (4-D, one
    dtype, heads BLAS reads in place) and runs it.
    """
    q, k, v = _common_dtype(q, k, v)
    scores = _lead(q, k, v) + (q.shape[-2], k.shape[-2])
    lead, dtype = scores[:-2], q.dtype
    p = np.empty(scores, dtype) if keep_probs else None
    if out is None:
        out = np.empty(scores[:-1] + v.shape[-1:], dtype)
    q4, k4, v4, out4 = blas_4d(q, lead), blas_4d(k, lead), blas_4d(v, lead), blas_4d(out, lead)
    mask4, drop4 = _mask_4d(_cast(mask, dtype), scores, dtype), _as_4d(_cast(dropout, dtype), scores)
    heads_forward(q4, k4, v4, mask4, scale, drop4, _as_4d(p, scores), out4)
    _write_back(out4, out)
    return out, p


def heads_forward(q, k, v, mask, scale: float, dropout, p, out) -> None:
    """``attention_forward`` on heads in the kernels' form: out (and P into ``p``, unless None).

    q (B1, B2, L, D), k (B1, B2, S, D), v (B1, B2, S, Dv), out (B1, B2, L, Dv) and p (B1, B2, L, S)
    or None, all of one dtype, each head a 2-D array BLAS can read in place (``blas_4d``: e.g. the
    views of a C-contiguous packed projection); ``mask`` as from ``_mask_4d``, ``dropout`` (B1, B2,
    L, S) or None.  The fused attention ops call it directly: their heads are in this form already.
    """
    scores = p.shape if p is not None else q.shape[:3] + k.shape[2:3]
    run = _implementation(q, v, scores, forward_unfused, _forward_serial, _forward_threaded)
    run(q, k, v, mask, scale if run is forward_unfused else q.dtype.type(scale), dropout, p, out)


def attention_backward(grad, q, k, v, p, scale: float, dropout, need=(True, True, True), out=(None, None, None)):
    """(dq, dk, dv) from d(loss)/d(out) ``grad`` and the kept P; each written into its ``out``
    array when given, else into a new one shaped by the broadcast leading dims; None when not
    needed.  Brings the arguments to the form of ``heads_backward`` and runs it."""
    q, k, v = _common_dtype(q, k, v)
    grad, dropout, lead = _cast(grad, q.dtype), _cast(dropout, q.dtype), p.shape[:-2]
    grads = [
        (o if o is not None else np.empty(lead + x.shape[-2:], q.dtype)) if wanted else None
        for x, wanted, o in zip((q, k, v), need, out)
    ]
    q4, k4, v4, g4 = blas_4d(q, lead), blas_4d(k, lead), blas_4d(v, lead), blas_4d(grad, lead)
    targets = [None if d is None else blas_4d(d, lead) for d in grads]
    heads_backward(g4, q4, k4, v4, _as_4d(p, p.shape), scale, _as_4d(dropout, p.shape), *targets)
    for target, d in zip(targets, grads):
        _write_back(target, d)
    return tuple(grads)


def heads_backward(grad, q, k, v, p, scale: float, dropout, dq, dk, dv) -> None:
    """``attention_backward`` on heads in the kernels' form (as for ``heads_forward``): the
    gradients written into ``dq``, ``dk``, ``dv`` (B1, B2, ., .), each skipped when None."""
    run = _implementation(q, v, p.shape, backward_unfused, _backward_serial, _backward_threaded)
    run(grad, q, k, v, p, dropout, scale if run is backward_unfused else q.dtype.type(scale), dq, dk, dv)


def _implementation(q: np.ndarray, v: np.ndarray, scores: tuple, unfused, serial, parallel):
    """The pass to run on the (..., L, S) ``scores``: with the JIT off, or where numba cannot call
    BLAS, ``unfused`` (NumPy's products; its softmax picks NumPy or the row kernels); else the
    fused kernel: ``serial``, or ``parallel`` over the heads when that pays for the threads
    (``choose``): on BLAS's threads from the products' time (``FLOP_NS`` a flop, 2 (D + Dv) a
    score) against their launch cost; on numba's from the serial time (``HEAD_NS`` a head more),
    only for passes of at least ``BLAS_SPIN_SECONDS``.  A single head with that much work takes ``unfused`` (its
    softmax then runs in parallel over the rows), and so do many small heads (``SMALL_HEAD_MACS``)."""
    heads = scores[0] * scores[1] if len(scores) == 4 else math.prod(scores[:-2])
    head_macs = scores[-2] * scores[-1] * (q.shape[-1] + v.shape[-1])
    if head_macs <= SMALL_HEAD_MACS and heads >= MANY_HEADS:
        return unfused
    flops = 2.0 * heads * head_macs
    nanoseconds = HEAD_NS * heads + FLOP_NS * flops
    if heads > 1 and jit_enabled() and blas_threads.available():
        # on BLAS's threads the work to share is the products' time, where it outweighs the heads'
        # fixed costs, else none (see ``HEAD_NS``)
        shared = FLOP_NS * flops if FLOP_NS * flops >= HEAD_NS * heads else 0.0
        run = choose(q, unfused, serial, parallel, ns=shared / max(1, q.size), launch=blas_threads.LAUNCH_SECONDS)
    else:
        long_pass = nanoseconds >= BLAS_SPIN_SECONDS * 1e9
        threaded = (parallel if heads > 1 else unfused) if long_pass else None
        run = choose(q, unfused, serial, threaded, ns=nanoseconds / max(1, q.size))
    return unfused if run is not unfused and not blas.available() else run


def _lead(q, k, v) -> tuple:
    """The broadcast leading (batch, head) dims of q, k and v."""
    lead = q.shape[:-2]
    if lead == k.shape[:-2] == v.shape[:-2]:
        return lead
    return np.broadcast_shapes(lead, k.shape[:-2], v.shape[:-2])


def _common_dtype(*arrays) -> tuple:
    """The arrays in their result dtype when that is float32 or float64 (as they are otherwise)."""
    q, k, v = arrays
    if q.dtype == k.dtype == v.dtype:
        return arrays
    dtype = np.result_type(*arrays)
    return tuple(a.astype(dtype) for a in arrays) if dtype in (np.float32, np.float64) else arrays


def _cast(a, dtype):
    return None if a is None else np.asarray(a).astype(dtype, copy=False)


def _write_back(target: np.ndarray | None, out: np.ndarray | None) -> None:
    """Copy a kernel's 4-D output ``target`` into ``out`` unless it is a view of it already."""
    if target is not None and target is not out and not np.may_share_memory(target, out):
        out[...] = target.reshape(out.shape)

"""Max pooling over windows of planes: the max of each window and where it is, and the windows'
geometry that the pooling kernels share (``window_mean.py`` averages the same windows).

Every pooling of ``minitensor`` reaches the kernels with its input seen as planes
``x`` (P, H, W) (the batch and channel dims merged into P; a 1-D pooling has H = 1)
and its windows described per dim by three things, computed once by the caller::

    start (O,)  the first input position of each output's window (inside the input)
    count (O,)  how many positions the window has inside the input (>= 1; 0 where a dilated
                window steps over the input: ``max_pool`` gives -inf there, as PyTorch)
    step        the distance between them (the dilation; 1 for average pooling)

so output ``(i, j)`` pools ``x[p, start_h[i] + a * step_h, start_w[j] + b * step_w]`` for
``a < count_h[i]`` and ``b < count_w[j]``.  Padding, ``ceil_mode`` and adaptive windows are
all just other starts and counts: the kernels never see them.

``max_pool``: per window, its largest value and that value's flat index ``h * W + w``, with
PyTorch's rule: the first of equal maxima in row-major order, and a NaN wins (the last NaN of
the window).  Two numba kernels over the planes (each in parallel over planes for big inputs),
whichever is the faster for the windows (``by_columns``): by runs along W, then along H, over
whole blocks of planes at once (``_max_pool_block``: small or overlapping windows), or by columns,
each output row's columns then each window from its columns (``_max_columns_block``: big windows
that overlap little, adaptive and global pooling); beside their NumPy reference, which gathers all
windows at once (``windows``: a (P, Ho, Wo, kh * kw) array).

>>> x = np.array([[[1.0, 5.0, 2.0, 2.0]]])                 # one plane, H = 1, W = 4
>>> one = np.zeros(1, np.int64), np.ones(1, np.int64)       # rows: start 0, count 1
>>> cols = np.array([0, 2]), np.array([2, 2])               # windows [0, 1] and [2, 3]
>>> max_pool(x, (*one, 1), (*cols, 1))
(array([[[5., 2.]]]), array([[[1, 2]]]))
"""

from __future__ import annotations

import numpy as np

from ._rows import PIECE, calls_intrinsics, maximum
from .runtime.dispatch import Kernel
from .runtime.jit import njit, prange


# ------------------------------------------------------------------ the max of each window
def max_pool(x: np.ndarray, rows: tuple, cols: tuple) -> tuple:
    """The max of each window of the planes ``x`` (P, H, W) and its flat index ``h * W + w``.

    Args:
        rows, cols: ``(start, count, step)`` of the windows along H and along W (see the module
            docstring): start and count int64 arrays of the output's height (width), step an int.

    Returns: ``(values, index)``, values (P, Ho, Wo) of x's dtype, index int64 (P, Ho, Wo).
    """
    (h0, hn, dh), (w0, wn, dw) = rows, cols
    shape = (x.shape[0], h0.shape[0], w0.shape[0])
    value, index = np.empty(shape, x.dtype), np.empty(shape, np.int64)
    x = np.ascontiguousarray(x)
    empty = empty_windows(rows, cols)
    if empty is not None:  # (the kernels pool one tap of the input there instead, overwritten below)
        (h0, hn), (w0, wn) = _inside(h0, hn), _inside(w0, wn)
    kh, kw = _common(hn), _common(wn)  # the counts the runs are made for
    kernel = _MAX_COLUMNS if by_columns(hn, wn, *x.shape[1:]) else _MAX_POOL
    kernel.on(x)(x, h0, hn, int(dh), kh, w0, wn, int(dw), kw, value, index)
    if empty is not None:
        value[:, empty] = -np.inf
        index[:, empty] = (rows[0][:, None] * x.shape[2] + cols[0][None, :])[empty]
    return value, index


def empty_windows(rows: tuple, cols: tuple) -> np.ndarray | None:
    """(Ho, Wo) True where a window has no tap inside the input (a dilated window over the padding
    can step over the input: ``kernel_size=2, dilation=2, padding=1`` on one column), else None
    when there is none.  Such a window's max is -inf and its index ``h * W + w`` of its first tap
    past the padding (which may lie outside the plane), as PyTorch's.  Only dilated windows can:
    without dilation every window holds a tap (PyTorch's padding is at most half the kernel, and a
    ``ceil_mode`` window starts inside the input or its left padding)."""
    if rows[2] == 1 and cols[2] == 1:
        return None
    empty_h, empty_w = rows[1] == 0, cols[1] == 0
    if not (empty_h.any() or empty_w.any()):
        return None
    return empty_h[:, None] | empty_w[None, :]


def _inside(start: np.ndarray, count: np.ndarray) -> tuple:
    """The windows with the empty ones (count 0) replaced by the input's first tap."""
    empty = count == 0
    return np.where(empty, 0, start), np.where(empty, 1, count)


def _common(count: np.ndarray) -> int:
    """The count the runs are made for: the lower quartile of the windows' counts.  Windows of
    that count read their runs, longer ones add their other taps, shorter ones take theirs one by
    one (the slowest): so the full windows' count for a sliding pooling (the ones cut short by an
    edge are a few at the ends), the smaller of the two counts of adaptive windows."""
    return sorted(count.tolist())[count.size // 4] if count.size else 1  # (a few windows: a list sorts fastest)


def _positions(start: np.ndarray, count: np.ndarray, step: int) -> tuple:
    """(positions (O, K), valid (O, K)): each window's input positions, K the largest count (the
    positions past a window's count repeat its start, marked invalid)."""
    k = np.arange(max(int(count.max(initial=1)), 1))
    valid = k < count[:, None]
    return np.where(valid, start[:, None] + step * k, start[:, None]), valid


def windows(x: np.ndarray, rows: tuple, cols: tuple) -> tuple:
    """(values (P, Ho, Wo, kh * kw), valid (Ho, Wo, kh * kw), flat index (Ho, Wo, kh * kw))."""
    (hp, hv), (wp, wv) = _positions(*rows), _positions(*cols)
    values = x[:, hp[:, None, :, None], wp[None, :, None, :]]  # (P, Ho, Wo, kh, kw)
    valid = hv[:, None, :, None] & wv[None, :, None, :]
    flat = hp[:, None, :, None] * x.shape[2] + wp[None, :, None, :]
    shape = values.shape[:3] + (values.shape[3] * values.shape[4],)
    return values.reshape(shape), valid.reshape(shape[1:]), flat.reshape(shape[1:])


def _max_pool_numpy(x, h0, hn, dh, kh, w0, wn, dw, kw, value, index) -> None:
    """All the windows gathered at once; in each the last NaN if it holds one, else the first
    maximum (``argmax`` returns the first)."""
    values, valid, flat = windows(x, (h0, hn, dh), (w0, wn, dw))
    nan = np.isnan(values) & valid
    k = values.shape[-1]
    last_nan = k - 1 - np.argmax(nan[..., ::-1], axis=-1)
    first_max = np.argmax(np.where(valid & ~nan, values, -np.inf), axis=-1)  # (all -inf: the first, valid)
    choice = np.where(nan.any(axis=-1), last_nan, first_max)[..., None]
    value[...] = np.take_along_axis(values, choice, axis=-1)[..., 0]
    index[...] = np.take_along_axis(np.broadcast_to(flat, values.shape), choice, axis=-1)[..., 0]


# A block of planes is read as one flat array, and at every position q: the max of the kw taps
# q, q + dw, ... along W (``_runs``), then of the kh such runs q, q + dh * W, ... along H
# (``_runs`` again): the max of the (kh, kw) window whose first tap is q, with kh and kw the
# counts of most windows (``_common``).  Each such window then reads its own (``_pick``).  A
# run of k taps takes about log2(k) passes: runs of 1, 2, 4, ... taps, each two of the last
# ones side by side (``_pair``), then the run of k as two overlapping runs of the largest power of
# two below it.  The other windows (cut short by an edge: padding, ceil_mode; adaptive windows of
# one more tap) combine their rows' runs and other taps one by one, for all the
# planes of the block at once (``_other_window``).  The runs are computed at every position, also
# where no window starts (and past the rows' ends, mixing rows and planes: no window reads those),
# but in contiguous loops over the block, in SIMD lanes: several times faster than window by
# window, whose loops are as short as a window (~4 ns an element).
# PyTorch's rule holds for runs as for taps: in each pair the second replaces the first if it is
# larger or NaN, so a run keeps its first maximum in row-major order (the left one of equal maxima,
# the upper one of equal rows' maxima), or its last NaN; two overlapping runs too (the second ends
# the window: a larger value or a NaN in it lies past the first run, or is also in the first one).


@njit
def _first_pair(flat, shift, n, best, at):
    """best[q], at[q] = the max of flat[q] and flat[q + shift] and its position, for q < n."""
    shift = np.uint64(shift)
    for q in range(np.uint64(n)):  # (unsigned: signed indices keep LLVM from vectorising)
        m, v = flat[q], flat[q + shift]
        take = (v > m) | (v != v)  # (a larger value, or a NaN: PyTorch's rule)
        best[q] = v if take else m
        at[q] = np.int32(q + shift) if take else np.int32(q)


@njit
def _pair(run, run_at, shift, n, best, at):
    """best[q], at[q] = the max of the runs run[q] and run[q + shift] and its position, for q < n."""
    shift = np.uint64(shift)
    for q in range(np.uint64(n)):
        m, v, i, j = run[q], run[q + shift], run_at[q], run_at[q + shift]  # (all loaded: selects)
        take = (v > m) | (v != v)
        best[q] = v if take else m
        at[q] = j if take else i


@njit
def _runs(values, positions, k, step, out, out_at, tmp, tmp_at):
    """out[q], out_at[q] = the max of the k taps values[q], values[q + step], ... and its position
    (from ``positions``, or q itself when it is None), at every q where the k taps fit (tmp, tmp_at:
    scratch): pairs of runs of 1, 2, 4, ... taps, the last two overlapping to make k."""
    size = values.shape[0]
    if k == 1:
        for q in range(np.uint64(size)):
            out[q], out_at[q] = values[q], np.int32(q) if positions is None else positions[q]
        return
    passes, span = 1, 2
    while span < k:
        passes, span = passes + 1, min(2 * span, k)
    # (the passes alternate between out and tmp: the first goes where the last ends in out)
    run, run_at, free, free_at = (out, out_at, tmp, tmp_at) if passes % 2 else (tmp, tmp_at, out, out_at)
    if positions is None:
        _first_pair(values, step, size - step, run, run_at)
    else:
        _pair(values, positions, step, size - step, run, run_at)
    span = 2
    while span < k:
        shift = min(span, k - span) * step  # (twice the span, or the last two overlapping)
        span = min(2 * span, k)
        _pair(run, run_at, shift, size - (span - 1) * step, free, free_at)
        run, run_at, free, free_at = free, free_at, run, run_at


@njit
def _pick(best, at, first, area, value, index):
    """Each plane's windows' max and position from the runs: window o of plane p starts at
    ``p * area + first[o]`` (value, index: (planes, outputs))."""
    for p in range(value.shape[0]):
        base, out, out_at = p * area, value[p], index[p]
        for o in range(np.uint64(first.shape[0])):
            q = np.uint64(base + first[o])
            out[o], out_at[o] = best[q], at[q] - base


@njit
def _other_window(flat, run, run_at, best, at, area, start, width, hn, dh, kh, wn, dw, kw, m, m_at):
    """The max and position of one window of hn rows (dh apart) of wn taps (dw apart) from
    ``start`` in each plane of the flat block (``m``, ``m_at``: (planes,)): its first kh rows
    from the runs along H (``best``, ``at``) if it is kw wide and that high, each other row's
    first kw taps from its run along W (``run``, ``run_at``) if it has that many, its other taps
    one by one; the rows in order.  Each loop runs over the planes (no chain from one to the next)."""
    planes, area = np.uint64(m.shape[0]), np.uint64(area)
    a0 = kh if wn == kw and hn >= kh else 0
    for p in range(planes):  # the first tap, or the first kh rows
        q = p * area + np.uint64(start)
        m[p], m_at[p] = (best[q], at[q]) if a0 else (flat[q], np.int32(q))
    b0 = kw if wn >= kw else 0
    for a in range(a0, hn):
        row = np.uint64(start + a * dh * width)
        if b0:
            for p in range(planes):
                v, k = run[p * area + row], run_at[p * area + row]
                take = (v > m[p]) | (v != v)
                m[p] = v if take else m[p]
                m_at[p] = k if take else m_at[p]
        for b in range(b0, wn):
            tap = row + np.uint64(b * dw)
            for p in range(planes):
                v = flat[p * area + tap]
                take = (v > m[p]) | (v != v)
                m[p] = v if take else m[p]
                m_at[p] = np.int32(p * area + tap) if take else m_at[p]


@njit
def _max_pool_block(x, h0, hn, dh, kh, w0, wn, dw, kw, value, index, first, scratch, scratch_at):
    """The max pooling of the block of planes x (B, H, W) into value, index (B, Ho, Wo), the
    windows' first taps at ``first`` (Ho * Wo); scratch (3, >= x.size), scratch_at likewise."""
    planes, height, width = x.shape
    flat, area, size = x.reshape(x.size), height * width, x.size
    run, run_at = scratch[0][:size], scratch_at[0][:size]
    _runs(flat, None, kw, dw, run, run_at, scratch[1][:size], scratch_at[1][:size])
    best, at = run, run_at
    if kh > 1:
        best, at = scratch[2][:size], scratch_at[2][:size]
        _runs(run, run_at, kh, dh * width, best, at, scratch[1][:size], scratch_at[1][:size])
    outputs = first.shape[0]
    _pick(best, at, first, area, value.reshape(planes, outputs), index.reshape(planes, outputs))
    m, m_at = np.empty(planes, x.dtype), np.empty(planes, np.int32)
    for i in range(h0.shape[0]):  # the other windows: each for all the planes at once
        for j in range(w0.shape[0]):
            if hn[i] != kh or wn[j] != kw:
                _other_window(flat, run, run_at, best, at, area, first[i * w0.shape[0] + j], width,
                              hn[i], dh, kh, wn[j], dw, kw, m, m_at)  # fmt: skip
                for p in range(planes):
                    value[p, i, j], index[p, i, j] = m[p], m_at[p] - p * area


@njit
def _first_taps(h0, w0, width):
    """The flat position of each window's first tap, (Ho * Wo)."""
    first = np.empty(h0.shape[0] * w0.shape[0], np.int64)
    for i in range(h0.shape[0]):
        for j in range(w0.shape[0]):
            first[i * w0.shape[0] + j] = h0[i] * width + w0[j]
    return first


@njit(read_only=("x", "h0", "hn", "w0", "wn"))
def _max_pool_planes(x, h0, hn, dh, kh, w0, wn, dw, kw, value, index):
    per = max(1, PIECE // (x.shape[1] * x.shape[2]))  # planes per block: the runs stay in the cache
    first = _first_taps(h0, w0, x.shape[2])
    scratch = np.empty((3, per * x.shape[1] * x.shape[2]), x.dtype)
    scratch_at = np.empty(scratch.shape, np.int32)
    for p in range(0, x.shape[0], per):
        _max_pool_block(x[p : p + per], h0, hn, dh, kh, w0, wn, dw, kw, value[p : p + per], index[p : p + per],
                        first, scratch, scratch_at)  # fmt: skip


@njit(parallel=True)
def _max_pool_parallel(x, h0, hn, dh, kh, w0, wn, dw, kw, value, index):
    per = max(1, PIECE // (x.shape[1] * x.shape[2]))
    first = _first_taps(h0, w0, x.shape[2])
    for block in prange((x.shape[0] + per - 1) // per):
        p = block * per
        scratch = np.empty((3, per * x.shape[1] * x.shape[2]), x.dtype)
        scratch_at = np.empty(scratch.shape, np.int32)
        _max_pool_block(x[p : p + per], h0, hn, dh, kh, w0, wn, dw, kw, value[p : p + per], index[p : p + per],
                        first, scratch, scratch_at)  # fmt: skip


_MAX_POOL = Kernel(_max_pool_numpy, _max_pool_planes, _max_pool_parallel, ns=0.5)


# Windows of many taps that overlap little (adaptive pooling of 32 x 32 planes to 3 x 3, global
# pooling, max_pool2d(8), 1-D adaptive pooling to a few outputs): by columns.  For each output row,
# the max of every column of its rows and where it is (``_column_max``: contiguous loops along W, in
# SIMD lanes), then each window of that output row from its columns (``_window_of_columns``: kw
# columns, not kh x kw taps, in two passes in SIMD lanes).  The runs make log2(kh) + log2(kw) passes
# at every position; the columns read each window's rows once, but pay ~40 ns a window.  128 planes
# of 32 x 32, one thread (2026-12-01, AMD Zen 3, µs, runs / columns; the window-by-window kernel
# they replace: 11 x 11 142-161, 16 x 16 182-212): windows of 2 x 2 152 / 1,355, 3 x 3 206 / 536,
# 4 x 4 226 / 341, 6 x 6 262 / 256, 8 x 8 259 / 164, 11 x 11 325 / 91, 16 x 16 284 / 106;
# overlapping, stride k / 2: 6 x 6 278 / 721, 8 x 8 271 / 394, 11 x 11 317 / 326, 16 x 16 308 / 166;
# stride 1: runs 5-18x faster.  1-D, 128 rows of 1,024 to 5 (16) windows: 331 / 91 (212 / 94).


def by_columns(hn: np.ndarray, wn: np.ndarray, height: int, width: int) -> bool:
    """Whether windows of ``hn`` rows and ``wn`` columns (their counts, (Ho,) and (Wo,)) of planes
    (height, width) are pooled by columns rather than by runs: the time of each per plane, in ns,
    estimated from the measurements above: the columns' scans (0.25 ns a column of a window),
    column passes (0.35 ns an element) and windows (40 ns each); the runs' passes (0.25 ns a
    position)."""
    passes = (_common(hn) - 1).bit_length() + (_common(wn) - 1).bit_length()  # ceil(log2 k) each
    rows, cols = hn.tolist(), wn.tolist()  # (a few windows: Python's sums are the fastest)
    columns = 0.25 * len(rows) * sum(cols) + 0.35 * width * sum(rows) + 40 * len(rows) * len(cols)
    return columns < 0.25 * height * width * max(passes, 1)


@njit
def _column_max(plane, r0, rn, dh, values, at):
    """values[0][w], at[0][w] = the max of column w of the rows r0, r0 + dh, ... (rn of them) of
    the plane (H, W) and its flat index ``h * W + w``: the first maximum, or the last NaN (PyTorch's
    rule, as the runs).  (values, at: (2, W), the passes alternating between their two rows to end in
    the first: a select written back where it was read is a masked store, slow on AMD.)"""
    width = plane.shape[1]
    m, m_at = values[(rn - 1) % 2], at[(rn - 1) % 2]
    first = plane[r0]
    for w in range(width):
        m[w], m_at[w] = first[w], np.int32(r0 * width + w)
    for a in range(1, rn):
        h = r0 + a * dh
        row, out, out_at = plane[h], values[(rn - a + 1) % 2], at[(rn - a + 1) % 2]
        m, m_at = values[(rn - a) % 2], at[(rn - a) % 2]
        for w in range(width):
            v, best, k = row[w], m[w], m_at[w]
            take = (v > best) | (v != v)
            out[w] = v if take else best
            out_at[w] = np.int32(h * width + w) if take else k


@njit
def _window_of_columns(values, at, w0, wn, dw, width):
    """(max, flat index) of the window of columns w0, w0 + dw, ... (wn of them) from the columns'
    maxima and their flat indices (``_column_max``; contiguous columns as contiguous arrays); a max
    of zero the chosen one's (``maximum`` takes +0 over -0, PyTorch the first of them)."""
    if dw == 1:
        m, found = _columns_max_at(values[w0 : w0 + wn], at[w0 : w0 + wn])
    else:
        stop = w0 + (wn - 1) * dw + 1
        m, found = _columns_max_at(values[w0:stop:dw], at[w0:stop:dw])
    return (values[found % width] if m == 0 else m), found


_PAST = np.int32(2**31 - 1)  # past any flat index of a plane


@calls_intrinsics
def _columns_max_at(values, at):
    """(max, flat index) of a window's columns (values, at: (kw,)) in two passes, each in SIMD
    lanes: the max (``maximum``: NaN if a NaN is there), then of the columns holding it the least
    flat index (the first maximum in row-major order), or of the NaN columns the greatest (the last NaN)."""
    m = values[0]
    for b in range(values.size):
        m = maximum(m, values[b])
    if m != m:
        last = np.int32(-1)
        for b in range(values.size):
            last = max(last, at[b] if values[b] != values[b] else np.int32(-1))
        return m, last
    first = _PAST
    for b in range(values.size):
        first = min(first, at[b] if values[b] == m else _PAST)
    return m, first


@njit
def _max_columns_block(x, h0, hn, dh, w0, wn, dw, value, index):
    """The max pooling of the block of planes x (B, H, W) into value, index (B, Ho, Wo) by columns."""
    values, at = np.empty((2, x.shape[2]), x.dtype), np.empty((2, x.shape[2]), np.int32)
    maxima, maxima_at = values[0], at[0]  # (where _column_max ends)
    for p in range(x.shape[0]):
        for i in range(h0.shape[0]):
            _column_max(x[p], h0[i], hn[i], dh, values, at)
            for j in range(w0.shape[0]):
                value[p, i, j], index[p, i, j] = _window_of_columns(maxima, maxima_at, w0[j], wn[j], dw, x.shape[2])


@njit(read_only=("x", "h0", "hn", "w0", "wn"))
def _max_columns_planes(x, h0, hn, dh, kh, w0, wn, dw, kw, value, index):
    _max_columns_block(x, h0, hn, dh, w0, wn, dw, value, index)


@njit(parallel=True)
def _max_columns_parallel(x, h0, hn, dh, kh, w0, wn, dw, kw, value, index):
    per = max(1, PIECE // (x.shape[1] * x.shape[2]))
    for block in prange((x.shape[0] + per - 1) // per):
        p = block * per
        _max_columns_block(x[p : p + per], h0, hn, dh, w0, wn, dw, value[p : p + per], index[p : p + per])


_MAX_COLUMNS = Kernel(_max_pool_numpy, _max_columns_planes, _max_columns_parallel, ns=0.5)

"""Depthwise convolution (one input channel per group: ``groups == C``, also C = 1; at most two
output channels per input channel, ``takes``) as direct loops.

im2col + GEMM (``conv.py``) would multiply, for every channel, a (Co/G, kh * kw) matrix by a
(kh * kw, L) one: C tiny products, each too small for BLAS.  Here each output plane is summed
directly, kernel position by kernel position: ``w[o, 0, i, j]`` times the input plane shifted by
(i, j), added to the output plane.  Output channel o reads input channel ``o // (Co / C)`` (a
channel multiplier Co / C of 1 or 2).

Each kernel position is *one* loop over the whole plane, which LLVM vectorises (a loop per output
row would be too short: 32 pixels, two AVX-512 vectors): the input plane is split into the phases
of its zero-padded copy and the output summed in the pitched layout (``phases.py``), where every
output pixel reads kernel position (i, j) at the same shift; the (oh, ow) part is copied out at the
end.

Windows that tile the input (stride = kernel size, no padding, no dilation, every window inside
it: LeNet's trainable subsampling) need no phases: each output pixel reads its own window in place
(``_tiled``), which saves the ~200 ns of phase split, pitch and copy-out per plane that dominate
small planes (10 x 10).  Those reads are strided (q * kw + j): LLVM vectorises them only where kw is
a constant, so 2x2 and 3x3 windows run loops inlined with their size as one (``_constant_size``).

The two gradients are the same loops the other way round: the input's gradient adds each output
gradient plane, pitched (its columns q >= ow 0), onto the phases of the padded input's gradient
(per input plane, so planes never collide), then copies the input's part out; the weight's
gradient is, per output channel and kernel position, one dot product of the pitched gradient with
the shifted phase, summed over the images (a NaN sum again over the output's own columns: an inf
beside a window must not reach its tap).  The references are ``conv.py``'s (unfold + matmul): the
tests hold these kernels to them.

Each pass splits its planes (the weight's gradient: its output channels) over the threads.  Where
NumPy's BLAS is OpenBLAS on pthreads, the shares run as tasks on BLAS's own threads (``*_threaded``,
``runtime/blas_threads.py``): a region costs ~20 µs there, and numba's pool ~100 µs to wake on a
VM, which is the whole saving on a batch of 8 (measured: 8 x 64 planes of 32 x 32, 3 x 3: serial
335-371 µs, numba's pool 262-450, BLAS's threads 174).  Elsewhere numba's ``*_parallel`` run.
"""

from __future__ import annotations

import numpy as np

from ._strided import axpy, fill
from .im2col import as_record, from_record
from .phases import flat, from_phases, phase_scratch, pitch, span, tap, to_phases, unpitch
from .runtime import blas_threads
from .runtime.blas_threads import HEAD, SLOT, contiguous, fail, record, records, split
from .runtime.jit import njit, prange


def takes(x, weight, groups: int) -> bool:
    """Whether a convolution of x (N, C, ...) with weight (Co, C/groups, ...) takes these loops: one
    input channel per group (a single input channel too), and at most two output channels per input
    channel.  From three on, the im2col columns of a plane, copied once, serve that many output
    channels of one GEMM, and ``conv_gemm`` is faster (measured on 2 threads, forward / input grad /
    weight grad: LeNet-5's first layer, 1 -> 6 channels 5x5 on 28 x 28 at batch 64, 364 / 414 / 628 µs
    here against 232 / 379 / 264 there; 8 -> 32 channels in 8 groups, 3x3 at 16 x 16, 341 / 420 / 470
    against 219 / 273 / 214; one output channel per input channel, 32 channels at 16 x 16, 397 / 415 /
    464 here against 478 / 817 / 428 there)."""
    return groups == x.shape[1] and weight.shape[1] == 1 and weight.shape[0] <= 2 * groups


def tiles(win, h: int, w: int) -> bool:
    """Do the windows tile the (h, w) input (stride = kernel size, no padding, no dilation) and lie
    inside it?  (A window can reach past the input's far edge, into the implicit zeros there, in the
    forward convolution that computes a transposed one, ``conv.as_forward``: e.g. a transposed 1x1
    convolution with ``output_padding``.  Such windows take the zero-padded phases.)"""
    return (
        win.sh == win.kh and win.sw == win.kw and win.pt == 0 and win.pl == 0
        and (win.dh == 1 or win.kh == 1) and (win.dw == 1 or win.kw == 1)
        and win.oh * win.kh <= h and win.ow * win.kw <= w
    )  # fmt: skip


_tiled = njit(inline="always")(tiles)  # (the same test inside the kernels)


@njit
def _scratch(planes, win) -> tuple:
    """(phases (sh, sw, Hq, P), a zeroed pitched row (span,)) for the (N, C, H, W) ``planes``."""
    phases = phase_scratch(planes.shape[2], planes.shape[3], win, 1, planes)[0]
    return phases, np.zeros(span(win, phases.shape[3]), planes.dtype)


# ------------------------------------------------------------------ forward
@njit(fastmath={"contract"})
def _forward_plane(w, bias, win, phases, y, out):
    """out (oh, ow) = the plane in ``phases`` (``to_phases``) convolved with w (kh, kw), plus bias,
    through the pitched output y."""
    p, n = phases.shape[3], y.size
    fill(y, 0, n, bias)
    source = flat(phases)
    for i in range(win.kh):
        for j in range(win.kw):
            row, shift = tap(win, p, i, j)
            axpy(y, 0, w[i, j], source[row], shift, 1, n)
    unpitch(y, p, out)


@njit(fastmath={"contract"}, inline="always")
def _forward_tiled(x, w, bias, win, out):
    """out (oh, ow) = the plane x convolved with w, plus bias, for windows that tile x: each row of
    windows kernel position by kernel position, reading x in place (the sums in ``_forward_plane``'s order).
    2x2 and 3x3 windows take ``_forward_windows`` with their size as a constant."""
    if win.kh == 2 and win.kw == 2:  # (the sizes of ``_constant_size``)
        _forward_windows(x, w, bias, out, 2, 2)
        return
    if win.kh == 3 and win.kw == 3:
        _forward_windows(x, w, bias, out, 3, 3)
        return
    for r in range(win.oh):
        row = out[r]
        for q in range(win.ow):
            row[q] = bias
        for i in range(win.kh):
            src = x[r * win.kh + i]
            for j in range(win.kw):
                wij = w[i, j]
                for q in range(win.ow):
                    row[q] += wij * src[q * win.kw + j]


@njit(fastmath={"contract"}, inline="always")
def _forward_windows(x, w, bias, out, kh: int, kw: int):
    """``_forward_tiled`` with the window's size (kh, kw) given as constants: each output pixel sums
    its whole window at once (the same order of sums).  Inlined with constant kh and kw, LLVM
    unrolls the window and vectorises the output row, reading the window's columns interleaved
    (a strided read it cannot vectorise for a size known only at run time): LeNet-5's 2x2
    subsampling, 64 x 6 planes of 28 x 28, the pass 132-136 µs against 192-194 (one thread)."""
    for r in range(out.shape[0]):
        row = out[r]
        for q in range(out.shape[1]):
            total = bias
            for i in range(kh):
                src = x[r * kh + i]
                for j in range(kw):
                    total += w[i, j] * src[q * kw + j]
            row[q] = total


@njit(fastmath={"contract"})  # (the flags of the tiled loops, inlined here)
def _forward_planes(x, weight, bias, win, out, start, stop):
    c, co = x.shape[1], out.shape[1]
    m = co // c
    tiled = _tiled(win, x.shape[2], x.shape[3])
    phases, y = _scratch(x, win)
    for k in range(start, stop):
        n, o = k // co, k % co
        b = 0.0 if bias is None else bias[o]
        if tiled:
            _forward_tiled(x[n, o // m], weight[o, 0], b, win, out[n, o])
            continue
        if k == start or o % m == 0:  # (a new input plane: its m output channels share its phases)
            to_phases(x[n, o // m], win, phases)
        _forward_plane(weight[o, 0], b, win, phases, y, out[n, o])


@njit
def forward(x, weight, bias, win, groups, out):
    _forward_planes(x, weight, bias, win, out, 0, out.shape[0] * out.shape[1])


@njit(parallel=True)
def forward_parallel(x, weight, bias, win, groups, out):
    planes = out.shape[0] * out.shape[1]
    for b in prange(_blocks(planes)):
        _forward_planes(x, weight, bias, win, out, b * BLOCK, min(planes, (b + 1) * BLOCK))


# ------------------------------------------------------------------ the input's gradient
@njit(fastmath={"contract"})
def _input_grad_plane(grad, w, win, g, phases):
    """phases (the padded input's gradient) += grad (oh, ow) spread back with the weights w (kh, kw),
    through the pitched g, whose columns q >= ow stay 0."""
    p, n = phases.shape[3], g.size
    pitch(grad, p, g)
    target = flat(phases)
    for i in range(win.kh):
        for j in range(win.kw):
            row, shift = tap(win, p, i, j)
            axpy(target[row], shift, w[i, j], g, 0, 1, n)


@njit(fastmath={"contract"}, inline="always")
def _input_grad_tiled(grad, w, win, dx, first: bool):
    """dx (H, W) += grad (oh, ow) spread back with w (kh, kw) over windows that tile dx (2x2 and 3x3
    windows: ``_input_grad_windows``, their size a constant; for the ``first`` output channel of the
    plane they write their values instead of adding them to the zeros)."""
    if win.kh == 2 and win.kw == 2:  # (the sizes of ``_constant_size``)
        _input_grad_windows(grad, w, dx, 2, 2, first)
        return
    if win.kh == 3 and win.kw == 3:
        _input_grad_windows(grad, w, dx, 3, 3, first)
        return
    for r in range(win.oh):
        g = grad[r]
        for i in range(win.kh):
            dst = dx[r * win.kh + i]
            for j in range(win.kw):
                wij = w[i, j]
                for q in range(win.ow):
                    dst[q * win.kw + j] += wij * g[q]


@njit(fastmath={"contract"}, inline="always")
def _input_grad_windows(grad, w, dx, kh: int, kw: int, first: bool):
    """``_input_grad_tiled`` with the window's size as constants: each row of dx under a row of
    windows gets its kw values per window at once (stored interleaved, which LLVM vectorises for a
    store, not for an addition: so the first channel stores, into the plane's zeros)."""
    for r in range(grad.shape[0]):
        g = grad[r]
        for i in range(kh):
            dst = dx[r * kh + i]
            if first:
                for q in range(grad.shape[1]):
                    for j in range(kw):
                        dst[q * kw + j] = w[i, j] * g[q]
            else:
                for q in range(grad.shape[1]):
                    for j in range(kw):
                        dst[q * kw + j] += w[i, j] * g[q]


@njit(fastmath={"contract"})  # (the flags of the tiled loops, inlined here)
def _input_grad_planes(grad, weight, win, out, start, stop):
    c, co = out.shape[1], grad.shape[1]
    m = co // c
    tiled = _tiled(win, out.shape[2], out.shape[3])
    phases, g = _scratch(out, win)
    for k in range(start, stop):
        n, ci = k // c, k % c
        if tiled:
            out[n, ci] = 0
            for o in range(ci * m, (ci + 1) * m):
                _input_grad_tiled(grad[n, o], weight[o, 0], win, out[n, ci], o == ci * m)
            continue
        phases[:] = 0
        for o in range(ci * m, (ci + 1) * m):
            _input_grad_plane(grad[n, o], weight[o, 0], win, g, phases)
        from_phases(phases, win, out[n, ci])


@njit
def input_grad(grad, weight, win, groups, out):
    _input_grad_planes(grad, weight, win, out, 0, out.shape[0] * out.shape[1])


@njit(parallel=True)
def input_grad_parallel(grad, weight, win, groups, out):
    planes = out.shape[0] * out.shape[1]
    for b in prange(_blocks(planes)):
        _input_grad_planes(grad, weight, win, out, b * BLOCK, min(planes, (b + 1) * BLOCK))


# ------------------------------------------------------------------ the weight's gradient
@njit(fastmath={"reassoc", "contract"})
def _weight_grad_plane(grad, win, phases, g, zero, dw):
    """dw (kh, kw) += the products of grad (oh, ow) with the shifted plane in ``phases``
    (``to_phases``): one dot product per kernel position over the pitched rows, summed from
    ``zero`` (x's dtype: float32 sums vectorise twice as wide).  The pitch's extra columns multiply
    input values beside the window by 0: where one of those is inf or NaN the sum is NaN, and the
    tap is summed again over the output's own columns only (``_own_columns``), as PyTorch sums it."""
    p, n = phases.shape[3], np.uint64(g.size)
    pitch(grad, p, g)
    source = flat(phases)
    for i in range(win.kh):
        for j in range(win.kw):
            row, shift = tap(win, p, i, j)
            plane, s = source[row], np.uint64(shift)
            total = zero
            for q in range(n):
                total += g[q] * plane[s + q]
            if total != total:  # (NaN: from a non-finite value, perhaps outside the window)
                total = _own_columns(g, plane, s, p, grad.shape[0], grad.shape[1], zero)
            dw[i, j] += total


@njit(fastmath={"contract"})
def _own_columns(g, plane, shift, p, rows, width, zero):
    """The dot product of the pitched gradient g with the shifted plane over each row's first
    ``width`` columns (the output's own)."""
    total = zero
    for r in range(rows):
        start = np.uint64(r * p)
        for q in range(np.uint64(width)):
            total += g[start + q] * plane[shift + start + q]
    return total


@njit(fastmath={"reassoc", "contract"}, inline="always")
def _weight_grad_tiled(x, grad, win, zero, dw):
    """dw (kh, kw) += the products of grad (oh, ow) with each kernel position of the windows that tile
    the plane x (only the windows' own pixels: no NaN from beside them to undo); 2x2 and 3x3 windows
    with their size as a constant (the strided reads vectorised: LeNet-5's 6-channel 28 x 28 layer
    ~173 µs against 364, one thread)."""
    if win.kh == 2 and win.kw == 2:  # (the sizes of ``_constant_size``)
        _weight_grad_windows(x, grad, zero, dw, 2, 2)
    elif win.kh == 3 and win.kw == 3:
        _weight_grad_windows(x, grad, zero, dw, 3, 3)
    else:
        _weight_grad_windows(x, grad, zero, dw, win.kh, win.kw)


@njit(fastmath={"reassoc", "contract"}, inline="always")
def _weight_grad_windows(x, grad, zero, dw, kh: int, kw: int):
    """``_weight_grad_tiled``'s sums for (kh, kw) windows: one dot product per kernel position."""
    for i in range(kh):
        for j in range(kw):
            total = zero
            for r in range(grad.shape[0]):
                g, src = grad[r], x[r * kh + i]
                for q in range(grad.shape[1]):
                    total += g[q] * src[q * kw + j]
            dw[i, j] += total


TILED_WEIGHT_TAPS = 512  # the most kh * kw * oh * ow for which the tiled weight gradient is faster


@njit(inline="always")
def _constant_size(win) -> bool:
    """Windows the tiled loops take with their size as a constant (vectorised): 2x2 and 3x3."""
    return (win.kh == 2 and win.kw == 2) or (win.kh == 3 and win.kw == 3)


@njit(fastmath={"reassoc", "contract"})  # (the flags of the tiled loops, inlined here)
def _weight_grad_channels(x, grad, win, out, start, stop):
    c, co = x.shape[1], grad.shape[1]
    m = co // c
    # (the tiled dot products of a size known at run time read x at a stride, without SIMD: past a few
    # hundred products a plane the phases' vectorised ones win; measured: 5 x 5 outputs of a 2x2 kernel
    # 86 us against 243, 14 x 14 219 against 180, LeNet-5's two subsampling layers at batch 64.  2x2 and
    # 3x3 windows, their size a constant, win at every size measured, one thread: 64 x 6 planes of 28 x 28
    # 197-201 us against 280, 16 x 8 of 56 x 56 191 against 221-231, 8 x 8 of 112 x 112 343-352 against
    # 361-395, 3x3 on 32 x 8 of 30 x 30 165 against 224-235)
    taps = win.kh * win.kw * win.oh * win.ow
    tiled = _tiled(win, x.shape[2], x.shape[3]) and (_constant_size(win) or taps <= TILED_WEIGHT_TAPS)
    phases, g = _scratch(x, win)
    zero = np.zeros(1, x.dtype)[0]
    for o in range(start, stop):
        out[o, 0] = 0
    for n in range(x.shape[0]):  # (each image's input planes once; each dw sums the images in order)
        for o in range(start, stop):
            if tiled:
                _weight_grad_tiled(x[n, o // m], grad[n, o], win, zero, out[o, 0])
                continue
            if o == start or o % m == 0:  # (a new input plane: its m output channels share its phases)
                to_phases(x[n, o // m], win, phases)
            _weight_grad_plane(grad[n, o], win, phases, g, zero, out[o, 0])


@njit
def weight_grad(x, grad, win, groups, out):
    _weight_grad_channels(x, grad, win, out, 0, out.shape[0])


@njit(parallel=True)
def weight_grad_parallel(x, grad, win, groups, out):
    co = out.shape[0]
    step = max(1, co // 8)
    for b in prange((co + step - 1) // step):
        _weight_grad_channels(x, grad, win, out, b * step, min(co, (b + 1) * step))


BLOCK = 8  # planes per block of a parallel kernel


@njit(inline="always")
def _blocks(planes: int) -> int:
    return (planes + BLOCK - 1) // BLOCK


# ------------------------------------------------------------------ the shares on BLAS's threads
def forward_threaded(x, weight, bias, win, groups, out) -> None:
    planes = out.shape[0] * out.shape[1]
    count = blas_threads.shares(planes)
    task = _forward_task(x.dtype.name, bias is not None) if count > 1 and blas_threads.available() else None
    if task is None:  # one share, no BLAS threads (numba's pool instead), or the task compiling (jit.py)
        return (forward if count == 1 else forward_parallel)(x, weight, bias, win, groups, out)
    row = None if bias is None else np.ascontiguousarray(bias).reshape(1, 1, 1, -1)
    blas_threads.run(task, records(split(planes, count), (x, weight, row, out, as_record(win, groups))))


def input_grad_threaded(grad, weight, win, groups, out) -> None:
    planes = out.shape[0] * out.shape[1]
    count = blas_threads.shares(planes)
    task = _gradient_task(False, grad.dtype.name) if count > 1 and blas_threads.available() else None
    if task is None:
        return (input_grad if count == 1 else input_grad_parallel)(grad, weight, win, groups, out)
    blas_threads.run(task, records(split(planes, count), (grad, weight, out, as_record(win, groups))))


def weight_grad_threaded(x, grad, win, groups, out) -> None:
    count = blas_threads.shares(out.shape[0])
    task = _gradient_task(True, x.dtype.name) if count > 1 and blas_threads.available() else None
    if task is None:
        return (weight_grad if count == 1 else weight_grad_parallel)(x, grad, win, groups, out)
    blas_threads.run(task, records(split(out.shape[0], count), (x, grad, out, as_record(win, groups))))


@blas_threads.task_factory
def _forward_task(dtype_name: str, has_bias: bool):
    """The task running ``_forward_planes`` on one record row: slots x, weight, bias, out, window."""
    dtype = np.dtype(dtype_name).type

    def task(pointer):
        row = record(pointer, HEAD + SLOT * 5)
        x, weight, out = contiguous(row, 0, dtype), contiguous(row, 1, dtype), contiguous(row, 3, dtype)
        bias = contiguous(row, 2, dtype)[0, 0, 0] if has_bias else None
        g = contiguous(row, 4, np.int64)[0, 0, 0]
        try:
            _forward_planes(x, weight, bias, from_record(g), out, row[0], row[1])
        except Exception:  # (e.g. no memory for the scratch: reported by ``blas_threads.run``)
            fail(row)

    return task


@blas_threads.task_factory
def _gradient_task(of_weight: bool, dtype_name: str):
    """The task running ``_input_grad_planes`` (grad, weight) or, ``of_weight``, ``_weight_grad_channels``
    (x, grad): slots those two, out, window."""
    dtype = np.dtype(dtype_name).type

    def task(pointer):
        row = record(pointer, HEAD + SLOT * 4)
        a, b, out = contiguous(row, 0, dtype), contiguous(row, 1, dtype), contiguous(row, 2, dtype)
        g = contiguous(row, 3, np.int64)[0, 0, 0]
        try:
            if of_weight:
                _weight_grad_channels(a, b, from_record(g), out, row[0], row[1])
            else:
                _input_grad_planes(a, b, from_record(g), out, row[0], row[1])
        except Exception:
            fail(row)

    return task

"""Depthwise convolution (one input channel per group: ``groups == C``) as direct loops.

im2col + GEMM (``conv.py``) would multiply, for every channel, a (Co/G, kh * kw) matrix by a
(kh * kw, L) one: C tiny products, each too small for BLAS.  Here each output plane is summed
directly, kernel position by kernel position: ``w[o, 0, i, j]`` times the input plane shifted by
(i, j), added to the output plane.  Output channel o reads input channel ``o // (Co / C)`` (a
channel multiplier Co / C >= 1).

Each kernel position is *one* loop over the whole plane, which LLVM vectorises (a loop per output
row would be too short: 32 pixels, two AVX-512 vectors).  For that, the input plane is copied into
a zero-padded scratch, split by *phase* for a stride (sh, sw): phase (a, b) holds the padded
pixels (r * sh + a, c * sw + b), so that output pixel (p, q), which reads padded pixel
(p * sh + i * dh, q * sw + j * dw), finds it in phase ((i * dh) % sh, (j * dw) % sw) at
(p + i * dh // sh, q + j * dw // sw).  Every phase has the same row pitch P, and the output is summed
in a scratch of pitch P: output pixel k = p * P + q reads its phase at k + a shift that is the same
for every pixel.  The columns q >= ow of the output scratch are computed and thrown away; the
(oh, ow) part is copied out at the end.  With stride 1 there is one phase, the padded plane::

    padded input (1 phase, P = 6)      output scratch (oh, P): k = p * P + q
    0 0 0 0 0 0                        y[k] += w[i, j] * xp[k + i * P + j]   for every (i, j),
    0 a b c d 0                               k over [0, (oh - 1) * P + ow)
    0 e f g h 0
    0 0 0 0 0 0

The two gradients are the same loops the other way round: the input's gradient adds each output
gradient plane, in a pitched scratch whose columns q >= ow are 0, onto the phases of the padded
input's gradient (per input plane, so planes never collide), then copies the input's part out;
the weight's gradient is, per output channel and kernel position, one dot product of that scratch
with the shifted phase, summed over the images.  The references are ``conv.py``'s (unfold +
matmul): the tests hold these kernels to them.
"""

from __future__ import annotations

import numpy as np

from ._strided import axpy, fill, gather, scatter
from .runtime.jit import njit, prange


def takes(x, weight, groups: int) -> bool:
    """Whether a convolution of x (N, C, ...) with weight (Co, C/groups, ...) is depthwise."""
    return groups > 1 and groups == x.shape[1] and weight.shape[1] == 1


# ------------------------------------------------------------------ the phases of the padded plane
@njit
def _phases(planes, win):
    """A zeroed scratch (sh, sw, Hq, P) of ``planes``' (N, C, H, W) dtype for the phases of one padded
    plane, big enough for every window."""
    hp = max(win.pt + planes.shape[2], (win.oh - 1) * win.sh + (win.kh - 1) * win.dh + 1)
    wp = max(win.pl + planes.shape[3], (win.ow - 1) * win.sw + (win.kw - 1) * win.dw + 1)
    return np.zeros((win.sh, win.sw, (hp + win.sh - 1) // win.sh, (wp + win.sw - 1) // win.sw), planes.dtype)


@njit
def _pitched(planes, win, pitch: int):
    """A zeroed (oh, pitch) scratch of ``planes``' dtype for an output plane."""
    return np.zeros((win.oh, pitch), planes.dtype)


@njit(inline="always")
def _tap(win, pitch: int, i: int, j: int) -> tuple:
    """Kernel position (i, j): its phase (a, b) and where it reads it, relative to the flat index of
    the output pixel."""
    return (i * win.dh) % win.sh, (j * win.dw) % win.sw, (i * win.dh) // win.sh * pitch + (j * win.dw) // win.sw


@njit(inline="always")
def _flat(phases):
    """The phases (sh, sw, Hq, P) as (sh * sw, Hq * P) flat planes: phase (a, b) is row a * sw + b."""
    return phases.reshape((phases.shape[0] * phases.shape[1], phases.shape[2] * phases.shape[3]))


@njit(inline="always")
def _span(win, pitch: int) -> int:
    """The flat length of an (oh, pitch) scratch that holds the (oh, ow) output pixels."""
    return (win.oh - 1) * pitch + win.ow


@njit(inline="always")
def _phase_start(phase: int, stride: int, before: int, size: int) -> tuple:
    """The input positions of one phase of a dim: ``first, first + stride, ...`` (``count`` of them),
    at positions ``start, start + 1, ...`` of the phase."""
    first = (phase - before) % stride
    return first, (first + before) // stride, max(0, (size - first + stride - 1) // stride)


@njit
def _split(x, win, phases) -> None:
    """The plane x (H, W) into its phases (their padding stays 0)."""
    for a in range(win.sh):
        r0, t0, rows = _phase_start(a, win.sh, win.pt, x.shape[0])
        for b in range(win.sw):
            c0, u0, n = _phase_start(b, win.sw, win.pl, x.shape[1])
            for k in range(rows):
                gather(phases[a, b, t0 + k], u0, x[r0 + k * win.sh], c0, win.sw, n)


@njit
def _merge(phases, win, x) -> None:
    """The inverse of ``_split``: x (H, W) = the input's pixels of the phases."""
    for a in range(win.sh):
        r0, t0, rows = _phase_start(a, win.sh, win.pt, x.shape[0])
        for b in range(win.sw):
            c0, u0, n = _phase_start(b, win.sw, win.pl, x.shape[1])
            for k in range(rows):
                scatter(x[r0 + k * win.sh], c0, win.sw, phases[a, b, t0 + k], u0, n)


# ------------------------------------------------------------------ forward
@njit(fastmath={"contract"})
def _forward_plane(x, w, bias, win, phases, acc, out):
    """out (oh, ow) = the plane x (H, W) convolved with w (kh, kw), plus bias, through the phase
    scratch and the pitched output scratch acc (oh, P)."""
    _split(x, win, phases)
    pitch = acc.shape[1]
    y = acc.reshape(-1)
    span = _span(win, pitch)
    fill(y, 0, span, bias)
    planes = _flat(phases)
    for i in range(win.kh):
        for j in range(win.kw):
            a, b, shift = _tap(win, pitch, i, j)
            axpy(y, 0, w[i, j], planes[a * win.sw + b], shift, 1, span)
    for p in range(win.oh):
        gather(out[p], 0, acc[p], 0, 1, win.ow)


@njit
def _forward_planes(x, weight, bias, win, out, start, stop):
    c, co = x.shape[1], out.shape[1]
    m = co // c
    phases = _phases(x, win)
    acc = _pitched(out, win, phases.shape[3])
    for k in range(start, stop):
        n, o = k // co, k % co
        _forward_plane(x[n, o // m], weight[o, 0], 0.0 if bias is None else bias[o], win, phases, acc, out[n, o])


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
def _input_grad_plane(grad, w, win, pitched, phases):
    """phases (the padded input's gradient) += grad (oh, ow) spread back with the weights w (kh, kw),
    through the pitched scratch (oh, P), whose columns q >= ow stay 0."""
    for p in range(win.oh):
        gather(pitched[p], 0, grad[p], 0, 1, win.ow)
    pitch = pitched.shape[1]
    g = pitched.reshape(-1)
    span = _span(win, pitch)
    planes = _flat(phases)
    for i in range(win.kh):
        for j in range(win.kw):
            a, b, shift = _tap(win, pitch, i, j)
            axpy(planes[a * win.sw + b], shift, w[i, j], g, 0, 1, span)


@njit
def _input_grad_planes(grad, weight, win, out, start, stop):
    c, co = out.shape[1], grad.shape[1]
    m = co // c
    phases = _phases(out, win)
    pitched = _pitched(out, win, phases.shape[3])
    for k in range(start, stop):
        n, ci = k // c, k % c
        phases[:] = 0
        for o in range(ci * m, (ci + 1) * m):
            _input_grad_plane(grad[n, o], weight[o, 0], win, pitched, phases)
        _merge(phases, win, out[n, ci])


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
def _weight_grad_plane(x, grad, win, phases, pitched, zero, dw):
    """dw (kh, kw) += the products of grad (oh, ow) with the shifted plane x (H, W): one dot product
    per kernel position, summed from ``zero`` (x's dtype: float32 sums vectorise twice as wide)."""
    _split(x, win, phases)
    for p in range(win.oh):
        gather(pitched[p], 0, grad[p], 0, 1, win.ow)
    pitch = pitched.shape[1]
    g = pitched.reshape(-1)
    span = np.uint64(_span(win, pitch))
    planes = _flat(phases)
    for i in range(win.kh):
        for j in range(win.kw):
            a, b, shift = _tap(win, pitch, i, j)
            source, s = planes[a * win.sw + b], np.uint64(shift)
            total = zero
            for q in range(span):
                total += g[q] * source[s + q]
            dw[i, j] += total


@njit
def _weight_grad_channels(x, grad, win, out, start, stop):
    c, co = x.shape[1], grad.shape[1]
    m = co // c
    phases = _phases(x, win)
    pitched = _pitched(x, win, phases.shape[3])
    zero = np.zeros(1, x.dtype)[0]
    for o in range(start, stop):
        out[o, 0] = 0
        for n in range(x.shape[0]):
            _weight_grad_plane(x[n, o // m], grad[n, o], win, phases, pitched, zero, out[o, 0])


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

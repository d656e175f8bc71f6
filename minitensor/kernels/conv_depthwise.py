"""Depthwise convolution (one input channel per group: ``groups == C``) as direct loops.

im2col + GEMM (``conv.py``) would multiply, for every channel, a (Co/G, kh * kw) matrix by a
(kh * kw, L) one: C tiny products, each too small for BLAS.  Here each output plane is summed
directly: for every kernel position (i, j), the weight ``w[o, 0, i, j]`` times the input plane
shifted by that position, one output row at a time (the row stays in the cache while the kh * kw
terms are added to it; each term is a loop over contiguous memory when the stride is 1, which
LLVM vectorises).  Output channel o reads input channel ``o // (Co / C)`` (a channel multiplier
Co / C >= 1).

The two gradients are the same loops the other way round: the input's gradient scatters each
output row back onto the rows its windows read (per input plane, so planes never collide), the
weight's gradient is, per output channel and kernel position, a sum of products of the gradient
with the shifted input over every image.  The references are ``conv.py``'s (unfold + matmul): the
tests hold these kernels to them.
"""

from __future__ import annotations

from ._strided import axpy, dot, scatter_axpy, valid_columns
from .runtime.jit import njit, prange


def takes(x, weight, groups: int) -> bool:
    """Whether a convolution of x (N, C, ...) with weight (Co, C/groups, ...) is depthwise."""
    return groups > 1 and groups == x.shape[1] and weight.shape[1] == 1


# ------------------------------------------------------------------ forward
@njit(fastmath={"contract"})
def _forward_plane(x, w, bias, win, out):
    """out (oh, ow) = the plane x (H, W) convolved with w (kh, kw), plus bias."""
    h, width = x.shape
    for p in range(win.oh):
        row = out[p]
        row[:] = bias
        for i in range(win.kh):
            r = p * win.sh + i * win.dh - win.pt
            if 0 <= r < h:
                for j in range(win.kw):
                    offset = j * win.dw - win.pl
                    q0, q1 = valid_columns(offset, win.sw, width, win.ow)
                    axpy(row, q0, w[i, j], x[r], q0 * win.sw + offset, win.sw, q1 - q0)


@njit
def _forward_planes(x, weight, bias, win, out, start, stop):
    c, co = x.shape[1], out.shape[1]
    m = co // c
    for k in range(start, stop):
        n, o = k // co, k % co
        _forward_plane(x[n, o // m], weight[o, 0], 0.0 if bias is None else bias[o], win, out[n, o])


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
def _input_grad_plane(grad, w, win, dx):
    """dx (H, W) += the windows of grad (oh, ow) spread back with the weights w (kh, kw)."""
    h, width = dx.shape
    for p in range(win.oh):
        for i in range(win.kh):
            r = p * win.sh + i * win.dh - win.pt
            if 0 <= r < h:
                for j in range(win.kw):
                    offset = j * win.dw - win.pl
                    q0, q1 = valid_columns(offset, win.sw, width, win.ow)
                    scatter_axpy(dx[r], q0 * win.sw + offset, win.sw, w[i, j], grad[p], q0, q1 - q0)


@njit
def _input_grad_planes(grad, weight, win, out, start, stop):
    c, co = out.shape[1], grad.shape[1]
    m = co // c
    for k in range(start, stop):
        n, ci = k // c, k % c
        out[n, ci] = 0
        for o in range(ci * m, (ci + 1) * m):
            _input_grad_plane(grad[n, o], weight[o, 0], win, out[n, ci])


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
def _weight_grad_plane(x, grad, win, dw):
    """dw (kh, kw) += the products of grad (oh, ow) with the shifted plane x (H, W)."""
    h, width = x.shape
    for i in range(win.kh):
        for j in range(win.kw):
            offset = j * win.dw - win.pl
            q0, q1 = valid_columns(offset, win.sw, width, win.ow)
            total = 0.0
            for p in range(win.oh):
                r = p * win.sh + i * win.dh - win.pt
                if 0 <= r < h:
                    total += dot(grad[p], q0, x[r], q0 * win.sw + offset, win.sw, q1 - q0)
            dw[i, j] += total


@njit
def _weight_grad_channels(x, grad, win, out, start, stop):
    c, co = x.shape[1], grad.shape[1]
    m = co // c
    for o in range(start, stop):
        out[o, 0] = 0
        for n in range(x.shape[0]):
            _weight_grad_plane(x[n, o // m], grad[n, o], win, out[o, 0])


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

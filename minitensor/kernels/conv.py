"""2-D convolution (cross-correlation, as PyTorch's) as im2col + one matrix product per group, and
its two gradients.

With the input's windows as columns (``im2col.py``: ``cols`` is (C * kh * kw, L) for one image,
L = oh * ow windows) a convolution is a matrix product, one per group of channels::

    y[n, group g] = W[g] @ cols[n, rows of g]      W[g]: (Co/G, C/G * kh * kw), y: (Co/G, L)

and its gradients are the two other products of the same three matrices::

    dcols[n, g] = W[g]ᵀ @ dy[n, g]   then dx = col2im(dcols)  (the transposed convolution)
    dW[g]      += dy[n, g] @ cols[n, g]ᵀ, summed over the images n

- ``conv2d(x, weight, bias, win, groups)``: x (N, C, H, W), weight (Co, C/G, kh, kw), bias (Co,)
  or None -> y (N, Co, oh, ow);
- ``conv2d_input_grad(grad, weight, size, win, groups)``: the gradient of x, i.e. the transposed
  convolution of ``grad`` (N, Co, oh, ow) -> (N, C, *size);
- ``conv2d_weight_grad(x, grad, win, groups)``: the gradient of the weight -> (Co, C/G, kh, kw).

The reference (``_forward_numpy`` ...) is the definition a student reads: ``unfold`` the whole
batch, one broadcast ``matmul``.  The numba kernels do the same image by image: one image's columns
(a few MB at most, reused for every image: they stay in the cache) go straight into BLAS's GEMM
(``blas.gemm``, several threads when the product is big enough), and a 1x1 kernel with stride 1
and no padding takes the image itself as its columns.  Depthwise convolutions (one input channel
per group) multiply small matrices that BLAS does badly: they have direct loops of their own
(``conv_depthwise.py``).

>>> from minitensor.kernels.im2col import Window
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> conv2d(x, np.ones((1, 1, 2, 2)), None, Window(2, 2, 2, 2, 0, 0, 1, 1, 2, 2), 1)[0, 0]
array([[10., 18.],
       [42., 50.]])
"""

from __future__ import annotations

import numpy as np

from . import conv_depthwise
from .im2col import Window, _col2im_numpy, _im2col_numpy, col2im_plane, im2col_plane
from .runtime.blas import gemm
from .runtime.dispatch import BlasKernel, choose
from .runtime.jit import njit


def conv2d(x: np.ndarray, weight: np.ndarray, bias, win: Window, groups: int) -> np.ndarray:
    """y (N, Co, oh, ow) = the convolution of x (N, C, H, W) with weight (Co, C/groups, kh, kw),
    plus bias (Co,) (or None), over the windows ``win``."""
    x, weight = np.ascontiguousarray(x), np.ascontiguousarray(weight)
    out = np.empty((x.shape[0], weight.shape[0], win.oh, win.ow), np.result_type(x, weight))
    if conv_depthwise.takes(x, weight, groups):
        run = _depthwise(out, win, _forward_numpy, conv_depthwise.forward, conv_depthwise.forward_parallel)
    else:
        run = _FORWARD.on(x)
    run(x, weight, bias, win, groups, out)
    return out


def conv2d_input_grad(grad: np.ndarray, weight: np.ndarray, size: tuple, win: Window, groups: int) -> np.ndarray:
    """The gradient of the input (N, C, *size) from grad (N, Co, oh, ow): the transposed convolution."""
    grad, weight = np.ascontiguousarray(grad), np.ascontiguousarray(weight)
    out = np.empty((grad.shape[0], weight.shape[1] * groups) + tuple(size), np.result_type(grad, weight))
    if conv_depthwise.takes(out, weight, groups):
        run = _depthwise(grad, win, _input_grad_numpy, conv_depthwise.input_grad, conv_depthwise.input_grad_parallel)
    else:
        run = _INPUT_GRAD.on(grad)
    run(grad, weight, win, groups, out)
    return out


def conv2d_weight_grad(x: np.ndarray, grad: np.ndarray, win: Window, groups: int) -> np.ndarray:
    """The gradient of the weight (Co, C/groups, kh, kw) from x (N, C, H, W) and grad (N, Co, oh, ow)."""
    x, grad = np.ascontiguousarray(x), np.ascontiguousarray(grad)
    out = np.empty((grad.shape[1], x.shape[1] // groups, win.kh, win.kw), np.result_type(x, grad))
    if conv_depthwise.takes(x, out, groups):
        run = _depthwise(grad, win, _weight_grad_numpy, conv_depthwise.weight_grad, conv_depthwise.weight_grad_parallel)
    else:
        run = _WEIGHT_GRAD.on(x)
    run(x, grad, win, groups, out)
    return out


def _depthwise(grad_or_out: np.ndarray, win: Window, reference, serial, parallel):
    """The depthwise implementation for a pass whose output-sized array is ``grad_or_out``: each of
    its elements costs kh * kw multiply-adds (~0.1 ns each, vectorised)."""
    return choose(grad_or_out, reference, serial, parallel, ns=0.1 * win.kh * win.kw)


# ------------------------------------------------------------------ the reference: unfold + matmul
def _columns_numpy(x: np.ndarray, win: Window, groups: int) -> np.ndarray:
    """The columns of every image, by group: (N, G, C/G * kh * kw, L)."""
    n, c, h, w = x.shape
    cols = np.empty((n * c, win.kh * win.kw, win.oh * win.ow), x.dtype)
    _im2col_numpy(x.reshape(n * c, h, w), win, cols)
    return cols.reshape(n, groups, c // groups * win.kh * win.kw, win.oh * win.ow)


def _forward_numpy(x, weight, bias, win, groups, out) -> None:
    """y = W @ cols, every image and group in one broadcast matmul, then + bias."""
    n, co = x.shape[0], weight.shape[0]
    w = weight.reshape(groups, co // groups, weight[0].size)  # (G, Co/G, C/G * kh * kw)
    out.reshape(n, groups, co // groups, win.oh * win.ow)[...] = w @ _columns_numpy(x, win, groups)
    if bias is not None:
        out += bias.reshape(co, 1, 1)


def _input_grad_numpy(grad, weight, win, groups, out) -> None:
    """dcols = Wᵀ @ dy, then col2im: every column added back where it was copied from."""
    n, co = grad.shape[:2]
    c, (h, w) = out.shape[1], out.shape[2:]
    length = win.oh * win.ow
    wt = np.swapaxes(weight.reshape(groups, co // groups, weight[0].size), 1, 2)  # (G, C/G * kh * kw, Co/G)
    dcols = wt @ grad.reshape(n, groups, co // groups, length)  # (N, G, C/G * kh * kw, L)
    _col2im_numpy(dcols.reshape(n * c, win.kh * win.kw, length), win, out.reshape(n * c, h, w))


def _weight_grad_numpy(x, grad, win, groups, out) -> None:
    """dW = sum over the images of dy @ colsᵀ."""
    n, co = grad.shape[:2]
    dy = grad.reshape(n, groups, co // groups, win.oh * win.ow)
    products = dy @ np.swapaxes(_columns_numpy(x, win, groups), 2, 3)  # (N, G, Co/G, C/G * kh * kw)
    out.reshape(groups, co // groups, out[0].size)[...] = products.sum(axis=0)


# ------------------------------------------------------------------ the kernels: image by image
@njit(inline="always")
def is_pointwise(win, h: int, w: int) -> bool:
    """A 1x1 kernel, stride 1, no padding: the image itself is its columns."""
    return win.kh == 1 and win.kw == 1 and win.sh == 1 and win.sw == 1 and win.oh == h and win.ow == w


@njit
def columns(x, win, cols):
    """im2col of one image x (C, H, W) into cols (C * kh * kw, L)."""
    k = win.kh * win.kw
    for c in range(x.shape[0]):
        im2col_plane(x[c], win, cols[c * k : (c + 1) * k])


@njit
def _forward(x, weight, bias, win, groups, out):
    n, c, h, w = x.shape
    co = weight.shape[0]
    cog, ckg, length = co // groups, (c // groups) * win.kh * win.kw, win.oh * win.ow
    wg = weight.reshape((groups, cog, ckg))
    pointwise = is_pointwise(win, h, w)
    cols = np.empty((0 if pointwise else c * win.kh * win.kw, length), x.dtype)
    for i in range(n):
        if pointwise:
            source = x[i].reshape((c, length))
        else:
            columns(x[i], win, cols)
            source = cols
        y = out[i].reshape((groups, cog, length))
        for g in range(groups):
            gemm(wg[g], False, source[g * ckg : (g + 1) * ckg], False, y[g], 0.0)
        if bias is not None:
            rows = out[i].reshape((co, length))
            for o in range(co):
                rows[o] += bias[o]


@njit
def _input_grad(grad, weight, win, groups, out):
    n, c, h, w = out.shape
    co = weight.shape[0]
    k = win.kh * win.kw
    cog, ckg, length = co // groups, (c // groups) * k, win.oh * win.ow
    wg = weight.reshape((groups, cog, ckg))
    pointwise = is_pointwise(win, h, w)
    dcols = np.empty((0 if pointwise else c * k, length), out.dtype)
    for i in range(n):
        dy = grad[i].reshape((groups, cog, length))
        target = out[i].reshape((c, length)) if pointwise else dcols
        for g in range(groups):
            gemm(wg[g], True, dy[g], False, target[g * ckg : (g + 1) * ckg], 0.0)
        if not pointwise:
            for p in range(c):
                col2im_plane(dcols[p * k : (p + 1) * k], win, out[i, p])


@njit
def _weight_grad(x, grad, win, groups, out):
    n, c, h, w = x.shape
    co = grad.shape[1]
    cog, ckg, length = co // groups, (c // groups) * win.kh * win.kw, win.oh * win.ow
    dw = out.reshape((groups, cog, ckg))
    pointwise = is_pointwise(win, h, w)
    cols = np.empty((0 if pointwise else c * win.kh * win.kw, length), x.dtype)
    for i in range(n):
        if pointwise:
            source = x[i].reshape((c, length))
        else:
            columns(x[i], win, cols)
            source = cols
        dy = grad[i].reshape((groups, cog, length))
        for g in range(groups):
            gemm(dy[g], False, source[g * ckg : (g + 1) * ckg], True, dw[g], 0.0 if i == 0 else 1.0)


_FORWARD = BlasKernel(_forward_numpy, _forward)
_INPUT_GRAD = BlasKernel(_input_grad_numpy, _input_grad)
_WEIGHT_GRAD = BlasKernel(_weight_grad_numpy, _weight_grad)

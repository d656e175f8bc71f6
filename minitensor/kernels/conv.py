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
batch, one broadcast ``matmul``.  The numba kernels (``conv_gemm.py``) do the same image by image:
one image's columns (a few MB at most, reused for every image: they stay in the cache) go straight
into BLAS's GEMM, and a 1x1 kernel with stride 1 and no padding takes the image itself as its
columns; with several images and threads, the images are split over the threads.  Depthwise
convolutions (one input channel per group, or a single input channel, and at most two output
channels per input channel) multiply small matrices that BLAS does badly: they have direct loops of
their own (``conv_depthwise.py``).  An empty batch, the JIT off, or a dtype other than
float32/float64 take the reference.

>>> from minitensor.kernels.im2col import Window
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> conv2d(x, np.ones((1, 1, 2, 2)), None, Window(2, 2, 2, 2, 0, 0, 1, 1, 2, 2), 1)[0, 0]
array([[10., 18.],
       [42., 50.]])
"""

from __future__ import annotations

import numpy as np

from . import conv_depthwise, conv_direct, conv_gemm
from .im2col import Window, _col2im_numpy, _im2col_numpy
from .runtime import blas_threads
from .runtime.blas_threads import LAUNCH_SECONDS
from .runtime.dispatch import BlasKernel, choose
from .runtime.transpose import contiguous


def conv2d(x: np.ndarray, weight: np.ndarray, bias, win: Window, groups: int) -> np.ndarray:
    """y (N, Co, oh, ow) = the convolution of x (N, C, H, W) with weight (Co, C/groups, kh, kw),
    plus bias (Co,) (or None), over the windows ``win``."""
    x, weight = _common(x, weight)
    out = np.empty((x.shape[0], weight.shape[0], win.oh, win.ow), x.dtype)
    if conv_depthwise.takes(x, weight, groups):
        run = _depthwise(out, win, x.shape[2:], _forward_numpy, conv_depthwise.forward, conv_depthwise.forward_threaded)
    else:
        run = _gemm(out, weight[0].size, groups, _forward_numpy, conv_gemm.forward, conv_gemm.forward_threaded)
    run(x, weight, bias, win, groups, out)
    return out


def conv2d_input_grad(grad: np.ndarray, weight: np.ndarray, size: tuple, win: Window, groups: int) -> np.ndarray:
    """The gradient of the input (N, C, *size) from grad (N, Co, oh, ow): the transposed convolution."""
    grad, weight = _common(grad, weight)
    out = np.empty((grad.shape[0], weight.shape[1] * groups) + tuple(size), grad.dtype)
    if conv_depthwise.takes(out, weight, groups):
        kernels = conv_depthwise.input_grad, conv_depthwise.input_grad_threaded
        run = _depthwise(grad, win, size, _input_grad_numpy, *kernels)
    else:
        run = _gemm(
            grad, weight[0].size, groups, _input_grad_numpy, conv_gemm.input_grad, conv_gemm.input_grad_threaded
        )
        if run is not _input_grad_numpy and as_forward(grad.shape, out.shape, win, groups):
            flipped = np.ascontiguousarray(weight.transpose(1, 0, 2, 3)[:, :, ::-1, ::-1])  # (C, Co, kh, kw)
            return conv2d(grad, flipped, None, _transposed_window(win, *size), 1)
    run(grad, weight, win, groups, out)
    return out


def as_forward(grad_shape: tuple, x_shape: tuple, win: Window, groups: int) -> bool:
    """Whether the input gradient runs as the forward convolution of the gradient (N, Co, oh, ow)
    with the flipped weight (its window: ``conv_direct.input_grad_window``): one group, stride 1, no
    padding beyond what that convolution takes, and no more im2col values to copy (Co x H x W a
    kernel position) than the col2im of the usual way adds back (C x oh x ow).  'same' layers with as
    many input as output channels, copies for additions (measured, two threads, 16 -> 16 3x3 at
    32 x 32, batch 32: 2272 against 1973 µs; 8 -> 8 637 against 579; LeNet-5's c3, 6 -> 16 5x5
    'valid', would be 890 against 1609: it keeps col2im).  Where both ways take ``conv_direct`` they
    are the same."""
    transposed = _transposed_window(win, *x_shape[2:])
    copies, additions = grad_shape[1] * x_shape[2] * x_shape[3], x_shape[1] * win.oh * win.ow
    unit_stride = win.sh == 1 and win.sw == 1
    return groups == 1 and unit_stride and transposed.pt >= 0 and transposed.pl >= 0 and copies <= additions


# (conv_direct's own, as the plain Python function: called here it need not be compiled)
_transposed_window = conv_direct.input_grad_window.py_func


def conv2d_weight_grad(x: np.ndarray, grad: np.ndarray, win: Window, groups: int) -> np.ndarray:
    """The gradient of the weight (Co, C/groups, kh, kw) from x (N, C, H, W) and grad (N, Co, oh, ow)."""
    x, grad = _common(x, grad)
    out = np.empty((grad.shape[1], x.shape[1] // groups, win.kh, win.kw), x.dtype)
    if conv_depthwise.takes(x, out, groups):
        kernels = conv_depthwise.weight_grad, conv_depthwise.weight_grad_threaded
        run = _depthwise(grad, win, x.shape[2:], _weight_grad_numpy, *kernels)
    else:
        run = _gemm(
            grad, out[0].size, groups, _weight_grad_numpy, conv_gemm.weight_grad, conv_gemm.weight_grad_threaded
        )
    run(x, grad, win, groups, out)
    return out


def _common(a: np.ndarray, b: np.ndarray) -> tuple:
    """a and b C-contiguous in their common dtype (the kernels and their BLAS calls take one dtype)."""
    dtype = np.result_type(a, b)
    return contiguous(a.astype(dtype, copy=False)), contiguous(b.astype(dtype, copy=False))


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


# ------------------------------------------------------------------ the choice of a kernel
def _gemm(y: np.ndarray, window_size: int, groups: int, reference, serial, threaded):
    """The im2col + GEMM implementation for a pass whose output (or output gradient) is ``y``, each
    element of which takes ``window_size`` (C/G * kh * kw) multiply-adds, through columns of
    ``window_size * groups`` values per output pixel (a pointwise convolution copies none: there the
    count is high): the images split over the threads when that pays (the same for the three passes)."""
    columns = y.size // max(1, y.shape[1]) * window_size * groups
    ns = 1e9 * conv_gemm.serial_seconds(y.size * window_size, y.size, columns) / max(1, y.size)
    return BlasKernel(reference, serial, threaded, ns=ns, launch=LAUNCH_SECONDS).on(y)


def _depthwise(grad_or_out: np.ndarray, win: Window, size: tuple, reference, serial, parallel):
    """The depthwise implementation for a pass whose output-sized array is ``grad_or_out`` (the input's
    planes: ``size``, (h, w)): each of its elements costs kh * kw multiply-adds (~0.066 ns each,
    vectorised over the plane), and each plane ~300 ns of setting up (its phases, the copies in and
    out), which is what a small plane costs (measured: 0.6 ns per element for 32 x 32 outputs of a
    3x3 kernel, 2.4 ns for LeNet-5's 14 x 14 of a 2x2 stride-2 one, 8 ns for 5 x 5).  Windows that
    tile the input skip the set-up (``conv_depthwise._tiled``): ~0.6 ns a multiply-add (not
    vectorised) and ~115 ns a plane (measured on the Intel VM, the slower of the two here: 3.0 ns per
    element for 14 x 14 outputs of a 2x2 kernel, 7.0 ns for 5 x 5; the AMD VM 1.6 and 3.7)."""
    plane = max(1, win.oh * win.ow)
    if conv_depthwise.tiles(win, *size):
        ns = 0.6 * win.kh * win.kw + 115.0 / plane
    else:
        ns = 0.066 * win.kh * win.kw + 300.0 / plane
    launch = LAUNCH_SECONDS if blas_threads.available() else None  # (the shares' tasks run on BLAS's threads)
    return choose(grad_or_out, reference, serial, parallel, ns=ns, launch=launch)

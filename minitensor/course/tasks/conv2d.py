"""Task: 2-D convolution forward and backward through im2col (docs/vision.md)."""

from __future__ import annotations

import numpy as np

import minitensor as mt
import minitensor.nn.functional as F

from ._base import Check, Mutant, Task
from ._helpers import check_program, expect_close, leaf

SOLUTION = '''"""Week 14: convolution via im2col.

y = conv2d(x, weight) + bias, PyTorch's (a cross-correlation): x (N, C, H, W), weight
(Co, C, kh, kw), bias (Co,); ``padding`` zeros on every side of x, windows ``stride`` apart.
y[n, o, p, q] = bias[o] + sum over c, i, j of weight[o, c, i, j] * x_padded[n, c, p * stride + i,
q * stride + j], so y is (N, Co, oh, ow) with oh = (H + 2 * padding - kh) // stride + 1.

With every window of x copied into a column (im2col), the convolution is one matrix product:
cols (N, C * kh * kw, oh * ow), then y = weight.reshape(Co, C * kh * kw) @ cols + bias.
"""

import numpy as np


def im2col(x, kh, kw, stride, padding):
    """Returns cols (N, C * kh * kw, oh * ow): row (c * kh + i) * kw + j holds pixel (i, j) of
    each window of channel c (F.unfold's layout).

    Hint: for one kernel position (i, j), the pixels it sees in all the windows are one strided
    slice of the padded x: ``x_padded[:, :, i : i + stride * oh : stride, j : ...]``.
    """
    # BEGIN SOLUTION
    n, c, h, w = x.shape
    oh, ow = (h + 2 * padding - kh) // stride + 1, (w + 2 * padding - kw) // stride + 1
    padded = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    cols = np.empty((n, c, kh, kw, oh, ow), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = padded[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
    return cols.reshape(n, c * kh * kw, oh * ow)
    # END SOLUTION


def col2im(cols, x_shape, kh, kw, stride, padding):
    """The adjoint of im2col: (N, C * kh * kw, oh * ow) columns added back onto an array of
    ``x_shape`` (N, C, H, W), each entry onto the pixel it was copied from.

    Hint: a pixel inside several windows was copied several times: its gradient is the sum.
    """
    # BEGIN SOLUTION
    n, c, h, w = x_shape
    oh, ow = (h + 2 * padding - kh) // stride + 1, (w + 2 * padding - kw) // stride + 1
    padded = np.zeros((n, c, h + 2 * padding, w + 2 * padding), dtype=cols.dtype)
    view = cols.reshape(n, c, kh, kw, oh, ow)
    for i in range(kh):
        for j in range(kw):
            padded[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride] += view[:, :, i, j]
    return padded[:, :, padding : padding + h, padding : padding + w]
    # END SOLUTION


def conv2d_forward(x, weight, bias, stride, padding):
    """Returns (y (N, Co, oh, ow), cache)."""
    # BEGIN SOLUTION
    n, co, kh, kw = x.shape[0], weight.shape[0], weight.shape[2], weight.shape[3]
    oh = (x.shape[2] + 2 * padding - kh) // stride + 1
    ow = (x.shape[3] + 2 * padding - kw) // stride + 1
    cols = im2col(x, kh, kw, stride, padding)
    y = weight.reshape(co, -1) @ cols + bias[:, None]
    return y.reshape(n, co, oh, ow), (x.shape, cols, weight, stride, padding)
    # END SOLUTION


def conv2d_backward(grad, cache):
    """``grad``: (N, Co, oh, ow).  Returns (grad_x, grad_weight, grad_bias), shaped like x, weight, bias.

    Hint: y = W @ cols + b is a matmul (week 4) for every image: the gradient of cols is
    Wᵀ @ grad (then col2im: back to x), the gradient of W sums grad @ colsᵀ over the images.
    """
    # BEGIN SOLUTION
    x_shape, cols, weight, stride, padding = cache
    n, co, kh, kw = grad.shape[0], weight.shape[0], weight.shape[2], weight.shape[3]
    g = grad.reshape(n, co, -1)
    grad_weight = np.sum(g @ np.swapaxes(cols, 1, 2), axis=0).reshape(weight.shape)
    grad_bias = np.sum(g, axis=(0, 2))
    grad_cols = weight.reshape(co, -1).T @ g
    return col2im(grad_cols, x_shape, kh, kw, stride, padding), grad_weight, grad_bias
    # END SOLUTION
'''

# (x shape, weight shape, stride, padding): overlapping windows, strided ones, a 1x1 kernel.
SHAPES = [((2, 3, 5, 5), (4, 3, 3, 3), 1, 1), ((1, 2, 6, 7), (3, 2, 2, 3), 2, 0), ((2, 2, 7, 6), (2, 2, 3, 3), 2, 1),
          ((2, 1, 4, 4), (2, 1, 1, 1), 1, 0)]  # fmt: skip

PROGRAMS = {"conv2d": lambda ops, x, w, b, stride, padding: ops.conv2d(x, w, b, stride=stride, padding=padding)}


def _forward(student) -> None:
    rng = np.random.default_rng(23)
    for x_shape, w_shape, stride, padding in SHAPES:
        x, w, b = leaf(rng, *x_shape), leaf(rng, *w_shape), leaf(rng, w_shape[0])
        y = student.call("conv2d.conv2d_forward", x.numpy(), w.numpy(), b.numpy(), stride, padding, pick=0)
        with mt.no_grad():
            expected = F.conv2d(x, w, b, stride=stride, padding=padding).numpy()
        expect_close(y, expected, f"conv2d_forward (stride {stride}, padding {padding})")


def _backward(student) -> None:
    rng = np.random.default_rng(24)
    for x_shape, w_shape, stride, padding in SHAPES:
        x, w, b = leaf(rng, *x_shape, transposed=True), leaf(rng, *w_shape), leaf(rng, w_shape[0])
        check_program(student, "conv2d", [x, w, b], settings={"stride": stride, "padding": padding})


TASK = Task(
    name="conv2d",
    title="Convolution via im2col",
    summary="a 2-D convolution as im2col and a matmul, and its backward through col2im",
    solution=SOLUTION,
    checks=[Check("forward equals F.conv2d", 3, _forward), Check("gradients of x, weight, bias", 7, _backward)],
    mutants=[
        Mutant(
            "col2im overwriting the overlapping windows instead of adding them",
            "padded[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride] += view[:, :, i, j]",
            "padded[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride] = view[:, :, i, j]",
            None,
        ),
        Mutant(
            "a weight gradient from the first image only",
            "grad_weight = np.sum(g @ np.swapaxes(cols, 1, 2), axis=0).reshape(weight.shape)",
            "grad_weight = (g @ np.swapaxes(cols, 1, 2))[0].reshape(weight.shape)",
            None,
        ),
        Mutant(
            "col2im ignoring the stride",
            "padded[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride] += view[:, :, i, j]",
            "padded[:, :, i : i + oh, j : j + ow] += view[:, :, i, j]",
            None,
        ),
    ],
    programs=PROGRAMS,
)

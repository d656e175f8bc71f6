"""Convolution: three ops that are each other's gradients, so every order of derivative is exact.

A 2-D convolution (PyTorch's, a cross-correlation) of x (N, C, H, W) with a weight W (Co, C/G,
kh, kw) over the windows ``win`` (kernel, stride, padding, dilation, output grid: a
``backend.conv_window``) is linear in x and linear in W::

    y = Conv(x, W)                       (N, Co, oh, ow)

Its gradients are the adjoints of those two linear maps, and each is again an op of the family:

- ``ConvTranspose(dy, W)``: dx, the transposed convolution (each output's gradient spread back,
  through the weights, onto the pixels of its window; ``F.conv_transpose2d`` is this op);
- ``ConvWeight(x, dy)``: dW, the sum over windows of the gradient times the window's pixels.

Each of the three is bilinear in its two inputs, so their gradients are the other two ops again
(with ``<a, b>`` the sum of the products of two tensors' elements)::

    <Conv(x, W), g> = <x, ConvTranspose(g, W)> = <W, ConvWeight(x, g)>

    op                   gradient of its 1st input    of its 2nd input
    Conv(x, W)           ConvTranspose(g, W)          ConvWeight(x, g)
    ConvTranspose(g, W)  Conv(h, W)                   ConvWeight(h, g)
    ConvWeight(x, g)     ConvTranspose(g, V)          Conv(x, V)

(h, V: the gradients arriving at each op's output).  A backward calls the ops with ``.call``:
on arrays (first order) that runs the kernels; on Tensors (``create_graph=True``) it records the
ops, whose own backward is again this table.  The bias of ``Conv`` and ``ConvTranspose`` adds a
per-channel constant: its gradient is the incoming gradient summed over every dim but the
channels.  1-D convolutions are 2-D ones over a height of 1 (``nn.functional.conv``).

Forward mode: an op bilinear in (a, b) has the tangent ``op(da, b) + op(a, db)`` (the product
rule), plus the bias's tangent broadcast over the pixels (``bilinear_jvp``).  Under vmap a batch
of inputs whose weight is shared joins the op's own batch of images (``images_merged``); with a
weight per example (per-sample gradients) the examples become groups (``examples_as_groups``).

The kernels (``backend.conv2d`` ...) compute each op as im2col and matrix products; their
NumPy references are unfold + matmul (``kernels/conv.py``).
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..autograd.batching import Batch
from ..autograd.dual import bilinear, plus
from ..autograd.function import Op

_CHANNELS = (0, 2, 3)  # the dims a bias's gradient sums over


def bilinear_jvp(ctx, da, db, dbias=None):
    """The JVP of an op bilinear in its first two inputs (a, b) with an optional per-channel bias:
    op(da, b) + op(a, db) (``dual.bilinear``) + dbias over every pixel (None terms left out)."""
    return plus(bilinear(ctx, da, db), None if dbias is None else dbias.reshape(-1, 1, 1))


def _bias_grad(grad):
    """A bias's gradient: ``grad`` (N, C, H, W) summed over every dim but the channels; on arrays as
    BLAS products (``backend.sum_to_shape``: 3x faster than NumPy's sum over (0, 2, 3))."""
    if isinstance(grad, np.ndarray):
        return backend.sum_to_shape(grad, grad.shape[1:2] + (1, 1)).reshape(-1)
    return np.sum(grad, axis=_CHANNELS)


def _contiguous(grad):
    """A first-order gradient (an array) in C order: one copy, where each of the kernels of the
    input, weight and bias gradients would copy a transposed or strided gradient again (3 copies of
    a 1 MB transposed gradient: 300 µs of a 950 µs ``conv_transpose1d`` step)."""
    return backend.contiguous(grad) if isinstance(grad, np.ndarray) else grad


def images_merged(b: Batch):
    """vmap: the examples' images (B, N, ...) become one batch of B * N images for an op on image
    batches (first input), its other inputs shared; with a batched weight, ``examples_as_groups``."""
    if any(b.batched[1:]):
        return examples_as_groups(b)
    x = b.values[0]
    out = b.run(x.reshape(b.size * x.shape[1], *x.shape[2:]), *b.values[1:])
    return out.reshape(b.size, x.shape[1], *out.shape[1:])


def examples_as_groups(b: Batch):
    """vmap with a weight per example (per-sample gradients): the B examples become B times the
    groups of one grouped op, their channels side by side.  Images (B, N, C, H, W) -> (N, B*C, H, W),
    weights (B, O, C/g, kh, kw) -> (B*O, C/g, kh, kw), biases (B, O) -> (B*O,), groups g -> B*g; the
    output back to (B, N, O, ...) (an image) or (B, O, C/g, kh, kw) (``ConvWeight``'s weight)."""
    size = b.size
    images = (0, 1) if b.op is ConvWeight else (0,)  # (the other inputs are weights and a bias)
    values = []
    for i in range(len(b.values)):
        v = b.expanded(i)
        if v is None:
            values.append(None)
        elif i in images:  # (B, N, C, H, W) -> (N, B*C, H, W)
            values.append(v.transpose(0, 1).reshape(v.shape[1], size * v.shape[2], *v.shape[3:]))
        else:  # a weight (B, O, ...) or a bias (B, O): the examples' channels one after another
            values.append(v.reshape(size * v.shape[1], *v.shape[2:]))
    out = b.run(*values, **{**b.settings, "groups": size * b.settings.get("groups", 1)})
    if b.op is ConvWeight:
        return out.reshape(size, out.shape[0] // size, *out.shape[1:])
    return out.reshape(out.shape[0], size, out.shape[1] // size, *out.shape[2:]).transpose(0, 1)


class Conv(Op):
    """y = conv(x, weight) + bias: x (N, C, H, W), weight (Co, C/groups, kh, kw), bias (Co,) or None.

    dx = ConvTranspose(dy, weight), dweight = ConvWeight(x, dy), dbias = dy summed over (N, oh, ow).
    """

    @staticmethod
    def forward(ctx, x, weight, bias=None, win=None, groups=1):
        ctx.win, ctx.groups = win, groups
        ctx.save_for_backward(x, weight)
        return backend.conv2d(x, weight, bias, win, groups)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        settings = {"win": ctx.win, "groups": ctx.groups}
        grad = _contiguous(grad)
        dx = ConvTranspose.call(grad, weight, size=x.shape[2:], **settings) if need[0] else None
        dw = ConvWeight.call(x, grad, **settings) if need[1] else None
        if len(need) == 2:
            return dx, dw
        return dx, dw, _bias_grad(grad) if need[2] else None

    jvp = bilinear_jvp  # the product rule, and the bias
    batch = images_merged  # vmap: the examples join the batch of images


class ConvTranspose(Op):
    """x = conv_transpose(g, weight) + bias: the adjoint of ``Conv`` in its input.

    g (N, Co, oh, ow) is spread back through weight (Co, C/groups, kh, kw) onto a new
    (N, C, *size) tensor, every window's pixels receiving ``weightᵀ @ g`` of that window (summed where
    windows overlap); bias (C,) or None.  With the incoming gradient h:
    dg = Conv(h, weight), dweight = ConvWeight(h, g), dbias = h summed over (N, H, W).
    """

    @staticmethod
    def forward(ctx, g, weight, bias=None, win=None, groups=1, size=None):
        ctx.win, ctx.groups = win, groups
        ctx.save_for_backward(g, weight)
        out = backend.conv2d_input_grad(g, weight, size, win, groups)
        if bias is not None:
            out += bias.reshape(-1, 1, 1)
        return out

    @staticmethod
    def backward(ctx, grad):
        g, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        settings = {"win": ctx.win, "groups": ctx.groups}
        grad = _contiguous(grad)
        dg = Conv.call(grad, weight, **settings) if need[0] else None
        dw = ConvWeight.call(grad, g, **settings) if need[1] else None
        if len(need) == 2:
            return dg, dw
        return dg, dw, _bias_grad(grad) if need[2] else None

    jvp = bilinear_jvp  # the product rule, and the bias
    batch = images_merged  # vmap: the examples join the batch of images


class ConvWeight(Op):
    """dweight = conv_weight(x, g): the gradient of ``Conv``'s weight, (Co, C/groups, kh, kw), from its
    input x (N, C, H, W) and output gradient g (N, Co, oh, ow): for each kernel position, the sum over
    the windows of g times the pixel the position sees.  With the incoming gradient V (weight-shaped):
    dx = ConvTranspose(g, V), dg = Conv(x, V).
    """

    @staticmethod
    def forward(ctx, x, g, win=None, groups=1):
        ctx.win, ctx.groups = win, groups
        ctx.save_for_backward(x, g)
        return backend.conv2d_weight_grad(x, g, win, groups)

    @staticmethod
    def backward(ctx, grad):
        x, g = ctx.saved_tensors
        need = ctx.needs_input_grad
        settings = {"win": ctx.win, "groups": ctx.groups}
        dx = ConvTranspose.call(g, grad, size=x.shape[2:], **settings) if need[0] else None
        dg = Conv.call(x, grad, **settings) if need[1] else None
        return dx, dg

    jvp = bilinear_jvp  # the product rule
    batch = examples_as_groups  # vmap: each example's images and gradients a group of their own

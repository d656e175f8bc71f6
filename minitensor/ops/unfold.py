"""``Unfold`` (im2col) and ``Fold`` (col2im): each the other's gradient.

``Unfold`` copies every window of x (N, C, H, W) into a column: (N, C * kh * kw, L), L windows
(``kernels/im2col.py`` draws it).  It is linear, and its adjoint ``Fold`` adds each column back
onto the pixels it was copied from (a pixel covered by several windows receives their sum), so

    <Unfold(x), c> = <x, Fold(c)>       for every x and c,

and the gradient of each is the other one, at every order.  Being linear, each is its own JVP
rule; under vmap the examples' batches of images join the op's batch (``conv.images_merged``).

A convolution is ``Unfold`` then a matrix product with the weight (docs/vision.md);
``ops/conv.py`` runs it fused.
"""

from __future__ import annotations

from .. import backend
from ..autograd.dual import linear
from ..autograd.function import Op
from .conv import images_merged


class Unfold(Op):
    """cols = im2col(x): x (N, C, H, W) -> (N, C * kh * kw, oh * ow) over the windows ``win``;
    dx = Fold(dcols)."""

    @staticmethod
    def forward(ctx, x, win=None):
        ctx.win, ctx.size = win, x.shape[2:]
        return backend.im2col(x, win)

    @staticmethod
    def backward(ctx, grad):
        return Fold.call(grad, win=ctx.win, size=ctx.size)

    jvp = linear  # linear in its input: the tangent goes through the op itself
    batch = images_merged  # vmap: the examples join the batch of images


class Fold(Op):
    """x = col2im(cols): (N, C * kh * kw, oh * ow) -> (N, C, *size), each column added onto its
    window's pixels; dcols = Unfold(dx)."""

    @staticmethod
    def forward(ctx, cols, win=None, size=None):
        ctx.win = win
        return backend.col2im(cols, size, win)

    @staticmethod
    def backward(ctx, grad):
        return Unfold.call(grad, win=ctx.win)

    jvp = linear  # linear in its input: the tangent goes through the op itself
    batch = images_merged  # vmap: the examples join the batch of images

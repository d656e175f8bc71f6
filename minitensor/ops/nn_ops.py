"""Neural-network ops: softmax and log-softmax along one dim, and the fused
layer ops behind ``minitensor.nn`` (linear, layer norm, GELU, dropout, embedding,
and for the Transformer layers: linear + activation + dropout, residual + dropout + layer norm).

The row-wise math runs in ``minitensor.kernels`` (numba kernels, each beside its
NumPy reference; ``mt.set_jit_enabled(False)`` selects the references); the
matrix products are NumPy's (BLAS).

Softmax and log-softmax subtract the row max before ``exp``, so no finite input
overflows.  A row of all ``-inf`` gives NaN in softmax (0/0), as in PyTorch and NumPy.

Higher order.  Each op saves its inputs (or output) with ``save_for_backward``
and, last, a tuple of the kernel's intermediates (``save_with_state``): released after
backward like the rest, but never turned into Tensors.  First-order backward
(``grad`` an array) runs the kernels on those; with ``create_graph=True``
(``grad`` a Tensor) the kernel-backed ops (layer norm, add & norm, GELU, the
feed-forward block) return ``composite_grads`` of their plain form in Tensor ops
(``ops/reference.py``), and softmax, log-softmax, linear, dropout and embedding
run their backward formula on the Tensors; either way the gradient is a graph.
"""

from __future__ import annotations

import math

import numpy as np

from .. import random
from ..autograd.function import Op, composite_grads
from ..kernels import activation as act
from ..kernels import gelu as gelu_kernel
from ..kernels import layer_norm, softmax
from ..kernels.column_sums import column_sums
from ..kernels.scatter import index_add
from . import reference
from .shape import IndexAdd


def on_arrays(grad) -> bool:
    """First-order backward (an array, or a NumPy scalar from a 0-d sum), not create_graph's Tensor?"""
    return isinstance(grad, (np.ndarray, np.generic))


def save_with_state(ctx, *tensors, state=()) -> None:
    """Save the op's inputs (or output) for backward, then ``state``: the kernel's intermediates as
    one tuple (released after backward with the rest; never turned into Tensors)."""
    ctx.save_for_backward(*tensors, tuple(state))


def composite(forward, inputs: tuple, ctx, grad, **settings) -> tuple:
    """The create_graph path of a fused op: the gradients of ``forward(*inputs, **settings)``,
    its plain form in Tensor ops (``ops/reference.py``), as Tensors in the graph."""
    return composite_grads(lambda *xs: forward(*xs, **settings), inputs, grad, ctx.needs_input_grad)


class Softmax(Op):
    """y = exp(x) / sum(exp(x)) along ``dim``;  dx = y * (dy - sum(dy * y))."""

    @staticmethod
    def forward(ctx, x, dim=-1):
        y = softmax.softmax_forward(x, dim)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        if on_arrays(grad):
            return softmax.softmax_backward(y, grad, ctx.dim)
        return y * (grad - np.sum(grad * y, axis=ctx.dim, keepdims=True))


class LogSoftmax(Op):
    """y = x - logsumexp(x) along ``dim``;  dx = dy - exp(y) * sum(dy)."""

    @staticmethod
    def forward(ctx, x, dim=-1):
        y = softmax.log_softmax_forward(x, dim)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        if on_arrays(grad):
            return softmax.log_softmax_backward(y, grad, ctx.dim)
        return grad - np.exp(y) * np.sum(grad, axis=ctx.dim, keepdims=True)


class Linear(Op):
    """y = x @ W.T + b over the last dim of x;  dx = dy @ W, dW = dy.T @ x, db = sum(dy).

    ``x`` (..., in), ``W`` (out, in), ``b`` (out,) or None.  The batch dims are
    flattened (a view for contiguous x), so each gradient is one GEMM.
    """

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        y = affine(_rows_view(x), weight, bias, x.shape[:-1] + weight.shape[:1])  # (x's rows: a view if contiguous)
        ctx.save_for_backward(x, weight)  # (both, always: a weight changed before backward raises)
        ctx.x_shape = x.shape
        return y

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors  # (methods that arrays and Tensors share: no dispatch overhead)
        needs = ctx.needs_input_grad
        g = grad.reshape(math.prod(ctx.x_shape[:-1]), grad.shape[-1])  # (M, out)
        gx = (g @ weight).reshape(ctx.x_shape) if needs[0] else None
        gw = g.T @ _rows_view(x) if needs[1] else None
        if len(needs) == 2:
            return gx, gw
        return gx, gw, column_sums(g) if needs[2] else None


class LayerNorm(Op):
    """Normalise over the trailing ``n_dims`` dims, then scale by ``weight`` and shift by ``bias``.

    With D = the size of those dims, each row r of x (viewed as (M, D)):
    ``xhat = (r - mean(r)) / sqrt(var(r) + eps)``, ``y = xhat * weight + bias``.
    Backward, with ``g = dy * weight``:
    ``dx = rstd * (g - mean(g) - xhat * mean(g * xhat))``, ``dweight = sum(dy * xhat)``,
    ``dbias = sum(dy)`` (sums over the rows).  A constant row gives xhat = 0, not NaN.
    Kernel state: x as rows, and the mean and 1/std of each row (``kernels.layer_norm``).
    """

    @staticmethod
    def forward(ctx, x, weight=None, bias=None, n_dims=1, eps=1e-5):
        norm_shape = x.shape[x.ndim - n_dims :]
        rows = _rows(x, math.prod(norm_shape))  # (math.prod: np.prod costs ~3 µs on a tuple)
        y, mean, rstd = layer_norm.layer_norm_forward(rows, weight, bias, eps, shape=x.shape)
        save_with_state(ctx, x, weight, bias, state=(rows, mean, rstd))
        ctx.norm_shape, ctx.eps = norm_shape, eps
        return y

    @staticmethod
    def backward(ctx, grad):
        if not on_arrays(grad):
            settings = {"n_dims": len(ctx.norm_shape), "eps": ctx.eps}
            return composite(reference.layer_norm, ctx.saved_tensors[:-1], ctx, grad, **settings)
        _, weight, _, (rows, mean, rstd) = ctx.saved_tensors
        dx, dw, db = layer_norm.layer_norm_backward(grad, rows, mean, rstd, weight)  # (dx: grad's shape)
        need_x, need_w, need_b = ctx.needs_input_grad
        return (
            dx if need_x else None,
            dw.reshape(ctx.norm_shape) if need_w else None,
            db.reshape(ctx.norm_shape) if need_b else None,
        )


class AddLayerNorm(Op):
    """y = LayerNorm(x + dropout(r)) over the last dim: a Transformer's "add & norm" as one node.

    Call as ``AddLayerNorm.apply(x, r, weight, bias, eps=1e-5, keep=None, scale=1.0)``
    with x and r of the same shape (..., D), weight and bias (D,) or None, and
    ``keep`` None or a bool dropout mask on r (kept elements scaled by ``scale``).
    Backward: with s = x + dropout(r), ``dx`` is layer norm's input gradient at
    s, and ``dr = dx * keep * scale``.
    """

    @staticmethod
    def forward(ctx, x, r, weight=None, bias=None, eps=1e-5, keep=None, scale=1.0):
        y, (s, mean, rstd, keep_rows) = add_layer_norm(x, r, weight, bias, eps, keep, scale)
        save_with_state(ctx, x, r, weight, bias, state=(s, mean, rstd))
        ctx.keep, ctx.scale, ctx.eps = keep_rows, scale, eps
        return y

    @staticmethod
    def backward(ctx, grad):
        if not on_arrays(grad):
            drop = None if ctx.keep is None else (ctx.keep * ctx.scale).reshape(grad.shape)
            return composite(reference.add_layer_norm, ctx.saved_tensors[:-1], ctx, grad, eps=ctx.eps, drop=drop)
        _, _, weight, _, (s, mean, rstd) = ctx.saved_tensors
        dx, dw, db = layer_norm.layer_norm_backward(grad, s, mean, rstd, weight)
        need_x, need_r, need_w, need_b = ctx.needs_input_grad
        dr = None
        if need_r:  # (dx has grad's shape, the mask the rows' (rows, D))
            dr = dx if ctx.keep is None else dx * (ctx.keep * np.asarray(ctx.scale, dx.dtype)).reshape(dx.shape)
        return (
            dx if need_x else None,
            dr,
            dw if need_w else None,
            db if need_b else None,
        )


def add_layer_norm(x, r, weight, bias, eps, keep=None, scale=1.0) -> tuple:
    """AddLayerNorm's forward on arrays: (y, (s, mean, rstd, keep as rows)), s = x + dropout(r) as (M, D)."""
    d = x.shape[-1]
    keep_rows = None if keep is None else keep.reshape(-1, d)
    y, s, mean, rstd = layer_norm.layer_norm_forward(
        _rows(x, d), weight, bias, eps, residual=_rows(r, d), keep=keep_rows, scale=scale, shape=x.shape
    )
    return y, (s, mean, rstd, keep_rows)


def layer_norm_last(x, weight, bias, eps) -> np.ndarray:
    """LayerNorm's forward over the last dim, on arrays (nothing kept for backward)."""
    return layer_norm.layer_norm_forward(_rows(x, x.shape[-1]), weight, bias, eps, shape=x.shape)[0]


def _rows_view(x):
    """x (..., D), an array or a Tensor, as (M, D), M the product of the leading dims (a view unless x
    is non-contiguous).
    Not ``reshape(-1, D)``: that fails on an empty x when D = 0."""
    return x.reshape(math.prod(x.shape[:-1]), x.shape[-1])


def affine(rows: np.ndarray, weight: np.ndarray, bias, shape: tuple) -> np.ndarray:
    """rows @ weightᵀ + bias as a new array of ``shape``: rows (M, in), weight (out, in), bias (out,)
    or None; ``shape`` holds M * out elements (e.g. the batch dims, then out).  The product is
    written through a (M, out) view of the result, so the result owns its memory (a reshaped view
    would make ``Function.apply`` search the op's inputs for memory it could share)."""
    y = np.empty(shape, np.result_type(rows, weight))
    y_rows = y.reshape(rows.shape[0], weight.shape[0])
    np.matmul(rows, weight.T, out=y_rows)
    if bias is not None:
        y_rows += bias
    return y


def _rows(x: np.ndarray, d: int) -> np.ndarray:
    """x as a C-contiguous (M, d) array (a view when x is contiguous)."""
    return np.ascontiguousarray(x).reshape(-1, d) if x.size else x.reshape(0, d)


class Gelu(Op):
    """Exact GELU: y = x * Phi(x) with Phi(x) = (1 + erf(x / sqrt 2)) / 2;  dy/dx = Phi(x) + x * phi(x).

    One kernel pass each way (``kernels/gelu.py``); the forward keeps Phi(x) for the backward."""

    @staticmethod
    def forward(ctx, x):
        return _gelu_forward(ctx, x, "none")

    @staticmethod
    def backward(ctx, grad):
        return _gelu_backward(ctx, grad, "none")


class GeluTanh(Op):
    """Tanh-approximated GELU: y = x/2 * (1 + tanh(u)), u = sqrt(2/pi) * (x + 0.044715 x^3).

    dy/dx = (1 + t)/2 + x/2 * (1 - t^2) * sqrt(2/pi) * (1 + 3 * 0.044715 x^2), t = tanh(u).

    Beyond |x| = 50, t is exactly ±1 (in float32 and float64), so u is computed
    from x clipped to [-50, 50]: x^3 cannot overflow, and the second term of
    dy/dx is 0 there instead of 0 * inf = NaN (PyTorch's is NaN at x = ±inf).
    One kernel pass each way (``kernels/gelu.py``); the forward keeps exp(-2|u|), so the
    backward computes no exp.
    """

    @staticmethod
    def forward(ctx, x):
        return _gelu_forward(ctx, x, "tanh")

    @staticmethod
    def backward(ctx, grad):
        return _gelu_backward(ctx, grad, "tanh")


def _gelu_forward(ctx, x: np.ndarray, approximate: str) -> np.ndarray:
    y, kept = gelu_kernel.gelu(x, approximate, keep=ctx.needs_input_grad[0])
    save_with_state(ctx, x, state=(kept,))
    return y


def _gelu_backward(ctx, grad, approximate: str):
    if not on_arrays(grad):
        forward = reference.gelu if approximate == "none" else reference.gelu_tanh
        return composite(forward, ctx.saved_tensors[:-1], ctx, grad)[0]
    x, (kept,) = ctx.saved_tensors
    return gelu_kernel.gelu_backward(grad, x, kept, approximate)


class FeedForward(Op):
    """The position-wise feed-forward network of a Transformer layer as one node::

        pre = x @ W1ᵀ + b1                   one GEMM
        h   = act(pre) * keep * scale        bias, activation and dropout in one pass (kernels.activation)
        y   = h @ W2ᵀ + b2                   one GEMM

    Call as ``FeedForward.apply(x, w1, b1, w2, b2, activation="relu", keep=None, scale=1.0)``
    with x (..., E), w1 (F, E), w2 (E, F), biases or None; ``activation`` is ``"relu"``,
    ``"gelu"`` (exact) or ``"gelu_tanh"``; ``keep`` None or a bool dropout mask of h's shape.

    Backward: ``dh = dy @ W2``, ``dW2 = dyᵀ @ h``, then ``dpre = dh * keep * scale * act'(pre)``
    and ``db1 = sum(dpre)`` in one pass, ``dx = dpre @ W1``, ``dW1 = dpreᵀ @ x``.  ReLU keeps
    only h for backward (``act'(pre) = [h > 0]``); GELU keeps pre as well.
    """

    @staticmethod
    def forward(ctx, x, w1, b1=None, w2=None, b2=None, activation="relu", keep=None, scale=1.0):
        y, (rows, h, pre, keep_rows) = feed_forward(x, w1, b1, w2, b2, activation, keep, scale)
        save_with_state(ctx, x, w1, b1, w2, b2, state=(rows, h, pre))
        scale = 1.0 if keep is None else scale  # (no dropout, no scaling)
        ctx.x_shape, ctx.activation, ctx.keep, ctx.scale = x.shape, activation, keep_rows, scale
        return y

    @staticmethod
    def backward(ctx, grad):
        if not on_arrays(grad):
            drop = None if ctx.keep is None else (ctx.keep * ctx.scale).reshape(ctx.x_shape[:-1] + (-1,))
            settings = {"activation": ctx.activation, "drop": drop}
            return composite(reference.feed_forward, ctx.saved_tensors[:-1], ctx, grad, **settings)
        _, w1, _, w2, _, (rows, h, pre) = ctx.saved_tensors
        need_x, need_w1, need_b1, need_w2, need_b2 = ctx.needs_input_grad
        g = grad.reshape(rows.shape[0], w2.shape[0])
        dh = g @ w2
        if ctx.activation == "relu":
            dpre, db1 = act.relu_backward(h, dh, ctx.scale, need_b1)
        else:
            approximate = "tanh" if ctx.activation == "gelu_tanh" else "none"
            dpre, db1 = act.gelu_backward(pre, dh, ctx.keep, ctx.scale, approximate, need_b1)
        return (
            (dpre @ w1).reshape(ctx.x_shape) if need_x else None,
            dpre.T @ rows if need_w1 else None,
            db1,
            g.T @ h if need_w2 else None,
            column_sums(g) if need_b2 else None,
        )


def feed_forward(x, w1, b1, w2, b2, activation="relu", keep=None, scale=1.0) -> tuple:
    """FeedForward's forward on arrays: (y, (x as rows, h, pre or None, keep as rows))."""
    rows = _rows_view(x)  # (M, E): a view unless x is non-contiguous
    z = rows @ w1.T
    keep_rows = None if keep is None else keep.reshape(z.shape)
    scale = 1.0 if keep is None else scale  # (no dropout, no scaling)
    if activation == "relu":
        pre = None
        h = act.relu_forward(z, b1, keep_rows, scale)
    else:
        pre, h = act.gelu_forward(z, b1, keep_rows, scale, "tanh" if activation == "gelu_tanh" else "none")
    y = affine(h, w2, b2, x.shape[:-1] + w2.shape[:1])
    return y, (rows, h, pre, keep_rows)


class Dropout(Op):
    """Inverted dropout: zero each element with probability ``p``, scale the rest by 1/(1-p).

    The mask is drawn from minitensor's generator (``mt.manual_seed``) and kept
    for backward: dx = dy * mask (on arrays or on Tensors: the mask is a constant).
    """

    @staticmethod
    def forward(ctx, x, p=0.5):
        mask = dropout_multipliers(x.shape, p, x.dtype)
        save_with_state(ctx, state=(mask,))
        return x * mask

    @staticmethod
    def backward(ctx, grad):
        ((mask,),) = ctx.saved_tensors
        return grad * mask


def dropout_multipliers(shape: tuple, p: float, dtype) -> np.ndarray:
    """Dropout's mask as multipliers of ``shape``: 0 with probability ``p``, else 1/(1-p) (all 0 when
    p = 1), drawn from minitensor's generator in ``dtype``."""
    keep = random.generator().random(shape, dtype=dtype) >= p
    mask = keep.astype(dtype)
    mask *= 1.0 / (1.0 - p) if p < 1 else 0.0
    return mask


class Embedding(Op):
    """Row lookup: y[...] = weight[indices[...]];  dweight = scatter-add of dy into the rows.

    ``weight`` (V, D), ``indices`` an int array of any shape -> y (*indices.shape, D).
    Repeated indices add up their gradients (``IndexAdd``, whose backward is the
    lookup again); the ``padding_idx`` row gets none.
    """

    @staticmethod
    def forward(ctx, weight, indices, padding_idx=None):
        # (a copy when backward will need it: the caller may change its indices in place before)
        ctx.indices = indices.copy() if ctx.needs_input_grad[0] else indices
        ctx.weight_shape = weight.shape
        ctx.padding_idx = padding_idx
        return np.take(weight, indices, axis=0)

    @staticmethod
    def backward(ctx, grad):
        indices = ctx.indices.reshape(-1)
        rows = grad.reshape(-1, ctx.weight_shape[1])
        if not on_arrays(grad):  # the scatter-add as an op (differentiable again)
            if ctx.padding_idx is not None:
                rows = np.where(np.expand_dims(indices == ctx.padding_idx, 1), 0, rows)
            return IndexAdd.apply(rows, key=indices, shape=ctx.weight_shape), None
        gw = np.zeros(ctx.weight_shape, dtype=grad.dtype)
        index_add(gw, (indices,), rows)  # np.add.at; a row-loop kernel (kernels/scatter.py)
        if ctx.padding_idx is not None:
            gw[ctx.padding_idx] = 0
        return gw, None

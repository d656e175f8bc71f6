"""Neural-network ops: softmax and log-softmax along one dim, and the fused
layer ops behind ``minitensor.nn`` (linear, layer norm, GELU, dropout, embedding).

Softmax and log-softmax subtract the row max before ``exp``, so no finite input
overflows.  A row of all ``-inf`` gives NaN in softmax (0/0), as in PyTorch and NumPy.
"""

from __future__ import annotations

import numpy as np

from .. import random
from ..autograd.function import Function
from .special import erf


def _shifted(x: np.ndarray, dim: int) -> np.ndarray:
    m = np.max(x, axis=dim, keepdims=True, initial=-np.inf)  # initial: a size-0 dim has no max
    return x - np.where(np.isfinite(m), m, 0)


class Softmax(Function):
    """y = exp(x) / sum(exp(x)) along ``dim``;  dx = y * (dy - sum(dy * y))."""

    @staticmethod
    def forward(ctx, x, dim=-1):
        e = np.exp(_shifted(x, dim))
        y = e / np.sum(e, axis=dim, keepdims=True)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return y * (grad - np.sum(grad * y, axis=ctx.dim, keepdims=True))


class LogSoftmax(Function):
    """y = x - logsumexp(x) along ``dim``;  dx = dy - exp(y) * sum(dy)."""

    @staticmethod
    def forward(ctx, x, dim=-1):
        z = _shifted(x, dim)
        if z.shape[dim] == 0:  # nothing to normalise (and the log of an empty sum would warn)
            y = z
        else:
            y = z - np.log(np.sum(np.exp(z), axis=dim, keepdims=True))
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad - np.exp(y) * np.sum(grad, axis=ctx.dim, keepdims=True)


class Linear(Function):
    """y = x @ W.T + b over the last dim of x;  dx = dy @ W, dW = dy.T @ x, db = sum(dy).

    ``x`` (..., in), ``W`` (out, in), ``b`` (out,) or None.  The batch dims are
    flattened (a view for contiguous x), so each gradient is one GEMM.
    """

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        rows = x.reshape(-1, x.shape[-1])  # (M, in): a view unless x is non-contiguous
        y = rows @ weight.T
        if bias is not None:
            y += bias
        ctx.save_for_backward(rows, weight)
        ctx.x_shape = x.shape
        return y.reshape(x.shape[:-1] + (weight.shape[0],))

    @staticmethod
    def backward(ctx, grad):
        rows, weight = ctx.saved_tensors
        g = grad.reshape(-1, weight.shape[0])  # (M, out)
        need_x, need_w, need_b = ctx.needs_input_grad
        gx = (g @ weight).reshape(ctx.x_shape) if need_x else None
        gw = g.T @ rows if need_w else None
        gb = g.sum(axis=0) if need_b else None
        return gx, gw, gb


class LayerNorm(Function):
    """Normalise over the trailing ``n_dims`` dims, then scale by ``weight`` and shift by ``bias``.

    With D = the size of those dims, each row r of x (viewed as (M, D)):
    ``xhat = (r - mean(r)) / sqrt(var(r) + eps)``, ``y = xhat * weight + bias``.
    Backward, with ``g = dy * weight``:
    ``dx = rstd * (g - mean(g) - xhat * mean(g * xhat))``, ``dweight = sum(dy * xhat)``,
    ``dbias = sum(dy)`` (sums over the rows).  A constant row gives xhat = 0, not NaN.
    """

    @staticmethod
    def forward(ctx, x, weight=None, bias=None, n_dims=1, eps=1e-5):
        size = int(np.prod(x.shape[x.ndim - n_dims :]))
        rows = x.reshape(-1, size)
        xhat = rows - rows.mean(axis=1, keepdims=True)
        rstd = 1.0 / np.sqrt(np.mean(xhat * xhat, axis=1, keepdims=True) + eps)
        xhat *= rstd
        y = xhat
        if weight is not None:
            y = y * weight.reshape(size)
        if bias is not None:
            y = y + bias.reshape(size)
        ctx.save_for_backward(xhat, rstd, weight)
        ctx.x_shape = x.shape
        ctx.norm_shape = x.shape[x.ndim - n_dims :]
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        xhat, rstd, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        g = grad.reshape(xhat.shape)
        gw = (g * xhat).sum(axis=0).reshape(ctx.norm_shape) if need_w else None
        gb = g.sum(axis=0).reshape(ctx.norm_shape) if need_b else None
        gx = None
        if need_x:
            if weight is not None:
                g = g * weight.reshape(-1)
            gx = rstd * (g - g.mean(axis=1, keepdims=True) - xhat * np.mean(g * xhat, axis=1, keepdims=True))
            gx = gx.reshape(ctx.x_shape)
        return gx, gw, gb


_SQRT_HALF = 0.70710678118654752440
_INV_SQRT_2PI = 0.39894228040143267794
_SQRT_2_OVER_PI = 0.79788456080286535588
_GELU_CUBIC = 0.044715
_GELU_TANH_CLIP = 50.0


class Gelu(Function):
    """Exact GELU: y = x * Phi(x) with Phi(x) = (1 + erf(x / sqrt 2)) / 2;  dy/dx = Phi(x) + x * phi(x)."""

    @staticmethod
    def forward(ctx, x):
        cdf = erf(x * _SQRT_HALF)
        cdf += 1.0
        cdf *= 0.5
        ctx.save_for_backward(x, cdf)
        return x * cdf

    @staticmethod
    def backward(ctx, grad):
        x, cdf = ctx.saved_tensors
        d = np.multiply(x, x, out=np.empty_like(x))  # out=: an array even for a 0-d x (x * x is then a scalar)
        d *= -0.5
        np.exp(d, out=d)
        d *= _INV_SQRT_2PI * x  # x * pdf(x)
        d += cdf
        return grad * d


class GeluTanh(Function):
    """Tanh-approximated GELU: y = x/2 * (1 + tanh(u)), u = sqrt(2/pi) * (x + 0.044715 x^3).

    dy/dx = (1 + t)/2 + x/2 * (1 - t^2) * sqrt(2/pi) * (1 + 3 * 0.044715 x^2), t = tanh(u).

    Beyond |x| = 50, t is exactly ±1 (in float32 and float64), so u is computed
    from x clipped to [-50, 50]: x^3 cannot overflow, and the second term of
    dy/dx is 0 there instead of 0 * inf = NaN.
    """

    @staticmethod
    def forward(ctx, x):
        xc = np.clip(x, -_GELU_TANH_CLIP, _GELU_TANH_CLIP)
        t = np.tanh(_SQRT_2_OVER_PI * (xc + _GELU_CUBIC * xc * xc * xc))
        ctx.save_for_backward(xc, t)
        return 0.5 * x * (1.0 + t)

    @staticmethod
    def backward(ctx, grad):
        xc, t = ctx.saved_tensors
        du = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_CUBIC * xc * xc)
        return grad * (0.5 * (1.0 + t) + 0.5 * xc * (1.0 - t * t) * du)


class Dropout(Function):
    """Inverted dropout: zero each element with probability ``p``, scale the rest by 1/(1-p).

    The mask is drawn from minitensor's generator (``mt.manual_seed``) and kept
    for backward: dx = dy * mask.
    """

    @staticmethod
    def forward(ctx, x, p=0.5):
        scale = 1.0 / (1.0 - p) if p < 1 else 0.0
        keep = random.generator().random(x.shape, dtype=x.dtype) >= p
        mask = keep.astype(x.dtype)
        mask *= scale
        ctx.save_for_backward(mask)
        return x * mask

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return grad * mask


class Embedding(Function):
    """Row lookup: y[...] = weight[indices[...]];  dweight = scatter-add of dy into the rows.

    ``weight`` (V, D), ``indices`` an int array of any shape -> y (*indices.shape, D).
    Repeated indices add up their gradients; the ``padding_idx`` row gets none.
    """

    @staticmethod
    def forward(ctx, weight, indices, padding_idx=None):
        ctx.save_for_backward(indices)
        ctx.weight_shape = weight.shape
        ctx.padding_idx = padding_idx
        return np.take(weight, indices, axis=0)

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        gw = np.zeros(ctx.weight_shape, dtype=grad.dtype)
        np.add.at(gw, indices.reshape(-1), grad.reshape(-1, ctx.weight_shape[1]))
        if ctx.padding_idx is not None:
            gw[ctx.padding_idx] = 0
        return gw, None

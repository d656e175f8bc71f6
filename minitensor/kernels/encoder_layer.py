"""The encoder layer's inference forward (eval mode, no graph) as one kernel call.

``ops/encoder_layer.layer_arrays`` runs a Transformer encoder layer in eval mode by calling its
sub-layers' array functions one by one: the in-projection's product, the heads
(``attention.heads_forward``), the out-projection's, add & norm (``layer_norm``), the
feed-forward's two products around the activation (``activation``), add & norm.  Each call checks
its arguments and picks a kernel in Python: on a small layer (2 x 12 tokens, E = 64) those calls
took about two thirds of the layer's time.  :func:`encoder_layer_forward` runs the same serial
kernels back to back from one call into numba, the matrix products on the same BLAS
(``_blas.gemm``): the same float operations in the same order, so the same numbers, bit for bit
(tests hold the two equal).

Post-LN (``norm_first=False``; rows (M, E) of x, M = N * L)::

    qkv = x @ in_wᵀ + in_b               (M, 3E)
    a   = heads(qkv) @ out_wᵀ + out_b    (M, E)       softmax(scale * q @ kᵀ + mask) @ v, per head
    y1  = LayerNorm(x + a)               norm1
    f   = act(y1 @ w1ᵀ + b1) @ w2ᵀ + b2  (M, FF) then (M, E)
    y   = LayerNorm(y1 + f)              norm2

Pre-LN (``norm_first=True``)::

    x1 = x + attention(LayerNorm(x))     y = x1 + feed_forward(LayerNorm(x1))

It is taken where the heads would run on one thread (``attention.serial_heads``): there the
sub-layers' own elementwise kernels run serially too, except a feed-forward of some millions of
elements, whose activation the kernel then runs on one thread (well under 1% of such a layer's
time: its products dominate).  Larger layers, whose heads go parallel, and the JIT off (the NumPy
reference: the sub-layers' NumPy paths) keep the sub-layer path.  Dropout is off in eval mode; a
layer whose dropout still draws masks takes the sub-layer path.
"""

from __future__ import annotations

import numpy as np

from ._blas import gemm
from ._jit import njit
from .activation import _gelu_block, _relu_block
from .attention import _forward_heads, serial_heads
from .attention_softmax import _mask_4d
from .layer_norm import _affine as _norm_weights
from .layer_norm import _forward_block as _norm_rows

_ACTIVATIONS = {"relu": 0, "gelu": 1, "gelu_tanh": 2}  # FeedForward's activation kinds, as the kernel's codes


@njit
def _affine(rows, weight, bias, out):
    """out = rows @ weightᵀ + bias (``nn_ops.affine``: the product, then the bias added)."""
    gemm(rows, False, weight, True, out, 0.0)
    if bias is not None:
        for i in range(out.shape[0]):
            for j in range(out.shape[1]):
                out[i, j] += bias[j]


@njit
def _heads(rows, batch_first, n, length, parts, heads):
    """The (parts, N, H, L, d) view of a projection's rows (M, parts * E): ``attention.split_heads``."""
    d = rows.shape[1] // (parts * heads)
    if batch_first:
        return rows.reshape((n, length, parts, heads, d)).transpose((2, 0, 3, 1, 4))
    return rows.reshape((length, n, parts, heads, d)).transpose((2, 1, 3, 0, 4))


@njit
def _self_attention(x, in_w, in_b, out_w, out_b, mask, scale, heads, batch_first, n, length):
    """``attention.self_attention`` on the rows x (M, E), P not kept: the (M, E) output."""
    m, e = x.shape
    qkv = np.empty((m, 3 * e), x.dtype)
    _affine(x, in_w, in_b, qkv)
    qkv_heads = _heads(qkv, batch_first, n, length, 3, heads)
    merged = np.empty((m, e), x.dtype)
    out = _heads(merged, batch_first, n, length, 1, heads)[0]
    _forward_heads(qkv_heads[0], qkv_heads[1], qkv_heads[2], mask, scale, None, None, out)
    out = np.empty((m, e), x.dtype)
    _affine(merged, out_w, out_b, out)
    return out


@njit
def _feed_forward(x, w1, b1, w2, b2, activation):
    """``nn_ops.feed_forward`` on the rows x (M, E), no dropout: the (M, E) output."""
    z = np.empty((x.shape[0], w1.shape[0]), x.dtype)
    gemm(x, False, w1, True, z, 0.0)
    one = x.dtype.type(1)
    if activation == 0:
        _relu_block(z, b1, None, one)
        h = z
    else:
        h = np.empty_like(z)
        _gelu_block(z, b1, None, one, activation == 2, z, h)
    out = np.empty((x.shape[0], w2.shape[0]), x.dtype)
    _affine(h, w2, b2, out)
    return out


@njit
def _norm(x, residual, weight, bias, eps, out):
    """out = LayerNorm(x + residual) of the rows (``layer_norm.layer_norm_forward``; residual None: x)."""
    mean, rstd, one = np.empty(x.shape[0], x.dtype), np.empty(x.shape[0], x.dtype), x.dtype.type(1)
    if residual is None:
        _norm_rows(x, None, None, one, weight, bias, eps, None, out, mean, rstd)
    else:
        _norm_rows(x, residual, None, one, weight, bias, eps, np.empty_like(x), out, mean, rstd)


@njit(error_model="numpy")
def _encoder_layer(x, weights, mask, scale, heads, batch_first, n, length, norm_first, activation, eps, y):
    """The layer's output into y (M, E) for the rows x (M, E); ``weights`` as ``encoder_layer_forward``
    takes them (the norms' weights and biases as arrays), ``eps`` the two norms' (eps1, eps2)."""
    in_w, in_b, out_w, out_b, n1_w, n1_b, w1, b1, w2, b2, n2_w, n2_b = weights
    if norm_first:
        h = np.empty_like(x)
        _norm(x, None, n1_w, n1_b, eps[0], h)
        x1 = x + _self_attention(h, in_w, in_b, out_w, out_b, mask, scale, heads, batch_first, n, length)
        _norm(x1, None, n2_w, n2_b, eps[1], h)
        f = _feed_forward(h, w1, b1, w2, b2, activation)
        for i in range(y.shape[0]):
            for j in range(y.shape[1]):
                y[i, j] = x1[i, j] + f[i, j]
        return
    a = _self_attention(x, in_w, in_b, out_w, out_b, mask, scale, heads, batch_first, n, length)
    y1 = np.empty_like(x)
    _norm(x, a, n1_w, n1_b, eps[0], y1)
    _norm(y1, _feed_forward(y1, w1, b1, w2, b2, activation), n2_w, n2_b, eps[1], y)


def kernel_taken(x, norm_first, attention, norm1, feed_forward, norm2, mask1=None, mask3=None) -> bool:
    """Whether ``encoder_layer_forward`` runs on ``x`` with these settings (``EncoderLayer``'s): the
    JIT on, an activation it knows, no dropout, heads that would run on one thread (see the module
    docstring)."""
    dropout = (attention["dropout_mask"], norm1.get("keep"), feed_forward["keep"], norm2.get("keep"), mask1, mask3)
    if feed_forward["activation"] not in _ACTIVATIONS or any(d is not None for d in dropout):
        return False
    heads = attention["heads"]
    n, length = x.shape[:2] if attention["batch_first"] else x.shape[1::-1]
    return serial_heads(x, 2 * (x.shape[2] // heads), (n, heads, length, length))


def encoder_layer_forward(x, weights, norm_first, attention, norm1, feed_forward, norm2, **dropout) -> np.ndarray:
    """The eval-mode layer's output for ``x`` (N, L, E) with ``attention["batch_first"]``, else (L, N, E),
    in one kernel call, where ``kernel_taken`` (``dropout``: its masks, None).

    ``weights``: the 12 arrays of ``ops/encoder_layer`` (in_w, in_b, out_w, out_b, norm1's weight and
    bias, w1, b1, w2, b2, norm2's weight and bias; biases and norm weights may be None); the settings
    as ``EncoderLayer`` takes them."""
    heads, batch_first, dtype = attention["heads"], attention["batch_first"], x.dtype
    n, length, e = x.shape if batch_first else (x.shape[1], x.shape[0], x.shape[2])
    in_w, in_b, out_w, out_b, n1_w, n1_b, w1, b1, w2, b2, n2_w, n2_b = (
        None if w is None else np.ascontiguousarray(w) for w in weights
    )
    arrays = (in_w, in_b, out_w, out_b, *_norm_weights(n1_w, n1_b, e, dtype), w1, b1, w2, b2,
              *_norm_weights(n2_w, n2_b, e, dtype))  # fmt: skip
    mask = _mask_4d(attention["mask"], (n, heads, length, length), dtype)
    y = np.empty(x.shape, dtype)
    rows, scale = np.ascontiguousarray(x).reshape(-1, e), dtype.type(attention["scale"])
    settings = (norm_first, _ACTIVATIONS[feed_forward["activation"]], (float(norm1["eps"]), float(norm2["eps"])))
    _encoder_layer(rows, arrays, mask, scale, heads, batch_first, n, length, *settings, y.reshape(-1, e))
    return y

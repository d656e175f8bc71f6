"""A Transformer layer's inference forward (eval mode, no graph) as one kernel call.

``ops/encoder_layer.layer_arrays`` runs an encoder layer in eval mode by calling its sub-layers'
array functions one by one: the in-projection's product, the heads (``attention.heads_forward``),
the out-projection's, add & norm (``layer_norm``), the feed-forward's two products around the
activation (``activation``), add & norm; ``ops/decoder_layer.layer_arrays`` likewise, with a
cross-attention to the encoder's output after the self-attention.  Each call checks its arguments
and picks a kernel in Python: on a small layer (2 x 12 tokens, E = 64) those calls took about two
thirds of the layer's time.  :func:`encoder_layer_forward` and :func:`decoder_layer_forward` run
the same serial kernels back to back from one call into numba, the matrix products on the same
BLAS (``_blas.gemm``): the same float operations in the same order, so the same numbers, bit for
bit (tests hold them equal).

The encoder layer, Post-LN (``norm_first=False``; rows (M, E) of x, M = N * L)::

    qkv = x @ in_wᵀ + in_b               (M, 3E)
    a   = heads(qkv) @ out_wᵀ + out_b    (M, E)       softmax(scale * q @ kᵀ + mask) @ v, per head
    y1  = LayerNorm(x + a)               norm1
    f   = act(y1 @ w1ᵀ + b1) @ w2ᵀ + b2  (M, FF) then (M, E)
    y   = LayerNorm(y1 + f)              norm2

Pre-LN (``norm_first=True``)::

    x1 = x + attention(LayerNorm(x))     y = x1 + feed_forward(LayerNorm(x1))

The decoder layer has a cross-attention step between the two (queries from its rows, keys and
values from the memory's, the packed in-projection split between them) with a norm of its own.

A layer's kernel is taken where its heads would run on one thread (``attention.serial_heads``):
there the sub-layers' own elementwise kernels run serially too, except a feed-forward of some
millions of elements, whose activation the kernel then runs on one thread (well under 1% of such a
layer's time: its products dominate).  Larger layers, whose heads go parallel, and the JIT off (the
NumPy reference: the sub-layers' NumPy paths) keep the sub-layer path.  Dropout is off in eval
mode; a layer whose dropout still draws masks takes the sub-layer path.
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
def _cross_attention(x, memory, in_w, in_b, out_w, out_b, mask, scale, heads, batch_first, n, length, keys):
    """``attention.cross_attention`` from the rows x (M, E) to the memory's rows (N * keys, E), P
    not kept: the (M, E) output."""
    m, e = x.shape
    q, kv = np.empty((m, e), x.dtype), np.empty((memory.shape[0], 2 * e), x.dtype)
    if in_b is None:
        _affine(x, in_w[:e], None, q)
        _affine(memory, in_w[e:], None, kv)
    else:
        _affine(x, in_w[:e], in_b[:e], q)
        _affine(memory, in_w[e:], in_b[e:], kv)
    kv_heads = _heads(kv, batch_first, n, keys, 2, heads)
    merged = np.empty((m, e), x.dtype)
    out = _heads(merged, batch_first, n, length, 1, heads)[0]
    _forward_heads(_heads(q, batch_first, n, length, 1, heads)[0], kv_heads[0], kv_heads[1], mask, scale, None,
                   None, out)  # fmt: skip
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


@njit
def _add(a, b, out):
    """out = a + b, elementwise (Pre-LN's residual sum)."""
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = a[i, j] + b[i, j]


@njit(error_model="numpy")
def _encoder_layer(x, weights, mask, scale, heads, batch_first, n, length, norm_first, activation, eps, y):
    """The encoder layer's output into y (M, E) for the rows x (M, E); ``weights`` from ``_kernel_weights``,
    ``eps`` the two norms' (eps1, eps2)."""
    in_w, in_b, out_w, out_b, n1_w, n1_b, w1, b1, w2, b2, n2_w, n2_b = weights
    if norm_first:
        h = np.empty_like(x)
        _norm(x, None, n1_w, n1_b, eps[0], h)
        x1 = x + _self_attention(h, in_w, in_b, out_w, out_b, mask, scale, heads, batch_first, n, length)
        _norm(x1, None, n2_w, n2_b, eps[1], h)
        _add(x1, _feed_forward(h, w1, b1, w2, b2, activation), y)
        return
    a = _self_attention(x, in_w, in_b, out_w, out_b, mask, scale, heads, batch_first, n, length)
    y1 = np.empty_like(x)
    _norm(x, a, n1_w, n1_b, eps[0], y1)
    _norm(y1, _feed_forward(y1, w1, b1, w2, b2, activation), n2_w, n2_b, eps[1], y)


@njit(error_model="numpy")
def _decoder_layer(x, memory, weights, masks, scales, heads, batch_first, sizes, norm_first, activation, eps, y):
    """The decoder layer's output into y (M, E) for the rows x (M, E) and the memory's rows; ``masks``,
    ``scales``, ``heads``: (self-attention's, cross-attention's); ``sizes``: (N, L, keys)."""
    sa_in_w, sa_in_b, sa_out_w, sa_out_b, n1_w, n1_b = weights[:6]
    ca_in_w, ca_in_b, ca_out_w, ca_out_b, n2_w, n2_b, w1, b1, w2, b2, n3_w, n3_b = weights[6:]
    n, length, keys = sizes
    if norm_first:
        h = np.empty_like(x)
        _norm(x, None, n1_w, n1_b, eps[0], h)
        a = _self_attention(h, sa_in_w, sa_in_b, sa_out_w, sa_out_b, masks[0], scales[0], heads[0], batch_first, n,
                            length)  # fmt: skip
        x1 = x + a
        _norm(x1, None, n2_w, n2_b, eps[1], h)
        c = _cross_attention(h, memory, ca_in_w, ca_in_b, ca_out_w, ca_out_b, masks[1], scales[1], heads[1],
                             batch_first, n, length, keys)  # fmt: skip
        x2 = x1 + c
        _norm(x2, None, n3_w, n3_b, eps[2], h)
        _add(x2, _feed_forward(h, w1, b1, w2, b2, activation), y)
        return
    a = _self_attention(x, sa_in_w, sa_in_b, sa_out_w, sa_out_b, masks[0], scales[0], heads[0], batch_first, n, length)
    y1 = np.empty_like(x)
    _norm(x, a, n1_w, n1_b, eps[0], y1)
    c = _cross_attention(y1, memory, ca_in_w, ca_in_b, ca_out_w, ca_out_b, masks[1], scales[1], heads[1], batch_first,
                         n, length, keys)  # fmt: skip
    y2 = np.empty_like(x)
    _norm(y1, c, n2_w, n2_b, eps[1], y2)
    _norm(y2, _feed_forward(y2, w1, b1, w2, b2, activation), n3_w, n3_b, eps[2], y)


# ------------------------------------------------------------------ the calls
def encoder_kernel_taken(x, weights, norm_first, attention, norm1, feed_forward, norm2, mask1=None, mask3=None) -> bool:
    """Whether ``encoder_layer_forward`` runs on ``x`` with these weights and settings (``EncoderLayer``'s):
    the JIT on, one dtype, an activation it knows, no dropout, heads that would run on one thread."""
    if not _plain(x, weights, feed_forward, (attention,), (norm1, norm2), (mask1, mask3)):
        return False
    n, length = _batch_and_length(x, attention["batch_first"])
    return serial_heads(x, 2 * (x.shape[2] // attention["heads"]), (n, attention["heads"], length, length))


def decoder_kernel_taken(x, memory, weights, norm_first, self_attention, cross_attention, norm1, norm2, norm3,
                         feed_forward, mask1=None, mask2=None, mask3=None) -> bool:  # fmt: skip
    """Whether ``decoder_layer_forward`` runs (``DecoderLayer``'s weights and settings), as
    ``encoder_kernel_taken``; both attentions' heads on one thread."""
    attentions, norms = (self_attention, cross_attention), (norm1, norm2, norm3)
    if memory.dtype != x.dtype or not _plain(x, weights, feed_forward, attentions, norms, (mask1, mask2, mask3)):
        return False
    batch_first = self_attention["batch_first"]
    (n, length), keys = _batch_and_length(x, batch_first), _batch_and_length(memory, batch_first)[1]
    return all(
        serial_heads(x, 2 * (x.shape[2] // a["heads"]), (n, a["heads"], length, other))
        for a, other in ((self_attention, length), (cross_attention, keys))
    )


def encoder_layer_forward(x, weights, norm_first, attention, norm1, feed_forward, norm2, **dropout) -> np.ndarray:
    """The eval-mode encoder layer's output for ``x`` (N, L, E) with ``attention["batch_first"]``, else
    (L, N, E), in one kernel call, where ``encoder_kernel_taken`` (``dropout``: its masks, None).

    ``weights``: the 12 arrays of ``ops/encoder_layer`` (in_w, in_b, out_w, out_b, norm1's weight and
    bias, w1, b1, w2, b2, norm2's weight and bias; biases and norm weights may be None); the settings
    as ``EncoderLayer`` takes them."""
    heads, batch_first, dtype, e = attention["heads"], attention["batch_first"], x.dtype, x.shape[2]
    n, length = _batch_and_length(x, batch_first)
    mask = _mask_4d(attention["mask"], (n, heads, length, length), dtype)
    y = np.empty(x.shape, dtype)
    settings = (norm_first, _ACTIVATIONS[feed_forward["activation"]], (float(norm1["eps"]), float(norm2["eps"])))
    _encoder_layer(_rows(x), _kernel_weights(weights, (4, 10), e, dtype), mask, dtype.type(attention["scale"]), heads,
                   batch_first, n, length, *settings, y.reshape(-1, e))  # fmt: skip
    return y


def decoder_layer_forward(x, memory, weights, norm_first, self_attention, cross_attention, norm1, norm2, norm3,
                          feed_forward, **dropout) -> np.ndarray:  # fmt: skip
    """The eval-mode decoder layer's output for ``x`` and ``memory`` (N, L or S, E) with batch_first,
    else (L or S, N, E), in one kernel call, where ``decoder_kernel_taken``.

    ``weights``: the 18 arrays of ``ops/decoder_layer`` (the self-attention's four, norm1's two, the
    cross-attention's four, norm2's two, the feed-forward's four, norm3's two); the settings as
    ``DecoderLayer`` takes them."""
    batch_first, dtype, e = self_attention["batch_first"], x.dtype, x.shape[2]
    (n, length), keys = _batch_and_length(x, batch_first), _batch_and_length(memory, batch_first)[1]
    attentions = (self_attention, cross_attention)
    masks = tuple(_mask_4d(a["mask"], (n, a["heads"], length, s), dtype) for a, s in zip(attentions, (length, keys)))
    scales, heads = tuple(dtype.type(a["scale"]) for a in attentions), tuple(a["heads"] for a in attentions)
    eps = tuple(float(norm["eps"]) for norm in (norm1, norm2, norm3))
    y = np.empty(x.shape, dtype)
    _decoder_layer(_rows(x), _rows(memory), _kernel_weights(weights, (4, 10, 16), e, dtype), masks, scales, heads,
                   batch_first, (n, length, keys), norm_first, _ACTIVATIONS[feed_forward["activation"]], eps,
                   y.reshape(-1, e))  # fmt: skip
    return y


def _plain(x, weights, feed_forward, attentions, norms, masks) -> bool:
    """Weights of x's dtype, a known activation and no dropout: what the kernels take."""
    if feed_forward["activation"] not in _ACTIVATIONS or any(w is not None and w.dtype != x.dtype for w in weights):
        return False
    dropout = (feed_forward["keep"], *(a["dropout_mask"] for a in attentions), *(s.get("keep") for s in norms), *masks)
    return all(d is None for d in dropout)


def _batch_and_length(x, batch_first: bool) -> tuple:
    return x.shape[:2] if batch_first else x.shape[1::-1]


def _rows(x):
    """x (.., .., E) as C-contiguous rows (M, E)."""
    return np.ascontiguousarray(x).reshape(-1, x.shape[-1])


def _kernel_weights(weights, norms: tuple, e: int, dtype) -> tuple:
    """The weights as the kernels take them: C-contiguous, and each norm's (at the indices ``norms``:
    its weight, then its bias) as arrays, ones or zeros for None."""
    arrays = [None if w is None else np.ascontiguousarray(w) for w in weights]
    for i in norms:
        arrays[i], arrays[i + 1] = _norm_weights(arrays[i], arrays[i + 1], e, dtype)
    return tuple(arrays)

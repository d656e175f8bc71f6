"""Attention as functions: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``.

Both end in the ops of ``minitensor.ops.attention`` (``Attention``, ``AttentionWeights``), or,
for a whole multi-head layer in the common cases, in one fused node (``ops/fused/attention.py``),
which take an *additive* float mask (0 = may attend, -inf = may not).  The functions here turn
the user's masks into that form, and the two bool conventions differ, as in PyTorch:

====================================  =================================
function                              a bool mask's ``True`` means
====================================  =================================
``scaled_dot_product_attention``      the query MAY attend to the key
``multi_head_attention_forward``,     the query may NOT attend to the key
``nn.MultiheadAttention``, layers     (the position is masked out)
====================================  =================================

A float mask is added to the scores in both.  A query row whose keys are all
masked gets all-zero attention weights (PyTorch gives NaN there).
"""

from __future__ import annotations

import math

import numpy as np

from ... import random
from ...ops.attention import Attention, AttentionWeights, merge_heads, split_heads
from ...ops.fused.attention import CrossAttention, SelfAttention
from ...ops.shape import cat
from ...tensor import Tensor
from ._checks import as_input, check_probability, float_like
from .linear import linear

__all__ = ["causal_mask", "multi_head_attention_forward", "scaled_dot_product_attention"]


# ---------------------------------------------------------------- mask helpers
def causal_mask(l: int, s: int, dtype=np.float32) -> np.ndarray:
    """The additive causal mask (L, S): 0 on and below the diagonal, -inf above it.

    Query i may attend to keys 0..i (the top-left aligned lower triangle, as PyTorch).

    >>> causal_mask(2, 3)
    array([[  0., -inf, -inf],
           [  0.,   0., -inf]], dtype=float32)
    """
    return np.triu(np.full((l, s), -np.inf, dtype=dtype), 1)


def _additive_mask(mask, name: str, dtype, true_means_masked: bool) -> np.ndarray | None:
    """A bool or float mask (Tensor or array) -> an additive float array in ``dtype``."""
    if mask is None:
        return None
    array = _array(mask)
    if array.dtype == np.bool_:
        blocked = array if true_means_masked else ~array
        return np.where(blocked, np.array(-np.inf, dtype), np.array(0, dtype))
    if array.dtype.kind != "f":
        raise TypeError(f"{name} must be a bool or float mask, got dtype {array.dtype}")
    return array.astype(dtype, copy=False)


def attention_dropout(shape: tuple, p: float, dtype) -> np.ndarray | None:
    """Inverted-dropout multipliers on the attention weights: 0 with probability p, else 1 / (1 - p);
    None when p is 0 (no dropout, nothing drawn)."""
    if p == 0:
        return None
    if p >= 1.0:
        return np.zeros(shape, dtype)
    keep = random.generator().random(shape, dtype=np.float32) >= p
    return keep.astype(dtype) * np.asarray(1.0 / (1.0 - p), dtype)


def _check_dropout(p: float, name: str) -> None:
    check_probability(p, name, "attention")


def _as_inputs(query, key, value, fn: str, like) -> tuple:
    """query, key and value as float Tensors (NumPy arrays converted by ``as_input``; the same
    array passed twice stays one Tensor, so self-attention is still recognised)."""
    converted = {}
    for x, name in ((query, "query"), (key, "key"), (value, "value")):
        if id(x) not in converted:
            t = as_input(x, name, fn, like)
            if t.dtype.kind != "f":
                raise TypeError(f"{fn}: {name} must be a float tensor, got dtype {t.dtype}")
            converted[id(x)] = t
    return converted[id(query)], converted[id(key)], converted[id(value)]


# ------------------------------------------------- scaled dot-product attention
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask=None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """softmax(query @ keyᵀ * scale + mask) @ value, as PyTorch's function of the same name.

    Args:
        query: (..., L, E) (query, key and value may be NumPy arrays: ``_checks.as_input``).
        key: (..., S, E).
        value: (..., S, Ev).  The leading dims of the three broadcast.
        attn_mask: broadcastable to (..., L, S).  A **bool** mask's True means
            the query MAY attend to the key (PyTorch's convention for this
            function, the opposite of ``nn.MultiheadAttention``'s); a float
            mask is added to the scores.  The mask receives no gradient.
        dropout_p: dropout probability on the attention weights (always
            applied when > 0: pass 0.0 in evaluation).
        is_causal: apply the causal mask (query i sees keys 0..i); may not be
            combined with ``attn_mask``.
        scale: factor on the dot products; default ``1 / sqrt(E)``.

    Returns:
        (..., L, Ev).  Rows whose keys are all masked are 0.

    >>> q = mt.randn(2, 4, 5, 8)      # (N, heads, L, E)
    >>> k, v = mt.randn(2, 4, 6, 8), mt.randn(2, 4, 6, 3)
    >>> F.scaled_dot_product_attention(q, k, v).shape
    (2, 4, 5, 3)
    """
    query, key, value = _as_inputs(query, key, value, "scaled_dot_product_attention", float_like(query, key, value))
    for x, name in ((query, "query"), (key, "key"), (value, "value")):
        if x.ndim < 2:
            raise ValueError(f"scaled_dot_product_attention: {name} must have at least 2 dims, got shape {x.shape}")
    if key.dtype != query.dtype or value.dtype != query.dtype:
        raise TypeError(
            f"scaled_dot_product_attention: query, key and value must have the same dtype, "
            f"got {query.dtype}, {key.dtype} and {value.dtype}"
        )
    if key.shape[-1] != query.shape[-1]:
        raise ValueError(
            f"scaled_dot_product_attention: key's last dim must equal query's ({query.shape[-1]}), "
            f"got key shape {key.shape}"
        )
    if value.shape[-2] != key.shape[-2]:
        raise ValueError(
            f"scaled_dot_product_attention: value must have as many positions as key ({key.shape[-2]}), "
            f"got value shape {value.shape}"
        )
    try:
        batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except ValueError:
        raise ValueError(
            f"scaled_dot_product_attention: the leading dims of query {query.shape}, key {key.shape} "
            f"and value {value.shape} cannot be broadcast together"
        ) from None
    _check_dropout(dropout_p, "dropout_p")
    l, s = query.shape[-2], key.shape[-2]
    mask = _additive_mask(attn_mask, "attn_mask", query.dtype, true_means_masked=False)
    if is_causal:
        if mask is not None:
            raise ValueError("scaled_dot_product_attention: pass either attn_mask or is_causal=True, not both")
        mask = causal_mask(l, s, query.dtype)
    scores_shape = batch + (l, s)
    if mask is not None and _broadcasts_to(mask.shape, scores_shape) is False:
        raise ValueError(f"attn_mask of shape {mask.shape} cannot broadcast to the scores' shape {scores_shape}")
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    drop = attention_dropout(scores_shape, dropout_p, query.dtype)
    return Attention.apply(query, key, value, mask=mask, scale=scale, dropout_mask=drop)


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


# ------------------------------------------------------ multi-head attention
def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask=None,
    need_weights: bool = True,
    attn_mask=None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
    *,
    batch_first: bool = False,
) -> tuple:
    """Multi-head attention with given weights (PyTorch's signature; what ``nn.MultiheadAttention`` runs).

    Shapes (N batch, L target length, S source length, E = ``embed_dim_to_check``,
    H = ``num_heads``): query (L, N, E), key (S, N, kdim), value (S, N, vdim);
    with ``batch_first=True`` (a minitensor extra, keyword only) the batch comes
    first: (N, L, E) etc.  Unbatched inputs (L, E), (S, kdim), (S, vdim) work too.
    NumPy arrays are converted (a float one to the weights' dtype).

    Steps: project q, k, v (one fused GEMM when ``query is key is value``),
    split E into H heads of E/H, run scaled dot-product attention per head,
    join the heads and apply the output projection.

    Masks (a **bool** True means the position is masked OUT, the opposite of
    ``scaled_dot_product_attention``; a float mask is added to the scores):

    - ``attn_mask``: (L, S), or (N*H, L, S) (unbatched: (H, L, S));
    - ``key_padding_mask``: (N, S) (unbatched: (S,)), True (or -inf) at padding keys;
    - ``is_causal=True`` with no ``attn_mask`` applies the causal mask.

    A query row whose keys are all masked gets all-zero weights: its output
    is ``out_proj_bias`` (PyTorch gives NaN).  The masks receive no gradient.

    Other arguments as PyTorch: ``bias_k``/``bias_v`` (1, 1, E) (both or neither)
    are appended to the keys/values, ``add_zero_attn`` appends a zero key/value per
    head, ``static_k``/``static_v`` (N*H, S, E/H) replace the projected keys/values
    (not together with ``bias_k``/``bias_v``: ValueError, where PyTorch asserts),
    dropout on the weights runs only when ``training``.

    Returns:
        ``(attn_output, attn_weights)``: output shaped like ``query``, weights
        (N, L, S) averaged over heads, or (N, H, L, S) with
        ``average_attn_weights=False`` (no N for unbatched input), or None
        when ``need_weights=False``.
    """
    fn = "multi_head_attention_forward"
    like = float_like(q_proj_weight if use_separate_proj_weight else in_proj_weight)
    query, key, value = _as_inputs(query, key, value, fn, like)
    w = q_proj_weight if use_separate_proj_weight else in_proj_weight
    if w is not None and w.dtype != query.dtype:
        raise TypeError(
            f"{fn}: query has dtype {query.dtype} but the weights have {w.dtype}; convert one of them "
            "(module.to(...) or x.to(...))"
        )
    features = (k_proj_weight.shape[1], v_proj_weight.shape[1]) if use_separate_proj_weight else (None, None)
    _check_features(query, key, value, embed_dim_to_check, *features, fn)
    if query.ndim == 2:  # unbatched: add a batch dim of 1 and remove it at the end
        b = 0 if batch_first else 1
        if key_padding_mask is not None and np.ndim(_array(key_padding_mask)) == 1:
            key_padding_mask = _array(key_padding_mask)[None]
        batched = {id(x): x.unsqueeze(b) for x in (query, key, value)}  # (self-attention stays recognisable)
        out, weights = multi_head_attention_forward(
            *(batched[id(x)] for x in (query, key, value)),
            embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
            dropout_p, out_proj_weight, out_proj_bias, training, key_padding_mask, need_weights, attn_mask,
            use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight, static_k, static_v,
            average_attn_weights, is_causal, batch_first=batch_first,
        )  # fmt: skip
        return out.squeeze(b), None if weights is None else weights.squeeze(0)

    n, l, e, s = _check_shapes(query, key, value, embed_dim_to_check, num_heads, batch_first)
    h = num_heads
    _check_dropout(dropout_p, "dropout_p")
    _check_extras(bias_k, bias_v, static_k, static_v, n, h, e)
    mask = merged_mask(attn_mask, key_padding_mask, is_causal, n, h, l, s, query.dtype)

    scale = 1.0 / math.sqrt(e // h)
    p = dropout_p if training else 0.0
    extras = bias_k is not None or add_zero_attn or static_k is not None or static_v is not None
    if not need_weights and not extras and not use_separate_proj_weight and key is value:
        # The whole layer as one fused node (self-attention, or attention to a memory whose keys are
        # its values): what the steps below compute, with them as its create_graph definition.
        state = random.snapshot() if p > 0 else None  # (before the dropout mask is drawn)
        drop = attention_dropout((n, h, l, s), p, query.dtype)
        weights = (in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias)

        def definition(q, memory=None):
            kv = q if memory is None else memory
            with random.replaying(state):
                return _multi_head(q, kv, kv, h, weights, None, mask, p, False, False, batch_first, scale)[0]

        node, activations = (SelfAttention, (query,)) if query is key else (CrossAttention, (query, key))
        out = node.apply(*activations, *weights, heads=h, batch_first=batch_first, mask=mask, scale=scale,
                         dropout_mask=drop, definition=definition)  # fmt: skip
        return out, None
    separate = (q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight else None
    weights = (in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias)
    extra = (bias_k, bias_v, static_k, static_v, add_zero_attn)
    return _multi_head(query, key, value, h, weights, separate, mask, p, need_weights, average_attn_weights,
                       batch_first, scale, extra)  # fmt: skip


_NO_EXTRA = (None, None, None, None, False)  # (bias_k, bias_v, static_k, static_v, add_zero_attn)


def _multi_head(query, key, value, h: int, weights: tuple, separate, mask, p: float, need_weights: bool,
                average_attn_weights: bool, batch_first: bool, scale: float, extra=_NO_EXTRA) -> tuple:  # fmt: skip
    """The steps of multi-head attention (the definition of the layer): project, split the heads,
    attend, merge the heads, project; ``extra`` (bias_k, bias_v, static_k, static_v, add_zero_attn)."""
    bias_k, bias_v, static_k, static_v, add_zero_attn = extra
    in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias = weights
    projections = _in_projections(query, key, value, in_proj_weight, in_proj_bias, separate)
    q, k, v = _split_heads(projections, h, batch_first)  # (N, H, L or S, E/H)
    n, _, l, d = q.shape
    if bias_k is not None and bias_v is not None:  # one more key/value position, learned
        k, v = cat([k, _as_head_row(bias_k, k)], dim=2), cat([v, _as_head_row(bias_v, v)], dim=2)
        mask = None if mask is None else _pad_keys(mask)
    if static_k is not None:
        k = static_k.reshape(n, h, static_k.shape[1], d)
    if static_v is not None:
        v = static_v.reshape(n, h, static_v.shape[1], d)
    if add_zero_attn:  # one more key/value position, all zeros
        k, v = cat([k, _zero_row(k)], dim=2), cat([v, _zero_row(v)], dim=2)
        mask = None if mask is None else _pad_keys(mask)
    drop = attention_dropout((n, h, l, k.shape[2]), p, query.dtype)
    if need_weights:
        attn = AttentionWeights.apply(q, k, mask=mask, scale=scale)  # (N, H, L, S)
        if drop is not None:  # (the weights returned are the dropped ones, as PyTorch's)
            attn = attn * Tensor._make(drop, False, None)
        heads = attn @ v
    else:
        attn = None
        heads = Attention.apply(q, k, v, mask=mask, scale=scale, dropout_mask=drop)
    out = linear(merge_heads(heads, batch_first), out_proj_weight, out_proj_bias)
    if attn is not None and average_attn_weights:
        attn = attn.mean(dim=1)
    return out, attn


def _array(x) -> np.ndarray:
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def _check_features(query: Tensor, key: Tensor, value: Tensor, e: int, kdim, vdim, fn: str) -> None:
    """Ranks (all 3-D or all 2-D) and the feature sizes: E for query, ``kdim``/``vdim`` for key and
    value (E when None: the packed projection), with messages that name the argument."""
    for x, name, size, size_name in ((query, "query", e, "embed_dim"), (key, "key", kdim or e, "kdim"),
                                     (value, "value", vdim or e, "vdim")):  # fmt: skip
        if x.ndim not in (2, 3):
            raise ValueError(f"{fn}: {name} must be 3-D (batched) or 2-D (unbatched), got shape {x.shape}")
        if x.shape[-1] != size:
            raise ValueError(f"{fn}: {name}'s last dim must be {size_name}={size}, got shape {x.shape}")
    if not query.ndim == key.ndim == value.ndim:
        raise ValueError(
            f"{fn}: query, key and value must all be 3-D (batched) or all 2-D (unbatched), got shapes "
            f"{query.shape}, {key.shape} and {value.shape}"
        )
    for x, name in ((key, "key"), (value, "value")):
        if x.dtype != query.dtype:
            raise TypeError(f"{fn}: {name} has dtype {x.dtype} but query has {query.dtype}; convert one of them")


def _check_shapes(query: Tensor, key: Tensor, value: Tensor, e: int, h: int, batch_first: bool) -> tuple:
    """Validate 3-D query/key/value's batch sizes and lengths; return (N, L, E, S)."""
    if e % h != 0:
        raise ValueError(f"multi_head_attention_forward: embed_dim ({e}) must be divisible by num_heads ({h})")
    nb = 0 if batch_first else 1
    n = query.shape[nb]
    if key.shape[nb] != n or value.shape[nb] != n:
        raise ValueError(
            f"multi_head_attention_forward: key and value must have query's batch size {n}, "
            f"got shapes {key.shape} and {value.shape}"
        )
    if key.shape[1 - nb] != value.shape[1 - nb]:
        raise ValueError(
            f"multi_head_attention_forward: key and value must have the same length, got shapes {key.shape} and "
            f"{value.shape}"
        )
    return n, query.shape[1 - nb], e, key.shape[1 - nb]


def _check_extras(bias_k, bias_v, static_k, static_v, n: int, h: int, e: int) -> None:
    """As PyTorch: bias_k and bias_v come together, and not with static_k/static_v (a learned
    position cannot be appended to keys/values given as they are); static_k/static_v are (N*H, S', E/H)."""
    fn = "multi_head_attention_forward"
    if (bias_k is None) != (bias_v is None):
        given, missing = ("bias_k", "bias_v") if bias_v is None else ("bias_v", "bias_k")
        raise ValueError(f"{fn}: {given} is set but {missing} is None; pass both or neither")
    for static, bias, what in ((static_k, bias_k, "key"), (static_v, bias_v, "value")):
        if static is not None and bias is not None:
            raise ValueError(
                f"{fn}: bias_k/bias_v cannot be added to a static {what} (static_{what[0]} is given): "
                f"pass static_{what[0]} with bias_k=bias_v=None, or the biases without static keys/values"
            )
    for static, name in ((static_k, "static_k"), (static_v, "static_v")):
        if static is None:
            continue
        if not isinstance(static, Tensor):
            raise TypeError(f"{fn}: {name} must be a Tensor, got {type(static).__name__}")
        if static.ndim != 3 or static.shape[0] != n * h or static.shape[2] != e // h:
            raise ValueError(f"{fn}: {name} must have shape (N*H, S, E/H) = ({n * h}, S, {e // h}), got {static.shape}")
    if static_k is not None and static_v is not None and static_k.shape[1] != static_v.shape[1]:
        raise ValueError(
            f"{fn}: static_k and static_v must have the same length, got shapes {static_k.shape} and {static_v.shape}"
        )


def merged_mask(attn_mask, key_padding_mask, is_causal: bool, n: int, h: int, l: int, s: int, dtype):
    """attn_mask and key_padding_mask -> one additive mask broadcastable to (N, H, L, S), or None."""
    mask = _additive_mask(attn_mask, "attn_mask", dtype, true_means_masked=True)
    if mask is None and is_causal:
        mask = causal_mask(l, s, dtype)
    elif mask is not None:
        if mask.shape == (n * h, l, s):
            mask = mask.reshape(n, h, l, s)
        elif mask.shape != (l, s):
            raise ValueError(f"attn_mask must have shape {(l, s)} or {(n * h, l, s)}, got {mask.shape}")
    pad = _additive_mask(key_padding_mask, "key_padding_mask", dtype, true_means_masked=True)
    if pad is not None:
        if pad.shape != (n, s):
            raise ValueError(f"key_padding_mask must have shape (N, S) = {(n, s)}, got {pad.shape}")
        pad = pad.reshape(n, 1, 1, s)
        mask = pad if mask is None else mask + pad
    return mask


def _in_projections(query, key, value, w, b, separate) -> list:
    """The input projections, heads not yet split: [qkv] (..., 3E), [q, kv] or [q, k, v].

    Self-attention (``query is key is value``) with the packed weight is ONE
    GEMM with the (3E, E) weight; cross-attention splits the packed weight.
    """
    if separate is not None:
        e = separate[0].shape[0]
        biases = (None, None, None) if b is None else (b[:e], b[e : 2 * e], b[2 * e :])
        return [linear(x, wx, bx) for x, wx, bx in zip((query, key, value), separate, biases)]
    e = w.shape[1]
    if query is key and key is value:
        return [linear(query, w, b)]
    bq, bkv = (None, None) if b is None else (b[:e], b[e:])
    q = linear(query, w[:e], bq)
    if key is value:
        return [q, linear(key, w[e:], bkv)]
    bk, bv = (None, None) if bkv is None else (bkv[:e], bkv[e:])
    return [q, linear(key, w[e : 2 * e], bk), linear(value, w[2 * e :], bv)]


def _split_heads(projections: list, h: int, batch_first: bool) -> list:
    """[qkv], [q, kv] or [q, k, v] in the layer's layout -> q, k, v, each (N, H, L or S, E/H)."""
    parts = {1: (3,), 2: (1, 2), 3: (1, 1, 1)}[len(projections)]
    return [head for x, n in zip(projections, parts) for head in split_heads(x, h, n, batch_first)]


def _as_head_row(bias: Tensor, x: Tensor) -> Tensor:
    """A learned (1, 1, E) key or value -> one position (N, H, 1, E/H) to append to ``x``."""
    n, h, _, d = x.shape
    return bias.reshape(1, h, 1, d).expand(n, h, 1, d)


def _zero_row(x: Tensor) -> Tensor:
    n, h, _, d = x.shape
    return Tensor._make(np.zeros((n, h, 1, d), x.dtype), False, None)


def _pad_keys(mask: np.ndarray) -> np.ndarray:
    """One more key position that every query may attend to (a 0 column)."""
    return np.concatenate([mask, np.zeros(mask.shape[:-1] + (1,), mask.dtype)], axis=-1)

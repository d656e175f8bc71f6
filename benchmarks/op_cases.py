"""The ops that ``bench_ops.py`` times: every public differentiable op, one case each.

A case is ``Case(name, family, inputs, run, constants)``: ``inputs(rng, rows,
cols)`` makes the NumPy inputs (float arrays become leaf tensors that require
gradients, except those at the positions in ``constants``; integer and bool
arrays stay constant), and ``run(lib, F, *tensors)`` is the op, written once for
both libraries (``lib`` is ``minitensor`` or ``torch``, ``F`` its
``nn.functional``): minitensor mirrors PyTorch's API, so the same line runs on
both.  The main input ``x`` has ``rows x cols`` float32 elements (256 x 512 =
2^17, or 16 x 16).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

F32 = np.float32


class Case(NamedTuple):
    name: str
    family: str
    inputs: Callable  # (rng, rows, cols) -> tuple of arrays
    run: Callable  # (lib, F, *tensors) -> tensor
    constants: tuple = ()  # positions of float inputs that need no gradient


def _x(rng, r, c):
    return (rng.standard_normal((r, c), dtype=F32),)


def _pos(rng, r, c):
    return (rng.uniform(0.5, 2.0, (r, c)).astype(F32),)


def _near_one(rng, r, c):
    """Factors near 1, so that a product of a row neither overflows nor underflows."""
    return (rng.uniform(0.9, 1.1, (r, c)).astype(F32),)


def _distinct(rng, r, c):
    """x without ties (a sort of tied values may order them either way)."""
    return ((rng.permutation(r * c).reshape(r, c) / (r * c) - 0.5).astype(F32),)


def _xy(rng, r, c):
    return rng.standard_normal((r, c), dtype=F32), rng.standard_normal((r, c), dtype=F32)


def _x_row(rng, r, c):
    return rng.standard_normal((r, c), dtype=F32), rng.standard_normal(c, dtype=F32)


def _x_div(rng, r, c):
    return rng.standard_normal((r, c), dtype=F32), rng.uniform(0.5, 2.0, (r, c)).astype(F32)


def _x_index(rng, r, c):
    """x and r row indices (with repeats: the backward must add them up)."""
    return rng.standard_normal((r, c), dtype=F32), rng.integers(0, r, r)


def _x_gather(rng, r, c):
    """x and an index of shape (r, c // 2) into dim 1, with repeats."""
    return rng.standard_normal((r, c), dtype=F32), rng.integers(0, c, (r, c // 2))


def _scatter(rng, r, c):
    """x, an index of shape (r, c // 2) into dim 1 without repeats in a row, and src."""
    index = np.argsort(rng.random((r, c)), axis=1)[:, : c // 2]
    return rng.standard_normal((r, c), dtype=F32), index, rng.standard_normal((r, c // 2), dtype=F32)


def _x_mask(rng, r, c):
    return rng.standard_normal((r, c), dtype=F32), rng.random((r, c)) < 0.3


def _index_add(rng, r, c):
    """x, r row indices (with repeats: they add up) and the r rows to add."""
    return *_x_index(rng, r, c), rng.standard_normal((r, c), dtype=F32)


def _masked_scatter(rng, r, c):
    """x, a mask with ~30% True, and a source as large as x."""
    return *_x_mask(rng, r, c), rng.standard_normal(r * c, dtype=F32)


def _where(rng, r, c):
    return rng.random((r, c)) < 0.5, *_xy(rng, r, c)


def _matmul(rng, r, c):
    """x (r, c) and w (c, c // 2)."""
    return rng.standard_normal((r, c), dtype=F32), rng.standard_normal((c, c // 2), dtype=F32) / np.sqrt(F32(c))


def _linear(rng, r, c):
    """x (r, c), weight (c // 2, c), bias (c // 2,)."""
    w = rng.standard_normal((c // 2, c), dtype=F32) / np.sqrt(F32(c))
    return rng.standard_normal((r, c), dtype=F32), w, rng.standard_normal(c // 2, dtype=F32)


def _bmm(rng, r, c):
    """(8, r // 8, c) @ (8, c, c // 2)."""
    b = max(1, r // 8)
    x = rng.standard_normal((8, b, c), dtype=F32)
    return x, rng.standard_normal((8, c, c // 2), dtype=F32) / np.sqrt(F32(c))


def _image_shape(r, c) -> tuple:
    """(N, C, H, W) holding r * c elements: 16 channels of 32 x 32 from 2^17 elements up, else 4 of 8 x 8."""
    if r * c >= 16 * 32 * 32:
        return r * c // (16 * 32 * 32), 16, 32, 32
    return max(1, r * c // 256), 4, 8, 8


def _conv(rng, r, c, dims: int = 2):
    """An image (N, C, H, W) (for dims=1: (N, C, H * W)), a (C, C, 3, 3) (or (C, C, 3)) kernel, a bias (C,)."""
    n, ch, h, w = _image_shape(r, c)
    x = rng.standard_normal((n, ch, h, w) if dims == 2 else (n, ch, h * w), dtype=F32)
    kernel = rng.standard_normal((ch, ch) + (3,) * dims, dtype=F32) / np.sqrt(F32(9 * ch))
    return x, kernel, rng.standard_normal(ch, dtype=F32)


def _image(rng, r, c):
    return (rng.standard_normal(_image_shape(r, c), dtype=F32),)


def _columns(rng, r, c):
    """Non-overlapping 2 x 2 windows of an image, as F.unfold(x, 2, stride=2) lays them out."""
    n, ch, h, w = _image_shape(r, c)
    return (rng.standard_normal((n, ch * 4, h * w // 4), dtype=F32),)


def _layer_norm(rng, r, c):
    return (
        rng.standard_normal((r, c), dtype=F32),
        1 + rng.standard_normal(c, dtype=F32) / 4,
        rng.standard_normal(c, dtype=F32),
    )


def _embedding(rng, r, c):
    """r * 8 token ids (with repeats) into a (r, c) table: 8 rows of output per table row."""
    return rng.integers(0, r, (r, 8)), rng.standard_normal((r, c), dtype=F32)


def _classes(rng, r, c):
    """logits (r, c) and a class index per row."""
    return rng.standard_normal((r, c), dtype=F32), rng.integers(0, c, r)


def _probs(rng, r, c):
    return rng.uniform(0.05, 0.95, (r, c)).astype(F32), (rng.random((r, c)) < 0.5).astype(F32)


def _kl(rng, r, c):
    logp = rng.standard_normal((r, c), dtype=F32)
    target = rng.random((r, c)).astype(F32)
    return logp, target / target.sum(axis=1, keepdims=True)


def _attention(rng, r, c):
    """q, k, v of shape (r // 16 or 1, 4, 16, c // 4): batch, heads, sequence, head dim."""
    shape = (max(1, r // 16), 4, 16, max(1, c // 4))
    return tuple(rng.standard_normal(shape, dtype=F32) for _ in range(3))


def _mha(rng, r, c):
    """x (16, r // 16 or 1, c): sequence, batch, features; packed in-projection (3c, c) and its bias,
    out-projection (c, c) and its bias."""
    x = rng.standard_normal((16, max(1, r // 16), c), dtype=F32)
    w_in, w_out = (rng.standard_normal((n * c, c), dtype=F32) / np.sqrt(F32(c)) for n in (3, 1))
    return x, w_in, rng.standard_normal(3 * c, dtype=F32), w_out, rng.standard_normal(c, dtype=F32)


def _multi_head(lib, F, x, w_in, b_in, w_out, b_out):
    """PyTorch's functional multi-head self-attention, 4 heads, no dropout."""
    return F.multi_head_attention_forward(
        x, x, x, x.shape[-1], 4, w_in, b_in, None, None, False, 0.0, w_out, b_out, need_weights=False
    )[0]


def _dropout(lib, F, x):
    return F.dropout(x, 0.1, training=True)


CASES = [
    # elementwise
    Case("x + y", "elementwise", _xy, lambda lib, F, x, y: x + y),
    Case("x + b (broadcast)", "elementwise", _x_row, lambda lib, F, x, b: x + b),
    Case("x - y", "elementwise", _xy, lambda lib, F, x, y: x - y),
    Case("x * y", "elementwise", _xy, lambda lib, F, x, y: x * y),
    Case("x / y", "elementwise", _x_div, lambda lib, F, x, y: x / y),
    Case("remainder", "elementwise", _x_div, lambda lib, F, x, y: lib.remainder(x, y)),
    Case("fmod", "elementwise", _x_div, lambda lib, F, x, y: lib.fmod(x, y)),
    Case("-x", "elementwise", _x, lambda lib, F, x: -x),
    Case("x ** 2", "elementwise", _x, lambda lib, F, x: x**2),
    Case("x ** 3.0", "elementwise", _x, lambda lib, F, x: x**3.0),
    Case("x ** 2.5", "elementwise", _pos, lambda lib, F, x: x**2.5),
    Case("exp", "elementwise", _x, lambda lib, F, x: x.exp()),
    Case("log", "elementwise", _pos, lambda lib, F, x: x.log()),
    Case("sqrt", "elementwise", _pos, lambda lib, F, x: x.sqrt()),
    Case("abs", "elementwise", _x, lambda lib, F, x: x.abs()),
    Case("sin", "elementwise", _x, lambda lib, F, x: lib.sin(x)),
    Case("cos", "elementwise", _x, lambda lib, F, x: lib.cos(x)),
    Case("clamp", "elementwise", _x, lambda lib, F, x: x.clamp(-0.5, 0.5)),
    Case("log1p", "elementwise", _pos, lambda lib, F, x: lib.log1p(x)),
    Case("expm1", "elementwise", _x, lambda lib, F, x: lib.expm1(x)),
    Case("log2", "elementwise", _pos, lambda lib, F, x: lib.log2(x)),
    Case("log10", "elementwise", _pos, lambda lib, F, x: lib.log10(x)),
    Case("exp2", "elementwise", _x, lambda lib, F, x: lib.exp2(x)),
    Case("rsqrt", "elementwise", _pos, lambda lib, F, x: lib.rsqrt(x)),
    Case("square", "elementwise", _x, lambda lib, F, x: lib.square(x)),
    Case("reciprocal", "elementwise", _pos, lambda lib, F, x: lib.reciprocal(x)),
    Case("frac", "elementwise", _x, lambda lib, F, x: lib.frac(x)),
    # (zero gradient, as PyTorch's)
    Case("sign", "elementwise", _x, lambda lib, F, x: lib.sign(x)),
    Case("floor", "elementwise", _x, lambda lib, F, x: lib.floor(x)),
    Case("ceil", "elementwise", _x, lambda lib, F, x: lib.ceil(x)),
    Case("round", "elementwise", _x, lambda lib, F, x: lib.round(x)),
    Case("trunc", "elementwise", _x, lambda lib, F, x: lib.trunc(x)),
    # activations
    Case("relu", "activation", _x, lambda lib, F, x: F.relu(x)),
    Case("sigmoid", "activation", _x, lambda lib, F, x: lib.sigmoid(x)),
    Case("tanh", "activation", _x, lambda lib, F, x: lib.tanh(x)),
    Case("gelu", "activation", _x, lambda lib, F, x: F.gelu(x)),
    Case("gelu (tanh)", "activation", _x, lambda lib, F, x: F.gelu(x, approximate="tanh")),
    Case("silu", "activation", _x, lambda lib, F, x: F.silu(x)),
    Case("softplus", "activation", _x, lambda lib, F, x: F.softplus(x)),
    # reductions
    Case("sum", "reduction", _x, lambda lib, F, x: x.sum()),
    Case("sum(dim=-1)", "reduction", _x, lambda lib, F, x: x.sum(-1)),
    Case("mean(dim=0)", "reduction", _x, lambda lib, F, x: x.mean(0)),
    Case("var(dim=-1)", "reduction", _x, lambda lib, F, x: x.var(-1)),
    Case("std(dim=-1)", "reduction", _x, lambda lib, F, x: x.std(-1)),
    Case("amax(dim=-1)", "reduction", _x, lambda lib, F, x: x.amax(-1)),
    Case("max(dim=-1)", "reduction", _x, lambda lib, F, x: x.max(-1)[0]),
    Case("amin(dim=-1)", "reduction", _x, lambda lib, F, x: lib.amin(x, -1)),
    Case("min(dim=-1)", "reduction", _x, lambda lib, F, x: lib.min(x, -1)[0]),
    Case("logsumexp", "reduction", _x, lambda lib, F, x: x.logsumexp(-1)),
    Case("norm(dim=-1)", "reduction", _x, lambda lib, F, x: x.norm(dim=-1)),
    Case("cumsum", "reduction", _x, lambda lib, F, x: x.cumsum(-1)),
    Case("prod(dim=-1)", "reduction", _near_one, lambda lib, F, x: x.prod(-1)),
    Case("sort", "reduction", _distinct, lambda lib, F, x: lib.sort(x, -1)[0]),
    Case("msort", "reduction", _distinct, lambda lib, F, x: lib.msort(x)),
    Case("topk(4)", "reduction", _x, lambda lib, F, x: x.topk(4)[0]),
    # shape ops
    Case("reshape + transpose", "shape", _x, lambda lib, F, x: x.reshape(-1, 8, 8).transpose(1, 2).reshape(x.shape)),
    Case("permute + contiguous", "shape", _x, lambda lib, F, x: x.reshape(-1, 8, 8).permute(2, 0, 1).contiguous()),
    Case("t()", "shape", _x, lambda lib, F, x: x.t()),
    Case("unsqueeze + expand", "shape", _x_row, lambda lib, F, x, b: b.unsqueeze(0).expand(x.shape[0], -1)),
    Case("flatten", "shape", _x, lambda lib, F, x: x.reshape(-1, 2, x.shape[1] // 2).flatten(1)),
    Case("squeeze", "shape", _x, lambda lib, F, x: x.unsqueeze(1).squeeze(1)),
    Case("chunk", "shape", _x, lambda lib, F, x: x.chunk(4, -1)[1]),
    Case("split", "shape", _x, lambda lib, F, x: x.split(4, 0)[1]),
    Case("flip", "shape", _x, lambda lib, F, x: x.flip(-1)),
    Case("repeat", "shape", _x, lambda lib, F, x: x.repeat(1, 2)),
    Case("narrow", "shape", _x, lambda lib, F, x: x.narrow(1, 1, x.shape[1] // 2)),
    Case("tril", "shape", _x, lambda lib, F, x: lib.tril(x)),
    Case("triu", "shape", _x, lambda lib, F, x: lib.triu(x, 1)),
    Case("roll", "shape", _x, lambda lib, F, x: lib.roll(x, 3, -1)),
    Case("clone", "shape", _x, lambda lib, F, x: lib.clone(x)),
    Case("pad", "shape", _x, lambda lib, F, x: F.pad(x, (1, 2))),
    Case("unbind", "shape", _x, lambda lib, F, x: x.unbind(0)[1]),
    # indexing, scatter and gather
    Case("x[:, 1:-1:2]", "indexing", _x, lambda lib, F, x: x[:, 1:-1:2]),
    Case("x[int array]", "indexing", _x_index, lambda lib, F, x, i: x[i]),
    Case("x[bool mask]", "indexing", _x_mask, lambda lib, F, x, m: x[m]),
    Case("gather", "indexing", _x_gather, lambda lib, F, x, i: x.gather(1, i)),
    Case("scatter", "indexing", _scatter, lambda lib, F, x, i, s: x.scatter(1, i, s)),
    Case("scatter_add", "indexing", _scatter, lambda lib, F, x, i, s: x.scatter_add(1, i, s)),
    Case("index_fill", "indexing", _x_index, lambda lib, F, x, i: x.index_fill(0, i, 0.5)),
    Case("index_add", "indexing", _index_add, lambda lib, F, x, i, s: lib.index_add(x, 0, i, s)),
    Case("index_put", "indexing", _index_add, lambda lib, F, x, i, s: lib.index_put(x, (i,), s, accumulate=True)),
    Case("masked_scatter", "indexing", _masked_scatter, lambda lib, F, x, m, s: lib.masked_scatter(x, m, s)),
    # cat, stack, where, masked_fill
    Case("cat", "combine", _xy, lambda lib, F, x, y: lib.cat([x, y], 1)),
    Case("stack", "combine", _xy, lambda lib, F, x, y: lib.stack([x, y], 0)),
    Case("where", "combine", _where, lambda lib, F, m, x, y: lib.where(m, x, y)),
    Case("masked_fill", "combine", _x_mask, lambda lib, F, x, m: x.masked_fill(m, 0.0)),
    # matmul family
    Case("matmul", "matmul", _matmul, lambda lib, F, x, w: x @ w),
    Case("linear", "matmul", _linear, lambda lib, F, x, w, b: F.linear(x, w, b)),
    Case("mm", "matmul", _matmul, lambda lib, F, x, w: lib.mm(x, w)),
    Case("bmm", "matmul", _bmm, lambda lib, F, x, w: lib.bmm(x, w)),
    Case("einsum", "matmul", _matmul, lambda lib, F, x, w: lib.einsum("ij,jk->ik", x, w)),
    # convolution
    Case("conv2d", "conv", _conv, lambda lib, F, x, w, b: F.conv2d(x, w, b, padding=1)),
    Case("conv1d", "conv", lambda rng, r, c: _conv(rng, r, c, 1), lambda lib, F, x, w, b: F.conv1d(x, w, b, padding=1)),
    Case("conv_transpose2d", "conv", _conv, lambda lib, F, x, w, b: F.conv_transpose2d(x, w, b, padding=1)),
    Case(
        "conv_transpose1d",
        "conv",
        lambda rng, r, c: _conv(rng, r, c, 1),
        lambda lib, F, x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
    ),
    Case("unfold", "conv", _image, lambda lib, F, x: F.unfold(x, 3, padding=1)),
    Case("fold", "conv", _columns, lambda lib, F, c: F.fold(c, (2 * int((c.shape[2]) ** 0.5),) * 2, 2, stride=2)),
    # softmax family
    Case("softmax", "softmax", _x, lambda lib, F, x: x.softmax(-1)),
    Case("log_softmax", "softmax", _x, lambda lib, F, x: x.log_softmax(-1)),
    Case("attention", "softmax", _attention, lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v)),
    Case("multi_head_attention_forward", "softmax", _mha, _multi_head),
    # normalization, embedding
    Case("layer_norm", "norm", _layer_norm, lambda lib, F, x, w, b: F.layer_norm(x, x.shape[-1:], w, b)),
    Case("embedding", "embedding", _embedding, lambda lib, F, i, w: F.embedding(i, w)),
    # losses
    Case("cross_entropy", "loss", _classes, lambda lib, F, x, t: F.cross_entropy(x, t)),
    Case("nll_loss", "loss", _classes, lambda lib, F, x, t: F.nll_loss(x, t)),
    Case("mse_loss", "loss", _xy, lambda lib, F, x, y: F.mse_loss(x, y)),
    Case("l1_loss", "loss", _xy, lambda lib, F, x, y: F.l1_loss(x, y)),
    Case("smooth_l1_loss", "loss", _xy, lambda lib, F, x, y: F.smooth_l1_loss(x, y, beta=0.5)),
    Case("huber_loss", "loss", _xy, lambda lib, F, x, y: F.huber_loss(x, y, delta=0.5)),
    Case("binary_cross_entropy", "loss", _probs, lambda lib, F, p, t: F.binary_cross_entropy(p, t), (1,)),
    Case("bce_with_logits", "loss", _xy, lambda lib, F, x, y: F.binary_cross_entropy_with_logits(x, y)),
    Case("kl_div", "loss", _kl, lambda lib, F, x, t: F.kl_div(x, t, reduction="batchmean"), (1,)),
    # dropout
    Case("dropout", "dropout", _x, _dropout),
]

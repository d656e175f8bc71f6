"""The ops that ``bench_ops.py`` times: every public differentiable op, one case each.

This file holds the first families (elementwise, activations, reductions,
shapes, indexing, matmul, convolution, softmax, losses) and gathers the others'
``CASES`` lists: ``op_cases_math.py``, ``op_cases_shape.py``,
``op_cases_linalg.py``, ``op_cases_vision.py``, ``op_cases_nn.py`` and
``op_cases_loss.py``.  A case is ``Case(name, family, inputs, run, constants)``
(``op_inputs.py`` says what each part is): ``run(lib, F, *tensors)`` is written
once for minitensor and PyTorch, since minitensor mirrors PyTorch's API.  The
main input ``x`` has ``rows x cols`` float32 elements (256 x 512 = 2^17, or
16 x 16).
"""

from __future__ import annotations

import numpy as np
from op_cases_linalg import CASES as LINALG_CASES
from op_cases_loss import CASES as LOSS_CASES
from op_cases_math import CASES as MATH_CASES
from op_cases_nn import CASES as NN_CASES
from op_cases_shape import CASES as SHAPE_CASES
from op_cases_vision import CASES as VISION_CASES
from op_inputs import (
    F32,
    Case,
    classes,
    distinct,
    image,
    image_shape,
    near_one,
    normal,
    normal_pair,
    positive,
    probs,
    with_divisor,
    with_mask,
    with_row,
    with_row_index,
)


def _x_gather(rng, r, c):
    """x and an index of shape (r, c // 2) into dim 1, with repeats."""
    return rng.standard_normal((r, c), dtype=F32), rng.integers(0, c, (r, c // 2))


def _scatter(rng, r, c):
    """x, an index of shape (r, c // 2) into dim 1 without repeats in a row, and src."""
    index = np.argsort(rng.random((r, c)), axis=1)[:, : c // 2]
    return rng.standard_normal((r, c), dtype=F32), index, rng.standard_normal((r, c // 2), dtype=F32)


def _index_add(rng, r, c):
    """x, r row indices (with repeats: they add up) and the r rows to add."""
    return *with_row_index(rng, r, c), rng.standard_normal((r, c), dtype=F32)


def _masked_scatter(rng, r, c):
    """x, a mask with ~30% True, and a source as large as x."""
    return *with_mask(rng, r, c), rng.standard_normal(r * c, dtype=F32)


def _where(rng, r, c):
    return rng.random((r, c)) < 0.5, *normal_pair(rng, r, c)


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


def _conv(rng, r, c, dims: int = 2):
    """An image (N, C, H, W) (for dims=1: (N, C, H * W)), a (C, C, 3, 3) (or (C, C, 3)) kernel, a bias (C,)."""
    n, ch, h, w = image_shape(r, c)
    x = rng.standard_normal((n, ch, h, w) if dims == 2 else (n, ch, h * w), dtype=F32)
    kernel = rng.standard_normal((ch, ch) + (3,) * dims, dtype=F32) / np.sqrt(F32(9 * ch))
    return x, kernel, rng.standard_normal(ch, dtype=F32)


def _columns(rng, r, c):
    """Non-overlapping 2 x 2 windows of an image, as F.unfold(x, 2, stride=2) lays them out."""
    n, ch, h, w = image_shape(r, c)
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
    Case("x + y", "elementwise", normal_pair, lambda lib, F, x, y: x + y),
    Case("x + b (broadcast)", "elementwise", with_row, lambda lib, F, x, b: x + b),
    Case("x - y", "elementwise", normal_pair, lambda lib, F, x, y: x - y),
    Case("x * y", "elementwise", normal_pair, lambda lib, F, x, y: x * y),
    Case("x / y", "elementwise", with_divisor, lambda lib, F, x, y: x / y),
    Case("remainder", "elementwise", with_divisor, lambda lib, F, x, y: lib.remainder(x, y)),
    Case("fmod", "elementwise", with_divisor, lambda lib, F, x, y: lib.fmod(x, y)),
    Case("-x", "elementwise", normal, lambda lib, F, x: -x),
    Case("x ** 2", "elementwise", normal, lambda lib, F, x: x**2),
    Case("x ** 3.0", "elementwise", normal, lambda lib, F, x: x**3.0),
    Case("x ** 2.5", "elementwise", positive, lambda lib, F, x: x**2.5),
    Case("exp", "elementwise", normal, lambda lib, F, x: x.exp()),
    Case("log", "elementwise", positive, lambda lib, F, x: x.log()),
    Case("sqrt", "elementwise", positive, lambda lib, F, x: x.sqrt()),
    Case("abs", "elementwise", normal, lambda lib, F, x: x.abs()),
    Case("sin", "elementwise", normal, lambda lib, F, x: lib.sin(x)),
    Case("cos", "elementwise", normal, lambda lib, F, x: lib.cos(x)),
    Case("clamp", "elementwise", normal, lambda lib, F, x: x.clamp(-0.5, 0.5)),
    Case("log1p", "elementwise", positive, lambda lib, F, x: lib.log1p(x)),
    Case("expm1", "elementwise", normal, lambda lib, F, x: lib.expm1(x)),
    Case("log2", "elementwise", positive, lambda lib, F, x: lib.log2(x)),
    Case("log10", "elementwise", positive, lambda lib, F, x: lib.log10(x)),
    Case("exp2", "elementwise", normal, lambda lib, F, x: lib.exp2(x)),
    Case("rsqrt", "elementwise", positive, lambda lib, F, x: lib.rsqrt(x)),
    Case("square", "elementwise", normal, lambda lib, F, x: lib.square(x)),
    Case("reciprocal", "elementwise", positive, lambda lib, F, x: lib.reciprocal(x)),
    Case("frac", "elementwise", normal, lambda lib, F, x: lib.frac(x)),
    # (zero gradient, as PyTorch's)
    Case("sign", "elementwise", normal, lambda lib, F, x: lib.sign(x)),
    Case("floor", "elementwise", normal, lambda lib, F, x: lib.floor(x)),
    Case("ceil", "elementwise", normal, lambda lib, F, x: lib.ceil(x)),
    Case("round", "elementwise", normal, lambda lib, F, x: lib.round(x)),
    Case("trunc", "elementwise", normal, lambda lib, F, x: lib.trunc(x)),
    # activations
    Case("relu", "activation", normal, lambda lib, F, x: F.relu(x)),
    Case("sigmoid", "activation", normal, lambda lib, F, x: lib.sigmoid(x)),
    Case("tanh", "activation", normal, lambda lib, F, x: lib.tanh(x)),
    Case("gelu", "activation", normal, lambda lib, F, x: F.gelu(x)),
    Case("gelu (tanh)", "activation", normal, lambda lib, F, x: F.gelu(x, approximate="tanh")),
    Case("silu", "activation", normal, lambda lib, F, x: F.silu(x)),
    Case("softplus", "activation", normal, lambda lib, F, x: F.softplus(x)),
    # reductions
    Case("sum", "reduction", normal, lambda lib, F, x: x.sum()),
    Case("sum(dim=-1)", "reduction", normal, lambda lib, F, x: x.sum(-1)),
    Case("mean(dim=0)", "reduction", normal, lambda lib, F, x: x.mean(0)),
    Case("var(dim=-1)", "reduction", normal, lambda lib, F, x: x.var(-1)),
    Case("std(dim=-1)", "reduction", normal, lambda lib, F, x: x.std(-1)),
    Case("amax(dim=-1)", "reduction", normal, lambda lib, F, x: x.amax(-1)),
    Case("max(dim=-1)", "reduction", normal, lambda lib, F, x: x.max(-1)[0]),
    Case("amin(dim=-1)", "reduction", normal, lambda lib, F, x: lib.amin(x, -1)),
    Case("min(dim=-1)", "reduction", normal, lambda lib, F, x: lib.min(x, -1)[0]),
    Case("logsumexp", "reduction", normal, lambda lib, F, x: x.logsumexp(-1)),
    Case("norm(dim=-1)", "reduction", normal, lambda lib, F, x: x.norm(dim=-1)),
    Case("cumsum", "reduction", normal, lambda lib, F, x: x.cumsum(-1)),
    Case("prod(dim=-1)", "reduction", near_one, lambda lib, F, x: x.prod(-1)),
    Case("sort", "reduction", distinct, lambda lib, F, x: lib.sort(x, -1)[0]),
    Case("msort", "reduction", distinct, lambda lib, F, x: lib.msort(x)),
    Case("topk(4)", "reduction", normal, lambda lib, F, x: x.topk(4)[0]),
    # shape ops
    Case(
        "reshape + transpose",
        "shape",
        normal,
        lambda lib, F, x: x.reshape(-1, 8, 8).transpose(1, 2).reshape(x.shape),
    ),
    Case("permute + contiguous", "shape", normal, lambda lib, F, x: x.reshape(-1, 8, 8).permute(2, 0, 1).contiguous()),
    Case("t()", "shape", normal, lambda lib, F, x: x.t()),
    Case("unsqueeze + expand", "shape", with_row, lambda lib, F, x, b: b.unsqueeze(0).expand(x.shape[0], -1)),
    Case("flatten", "shape", normal, lambda lib, F, x: x.reshape(-1, 2, x.shape[1] // 2).flatten(1)),
    Case("squeeze", "shape", normal, lambda lib, F, x: x.unsqueeze(1).squeeze(1)),
    Case("chunk", "shape", normal, lambda lib, F, x: x.chunk(4, -1)[1]),
    Case("split", "shape", normal, lambda lib, F, x: x.split(4, 0)[1]),
    Case("flip", "shape", normal, lambda lib, F, x: x.flip(-1)),
    Case("repeat", "shape", normal, lambda lib, F, x: x.repeat(1, 2)),
    Case("narrow", "shape", normal, lambda lib, F, x: x.narrow(1, 1, x.shape[1] // 2)),
    Case("tril", "shape", normal, lambda lib, F, x: lib.tril(x)),
    Case("triu", "shape", normal, lambda lib, F, x: lib.triu(x, 1)),
    Case("roll", "shape", normal, lambda lib, F, x: lib.roll(x, 3, -1)),
    Case("clone", "shape", normal, lambda lib, F, x: lib.clone(x)),
    Case("pad", "shape", normal, lambda lib, F, x: F.pad(x, (1, 2))),
    Case("unbind", "shape", normal, lambda lib, F, x: x.unbind(0)[1]),
    # indexing, scatter and gather
    Case("x[:, 1:-1:2]", "indexing", normal, lambda lib, F, x: x[:, 1:-1:2]),
    Case("x[int array]", "indexing", with_row_index, lambda lib, F, x, i: x[i]),
    Case("x[bool mask]", "indexing", with_mask, lambda lib, F, x, m: x[m]),
    Case("gather", "indexing", _x_gather, lambda lib, F, x, i: x.gather(1, i)),
    Case("scatter", "indexing", _scatter, lambda lib, F, x, i, s: x.scatter(1, i, s)),
    Case("scatter_add", "indexing", _scatter, lambda lib, F, x, i, s: x.scatter_add(1, i, s)),
    Case("index_fill", "indexing", with_row_index, lambda lib, F, x, i: x.index_fill(0, i, 0.5)),
    Case("index_add", "indexing", _index_add, lambda lib, F, x, i, s: lib.index_add(x, 0, i, s)),
    Case("index_put", "indexing", _index_add, lambda lib, F, x, i, s: lib.index_put(x, (i,), s, accumulate=True)),
    Case("masked_scatter", "indexing", _masked_scatter, lambda lib, F, x, m, s: lib.masked_scatter(x, m, s)),
    # cat, stack, where, masked_fill
    Case("cat", "combine", normal_pair, lambda lib, F, x, y: lib.cat([x, y], 1)),
    Case("stack", "combine", normal_pair, lambda lib, F, x, y: lib.stack([x, y], 0)),
    Case("where", "combine", _where, lambda lib, F, m, x, y: lib.where(m, x, y)),
    Case("masked_fill", "combine", with_mask, lambda lib, F, x, m: x.masked_fill(m, 0.0)),
    # matmul family
    Case("matmul", "matmul", _matmul, lambda lib, F, x, w: x @ w),
    Case("linear", "matmul", _linear, lambda lib, F, x, w, b: F.linear(x, w, b)),
    Case("mm", "matmul", _matmul, lambda lib, F, x, w: lib.mm(x, w)),
    Case("bmm", "matmul", _bmm, lambda lib, F, x, w: lib.bmm(x, w)),
    Case("einsum", "matmul", _matmul, lambda lib, F, x, w: lib.einsum("ij,jk->ik", x, w)),
    # convolution
    Case("conv2d", "conv", _conv, lambda lib, F, x, w, b: F.conv2d(x, w, b, padding=1)),
    Case(
        "conv1d",
        "conv",
        lambda rng, r, c: _conv(rng, r, c, 1),
        lambda lib, F, x, w, b: F.conv1d(x, w, b, padding=1),
    ),
    Case("conv_transpose2d", "conv", _conv, lambda lib, F, x, w, b: F.conv_transpose2d(x, w, b, padding=1)),
    Case(
        "conv_transpose1d",
        "conv",
        lambda rng, r, c: _conv(rng, r, c, 1),
        lambda lib, F, x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
    ),
    Case("unfold", "conv", image, lambda lib, F, x: F.unfold(x, 3, padding=1)),
    Case("fold", "conv", _columns, lambda lib, F, c: F.fold(c, (2 * int((c.shape[2]) ** 0.5),) * 2, 2, stride=2)),
    # softmax family
    Case("softmax", "softmax", normal, lambda lib, F, x: x.softmax(-1)),
    Case("log_softmax", "softmax", normal, lambda lib, F, x: x.log_softmax(-1)),
    Case("attention", "softmax", _attention, lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v)),
    Case("multi_head_attention_forward", "softmax", _mha, _multi_head),
    # normalization, embedding
    Case("layer_norm", "norm", _layer_norm, lambda lib, F, x, w, b: F.layer_norm(x, x.shape[-1:], w, b)),
    Case("embedding", "embedding", _embedding, lambda lib, F, i, w: F.embedding(i, w)),
    # losses
    Case("cross_entropy", "loss", classes, lambda lib, F, x, t: F.cross_entropy(x, t)),
    Case("nll_loss", "loss", classes, lambda lib, F, x, t: F.nll_loss(x, t)),
    Case("mse_loss", "loss", normal_pair, lambda lib, F, x, y: F.mse_loss(x, y)),
    Case("l1_loss", "loss", normal_pair, lambda lib, F, x, y: F.l1_loss(x, y)),
    Case("smooth_l1_loss", "loss", normal_pair, lambda lib, F, x, y: F.smooth_l1_loss(x, y, beta=0.5)),
    Case("huber_loss", "loss", normal_pair, lambda lib, F, x, y: F.huber_loss(x, y, delta=0.5)),
    Case("binary_cross_entropy", "loss", probs, lambda lib, F, p, t: F.binary_cross_entropy(p, t), (1,)),
    Case("bce_with_logits", "loss", normal_pair, lambda lib, F, x, y: F.binary_cross_entropy_with_logits(x, y)),
    Case("kl_div", "loss", _kl, lambda lib, F, x, t: F.kl_div(x, t, reduction="batchmean"), (1,)),
    # dropout
    Case("dropout", "dropout", normal, _dropout),
    # the other families, one file each
    *MATH_CASES,
    *SHAPE_CASES,
    *LINALG_CASES,
    *VISION_CASES,
    *NN_CASES,
    *LOSS_CASES,
]

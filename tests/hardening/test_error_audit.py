# ruff: noqa: E501  (the table below keeps one case per line)
"""The error audit: every public entry point, called with bad arguments, fails early and clearly.

One row per case: the call, the exception type it must raise, and the pieces
of text its message must contain: the argument's name and the actual (wrong)
value or type.  Most messages also give the expected value; the rows check
the two pieces a user needs to find the mistake.

Exception types: ``TypeError`` for a wrong type (or dtype), ``ValueError`` for
a wrong shape or value.  A few rows expect what PyTorch raises in the same
place: ``RuntimeError`` for ``backward`` of a non-scalar and for state-dict key
mismatches (SPEC), ``IndexError`` for an index out of range, ``KeyError`` for a
bad buffer name, ``AttributeError`` for a misspelt module attribute,
``FileNotFoundError`` for a missing checkpoint.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor import optim
from minitensor.autograd import gradcheck, numerical_grad
from minitensor.optim import lr_scheduler

NAN, INF = float("nan"), float("inf")


def contains(*parts: str) -> str:
    """A regex that matches a message containing every one of ``parts`` (literally, in any order)."""
    return "(?s)" + "".join(f"(?=.*{re.escape(p)})" for p in parts)


# ------------------------------------------------------------------ builders
def x23(dtype=None):
    return mt.randn(2, 3, dtype=dtype)


def lin():
    return nn.Linear(4, 2)


def mha(**kw):
    return nn.MultiheadAttention(8, 2, **kw)


def tel(**kw):
    return nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, **kw)


def tdl(**kw):
    return nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, **kw)


def qkv(n=2, length=5, e=8):
    """An (L, N, E) input."""
    return mt.randn(length, n, e)


def params():
    return [nn.Parameter(mt.randn(3))]


def sgd():
    return optim.SGD(params(), lr=0.1)


def scalar_graph():
    w = mt.randn(3, requires_grad=True)
    return w, (w * w).sum()


def write(tmp: Path, name: str, data: bytes) -> str:
    path = tmp / name
    path.write_bytes(data)
    return str(path)


def npz_without_marker(tmp: Path) -> str:
    path = tmp / "plain.npz"
    np.savez(path, a=np.ones(2))
    return str(path)


def npy_file(tmp: Path) -> str:
    path = tmp / "one.npy"
    np.save(path, np.ones(2))
    return str(path)


def pickled_npy(tmp: Path) -> str:
    path = tmp / "pickled.npy"
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    return str(path)


# ------------------------------------------------------------------ the table
# (id, callable (gets tmp_path when it takes an argument), exception, *parts the message must contain)
# fmt: off
CASES = [
    # --- minitensor: creation
    ("tensor-strings", lambda: mt.tensor(["a", "b"]), TypeError, "data", "<U1"),
    ("tensor-ragged", lambda: mt.tensor([[1.0, 2.0], [3.0]]), ValueError, "data", "inhomogeneous"),
    ("tensor-bad-dtype", lambda: mt.tensor([1.0], dtype="nonsense"), TypeError, "dtype", "'nonsense'"),
    ("tensor-int-requires-grad", lambda: mt.tensor([1, 2], requires_grad=True), TypeError, "requires_grad", "int64"),
    ("zeros-negative", lambda: mt.zeros(-1, 3), ValueError, "zeros", "(-1, 3)"),
    ("zeros-float-size", lambda: mt.zeros(2.5), TypeError, "zeros", "size", "float"),
    ("zeros-str-size", lambda: mt.zeros("3"), TypeError, "zeros", "size", "str"),
    ("ones-negative", lambda: mt.ones((2, -2)), ValueError, "ones", "(2, -2)"),
    ("empty-bad-dtype", lambda: mt.empty(2, dtype="float99"), TypeError, "dtype", "'float99'"),
    ("randn-int-dtype", lambda: mt.randn(2, dtype=mt.int64), TypeError, "randn", "dtype", "int64"),
    ("rand-negative", lambda: mt.rand(3, -1), ValueError, "rand", "(3, -1)"),
    ("full-negative", lambda: mt.full(-2, 1.0), ValueError, "full", "(-2,)"),
    ("full-float-shape", lambda: mt.full((2.5,), 1.0), TypeError, "full", "size", "float"),
    ("arange-step-zero", lambda: mt.arange(0, 5, 0), ValueError, "step", "0"),
    ("arange-str", lambda: mt.arange("a"), TypeError, "arange", "str"),
    ("eye-negative", lambda: mt.eye(-1), ValueError, "eye", "-1"),
    ("eye-float", lambda: mt.eye(2.5), TypeError, "eye", "float"),
    ("from-numpy-list", lambda: mt.from_numpy([1, 2]), TypeError, "array", "list"),
    ("zeros-like-list", lambda: mt.zeros_like([1.0, 2.0]), TypeError, "zeros_like", "Tensor", "list"),
    ("ones-like-bad-dtype", lambda: mt.ones_like(x23(), dtype="bad"), TypeError, "dtype", "'bad'"),
    ("manual-seed-str", lambda: mt.manual_seed("1"), TypeError, "seed", "str"),
    ("manual-seed-float", lambda: mt.manual_seed(1.5), TypeError, "seed", "float"),
    ("set-default-dtype-int", lambda: mt.set_default_dtype(mt.int64), TypeError, "dtype", "int64"),
    ("set-jit-enabled-str", lambda: mt.set_jit_enabled("no"), TypeError, "enabled", "str"),
    ("set-grad-enabled-str", lambda: mt.set_grad_enabled("no"), TypeError, "mode", "str"),
    # --- Tensor methods and operators
    ("reshape-numel", lambda: x23().reshape(5, 5), ValueError, "reshape", "(2, 3)", "(5, 5)"),
    ("reshape-two-unknown", lambda: x23().reshape(-1, -1), ValueError, "reshape", "(-1, -1)"),
    ("reshape-float", lambda: x23().reshape(3, 2.0), TypeError, "reshape", "size", "float"),
    ("view-numel", lambda: x23().view(7), ValueError, "reshape", "(7,)"),
    ("permute-repeat", lambda: x23().permute(0, 0), ValueError, "permute", "(0, 0)"),
    ("transpose-range", lambda: x23().transpose(0, 5), ValueError, "dim1", "5"),
    ("sum-dim-range", lambda: x23().sum(dim=3), ValueError, "dim", "3"),
    ("sum-dim-float", lambda: x23().sum(dim=1.5), TypeError, "dim", "float"),
    ("sum-dim-repeat", lambda: x23().sum(dim=(0, 0)), ValueError, "dim", "(0, 0)"),
    ("mean-dim-range", lambda: x23().mean(dim=-3), ValueError, "dim", "-3"),
    ("softmax-dim-range", lambda: x23().softmax(dim=2), ValueError, "dim", "2"),
    ("log-softmax-dim-str", lambda: x23().log_softmax(dim="last"), TypeError, "dim", "str"),
    ("max-dim-range", lambda: x23().max(dim=4), ValueError, "dim", "4"),
    ("max-empty", lambda: mt.zeros(0).max(), ValueError, "max", "(0,)"),
    ("unsqueeze-range", lambda: x23().unsqueeze(4), ValueError, "dim", "4"),
    ("squeeze-range", lambda: x23().squeeze(2), ValueError, "dim", "2"),
    ("flatten-order", lambda: x23().flatten(1, 0), ValueError, "start_dim", "1"),
    ("expand-shape", lambda: x23().expand(3, 4), ValueError, "expand", "(2, 3)", "(3, 4)"),
    ("chunk-zero", lambda: x23().chunk(0), ValueError, "chunks", "0"),
    ("split-negative", lambda: x23().split(-1), ValueError, "size", "-1"),
    ("index-range", lambda: x23()[5], IndexError, "index 5", "size 2"),
    ("masked-fill-int-mask", lambda: x23().masked_fill(mt.zeros(2, 3, dtype=mt.int64), 0.0), TypeError, "mask", "int64"),
    ("masked-fill-shape", lambda: x23().masked_fill(mt.ones(2, dtype=mt.bool), 0.0), ValueError, "mask", "(2,)"),
    ("clamp-none", lambda: x23().clamp(), ValueError, "min", "max", "None"),
    ("item-many", lambda: x23().item(), ValueError, "item", "6 elements"),
    ("to-bad-dtype", lambda: x23().to("complex999"), TypeError, "dtype", "'complex999'"),
    ("requires-grad-int", lambda: mt.arange(3).requires_grad_(), TypeError, "requires_grad", "int64"),
    ("add-str", lambda: x23() + "a", TypeError, "operand", "str"),
    ("mul-broadcast", lambda: x23() * mt.randn(4), ValueError, "mul", "(2, 3)", "(4,)"),
    ("matmul-align", lambda: x23() @ mt.randn(4, 2), ValueError, "matmul", "(2, 3)", "(4, 2)"),
    ("matmul-scalar", lambda: mt.matmul(x23(), 2.0), ValueError, "matmul", "()"),
    ("backward-nonscalar", lambda: (x23().requires_grad_() * 2).backward(), RuntimeError, "backward", "(2, 3)"),
    ("backward-gradient-shape", lambda: (x23().requires_grad_() * 2).backward(mt.ones(3)), ValueError, "gradient", "(3,)"),
    ("backward-no-grad", lambda: x23().backward(), RuntimeError, "backward", "does not require grad"),
    # --- minitensor functions
    ("cat-empty", lambda: mt.cat([]), ValueError, "tensors", "empty list"),
    ("cat-tensor-not-list", lambda: mt.cat(x23()), TypeError, "tensors", "Tensor"),
    ("cat-int-item", lambda: mt.cat([x23(), 1]), TypeError, "tensors[1]", "int"),
    ("cat-shapes", lambda: mt.cat([x23(), mt.randn(2, 4)], dim=0), ValueError, "tensors[1]", "(2, 4)"),
    ("cat-dim-range", lambda: mt.cat([x23(), x23()], dim=2), ValueError, "dim", "2"),
    ("stack-shapes", lambda: mt.stack([x23(), mt.randn(3, 2)]), ValueError, "tensors[1]", "(3, 2)"),
    ("where-int-cond", lambda: mt.where(mt.ones(3, dtype=mt.int64), 1.0, 0.0), TypeError, "condition", "int64"),
    ("where-shapes", lambda: mt.where(mt.ones(3, dtype=mt.bool), mt.ones(2), 0.0), ValueError, "condition", "(3,)", "(2,)"),
    ("exp-list", lambda: mt.exp([1.0]), TypeError, "input", "list"),
    ("softmax-fn-array", lambda: mt.softmax(np.ones(3), dim=0), TypeError, "input", "ndarray"),
    # --- autograd
    ("grad-count", lambda: mt.autograd.grad(scalar_graph()[1], scalar_graph()[0], [mt.ones(()), mt.ones(())]), ValueError, "grad_outputs", "2"),
    ("grad-input-no-grad", lambda: mt.autograd.grad(scalar_graph()[1], x23()), RuntimeError, "inputs[0]", "does not require grad"),
    ("grad-input-type", lambda: mt.autograd.grad(scalar_graph()[1], [3.0]), TypeError, "inputs[0]", "float"),
    ("gradcheck-input-type", lambda: gradcheck(lambda t: t, [np.ones(2)]), TypeError, "inputs[0]", "ndarray"),
    ("gradcheck-eps-zero", lambda: gradcheck(lambda t: t * 2, [mt.randn(2, dtype=mt.float64, requires_grad=True)], eps=0), ValueError, "eps", "0"),
    ("gradcheck-output-type", lambda: gradcheck(lambda t: 3.0, [mt.randn(2, dtype=mt.float64, requires_grad=True)]), TypeError, "output 0", "float"),
    ("numerical-grad-nonscalar", lambda: numerical_grad(lambda t: t * 2, mt.randn(3, dtype=mt.float64)), ValueError, "fn", "3 elements"),
    # --- nn: constructors
    ("linear-zero", lambda: nn.Linear(0, 3), ValueError, "in_features", "0"),
    ("linear-float", lambda: nn.Linear(4, 2.5), TypeError, "out_features", "float"),
    ("linear-int-dtype", lambda: nn.Linear(3, 2, dtype=mt.int64), TypeError, "dtype", "int64"),
    ("parameter-str", lambda: nn.Parameter("abc"), TypeError, "data", "<U3"),
    ("parameter-int", lambda: nn.Parameter(mt.arange(3)), TypeError, "requires_grad", "int64"),
    ("layernorm-zero", lambda: nn.LayerNorm(0), ValueError, "normalized_shape", "0"),
    ("layernorm-empty", lambda: nn.LayerNorm(()), ValueError, "normalized_shape", "()"),
    ("layernorm-eps", lambda: nn.LayerNorm(4, eps=0.0), ValueError, "eps", "0.0"),
    ("layernorm-eps-nan", lambda: nn.LayerNorm(4, eps=NAN), ValueError, "eps", "nan"),
    ("dropout-range", lambda: nn.Dropout(1.5), ValueError, "p", "1.5"),
    ("dropout-negative", lambda: nn.Dropout(-0.1), ValueError, "p", "-0.1"),
    ("dropout-nan", lambda: nn.Dropout(NAN), ValueError, "p", "nan"),
    ("dropout-str", lambda: nn.Dropout("0.5"), TypeError, "p", "str"),
    ("gelu-approximate", lambda: nn.GELU("fast"), ValueError, "approximate", "'fast'"),
    ("softmax-module-dim", lambda: nn.Softmax(dim="last"), TypeError, "dim", "str"),
    ("embedding-zero", lambda: nn.Embedding(0, 3), ValueError, "num_embeddings", "0"),
    ("embedding-padding-range", lambda: nn.Embedding(10, 3, padding_idx=10), ValueError, "padding_idx", "10"),
    ("embedding-padding-float", lambda: nn.Embedding(10, 3, padding_idx=1.5), TypeError, "padding_idx", "float"),
    ("embedding-pretrained-array", lambda: nn.Embedding.from_pretrained(np.ones((3, 2))), TypeError, "embeddings", "ndarray"),
    ("embedding-pretrained-1d", lambda: nn.Embedding.from_pretrained(mt.ones(3)), ValueError, "embeddings", "(3,)"),
    ("mha-divisible", lambda: nn.MultiheadAttention(10, 3), ValueError, "embed_dim", "10", "num_heads", "3"),
    ("mha-heads-zero", lambda: nn.MultiheadAttention(8, 0), ValueError, "num_heads", "0"),
    ("mha-dropout", lambda: mha(dropout=2.0), ValueError, "dropout", "2.0"),
    ("mha-dropout-str", lambda: mha(dropout="0.1"), TypeError, "dropout", "str"),
    ("mha-kdim", lambda: mha(kdim=0), ValueError, "kdim", "0"),
    ("tel-divisible", lambda: nn.TransformerEncoderLayer(10, 3), ValueError, "d_model", "10", "nhead", "3"),
    ("tel-ff-negative", lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=-1), ValueError, "dim_feedforward", "-1"),
    ("tel-dropout", lambda: nn.TransformerEncoderLayer(8, 2, dropout=1.5), ValueError, "dropout", "1.5"),
    ("tel-dropout-str", lambda: nn.TransformerEncoderLayer(8, 2, dropout=None), TypeError, "dropout", "NoneType"),
    ("tel-activation-str", lambda: nn.TransformerEncoderLayer(8, 2, activation="swish"), ValueError, "activation", "'swish'"),
    ("tel-activation-int", lambda: nn.TransformerEncoderLayer(8, 2, activation=3), TypeError, "activation", "int"),
    ("tel-device", lambda: nn.TransformerEncoderLayer(8, 2, device="cuda"), ValueError, "device", "'cuda'"),
    ("tel-param-dtype", lambda: nn.TransformerEncoderLayer(8, 2, dtype=mt.int64), TypeError, "dtype", "int64"),
    ("tel-ln-eps", lambda: nn.TransformerEncoderLayer(8, 2, layer_norm_eps=-1.0), ValueError, "eps", "-1.0"),
    ("encoder-layers-zero", lambda: nn.TransformerEncoder(tel(), 0), ValueError, "num_layers", "0"),
    ("encoder-not-module", lambda: nn.TransformerEncoder("layer", 2), TypeError, "encoder_layer", "str"),
    ("tdl-divisible", lambda: nn.TransformerDecoderLayer(10, 4), ValueError, "d_model", "10", "nhead", "4"),
    ("decoder-not-module", lambda: nn.TransformerDecoder(None, 2), TypeError, "decoder_layer", "NoneType"),
    ("transformer-divisible", lambda: nn.Transformer(d_model=10, nhead=3), ValueError, "d_model", "10"),
    ("square-mask-size", lambda: nn.Transformer.generate_square_subsequent_mask(0), ValueError, "sz", "0"),
    ("ce-loss-reduction", lambda: nn.CrossEntropyLoss(reduction="avg"), ValueError, "reduction", "'avg'"),
    ("ce-loss-smoothing", lambda: nn.CrossEntropyLoss(label_smoothing=2.0), ValueError, "label_smoothing", "2.0"),
    ("ce-loss-ignore-index", lambda: nn.CrossEntropyLoss(ignore_index=0.5), TypeError, "ignore_index", "float"),
    ("nll-loss-reduction", lambda: nn.NLLLoss(reduction=None), ValueError, "reduction", "None"),
    ("mse-loss-reduction", lambda: nn.MSELoss(reduction="total"), ValueError, "reduction", "'total'"),
    ("sequential-int", lambda: nn.Sequential(3), TypeError, "'0'", "int"),
    ("modulelist-int", lambda: nn.ModuleList([nn.ReLU(), 1]), TypeError, "'1'", "int"),
    # --- nn: forward
    ("linear-last-dim", lambda: lin()(mt.randn(3, 5)), ValueError, "in_features=4", "5"),
    ("linear-dtype", lambda: lin()(mt.randn(3, 4, dtype=mt.float64)), TypeError, "float64", "float32"),
    ("linear-list", lambda: lin()([[1.0] * 4] * 3), TypeError, "input", "list"),
    ("linear-0d", lambda: lin()(mt.tensor(1.0)), ValueError, "input", "()"),
    ("layernorm-shape", lambda: nn.LayerNorm(4)(mt.randn(3, 5)), ValueError, "normalized_shape", "(3, 5)"),
    ("layernorm-int", lambda: nn.LayerNorm(4)(mt.zeros(3, 4, dtype=mt.int64)), TypeError, "input", "int64"),
    ("layernorm-dtype", lambda: nn.LayerNorm(4)(mt.randn(3, 4, dtype=mt.float64)), TypeError, "float64", "float32"),
    ("dropout-list", lambda: nn.Dropout()([1.0]), TypeError, "input", "list"),
    ("embedding-float-ids", lambda: nn.Embedding(10, 3)(mt.tensor([1.0])), TypeError, "input", "float32"),
    ("embedding-id-range", lambda: nn.Embedding(10, 3)(mt.tensor([10])), ValueError, "index", "10"),
    ("embedding-id-negative", lambda: nn.Embedding(10, 3)(mt.tensor([-1])), ValueError, "index", "-1"),
    ("mha-rank", lambda: mha()(*[mt.randn(1, 5, 2, 8)] * 3), ValueError, "query", "(1, 5, 2, 8)"),
    ("mha-last-dim", lambda: mha()(*[mt.randn(5, 2, 6)] * 3), ValueError, "embed_dim=8", "(5, 2, 6)"),
    ("mha-dtype", lambda: mha()(*[mt.randn(5, 2, 8, dtype=mt.float64)] * 3), TypeError, "query", "float64"),
    ("mha-key-batch", lambda: mha()(qkv(), qkv(n=3), qkv(n=3)), ValueError, "batch size 2", "(5, 3, 8)"),
    ("mha-padding-shape", lambda: mha()(*[qkv()] * 3, key_padding_mask=mt.zeros(2, 4, dtype=mt.bool)), ValueError, "key_padding_mask", "(2, 4)"),
    ("mha-padding-dtype", lambda: mha()(*[qkv()] * 3, key_padding_mask=mt.zeros(2, 5, dtype=mt.int64)), TypeError, "key_padding_mask", "int64"),
    ("mha-attn-mask-shape", lambda: mha()(*[qkv()] * 3, attn_mask=mt.zeros(5, 4, dtype=mt.bool)), ValueError, "attn_mask", "(5, 4)"),
    ("mha-attn-mask-dtype", lambda: mha()(*[qkv()] * 3, attn_mask=mt.zeros(5, 5, dtype=mt.int64)), TypeError, "attn_mask", "int64"),
    ("tel-last-dim", lambda: tel()(mt.randn(5, 2, 6)), ValueError, "d_model=8", "(5, 2, 6)"),
    ("tel-rank", lambda: tel()(mt.randn(8)), ValueError, "src", "(8,)"),
    ("tel-dtype", lambda: tel()(mt.randn(5, 2, 8, dtype=mt.float64)), TypeError, "src", "float64"),
    ("tel-not-tensor", lambda: tel()("src"), TypeError, "src", "str"),
    ("tel-layout-padding", lambda: tel(batch_first=True)(mt.randn(5, 2, 8), src_key_padding_mask=mt.zeros(2, 5, dtype=mt.bool)), ValueError, "src_key_padding_mask", "(2, 5)"),
    ("tel-src-mask-shape", lambda: tel()(qkv(), src_mask=mt.zeros(4, 4)), ValueError, "src_mask", "(4, 4)"),
    ("tel-src-mask-dtype", lambda: tel()(qkv(), src_mask=mt.zeros(5, 5, dtype=mt.int64)), TypeError, "src_mask", "int64"),
    ("tel-src-mask-list", lambda: tel()(qkv(), src_mask=[[0.0]]), TypeError, "src_mask", "list"),
    ("tdl-batch", lambda: tdl()(qkv(n=2), qkv(n=3)), ValueError, "memory", "(5, 3, 8)"),
    ("tdl-memory-dim", lambda: tdl()(qkv(), mt.randn(5, 2, 4)), ValueError, "memory", "(5, 2, 4)"),
    ("transformer-batch", lambda: nn.Transformer(8, 2, 1, 1, 16)(qkv(n=2), qkv(n=3)), ValueError, "src", "(5, 3, 8)"),
    ("ce-target-range", lambda: F.cross_entropy(x23(), mt.tensor([0, 5])), ValueError, "target", "5"),
    ("ce-target-shape", lambda: F.cross_entropy(x23(), mt.tensor([0, 1, 2])), ValueError, "target", "(3,)"),
    ("ce-target-float-shape", lambda: F.cross_entropy(x23(), mt.zeros(2)), ValueError, "target", "(2,)"),
    ("ce-target-bool", lambda: F.cross_entropy(x23(), mt.tensor([True, False])), TypeError, "target", "bool"),
    ("ce-input-int", lambda: F.cross_entropy(mt.zeros(2, 3, dtype=mt.int64), mt.tensor([0, 1])), TypeError, "input", "int64"),
    ("ce-input-0d", lambda: F.cross_entropy(mt.tensor(1.0), mt.tensor(0)), ValueError, "input", "0-d"),
    ("ce-weight-shape", lambda: F.cross_entropy(x23(), mt.tensor([0, 1]), weight=mt.ones(4)), ValueError, "weight", "(4,)"),
    ("ce-smoothing", lambda: F.cross_entropy(x23(), mt.tensor([0, 1]), label_smoothing=1.5), ValueError, "label_smoothing", "1.5"),
    ("ce-ignore-index-str", lambda: F.cross_entropy(x23(), mt.tensor([0, 1]), ignore_index="x"), TypeError, "ignore_index", "str"),
    ("ce-reduction", lambda: F.cross_entropy(x23(), mt.tensor([0, 1]), reduction="avg"), ValueError, "reduction", "'avg'"),
    ("nll-target-float", lambda: F.nll_loss(x23(), mt.zeros(2)), TypeError, "target", "float32"),
    ("mse-shape", lambda: F.mse_loss(x23(), mt.randn(4)), ValueError, "target", "(4,)"),
    ("mse-dtype", lambda: F.mse_loss(x23(), mt.randn(2, 3, dtype=mt.float64)), TypeError, "target", "float64"),
    ("mse-int-input", lambda: F.mse_loss(mt.zeros(3, dtype=mt.int64), mt.zeros(3)), TypeError, "input", "int64"),
    # --- nn.functional
    ("F-softmax-list", lambda: F.softmax([1.0, 2.0], dim=0), TypeError, "input", "list"),
    ("F-softmax-dim", lambda: F.softmax(x23(), dim=5), ValueError, "dim", "5"),
    ("F-log-softmax-dim", lambda: F.log_softmax(x23(), dim=-3), ValueError, "dim", "-3"),
    ("F-gelu-approximate", lambda: F.gelu(x23(), approximate="erf"), ValueError, "approximate", "'erf'"),
    ("F-gelu-int", lambda: F.gelu(mt.arange(3)), TypeError, "input", "int64"),
    ("F-relu-str", lambda: F.relu("x"), TypeError, "input", "str"),
    ("F-dropout-p", lambda: F.dropout(x23(), p=1.5), ValueError, "p", "1.5"),
    ("F-dropout-bool", lambda: F.dropout(x23(), p=True), TypeError, "p", "bool"),
    ("F-layer-norm-shape", lambda: F.layer_norm(x23(), (5,)), ValueError, "normalized_shape", "(2, 3)"),
    ("F-layer-norm-zero", lambda: F.layer_norm(x23(), (0,)), ValueError, "normalized_shape", "(0,)"),
    ("F-layer-norm-eps", lambda: F.layer_norm(x23(), (3,), eps=-1.0), ValueError, "eps", "-1.0"),
    ("F-layer-norm-weight", lambda: F.layer_norm(x23(), (3,), weight=mt.ones(4)), ValueError, "weight", "(4,)"),
    ("F-linear-weight-1d", lambda: F.linear(x23(), mt.ones(3)), ValueError, "weight", "(3,)"),
    ("F-linear-bias", lambda: F.linear(x23(), mt.ones(2, 3), mt.ones(3)), ValueError, "bias", "(3,)"),
    ("F-linear-bias-dtype", lambda: F.linear(x23(), mt.ones(2, 3), mt.ones(2, dtype=mt.float64)), TypeError, "bias", "float64"),
    ("F-embedding-weight-1d", lambda: F.embedding(mt.tensor([0]), mt.ones(3)), ValueError, "weight", "(3,)"),
    ("F-sdpa-rank", lambda: F.scaled_dot_product_attention(mt.ones(4), mt.ones(4), mt.ones(4)), ValueError, "query", "(4,)"),
    ("F-sdpa-dtype", lambda: F.scaled_dot_product_attention(x23(), x23(mt.float64), x23()), TypeError, "key", "float64"),
    ("F-sdpa-key-dim", lambda: F.scaled_dot_product_attention(x23(), mt.ones(2, 4), x23()), ValueError, "key", "(2, 4)"),
    ("F-sdpa-value-len", lambda: F.scaled_dot_product_attention(x23(), x23(), mt.ones(3, 3)), ValueError, "value", "(3, 3)"),
    ("F-sdpa-mask-shape", lambda: F.scaled_dot_product_attention(x23(), x23(), x23(), attn_mask=mt.ones(3, 3, dtype=mt.bool)), ValueError, "attn_mask", "(3, 3)"),
    ("F-sdpa-mask-dtype", lambda: F.scaled_dot_product_attention(x23(), x23(), x23(), attn_mask=mt.ones(2, 2, dtype=mt.int64)), TypeError, "attn_mask", "int64"),
    ("F-sdpa-dropout", lambda: F.scaled_dot_product_attention(x23(), x23(), x23(), dropout_p=-0.1), ValueError, "dropout_p", "-0.1"),
    ("F-sdpa-dropout-str", lambda: F.scaled_dot_product_attention(x23(), x23(), x23(), dropout_p="0.1"), TypeError, "dropout_p", "str"),
    ("F-sdpa-causal-and-mask", lambda: F.scaled_dot_product_attention(x23(), x23(), x23(), attn_mask=mt.ones(2, 2, dtype=mt.bool), is_causal=True), ValueError, "attn_mask", "is_causal"),
    # --- optim
    ("sgd-lr-negative", lambda: optim.SGD(params(), lr=-1.0), ValueError, "lr", "-1.0"),
    ("sgd-lr-nan", lambda: optim.SGD(params(), lr=NAN), ValueError, "lr", "nan"),
    ("sgd-lr-inf", lambda: optim.SGD(params(), lr=INF), ValueError, "lr", "inf"),
    ("sgd-lr-str", lambda: optim.SGD(params(), lr="0.1"), TypeError, "lr", "str"),
    ("sgd-momentum", lambda: optim.SGD(params(), lr=0.1, momentum=-0.5), ValueError, "momentum", "-0.5"),
    ("sgd-nesterov", lambda: optim.SGD(params(), lr=0.1, nesterov=True), ValueError, "nesterov", "momentum=0.0"),
    ("sgd-weight-decay", lambda: optim.SGD(params(), lr=0.1, weight_decay=-1.0), ValueError, "weight_decay", "-1.0"),
    ("sgd-single-tensor", lambda: optim.SGD(nn.Parameter(mt.randn(3)), lr=0.1), TypeError, "params", "single Tensor"),
    ("sgd-empty", lambda: optim.SGD([], lr=0.1), ValueError, "params", "empty"),
    ("sgd-float-param", lambda: optim.SGD([1.0], lr=0.1), TypeError, "params[0]", "float"),
    ("sgd-non-leaf", lambda: optim.SGD([mt.randn(2, requires_grad=True) * 2], lr=0.1), ValueError, "params[0]", "MulBackward"),
    ("sgd-duplicate", lambda: optim.SGD([params()[0]] * 2, lr=0.1), ValueError, "params", "more than once"),
    ("sgd-group-lr", lambda: optim.SGD([{"params": params(), "lr": -0.5}], lr=0.1), ValueError, "lr", "-0.5"),
    ("adam-beta", lambda: optim.Adam(params(), betas=(0.9, 1.0)), ValueError, "betas[1]", "1.0"),
    ("adam-betas-float", lambda: optim.Adam(params(), betas=0.9), TypeError, "betas", "0.9"),
    ("adam-betas-triple", lambda: optim.Adam(params(), betas=(0.9, 0.99, 0.999)), ValueError, "betas", "(0.9, 0.99, 0.999)"),
    ("adam-eps", lambda: optim.Adam(params(), eps=-1e-8), ValueError, "eps", "-1e-08"),
    ("adam-lr-inf", lambda: optim.Adam(params(), lr=INF), ValueError, "lr", "inf"),
    ("adamw-lr-nan", lambda: optim.AdamW(params(), lr=NAN), ValueError, "lr", "nan"),
    ("adamw-weight-decay-inf", lambda: optim.AdamW(params(), weight_decay=INF), ValueError, "weight_decay", "inf"),
    ("step-lr-size", lambda: lr_scheduler.StepLR(sgd(), step_size=0), ValueError, "step_size", "0"),
    ("step-lr-optimizer", lambda: lr_scheduler.StepLR("opt", step_size=1), TypeError, "optimizer", "str"),
    ("lambda-lr-callable", lambda: lr_scheduler.LambdaLR(sgd(), lr_lambda=3), TypeError, "lr_lambda", "int"),
    ("optim-load-groups", lambda: sgd().load_state_dict({"state": {}, "param_groups": []}), ValueError, "parameter groups", "0"),
    # --- save / load
    ("save-path-int", lambda tmp: mt.save({}, 123), TypeError, "path", "int"),
    ("save-object", lambda tmp: mt.save({"a": object()}, tmp / "x"), TypeError, "obj['a']", "object"),
    ("save-float-key", lambda tmp: mt.save({1.5: 1}, tmp / "x"), TypeError, "keys", "1.5"),
    ("load-missing", lambda tmp: mt.load(tmp / "missing.npz"), FileNotFoundError, "missing.npz"),
    ("load-garbage", lambda tmp: mt.load(write(tmp, "bad.npz", b"not a zip")), ValueError, "bad.npz", "checkpoint"),
    ("load-truncated-zip", lambda tmp: mt.load(write(tmp, "cut.npz", b"PK\x03\x04" + b"\0" * 20)), ValueError, "cut.npz", "checkpoint"),
    ("load-foreign-npz", lambda tmp: mt.load(npz_without_marker(tmp)), ValueError, "plain.npz", "__minitensor__"),
    ("load-npy", lambda tmp: mt.load(npy_file(tmp)), ValueError, "one.npy", ".npy"),
    ("load-pickle", lambda tmp: mt.load(pickled_npy(tmp)), ValueError, "pickled.npy", "checkpoint"),
    # --- Module methods
    ("load-state-dict-str", lambda: lin().load_state_dict("weights"), TypeError, "load_state_dict", "str"),
    ("load-state-dict-missing", lambda: lin().load_state_dict({"weight": np.zeros((2, 4))}), RuntimeError, "Missing", '"bias"'),
    ("load-state-dict-shape", lambda: lin().load_state_dict({"weight": np.zeros((4, 2)), "bias": np.zeros(2)}), RuntimeError, "weight", "(4, 2)"),
    ("module-to-int", lambda: lin().to(mt.int64), TypeError, "dtype", "int64"),
    ("module-train-str", lambda: lin().train("yes"), ValueError, "mode", "'yes'"),  # PyTorch's type here
    ("register-buffer-int", lambda: lin().register_buffer("scale", 3), TypeError, "scale", "int"),
    ("register-buffer-dotted", lambda: lin().register_buffer("a.b", None), KeyError, "a.b"),
    ("add-module-int", lambda: lin().add_module("act", 3), TypeError, "act", "int"),
    ("set-parameter-tensor", lambda: setattr(lin(), "weight", mt.randn(2, 4)), TypeError, "weight", "Tensor"),
    ("sequential-index", lambda: nn.Sequential(nn.ReLU())[3], IndexError, "Sequential", "index 3"),
    ("modulelist-index", lambda: nn.ModuleList([nn.ReLU()])[5], IndexError, "ModuleList", "index 5"),
    ("module-misspelt-attribute", lambda: lin().wieght, AttributeError, "Linear", "wieght"),
    ("load-state-dict-value-str", lambda: lin().load_state_dict({"weight": "abc", "bias": np.zeros(2)}), TypeError, "'weight'", "str"),
    ("parameter-list-str", lambda: nn.ParameterList(["a"]), TypeError, "Parameter", "str"),
    # --- more layers' forward
    ("relu-module-str", lambda: nn.ReLU()("x"), TypeError, "input", "str"),
    ("tanh-module-list", lambda: nn.Tanh()([1.0]), TypeError, "input", "list"),
    ("gelu-module-int", lambda: nn.GELU()(mt.arange(3)), TypeError, "input", "int64"),
    ("log-softmax-module-dim", lambda: nn.LogSoftmax(dim=3)(x23()), ValueError, "dim", "3"),
    ("softmax-0d-dim", lambda: mt.tensor(1.0).softmax(dim=1), ValueError, "dim", "1"),
    ("nll-module-target-range", lambda: nn.NLLLoss()(x23(), mt.tensor([0, 7])), ValueError, "target", "7"),
    ("mse-module-shape", lambda: nn.MSELoss()(x23(), mt.randn(5)), ValueError, "target", "(5,)"),
    ("ce-module-weight-shape", lambda: nn.CrossEntropyLoss(weight=mt.ones(5))(x23(), mt.tensor([0, 1])), ValueError, "weight", "(5,)"),
    ("decoder-memory-dim", lambda: nn.TransformerDecoder(tdl(), 1)(qkv(), mt.randn(5, 2, 6)), ValueError, "memory", "(5, 2, 6)"),
    ("transformer-tgt-mask", lambda: nn.Transformer(8, 2, 1, 1, 16)(qkv(), qkv(length=4), tgt_mask=mt.zeros(5, 5)), ValueError, "tgt_mask", "(5, 5)"),
    ("mha-unbatched-padding", lambda: mha()(*[mt.randn(5, 8)] * 3, key_padding_mask=mt.zeros(4, dtype=mt.bool)), ValueError, "key_padding_mask", "(1, 4)"),
    # --- nn.init
    ("init-mode", lambda: nn.init.kaiming_uniform_(mt.empty(3, 4), mode="fan_avg"), ValueError, "mode", "'fan_avg'"),
    ("init-nonlinearity", lambda: nn.init.kaiming_normal_(mt.empty(3, 4), nonlinearity="swish"), ValueError, "nonlinearity", "'swish'"),
    ("init-1d-fan", lambda: nn.init.xavier_uniform_(mt.empty(4)), ValueError, "fan", "(4,)"),
    # --- more of minitensor and autograd
    ("stack-empty", lambda: mt.stack([]), ValueError, "tensors", "empty list"),
    ("cat-tuple-of-int", lambda: mt.cat((x23(), 3.0)), TypeError, "tensors[1]", "float"),
    ("eye-m-negative", lambda: mt.eye(2, -3), ValueError, "eye", "(2, -3)"),
    ("split-float", lambda: x23().split(1.5), TypeError, "size", "float"),
    ("manual-seed-bool", lambda: mt.manual_seed(True), TypeError, "seed", "bool"),
    ("requires-grad-setter-int", lambda: setattr(mt.arange(2), "requires_grad", True), TypeError, "requires_grad", "int64"),
    ("backward-gradient-str", lambda: (x23().requires_grad_() * 2).backward("x"), TypeError, "gradient", "str"),
    ("grad-outputs-type", lambda: mt.autograd.grad([1.0], [mt.ones(2, requires_grad=True)]), TypeError, "outputs[0]", "float"),
    ("gradcheck-atol-negative", lambda: gradcheck(lambda t: t, [mt.ones(2, dtype=mt.float64, requires_grad=True)], atol=-1.0), ValueError, "atol", "-1.0"),
    # --- more of optim
    ("add-param-group-missing", lambda: sgd().add_param_group({"lr": 0.1}), ValueError, "param_group", "'params'"),
    ("add-param-group-type", lambda: sgd().add_param_group([nn.Parameter(mt.ones(2))]), TypeError, "param_group", "list"),
    ("linear-lr-start", lambda: lr_scheduler.LinearLR(sgd(), start_factor=0.0), ValueError, "start_factor", "0"),
    ("linear-warmup-order", lambda: lr_scheduler.LinearWarmup(sgd(), warmup_steps=10, total_steps=5), ValueError, "warmup_steps", "10"),
    ("step-lr-gamma-nan", lambda: lr_scheduler.StepLR(sgd(), step_size=2, gamma=NAN), ValueError, "gamma", "nan"),
    ("optim-load-state-shape", lambda: optim.SGD(params(), lr=0.1, momentum=0.9).load_state_dict({"state": {0: {"momentum_buffer": np.ones(5)}}, "param_groups": [{"lr": 0.1, "momentum": 0.9, "dampening": 0, "weight_decay": 0, "nesterov": False, "maximize": False, "params": [0]}]}), ValueError, "momentum_buffer", "(5,)"),
]
# fmt: on


def _call(fn, tmp_path: Path):
    return fn(tmp_path) if fn.__code__.co_argcount else fn()


@pytest.mark.parametrize(("fn", "error", "parts"), [c[1:3] + (c[3:],) for c in CASES], ids=[c[0] for c in CASES])
def test_bad_argument_raises_a_clear_error(fn, error, parts, tmp_path: Path) -> None:
    with pytest.raises(error, match=contains(*parts)):
        _call(fn, tmp_path)


def test_the_table_is_large_and_ids_are_unique() -> None:
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) >= 100


def test_no_bare_assert_in_the_library() -> None:
    """User input is validated with exceptions; ``assert`` vanishes under ``python -O``."""
    package = Path(mt.__file__).parent
    found = [
        f"{path.relative_to(package.parent)}:{i}"
        for path in sorted(package.rglob("*.py"))
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*assert\b", line)
    ]
    assert not found, f"bare assert statements in the library: {found}"


def test_every_finite_check_rejects_nan_and_inf_learning_rates_at_add_param_group() -> None:
    opt = sgd()
    for bad in (NAN, INF, -INF):
        with pytest.raises(ValueError, match=contains("lr", str(bad))):
            opt.add_param_group({"params": params(), "lr": bad})
    assert math.isfinite(opt.param_groups[0]["lr"])

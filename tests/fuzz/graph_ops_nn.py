"""The ``nn.functional`` part of the random graphs' op catalogue (``graph_ops.py`` holds the rest, and
``Op``): activations, distances and losses, each with a NumPy form to compare against.

Each op keeps its operands away from its kinks (``MARGIN``), as the catalogue's other ops do, so
that every generated graph is smooth near its inputs.  The losses take their target from the graph
too (a second operand of the input's shape) and reduce with ``'mean'`` or ``'sum'`` (drawn).
"""

from __future__ import annotations

import numpy as np
from graph_ops import MARGIN, Op
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F


def _off(*kinks):
    """The ``ok`` of an op whose gradient jumps at ``kinks``: every element ``MARGIN`` away from them."""
    return lambda a: a.size > 0 and all(np.min(np.abs(a - k)) > MARGIN for k in kinks)


def _elementwise(name: str, mt, np_fn, kinks=(), text=None) -> Op:
    return Op(name, 1, mt, np_fn, text or (lambda a: f"F.{name}({a})"), ok=_off(*kinks))


def _np_softplus(a):
    return np.maximum(a, 0) + np.log1p(np.exp(-np.abs(a)))


def _np_elu(a, alpha=1.0, scale=1.0, s=1.0):
    return np.where(a > 0, scale * a, scale * alpha * np.expm1(np.minimum(a, 0) * s))


def _np_sigmoid(a):
    return 1 / (1 + np.exp(-a))


def _np_softmin(a, dim):
    z = np.exp(-a - np.max(-a, axis=dim, keepdims=True))
    return z / np.sum(z, axis=dim, keepdims=True)


def _even_dims(a) -> list:
    return [d for d in range(-a.ndim, 0) if a.shape[d] % 2 == 0]


def _np_glu(a, dim):
    first, second = np.split(a, 2, axis=dim)
    return first * _np_sigmoid(second)


SELU = (1.6732632423543772848170429916717, 1.0507009873554804934193349852946)

ACTIVATIONS = [
    _elementwise("leaky_relu", lambda a: F.leaky_relu(a, 0.2), lambda a: np.where(a > 0, a, 0.2 * a), (0,)),
    _elementwise("elu", F.elu, _np_elu, (0,)),  # (its second derivative jumps at 0)
    _elementwise("selu", F.selu, lambda a: _np_elu(a, *SELU), (0,)),
    _elementwise("celu", lambda a: F.celu(a, 2.0), lambda a: _np_elu(a, 2.0, s=0.5), (0,)),
    _elementwise("hardtanh", F.hardtanh, lambda a: np.clip(a, -1, 1), (-1, 1)),
    _elementwise("relu6", F.relu6, lambda a: np.clip(a, 0, 6), (0, 6)),
    _elementwise("hardsigmoid", F.hardsigmoid, lambda a: np.clip(a + 3, 0, 6) / 6, (-3, 3)),
    _elementwise("hardswish", F.hardswish, lambda a: a * np.clip(a + 3, 0, 6) / 6, (-3, 3)),
    _elementwise(
        "threshold",
        lambda a: F.threshold(a, 0.5, -1.0),
        lambda a: np.where(a > 0.5, a, -1.0),
        (0.5,),
        lambda a: f"F.threshold({a}, 0.5, -1.0)",
    ),
    _elementwise("softshrink", F.softshrink, lambda a: np.sign(a) * np.maximum(np.abs(a) - 0.5, 0), (-0.5, 0.5)),
    _elementwise("hardshrink", F.hardshrink, lambda a: np.where(np.abs(a) > 0.5, a, 0.0), (-0.5, 0.5)),
    _elementwise("mish", F.mish, lambda a: a * np.tanh(_np_softplus(a))),
    _elementwise("logsigmoid", F.logsigmoid, lambda a: -_np_softplus(-a)),
    _elementwise("softsign", F.softsign, lambda a: a / (1 + np.abs(a)), (0,)),  # (its 2nd derivative jumps at 0)
    _elementwise("tanhshrink", F.tanhshrink, lambda a: a - np.tanh(a)),
    Op(
        "prelu",
        1,
        lambda a, w: F.prelu(a, mt.tensor([w], dtype=a.dtype)),
        lambda a, w: np.where(a > 0, a, w * a),
        lambda a, w: f"F.prelu({a}, {w})",
        ok=_off(0),
        params=lambda draw, a: {"w": draw(st.sampled_from([0.1, -0.3]))},
    ),
    Op(
        "softmin",
        1,
        lambda a, dim: F.softmin(a, dim),
        _np_softmin,
        lambda a, dim: f"F.softmin({a}, {dim})",
        ok=lambda a: a.ndim > 0,
        params=lambda draw, a: {"dim": draw(st.integers(-a.ndim, a.ndim - 1))},
    ),
    Op(
        "glu",
        1,
        lambda a, dim: F.glu(a, dim),
        _np_glu,
        lambda a, dim: f"F.glu({a}, {dim})",
        ok=lambda a: a.ndim > 0 and bool(_even_dims(a)),
        params=lambda draw, a: {"dim": draw(st.sampled_from(_even_dims(a)))},
    ),
]


# ------------------------------------------------------------------ distances, normalisation, bags
def _norms_away_from_zero(*arrays) -> bool:
    return all(a.ndim > 0 and a.size > 0 and np.min(np.sqrt((a * a).sum(-1))) > MARGIN for a in arrays)


def _same_shape(a, b) -> bool:
    return a.shape == b.shape and a.ndim > 0 and a.size > 0


def _np_cosine(a, b):
    return (a * b).sum(-1) / np.sqrt((a * a).sum(-1) * (b * b).sum(-1))


def _np_rms_norm(a):
    return a / np.sqrt((a * a).mean(-1, keepdims=True) + np.finfo(a.dtype).eps)


def _bags(a) -> np.ndarray:
    """Indices into the rows of ``a`` for ``embedding_bag``: two bags (the second maybe empty)."""
    return np.arange(a.shape[0])[::-1].copy()


def _np_embedding_bag(a, mode, split):
    picked = a[_bags(a)]
    bags = [picked[:split], picked[split:]]
    if mode == "sum":
        return np.stack([b.sum(0) for b in bags])
    if mode == "mean":
        return np.stack([b.mean(0) if len(b) else np.zeros(a.shape[1]) for b in bags])
    return np.stack([b.max(0) if len(b) else np.zeros(a.shape[1]) for b in bags])


def _bag_modes(a) -> list:
    """'sum' and 'mean'; 'max' too when no two rows nearly tie in any dim (its gradient goes to one winner)."""
    ordered = np.sort(a, axis=0)
    return ["sum", "mean"] + (["max"] if np.min(ordered[1:] - ordered[:-1]) > MARGIN else [])


OTHERS = [
    Op(
        "rms_norm",
        1,
        lambda a: F.rms_norm(a, a.shape[-1:]),
        _np_rms_norm,
        lambda a: f"F.rms_norm({a}, {a}.shape[-1:])",
        ok=lambda a: a.ndim > 0 and np.min(np.abs(a).max(-1)) > MARGIN,
    ),  # fmt: skip
    Op(
        "embedding_bag",
        1,
        lambda a, mode, split: F.embedding_bag(mt.tensor(_bags(a._data)), a, mt.tensor([0, split]), mode=mode),
        _np_embedding_bag,
        lambda a, mode, split: f"F.embedding_bag(rows reversed, {a}, [0, {split}], mode={mode!r})",
        ok=lambda a: a.ndim == 2 and a.shape[0] >= 2,
        params=lambda draw, a: {
            "mode": draw(st.sampled_from(_bag_modes(a))),
            "split": draw(st.integers(1, a.shape[0])),
        },
    ),
]
DISTANCES = [
    Op(
        "cosine_similarity",
        2,
        lambda a, b: F.cosine_similarity(a, b, -1),
        _np_cosine,
        lambda a, b: f"F.cosine_similarity({a}, {b}, -1)",
        ok=lambda a, b: _same_shape(a, b) and _norms_away_from_zero(a, b),
    ),
    Op(
        "pairwise_distance",
        2,
        F.pairwise_distance,
        lambda a, b: np.sqrt(((a - b + 1e-6) ** 2).sum(-1)),
        lambda a, b: f"F.pairwise_distance({a}, {b})",
        ok=lambda a, b: _same_shape(a, b) and _norms_away_from_zero(a - b),
    ),
]


LAYERS = [
    Op(  # (the weight a graph value, its first column the bias: in forward mode, every operand carries a tangent)
        "linear",
        2,
        lambda a, b: F.linear(a, b, b[:, 0]),
        lambda a, b: a @ b.T + b[:, 0],
        lambda a, b: f"F.linear({a}, {b}, {b}[:, 0])",
        ok=lambda a, b: a.ndim >= 1 and b.ndim == 2 and b.shape[1] >= 1 and a.shape[-1] == b.shape[1],
    ),
]


# ------------------------------------------------------------------ losses (target: the second operand)
def _reduced(loss, reduction):
    return loss.mean() if reduction == "mean" else loss.sum()


def _loss(name: str, np_loss, ok=_same_shape) -> Op:
    return Op(
        name,
        2,
        lambda a, b, reduction: getattr(F, name)(a, b, reduction=reduction),
        lambda a, b, reduction: _reduced(np_loss(a, b), reduction),
        lambda a, b, reduction: f"F.{name}({a}, {b}, reduction={reduction!r})",
        ok=ok,
        params=lambda draw, a, b: {"reduction": draw(st.sampled_from(["mean", "sum"]))},
    )


def _hinge_ok(a, b) -> bool:
    """margin_ranking_loss(a, b, target=1, margin=0.5): -(a - b) + 0.5 away from its kink at 0."""
    return _same_shape(a, b) and bool(np.min(np.abs(b - a + 0.5)) > MARGIN)


def _np_multi_margin(a):
    """multi_margin_loss(a, target 0 in each row), summed: sum_{c != 0} [1 - a_0 + a_c]+ / C."""
    return (np.maximum(1 - a[:, :1] + a, 0)[:, 1:].sum(1) / a.shape[1]).sum()


def _np_multilabel_margin(a):
    """multilabel_margin_loss(a, classes 0 and 1 in each row), summed:
    sum_{j in 0, 1} sum_{c >= 2} [1 - a_j + a_c]+ / C."""
    z = 1 - a[:, :2, None] + a[:, None, 2:]
    return (np.maximum(z, 0).sum((1, 2)) / a.shape[1]).sum()


def _margins_ok(a, listed: int) -> bool:
    """An (N, C) value with C > ``listed`` whose margins 1 - a_j + a_c (j listed, c not) are away from 0."""
    if a.ndim != 2 or a.shape[1] <= listed:
        return False
    return bool(np.min(np.abs(1 - a[:, :listed, None] + a[:, None, listed:])) > MARGIN)


def _two_labels(shape: tuple) -> np.ndarray:
    """Targets (N, C) listing classes 0 and 1 in each row, then -1."""
    target = np.full(shape, -1)
    target[:, :2] = (0, 1)
    return target


def _classes(shape: tuple) -> np.ndarray:
    """Class-index targets for (N, C) scores: 0, 1, ..., C - 1, 0, ..."""
    return np.arange(shape[0]) % shape[1]


def _np_cross_entropy(a, smoothing: float):
    """cross_entropy(a, _classes, label_smoothing), the mean over the rows."""
    top = a.max(-1, keepdims=True)
    logp = a - top - np.log(np.exp(a - top).sum(-1, keepdims=True))
    picked = logp[np.arange(a.shape[0]), _classes(a.shape)]
    return (-(1 - smoothing) * picked - smoothing * logp.mean(-1)).mean()


def _np_ctc_one_label(a):
    """-log p(label 1) summed over the batch, by its closed form: the paths are blank* 1+ blank*."""
    lp = a - np.log(np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True)) - a.max(-1, keepdims=True)
    p = np.exp(lp)  # (T, N, C)
    t_max = a.shape[0]
    total = np.zeros(a.shape[1])
    for start in range(t_max):  # the first and last steps of the label
        for end in range(start, t_max):
            path = np.prod(p[:start, :, 0], 0) * np.prod(p[start : end + 1, :, 1], 0) * np.prod(p[end + 1 :, :, 0], 0)
            total = total + path
    return -np.log(total).sum()


LOSSES = [
    Op(
        "cross_entropy",
        1,
        lambda a, smoothing: F.cross_entropy(a, mt.tensor(_classes(a.shape)), label_smoothing=smoothing),
        _np_cross_entropy,
        lambda a, smoothing: f"F.cross_entropy({a}, classes 0, 1, ..., label_smoothing={smoothing})",
        ok=lambda a: a.ndim == 2 and a.shape[1] >= 2,
        params=lambda draw, a: {"smoothing": draw(st.sampled_from([0.0, 0.1]))},
    ),
    _loss("soft_margin_loss", lambda a, b: np.logaddexp(0, -a * b)),
    _loss(
        "multilabel_soft_margin_loss",
        lambda a, b: -(b * -np.logaddexp(0, -a) + (1 - b) * -np.logaddexp(0, a)).mean(-1),
    ),
    _loss("poisson_nll_loss", lambda a, b: np.exp(a) - b * a, ok=lambda a, b: _same_shape(a, b) and np.max(a) < 4),
    Op(
        "gaussian_nll_loss",
        2,
        lambda a, b: F.gaussian_nll_loss(a, b, b * b + 0.5),
        lambda a, b: (0.5 * (np.log(b * b + 0.5) + (a - b) ** 2 / (b * b + 0.5))).mean(),
        lambda a, b: f"F.gaussian_nll_loss({a}, {b}, {b} * {b} + 0.5)",
        ok=_same_shape,
    ),
    Op(
        "margin_ranking_loss",
        2,
        lambda a, b: F.margin_ranking_loss(a, b, a.detach() * 0 + 1, margin=0.5),
        lambda a, b: np.maximum(b - a + 0.5, 0).mean(),
        lambda a, b: f"F.margin_ranking_loss({a}, {b}, 1, margin=0.5)",
        ok=_hinge_ok,
    ),
    Op(
        "ctc_loss",
        1,
        lambda a: F.ctc_loss(
            a.log_softmax(-1),
            mt.tensor([[1]] * a.shape[1]),
            [a.shape[0]] * a.shape[1],
            [1] * a.shape[1],
            reduction="sum",
        ),  # fmt: skip
        lambda a: _np_ctc_one_label(a),
        lambda a: f"F.ctc_loss({a}.log_softmax(-1), target [1] each, reduction='sum')",
        ok=lambda a: a.ndim == 3 and a.shape[2] >= 2 and a.shape[0] >= 1,
    ),
    Op(
        "multi_margin_loss",
        1,
        lambda a: F.multi_margin_loss(a, mt.zeros(a.shape[0], dtype=mt.int64), reduction="sum"),
        _np_multi_margin,
        lambda a: f"F.multi_margin_loss({a}, target 0 each, reduction='sum')",
        ok=lambda a: _margins_ok(a, 1),
    ),
    Op(
        "multilabel_margin_loss",
        1,
        lambda a: F.multilabel_margin_loss(a, mt.tensor(_two_labels(a.shape)), reduction="sum"),
        _np_multilabel_margin,
        lambda a: f"F.multilabel_margin_loss({a}, classes 0 and 1 each, reduction='sum')",
        ok=lambda a: _margins_ok(a, 2),
    ),
]

NN_UNARY = ACTIVATIONS + OTHERS + [op for op in LOSSES if op.arity == 1]
NN_BINARY = DISTANCES + LAYERS + [op for op in LOSSES if op.arity == 2]

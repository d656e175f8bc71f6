"""Cases for the losses and distances beyond op_cases.py's: margin and embedding losses,
likelihood losses (Gaussian, Poisson, CTC), distances and similarities between rows,
and the layers that are one call (bilinear, embedding_bag).

Targets are what each loss expects: +1/-1 labels, class indices, -1-padded label lists,
counts, positive variances.
"""

from __future__ import annotations

import numpy as np
from op_inputs import F32, Case, classes, normal, normal_pair

T, LABELS, TARGET_LEN = 32, 16, 8  # CTC: time steps, classes (0 is the blank), target length


def _signs(rng, shape) -> np.ndarray:
    return np.where(rng.random(shape) < 0.5, F32(-1), F32(1))


def _pair_signs(rng, r, c):
    """x1, x2 (r, c) and a +1/-1 label per row."""
    return *normal_pair(rng, r, c), _signs(rng, r)


def _x_signs(rng, r, c):
    """x (r, c) and +1/-1 labels of its shape."""
    return rng.standard_normal((r, c), dtype=F32), _signs(rng, (r, c))


def _triplet(rng, r, c):
    """anchor, positive, negative (r, c)."""
    return tuple(rng.standard_normal((r, c), dtype=F32) for _ in range(3))


def _gaussian(rng, r, c):
    """mean, target (r, c) and a positive variance."""
    return *normal_pair(rng, r, c), rng.uniform(0.5, 2.0, (r, c)).astype(F32)


def _poisson(rng, r, c):
    """log-rates (r, c) and counts."""
    return rng.standard_normal((r, c), dtype=F32), rng.poisson(1.0, (r, c)).astype(F32)


def _multilabel(rng, r, c):
    """logits (r, c) and per row 3 distinct class indices, then -1 padding."""
    target = np.full((r, c), -1)
    target[:, :3] = np.argsort(rng.random((r, c)), axis=1)[:, :3]
    return rng.standard_normal((r, c), dtype=F32), target


def _ctc(rng, r, c):
    """logits (T, N, C) with N = r * c // (T * C), targets (N, 8) in 1..C-1, and the lengths."""
    n = max(1, r * c // (T * LABELS))
    logits = rng.standard_normal((T, n, LABELS), dtype=F32)
    targets = rng.integers(1, LABELS, (n, TARGET_LEN))
    return logits, targets, np.full(n, T), np.full(n, TARGET_LEN)


def _bilinear(rng, r, c):
    """x1, x2 (r, c // 4), weight (16, c // 4, c // 4), bias (16,)."""
    k = max(1, c // 4)
    w = rng.standard_normal((16, k, k), dtype=F32) / F32(k)
    x1, x2 = (rng.standard_normal((r, k), dtype=F32) for _ in range(2))
    return x1, x2, w, rng.standard_normal(16, dtype=F32)


def _embedding_bag(rng, r, c):
    """r bags of 8 token ids (with repeats) into a (r, c) table."""
    return rng.integers(0, r, (r, 8)), rng.standard_normal((r, c), dtype=F32)


def _ctc_loss(lib, F, logits, targets, input_lengths, target_lengths):
    return F.ctc_loss(logits.log_softmax(2), targets, input_lengths, target_lengths)


CASES = [
    # margin and embedding losses
    Case("soft_margin_loss", "loss", _x_signs, lambda lib, F, x, y: F.soft_margin_loss(x, y), (1,)),
    Case("hinge_embedding_loss", "loss", _x_signs, lambda lib, F, x, y: F.hinge_embedding_loss(x, y), (1,)),
    Case(
        "margin_ranking_loss",
        "loss",
        _pair_signs,
        lambda lib, F, a, b, y: F.margin_ranking_loss(a.sum(-1), b.sum(-1), y, margin=0.5),
        (2,),
    ),
    Case("cosine_embedding_loss", "loss", _pair_signs, lambda lib, F, a, b, y: F.cosine_embedding_loss(a, b, y), (2,)),
    Case("multi_margin_loss", "loss", classes, lambda lib, F, x, t: F.multi_margin_loss(x, t)),
    Case("multilabel_margin_loss", "loss", _multilabel, lambda lib, F, x, t: F.multilabel_margin_loss(x, t)),
    Case(
        "multilabel_soft_margin_loss",
        "loss",
        _x_signs,
        lambda lib, F, x, y: F.multilabel_soft_margin_loss(x, (y + 1) / 2),
        (1,),
    ),
    Case("triplet_margin_loss", "loss", _triplet, lambda lib, F, a, p, n: F.triplet_margin_loss(a, p, n)),
    Case(
        "triplet_margin_with_distance_loss",
        "loss",
        _triplet,
        lambda lib, F, a, p, n: F.triplet_margin_with_distance_loss(a, p, n),
    ),
    # likelihood losses
    Case("gaussian_nll_loss", "loss", _gaussian, lambda lib, F, x, t, v: F.gaussian_nll_loss(x, t, v), (1,)),
    Case("poisson_nll_loss", "loss", _poisson, lambda lib, F, x, t: F.poisson_nll_loss(x, t), (1,)),
    Case("ctc_loss", "loss", _ctc, _ctc_loss),
    # distances and similarities
    Case("pairwise_distance", "distance", normal_pair, lambda lib, F, x, y: F.pairwise_distance(x, y)),
    Case("cosine_similarity", "distance", normal_pair, lambda lib, F, x, y: F.cosine_similarity(x, y)),
    Case("pdist", "distance", normal, lambda lib, F, x: F.pdist(x)),
    # layers in one call
    Case("bilinear", "matmul", _bilinear, lambda lib, F, x1, x2, w, b: F.bilinear(x1, x2, w, b)),
    Case("embedding_bag", "embedding", _embedding_bag, lambda lib, F, i, w: F.embedding_bag(i, w)),
]

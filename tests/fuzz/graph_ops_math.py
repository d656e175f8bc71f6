"""The math, reduction, building and linear-algebra ops in the random graphs (``graph_ops.py`` has the first
catalogue and the ``Op`` record): each with its minitensor form, a NumPy form and a printed form, and an ``ok``
that keeps it smooth near its operands (away from poles, branch cuts, ties and near-singular matrices).

The NumPy forms are NumPy's (or Python's ``math``) where NumPy has the function; for erfinv, digamma and
polygamma, which it lacks, they are minitensor's own NumPy functions (``minitensor.backend``: their values are
checked against PyTorch in tests/ops/test_special.py and test_gamma.py), so here the graphs test the gradients.
``MATH_UNARY`` and ``MATH_BINARY`` join ``UNARY`` and ``BINARY`` in ``random_graphs.py``.
"""

from __future__ import annotations

import math

import numpy as np
from graph_ops import MARGIN, MAX_SIZE, Op, _away_from_zero, _broadcasts, _positive
from hypothesis import strategies as st

import minitensor as mt
from minitensor import backend

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])
_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])


def _inside(low: float, high: float):
    return lambda a: a.size > 0 and bool(np.min(a) > low and np.max(a) < high)


def _method(name: str, reference, ok=lambda a: a.size > 0) -> Op:
    """``a.name()``, elementwise."""
    return Op(name, 1, lambda a: getattr(a, name)(), reference, lambda a: f"{a}.{name}()", ok=ok)


# ------------------------------------------------------------------ along a dim
def _distinct_along(a: np.ndarray, d: int) -> bool:
    """Every two elements of each slice along ``d`` at least MARGIN apart (no ties for sorts and running maxima)."""
    if a.shape[d] < 2:
        return True
    ordered = np.sort(a, axis=d)
    return bool(np.min(np.diff(ordered, axis=d)) > MARGIN)


def _dims(a: np.ndarray, distinct: bool = False) -> list:
    return [d for d in range(a.ndim) if not distinct or _distinct_along(a, d)]


def _along(name: str, mt_fn, np_fn, text, distinct: bool = False, ok=lambda a: True) -> Op:
    """An op with a ``dim`` setting, drawn among the dims that suit the operand."""
    return Op(
        name,
        1,
        mt_fn,
        np_fn,
        text,
        ok=lambda a: a.ndim > 0 and a.size > 0 and ok(a) and bool(_dims(a, distinct)),
        params=lambda draw, a: {"dim": draw(st.sampled_from(_dims(a, distinct)))},
    )


def _np_logcumsumexp(a, dim):
    return np.logaddexp.accumulate(a, axis=dim)


def _np_lower_median(a, dim):
    return np.take(np.sort(a, axis=dim), (a.shape[dim] - 1) // 2, axis=dim)


def _np_cummax(a, dim):
    return np.maximum.accumulate(a, axis=dim)


# ------------------------------------------------------------------ matrices
def _square(a) -> bool:
    return a.ndim >= 2 and a.shape[-1] == a.shape[-2] and a.shape[-1] >= 2


def _well_conditioned(a) -> bool:
    """Square matrices whose singular values lie in [0.3, 5]: inverses and determinants stay moderate."""
    if not _square(a):
        return False
    s = np.linalg.svd(a, compute_uv=False)
    return bool(s.min() > 0.3 and s.max() < 5)


def _distinct_singular_values(a) -> bool:
    """Singular values away from 0 and from each other (the SVD's gradient divides by their gaps)."""
    if a.ndim < 2 or min(a.shape[-2:]) < 1 or a.size > MAX_SIZE:
        return False
    s = np.linalg.svd(a, compute_uv=False)
    return bool(s.min() > 0.3 and (s.shape[-1] < 2 or np.min(-np.diff(s, axis=-1)) > 0.3))


def _distinct_eigenvalues(a) -> bool:
    if not _square(a):
        return False
    w = np.linalg.eigvalsh(a + np.swapaxes(a, -1, -2))
    return bool(np.min(np.diff(w, axis=-1)) > 0.3)


def _full_column_rank(a) -> bool:
    return a.ndim >= 2 and a.shape[-2] >= a.shape[-1] and _distinct_singular_values(a)


def _np_spd(a):
    return a @ np.swapaxes(a, -1, -2) + np.eye(a.shape[-1])


def _mt_qr_r_positive(a):
    """R's rows signed to a positive diagonal (a QR that does not depend on Householder's sign choices)."""
    r = mt.linalg.qr(a).R
    return r * mt.tensor(np.sign(np.diagonal(r.numpy(), axis1=-2, axis2=-1)), dtype=a.dtype)[..., :, None]


def _np_r_positive(a):
    r = np.linalg.qr(a)[1]
    return r * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., :, None]


def _solvable(a, b) -> bool:
    """A well-conditioned A and a B of matrices (not PyTorch's batch of vectors, B.shape == A.shape[:-1], which
    NumPy's solve reads as matrices)."""
    vectors = b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]
    return (
        _well_conditioned(a) and b.ndim >= 2 and not vectors and b.shape[-2] == a.shape[-1] and _broadcasts_batch(a, b)
    )


def _broadcasts_batch(a, b) -> bool:
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        return False
    return True


def _last_dims_match(a, b) -> bool:
    return a.ndim >= 1 and b.ndim >= 1 and a.shape[-1] == b.shape[-1] and a.size * b.size <= MAX_SIZE * 4


def _cdist_ok(a, b) -> bool:
    """(..., P, M) and (..., R, M) with no two points closer than MARGIN (the distance has a kink at 0)."""
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-1] or not _broadcasts_batch(a, b):
        return False
    d = np.linalg.norm(a[..., :, None, :] - b[..., None, :, :], axis=-1)
    return d.size <= MAX_SIZE and bool(d.min() > MARGIN)


def _cross_dims(a, b) -> list:
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return []
    return [d for d, s in enumerate(shape) if s == 3]


def _np_cross(a, b, dim):
    a, b = np.broadcast_arrays(a, b)
    return np.cross(a, b, axis=dim)


def _off_the_branch_cut(a, b) -> bool:
    """atan2 jumps by 2 pi where a changes sign with b < 0."""
    return _broadcasts(a, b) and bool(np.all((np.abs(a) > MARGIN) | (b > MARGIN)))


def _copysign_ok(a, b) -> bool:
    return _broadcasts(a, b) and _away_from_zero(a) and _away_from_zero(b)


def _hypot_ok(a, b) -> bool:
    return _broadcasts(a, b) and bool(np.min(np.hypot(*np.broadcast_arrays(a, b))) > MARGIN)


MATH_UNARY = [
    _method("tan", np.tan, _inside(-1.2, 1.2)),
    _method("asin", np.arcsin, _inside(-0.9, 0.9)),
    _method("acos", np.arccos, _inside(-0.9, 0.9)),
    _method("atan", np.arctan),
    _method("sinh", np.sinh, _inside(-4, 4)),
    _method("cosh", np.cosh, _inside(-4, 4)),
    _method("asinh", np.arcsinh),
    _method("acosh", np.arccosh, _inside(1.2, 1e4)),
    _method("atanh", np.arctanh, _inside(-0.8, 0.8)),
    _method("erf", _erf),
    _method("erfc", _erfc),
    _method("erfinv", backend.erfinv, _inside(-0.9, 0.9)),
    _method("logit", lambda a: np.log(a / (1 - a)), _inside(0.1, 0.9)),
    _method("sinc", np.sinc),
    _method("i0", np.i0, _inside(-5, 5)),
    # (the gamma family on a * a + 0.5: positive for every operand, so it is drawn as often as the others)
    Op(
        "lgamma",
        1,
        lambda a: (a * a + 0.5).lgamma(),
        lambda a: _lgamma(a * a + 0.5),
        lambda a: f"({a}**2 + 0.5).lgamma()",
        ok=lambda a: a.size > 0 and np.max(np.abs(a)) < 30,
    ),  # fmt: skip
    Op(
        "digamma",
        1,
        lambda a: (a * a + 0.5).digamma(),
        lambda a: backend.polygamma(0, a * a + 0.5),
        lambda a: f"({a}**2 + 0.5).digamma()",
        ok=lambda a: a.size > 0,
    ),  # fmt: skip
    Op(
        "polygamma",
        1,
        lambda a: (a * a + 0.5).polygamma(1),
        lambda a: backend.polygamma(1, a * a + 0.5),
        lambda a: f"({a}**2 + 0.5).polygamma(1)",
        ok=lambda a: a.size > 0,
    ),  # fmt: skip
    _method("deg2rad", np.deg2rad),
    Op("rad2deg", 1, lambda a: a.rad2deg() / 100, lambda a: np.rad2deg(a) / 100, lambda a: f"{a}.rad2deg() / 100"),
    _method("nan_to_num", np.nan_to_num),
    Op(
        "float_power",
        1,
        lambda a: mt.float_power(a, 1.5).to(a.dtype),
        lambda a: np.power(a, 1.5),
        lambda a: f"mt.float_power({a}, 1.5).to({a}.dtype)",
        ok=_positive,
    ),  # fmt: skip
    Op(
        "lerp_const",
        1,
        lambda a: mt.lerp(a, a * a, 0.3),
        lambda a: a + 0.3 * (a * a - a),
        lambda a: f"mt.lerp({a}, {a} * {a}, 0.3)",
    ),  # fmt: skip
    Op(
        "nansum",
        1,
        lambda a: mt.nansum(a, -1),
        lambda a: np.sum(a, axis=-1),
        lambda a: f"mt.nansum({a}, -1)",
        ok=lambda a: a.ndim > 0,
    ),  # fmt: skip
    Op(
        "nanmean",
        1,
        lambda a: a.nanmean(0, True),
        lambda a: np.mean(a, axis=0, keepdims=True),
        lambda a: f"{a}.nanmean(0, True)",
        ok=lambda a: a.ndim > 0 and a.size > 0,
    ),  # fmt: skip
    Op(
        "std_mean",
        1,
        lambda a: mt.std_mean(a)[0] + mt.std_mean(a)[1],
        lambda a: np.std(a, ddof=1) + np.mean(a),
        lambda a: f"sum(mt.std_mean({a}))",
        ok=lambda a: a.size >= 2 and np.var(a) > 1e-2,
    ),  # fmt: skip
    _along(
        "cumprod",
        lambda a, dim: a.cumprod(dim),
        lambda a, dim: np.cumprod(a, axis=dim),
        lambda a, dim: f"{a}.cumprod({dim})",
        ok=lambda a: np.max(np.abs(a)) < 3,
    ),  # fmt: skip
    _along(
        "logcumsumexp", lambda a, dim: a.logcumsumexp(dim), _np_logcumsumexp, lambda a, dim: f"{a}.logcumsumexp({dim})"
    ),  # fmt: skip
    _along(
        "cummax",
        lambda a, dim: a.cummax(dim).values,
        _np_cummax,
        lambda a, dim: f"{a}.cummax({dim}).values",
        distinct=True,
    ),  # fmt: skip
    _along(
        "median_dim",
        lambda a, dim: a.median(dim).values,
        _np_lower_median,
        lambda a, dim: f"{a}.median({dim}).values",
        distinct=True,
    ),  # fmt: skip
    _along(
        "kthvalue",
        lambda a, dim: a.kthvalue(1, dim).values,
        lambda a, dim: np.min(a, axis=dim),
        lambda a, dim: f"{a}.kthvalue(1, {dim}).values",
        distinct=True,
    ),  # fmt: skip
    _along(
        "quantile",
        lambda a, dim: mt.quantile(a, 0.3, dim),
        lambda a, dim: np.quantile(a, 0.3, axis=dim),
        lambda a, dim: f"mt.quantile({a}, 0.3, {dim})",
        distinct=True,
    ),  # fmt: skip
    _along(
        "diff",
        lambda a, dim: a.diff(dim=dim),
        lambda a, dim: np.diff(a, axis=dim),
        lambda a, dim: f"{a}.diff(dim={dim})",
        ok=lambda a: min(a.shape) >= 2,
    ),  # fmt: skip
    _along(
        "repeat_interleave",
        lambda a, dim: a.repeat_interleave(2, dim),
        lambda a, dim: np.repeat(a, 2, axis=dim),
        lambda a, dim: f"{a}.repeat_interleave(2, {dim})",
        ok=lambda a: a.size * 2 <= MAX_SIZE,
    ),  # fmt: skip
    _along(
        "index_select",
        lambda a, dim: a.index_select(dim, mt.tensor([0, 0])),
        lambda a, dim: np.take(a, [0, 0], dim),
        lambda a, dim: f"{a}.index_select({dim}, [0, 0])",
    ),  # fmt: skip
    Op(
        "take",
        1,
        lambda a: a.take(mt.tensor([0, -1, 0])),
        lambda a: a.reshape(-1)[[0, -1, 0]],
        lambda a: f"{a}.take([0, -1, 0])",
        ok=lambda a: a.size > 0,
    ),  # fmt: skip
    Op(
        "movedim",
        1,
        lambda a: a.movedim(0, -1),
        lambda a: np.moveaxis(a, 0, -1),
        lambda a: f"{a}.movedim(0, -1)",
        ok=lambda a: a.ndim >= 2,
    ),  # fmt: skip
    Op(
        "rot90",
        1,
        lambda a: a.rot90(1, (0, 1)),
        lambda a: np.rot90(a, 1, (0, 1)),
        lambda a: f"{a}.rot90(1, (0, 1))",
        ok=lambda a: a.ndim >= 2,
    ),  # fmt: skip
    Op(
        "diagonal",
        1,
        lambda a: a.diagonal(0, -2, -1),
        lambda a: np.diagonal(a, 0, -2, -1).copy(),
        lambda a: f"{a}.diagonal(0, -2, -1)",
        ok=lambda a: a.ndim >= 2,
    ),  # fmt: skip
    Op(
        "diag_embed",
        1,
        lambda a: a.diag_embed(),
        lambda a: a[..., None] * np.eye(a.shape[-1]),
        lambda a: f"{a}.diag_embed()",
        ok=lambda a: 0 < a.ndim < 4 and a.size * a.shape[-1] <= MAX_SIZE,
    ),  # fmt: skip
    Op("trace", 1, lambda a: a.trace(), np.trace, lambda a: f"{a}.trace()", ok=lambda a: a.ndim == 2),
    Op(
        "tensor_split",
        1,
        lambda a: mt.tensor_split(a, 2, -1)[0],
        lambda a: np.array_split(a, 2, -1)[0],
        lambda a: f"mt.tensor_split({a}, 2, -1)[0]",
        ok=lambda a: a.ndim > 0 and a.shape[-1] >= 2,
    ),  # fmt: skip
    # linear algebra (matrices that suit: well-conditioned, distinct singular or eigenvalues)
    Op("inv", 1, mt.linalg.inv, np.linalg.inv, lambda a: f"mt.linalg.inv({a})", ok=_well_conditioned),
    Op("det", 1, mt.linalg.det, np.linalg.det, lambda a: f"mt.linalg.det({a})", ok=_well_conditioned),
    Op(
        "logabsdet",
        1,
        lambda a: mt.linalg.slogdet(a).logabsdet,
        lambda a: np.linalg.slogdet(a)[1],
        lambda a: f"mt.linalg.slogdet({a}).logabsdet",
        ok=_well_conditioned,
    ),  # fmt: skip
    Op("pinv", 1, mt.linalg.pinv, np.linalg.pinv, lambda a: f"mt.linalg.pinv({a})", ok=_distinct_singular_values),
    Op(
        "svdvals",
        1,
        mt.linalg.svdvals,
        lambda a: np.linalg.svd(a, compute_uv=False),
        lambda a: f"mt.linalg.svdvals({a})",
        ok=_distinct_singular_values,
    ),  # fmt: skip
    Op(
        "nuclear_norm",
        1,
        lambda a: mt.linalg.matrix_norm(a, "nuc"),
        lambda a: np.linalg.norm(a, "nuc", (-2, -1)),
        lambda a: f"mt.linalg.matrix_norm({a}, 'nuc')",
        ok=_distinct_singular_values,
    ),  # fmt: skip
    Op(
        "eigvalsh",
        1,
        lambda a: mt.linalg.eigvalsh(a + a.mT),
        lambda a: np.linalg.eigvalsh(a + np.swapaxes(a, -1, -2)),
        lambda a: f"mt.linalg.eigvalsh({a} + {a}.mT)",
        ok=_distinct_eigenvalues,
    ),  # fmt: skip
    Op(
        "cholesky",
        1,
        lambda a: mt.linalg.cholesky(a @ a.mT + mt.eye(a.shape[-1], dtype=a.dtype)),
        lambda a: np.linalg.cholesky(_np_spd(a)),
        lambda a: f"mt.linalg.cholesky({a} @ {a}.mT + I)",
        ok=lambda a: _square(a) and np.abs(a).max() < 3,
    ),  # fmt: skip
    Op(
        "qr_r",
        1,
        _mt_qr_r_positive,
        _np_r_positive,
        lambda a: f"mt.linalg.qr({a}).R (positive diagonal)",
        ok=_full_column_rank,
    ),  # fmt: skip
    Op(
        "matrix_power",
        1,
        lambda a: mt.linalg.matrix_power(a, 3),
        lambda a: a @ a @ a,
        lambda a: f"mt.linalg.matrix_power({a}, 3)",
        ok=lambda a: _square(a) and np.abs(a).max() < 2,
    ),  # fmt: skip
]

MATH_BINARY = [
    Op("atan2", 2, mt.atan2, np.arctan2, lambda a, b: f"mt.atan2({a}, {b})", ok=_off_the_branch_cut),
    Op("hypot", 2, mt.hypot, np.hypot, lambda a, b: f"mt.hypot({a}, {b})", ok=_hypot_ok),
    Op("logaddexp", 2, mt.logaddexp, np.logaddexp, lambda a, b: f"mt.logaddexp({a}, {b})", ok=_broadcasts),
    Op("logaddexp2", 2, mt.logaddexp2, np.logaddexp2, lambda a, b: f"mt.logaddexp2({a}, {b})", ok=_broadcasts),
    Op("copysign", 2, mt.copysign, np.copysign, lambda a, b: f"mt.copysign({a}, {b})", ok=_copysign_ok),
    Op(
        "xlogy",
        2,
        mt.xlogy,
        lambda a, b: a * np.log(b),
        lambda a, b: f"mt.xlogy({a}, {b})",
        ok=lambda a, b: _broadcasts(a, b) and _positive(b),
    ),  # fmt: skip
    Op(
        "addcmul",
        2,
        lambda a, b: mt.addcmul(a, b, b, value=0.5),
        lambda a, b: a + 0.5 * b * b,
        lambda a, b: f"mt.addcmul({a}, {b}, {b}, value=0.5)",
        ok=_broadcasts,
    ),  # fmt: skip
    Op(
        "addcdiv",
        2,
        lambda a, b: mt.addcdiv(a, a, b),
        lambda a, b: a + a / b,
        lambda a, b: f"mt.addcdiv({a}, {a}, {b})",
        ok=lambda a, b: _broadcasts(a, b) and _away_from_zero(b),
    ),  # fmt: skip
    Op(
        "lerp",
        2,
        lambda a, b: mt.lerp(a, b, 0.25),
        lambda a, b: a + 0.25 * (b - a),
        lambda a, b: f"mt.lerp({a}, {b}, 0.25)",
        ok=lambda a, b: a.shape == b.shape,
    ),  # fmt: skip
    Op("inner", 2, mt.inner, np.inner, lambda a, b: f"mt.inner({a}, {b})", ok=_last_dims_match),
    Op(
        "vecdot",
        2,
        lambda a, b, dim: mt.linalg.vecdot(a, b, dim=dim),
        lambda a, b, dim: np.sum(a * b, axis=dim),
        lambda a, b, dim: f"mt.linalg.vecdot({a}, {b}, dim={dim})",
        ok=lambda a, b: _broadcasts(a, b) and max(a.ndim, b.ndim) >= 1,
        params=lambda draw, a, b: {"dim": draw(st.integers(-max(a.ndim, b.ndim), max(a.ndim, b.ndim) - 1))},
    ),  # fmt: skip
    Op(
        "outer",
        2,
        mt.outer,
        np.outer,
        lambda a, b: f"mt.outer({a}, {b})",
        ok=lambda a, b: a.ndim == b.ndim == 1 and a.size * b.size <= MAX_SIZE,
    ),  # fmt: skip
    Op(
        "kron",
        2,
        mt.kron,
        np.kron,
        lambda a, b: f"mt.kron({a}, {b})",
        ok=lambda a, b: a.ndim == b.ndim and 0 < a.size * b.size <= MAX_SIZE,
    ),  # fmt: skip
    Op(
        "cdist",
        2,
        mt.cdist,
        lambda a, b: np.linalg.norm(a[..., :, None, :] - b[..., None, :, :], axis=-1),
        lambda a, b: f"mt.cdist({a}, {b})",
        ok=_cdist_ok,
    ),  # fmt: skip
    Op(
        "cdist_by_products",
        2,
        lambda a, b: mt.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
        lambda a, b: np.linalg.norm(a[..., :, None, :] - b[..., None, :, :], axis=-1),
        lambda a, b: f'mt.cdist({a}, {b}, compute_mode="use_mm_for_euclid_dist")',
        ok=_cdist_ok,
    ),  # fmt: skip
    Op(
        "cross",
        2,
        lambda a, b, dim: mt.cross(a, b, dim=dim),
        _np_cross,
        lambda a, b, dim: f"mt.cross({a}, {b}, dim={dim})",
        ok=lambda a, b: bool(_cross_dims(a, b)),
        params=lambda draw, a, b: {"dim": draw(st.sampled_from(_cross_dims(a, b)))},
    ),  # fmt: skip
    Op("solve", 2, mt.linalg.solve, np.linalg.solve, lambda a, b: f"mt.linalg.solve({a}, {b})", ok=_solvable),
]

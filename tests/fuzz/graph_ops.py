"""The op catalogue of the random graphs (``random_graphs.py``): for each op a minitensor form,
a NumPy form and a printed form.

Each ``Op`` has an ``ok`` test that says whether it suits given operands (their
reference values), and a ``params`` function that draws its settings (a dim,
keepdim, a constant) among the suitable ones.  Unsuitable means a log or a
division near 0, relu or abs near their kink, a max with a near tie, an exp
that would overflow: so every generated graph is smooth near its inputs, its
values stay moderate (|v| < 1e4), and finite differences are meaningful.
``UNARY`` and ``BINARY`` list the ops; ``TANH`` suits any operand, ``MATMUL``
is drawn with a fresh weight leaf.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F

MAX_ABS = 1e4  # larger values are not generated (finite differences would lose precision)
MARGIN = 0.1  # distance kept from kinks (relu/abs at 0), poles (1/x, log) and ties of max
MAX_DIMS = 4  # the most dims and elements of a value
MAX_SIZE = 48


@dataclass(repr=False)
class Op:
    name: str
    arity: int
    mt: Callable  # (*tensors, **params) -> Tensor
    np: Callable  # (*arrays, **params) -> ndarray
    text: Callable  # (*names, **params) -> str
    ok: Callable = lambda *arrays: True  # (*arrays) -> does the op suit these operands?
    params: Callable = lambda draw, *arrays: {}  # (draw, *arrays) -> settings, drawn among the suitable

    def __repr__(self) -> str:
        return self.name


# ------------------------------------------------------------------ operand tests
def _away_from_zero(a) -> bool:
    return a.size > 0 and bool(np.min(np.abs(a)) > MARGIN)


def _positive(a) -> bool:
    return a.size > 0 and bool(np.min(a) > 2 * MARGIN)


def _broadcasts(a, b) -> bool:
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return False
    return int(np.prod(shape)) <= MAX_SIZE


def _matmul_ok(a, b) -> bool:
    if a.ndim == 0 or b.ndim == 0 or a.shape[-1] != (b.shape[0] if b.ndim == 1 else b.shape[-2]):
        return False
    try:
        return np.matmul(a, b).size <= MAX_SIZE
    except ValueError:  # batch dims that do not broadcast
        return False


def _off_the_jumps(remainder: Callable) -> Callable:
    """The ``ok`` of a remainder: the divisor away from 0 and the quotient away from the integers
    where the remainder jumps (by ``MARGIN`` of the remainder, on both sides)."""

    def ok(a, b) -> bool:
        if not (_broadcasts(a, b) and _away_from_zero(b)):
            return False
        r = np.abs(remainder(a, b))
        return bool(np.all((r > MARGIN) & (np.abs(b) - r > MARGIN)))

    return ok


def _cat_dims(a, b) -> list:
    if a.ndim == 0 or a.ndim != b.ndim or a.size + b.size > MAX_SIZE:
        return []
    return [d for d in range(a.ndim) if a.shape[:d] + a.shape[d + 1 :] == b.shape[:d] + b.shape[d + 1 :]]


# ------------------------------------------------------------------ reductions
def _dim_choices(ndim: int) -> list:
    """None (all dims), each dim (as a positive and a negative index) and each pair of dims."""
    choices = [None] + [d for d in range(-ndim, ndim)]
    choices += [(i, j) for i in range(ndim) for j in range(i + 1, ndim)]
    return choices


def _axes(ndim: int, dim) -> tuple:
    if dim is None:
        return tuple(range(ndim))
    return tuple(sorted({d % ndim for d in (dim if isinstance(dim, tuple) else (dim,))}))


def _end_gap(a: np.ndarray, axes: tuple) -> float:
    """The smallest gap between the two largest, or the two smallest, values of the reduced slices."""
    if not axes:
        return np.inf
    moved = np.moveaxis(a, axes, range(len(axes)))
    flat = moved.reshape((-1,) + moved.shape[len(axes) :])
    if flat.shape[0] < 2:
        return np.inf
    ordered = np.sort(flat, axis=0)
    return float(min(np.min(ordered[-1] - ordered[-2]), np.min(ordered[1] - ordered[0])))


def _spread(a: np.ndarray, axes: tuple) -> float:
    n = int(np.prod([a.shape[d] for d in axes]))
    return float(np.min(np.var(a, axis=axes, ddof=1))) if n >= 2 else 0.0


REDUCE_RULES = {  # which dims a reduction may use on operand a
    "any": lambda a, axes: True,
    "max": lambda a, axes: _end_gap(a, axes) > MARGIN,
    "var": lambda a, axes: _spread(a, axes) > 1e-2,
}


def _reduction(name: str, method: Callable, reference: Callable, rule: str = "any") -> Op:
    def dims(a) -> list:
        if a.size == 0:
            return []
        return [d for d in _dim_choices(a.ndim) if REDUCE_RULES[rule](a, _axes(a.ndim, d))]

    return Op(
        name,
        1,
        lambda a, dim, keepdim: method(a, dim, keepdim),
        lambda a, dim, keepdim: reference(a, axis=dim, keepdims=keepdim),
        lambda a, dim, keepdim: f"{a}.{name}(dim={dim}, keepdim={keepdim})",
        ok=lambda a: bool(dims(a)),
        params=lambda draw, a: {"dim": draw(st.sampled_from(dims(a))), "keepdim": draw(st.booleans())},
    )


def _np_logsumexp(a, axis, keepdims):
    m = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _np_pdist(a):
    i, j = np.triu_indices(a.shape[0], k=1)
    return np.sqrt(((a[i] - a[j]) ** 2).sum(axis=1))


def _rows_apart(a) -> bool:
    """A 2-D value with at least 2 rows, every pair of rows at a distance well above 0 (where the
    distance has its derivative)."""
    return a.ndim == 2 and a.shape[0] >= 2 and a.shape[1] >= 1 and bool(np.min(_np_pdist(a)) > 10 * MARGIN)


def _np_layer_norm(a):
    centred = a - a.mean(axis=-1, keepdims=True)
    return centred / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + 1e-5)


def _np_gelu(a):
    return a * 0.5 * (1.0 + _erf(a / math.sqrt(2.0)))


def _np_gelu_tanh(a):
    return 0.5 * a * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (a + 0.044715 * a**3)))


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _np_softmax(a, dim):
    z = np.exp(a - np.max(a, axis=dim, keepdims=True))
    return z / np.sum(z, axis=dim, keepdims=True)


def _np_log_softmax(a, dim):
    z = a - np.max(a, axis=dim, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=dim, keepdims=True))


# ------------------------------------------------------------------ params of shape ops
def _some_dim(draw, a) -> dict:
    return {"dim": draw(st.integers(-a.ndim, a.ndim - 1))}


def _max_dim_ok(a) -> bool:
    return a.ndim > 0 and any(_end_gap(a, (d,)) > MARGIN for d in range(a.ndim))


def _max_dim_params(draw, a) -> dict:
    dims = [d for d in range(a.ndim) if _end_gap(a, (d,)) > MARGIN]
    return {"dim": draw(st.sampled_from(dims)), "keepdim": draw(st.booleans())}


def _reshape_params(draw, a) -> dict:
    """Flatten, merge two adjacent dims, or split a dim of size 4 or 6 in two."""
    kinds = ["flatten"] + (["merge"] if a.ndim >= 2 else [])
    splittable = [d for d, s in enumerate(a.shape) if s in (4, 6)]
    if splittable and a.ndim < MAX_DIMS:
        kinds.append("split")
    kind = draw(st.sampled_from(kinds))
    if kind == "flatten":
        return {"shape": (-1,)}
    if kind == "merge":
        d = draw(st.integers(0, a.ndim - 2))
        return {"shape": a.shape[:d] + (a.shape[d] * a.shape[d + 1],) + a.shape[d + 2 :]}
    d = draw(st.sampled_from(splittable))
    return {"shape": a.shape[:d] + (2, a.shape[d] // 2) + a.shape[d + 1 :]}


def _transpose_params(draw, a) -> dict:
    d0, d1 = draw(st.permutations(range(a.ndim)))[:2]
    return {"d0": d0, "d1": d1}


def _slice_params(draw, a) -> dict:
    d = draw(st.sampled_from([d for d, s in enumerate(a.shape) if s >= 2]))
    return {"key": (slice(None),) * d + (slice(draw(st.integers(1, a.shape[d] - 1)), None),)}


def _take_params(draw, a) -> dict:
    """An integer index along dim 0, usually with a repeat (whose gradients must add up)."""
    index = draw(st.lists(st.integers(0, a.shape[0] - 1), min_size=1, max_size=3))
    repeat = draw(st.sampled_from([True, True, False]))
    return {"index": index + index[:1] if repeat else index}


def _expand_params(draw, a) -> dict:
    d = draw(st.sampled_from([d for d, s in enumerate(a.shape) if s == 1]))
    return {"shape": a.shape[:d] + (3,) + a.shape[d + 1 :]}


def _where_params(draw, a, b) -> dict:
    shape = np.broadcast_shapes(a.shape, b.shape)
    return {"mask": np.random.default_rng(draw(st.integers(0, 2**16))).random(shape) < 0.5}


def _key_text(key: tuple) -> str:
    return ", ".join(":" if k == slice(None) else f"{k.start}:" for k in key)


def _constant(draw, a) -> dict:
    return {"c": draw(st.sampled_from([-2.0, -0.5, 0.5, 1.5, 3.0]))}


# ------------------------------------------------------------------ the catalogue
UNARY = [
    Op("tanh", 1, lambda a: a.tanh(), np.tanh, lambda a: f"{a}.tanh()"),
    Op("exp", 1, lambda a: a.exp(), np.exp, lambda a: f"{a}.exp()", ok=lambda a: a.size > 0 and np.max(a) < 4),
    Op("log", 1, lambda a: a.log(), np.log, lambda a: f"{a}.log()", ok=_positive),
    Op("sqrt", 1, lambda a: a.sqrt(), np.sqrt, lambda a: f"{a}.sqrt()", ok=_positive),
    Op("neg", 1, lambda a: -a, np.negative, lambda a: f"-{a}"),
    Op("sigmoid", 1, lambda a: a.sigmoid(), lambda a: 1 / (1 + np.exp(-a)), lambda a: f"{a}.sigmoid()"),
    Op("relu", 1, lambda a: a.relu(), lambda a: np.maximum(a, 0), lambda a: f"{a}.relu()", ok=_away_from_zero),
    Op("abs", 1, lambda a: a.abs(), np.abs, lambda a: f"{a}.abs()", ok=_away_from_zero),
    Op("affine", 1, lambda a, c: a * c + c, lambda a, c: a * c + c, lambda a, c: f"{a} * {c} + {c}", params=_constant),
    Op("rsub", 1, lambda a, c: c - a, lambda a, c: c - a, lambda a, c: f"{c} - {a}", params=_constant),
    Op(
        "pow",
        1,
        lambda a, p: a**p,
        lambda a, p: a**p,
        lambda a, p: f"{a} ** {p}",
        ok=_positive,
        params=lambda draw, a: {"p": draw(st.sampled_from([-1.5, 0.5, 2.0, 3.0]))},
    ),
    Op("rdiv", 1, lambda a: 1.0 / a, lambda a: 1.0 / a, lambda a: f"1.0 / {a}", ok=_away_from_zero),
    _reduction("sum", lambda a, d, k: a.sum(d, k), np.sum),
    _reduction("mean", lambda a, d, k: a.mean(d, k), np.mean),
    _reduction("amax", lambda a, d, k: a.amax(d, k), np.max, "max"),
    _reduction("amin", lambda a, d, k: a.amin(d, k), np.min, "max"),
    _reduction("logsumexp", lambda a, d, k: a.logsumexp(d, k), _np_logsumexp),
    _reduction("var", lambda a, d, k: a.var(d, keepdim=k), lambda a, **kw: np.var(a, ddof=1, **kw), "var"),
    _reduction("std", lambda a, d, k: a.std(d, keepdim=k), lambda a, **kw: np.std(a, ddof=1, **kw), "var"),
    Op(
        "max_dim",
        1,
        lambda a, dim, keepdim: a.max(dim=dim, keepdim=keepdim).values,
        lambda a, dim, keepdim: np.max(a, axis=dim, keepdims=keepdim),
        lambda a, dim, keepdim: f"{a}.max(dim={dim}, keepdim={keepdim}).values",
        ok=_max_dim_ok,
        params=_max_dim_params,
    ),
    Op(
        "softmax",
        1,
        lambda a, dim: a.softmax(dim),
        _np_softmax,
        lambda a, dim: f"{a}.softmax(dim={dim})",
        ok=lambda a: a.ndim > 0,
        params=_some_dim,
    ),
    Op(
        "log_softmax",
        1,
        lambda a, dim: a.log_softmax(dim),
        _np_log_softmax,
        lambda a, dim: f"{a}.log_softmax(dim={dim})",
        ok=lambda a: a.ndim > 0,
        params=_some_dim,
    ),
    Op(
        "layer_norm",
        1,
        lambda a: F.layer_norm(a, a.shape[-1:]),
        _np_layer_norm,
        lambda a: f"F.layer_norm({a}, {a}.shape[-1:])",
        ok=lambda a: a.ndim > 0 and a.shape[-1] >= 2,
    ),
    Op("pdist", 1, lambda a: F.pdist(a), _np_pdist, lambda a: f"F.pdist({a})", ok=_rows_apart),
    Op("gelu", 1, lambda a: F.gelu(a), _np_gelu, lambda a: f"F.gelu({a})"),
    Op("gelu_tanh", 1, lambda a: F.gelu(a, approximate="tanh"), _np_gelu_tanh, lambda a: f"F.gelu({a}, 'tanh')"),
    Op(
        "reshape",
        1,
        lambda a, shape: a.reshape(shape),
        lambda a, shape: np.reshape(a, shape),
        lambda a, shape: f"{a}.reshape{shape}",
        params=_reshape_params,
    ),
    Op(
        "permute",
        1,
        lambda a, dims: a.permute(*dims),
        lambda a, dims: np.transpose(a, dims),
        lambda a, dims: f"{a}.permute{dims}",
        ok=lambda a: a.ndim >= 2,
        params=lambda draw, a: {"dims": tuple(draw(st.permutations(range(a.ndim))))},
    ),
    Op(
        "transpose",
        1,
        lambda a, d0, d1: a.transpose(d0, d1),
        lambda a, d0, d1: np.swapaxes(a, d0, d1),
        lambda a, d0, d1: f"{a}.transpose({d0}, {d1})",
        ok=lambda a: a.ndim >= 2,
        params=_transpose_params,
    ),
    Op(
        "unsqueeze",
        1,
        lambda a, dim: a.unsqueeze(dim),
        lambda a, dim: np.expand_dims(a, dim),
        lambda a, dim: f"{a}.unsqueeze({dim})",
        ok=lambda a: a.ndim < MAX_DIMS,
        params=lambda draw, a: {"dim": draw(st.integers(-a.ndim - 1, a.ndim))},
    ),
    Op(
        "squeeze",
        1,
        lambda a, dim: a.squeeze(dim),
        lambda a, dim: np.squeeze(a, dim),
        lambda a, dim: f"{a}.squeeze({dim})",
        ok=lambda a: 1 in a.shape,
        params=lambda draw, a: {"dim": draw(st.sampled_from([d for d, s in enumerate(a.shape) if s == 1]))},
    ),
    Op(
        "slice",
        1,
        lambda a, key: a[key],
        lambda a, key: a[key],
        lambda a, key: f"{a}[{_key_text(key)}]",
        ok=lambda a: any(s >= 2 for s in a.shape),
        params=_slice_params,
    ),
    Op(
        "take",
        1,
        lambda a, index: a[mt.tensor(index)],
        lambda a, index: a[np.array(index)],
        lambda a, index: f"{a}[{index}]",
        ok=lambda a: a.ndim > 0,
        params=_take_params,
    ),
    Op(
        "expand",
        1,
        lambda a, shape: a.expand(*shape),
        lambda a, shape: np.broadcast_to(a, shape),
        lambda a, shape: f"{a}.expand{shape}",
        ok=lambda a: 1 in a.shape and a.size * 3 <= MAX_SIZE,
        params=_expand_params,
    ),
]

BINARY = [
    Op("add", 2, lambda a, b: a + b, np.add, lambda a, b: f"{a} + {b}", ok=_broadcasts),
    Op("sub", 2, lambda a, b: a - b, np.subtract, lambda a, b: f"{a} - {b}", ok=_broadcasts),
    Op("mul", 2, lambda a, b: a * b, np.multiply, lambda a, b: f"{a} * {b}", ok=_broadcasts),
    Op(
        "div",
        2,
        lambda a, b: a / b,
        np.divide,
        lambda a, b: f"{a} / {b}",
        ok=lambda a, b: _broadcasts(a, b) and _away_from_zero(b),
    ),
    Op("matmul", 2, lambda a, b: a @ b, np.matmul, lambda a, b: f"{a} @ {b}", ok=_matmul_ok),
    Op("remainder", 2, lambda a, b: a % b, np.remainder, lambda a, b: f"{a} % {b}", ok=_off_the_jumps(np.remainder)),
    Op("fmod", 2, mt.fmod, np.fmod, lambda a, b: f"mt.fmod({a}, {b})", ok=_off_the_jumps(np.fmod)),
    Op(
        "cat",
        2,
        lambda a, b, dim: mt.cat([a, b], dim=dim),
        lambda a, b, dim: np.concatenate([a, b], axis=dim),
        lambda a, b, dim: f"mt.cat([{a}, {b}], dim={dim})",
        ok=lambda a, b: bool(_cat_dims(a, b)),
        params=lambda draw, a, b: {"dim": draw(st.sampled_from(_cat_dims(a, b)))},
    ),
    Op(
        "where",
        2,
        lambda a, b, mask: mt.where(mt.tensor(mask), a, b),
        lambda a, b, mask: np.where(mask, a, b),
        lambda a, b, mask: f"mt.where({mask.astype(int).tolist()}, {a}, {b})",
        ok=_broadcasts,
        params=_where_params,
    ),
]

TANH = UNARY[0]
MATMUL = BINARY[4]

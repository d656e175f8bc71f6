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

NN_UNARY = ACTIVATIONS
NN_BINARY: list = []

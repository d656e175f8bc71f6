"""Cases for nn.functional's activations (and their in-place forms), dropouts and the
normalizations over features (rms_norm, normalize).

An in-place activation runs on a clone of its input: a leaf that requires gradients
cannot change in place, in either library.  Dropouts run in training mode, so their
outputs are random and ``bench_ops.py`` does not compare them.
"""

from __future__ import annotations

from op_inputs import F32, Case, normal


def _slopes(rng, r, c):
    """x (r, c) and a slope per column in (0.1, 0.3) (prelu)."""
    return rng.standard_normal((r, c), dtype=F32), rng.uniform(0.1, 0.3, c).astype(F32)


def _with_scale(rng, r, c):
    """x (r, c) and a weight (c,) near 1 (rms_norm)."""
    return rng.standard_normal((r, c), dtype=F32), 1 + rng.standard_normal(c, dtype=F32) / 4


def _dropout_input(dims: int):
    """An input maker of (r // 4, 4, *spatial): r * c elements with ``dims`` spatial dims."""

    def inputs(rng, r, c):
        spatial = {1: (c,), 2: (4, c // 4), 3: (2, 2, c // 4)}[dims]
        return (rng.standard_normal((r // 4 or 1, 4, *spatial), dtype=F32),)

    return inputs


CASES = [
    # activations
    Case("relu6", "activation", normal, lambda lib, F, x: F.relu6(x)),
    Case("elu", "activation", normal, lambda lib, F, x: F.elu(x)),
    Case("celu", "activation", normal, lambda lib, F, x: F.celu(x, 0.5)),
    Case("selu", "activation", normal, lambda lib, F, x: F.selu(x)),
    Case("leaky_relu", "activation", normal, lambda lib, F, x: F.leaky_relu(x, 0.1)),
    Case("prelu", "activation", _slopes, lambda lib, F, x, w: F.prelu(x, w)),
    Case("rrelu", "activation", normal, lambda lib, F, x: F.rrelu(x)),
    Case("glu", "activation", normal, lambda lib, F, x: F.glu(x, -1)),
    Case("mish", "activation", normal, lambda lib, F, x: F.mish(x)),
    Case("logsigmoid", "activation", normal, lambda lib, F, x: F.logsigmoid(x)),
    Case("hardsigmoid", "activation", normal, lambda lib, F, x: F.hardsigmoid(x)),
    Case("hardswish", "activation", normal, lambda lib, F, x: F.hardswish(x)),
    Case("hardtanh", "activation", normal, lambda lib, F, x: F.hardtanh(x, -0.5, 0.5)),
    Case("hardshrink", "activation", normal, lambda lib, F, x: F.hardshrink(x, 0.5)),
    Case("softshrink", "activation", normal, lambda lib, F, x: F.softshrink(x, 0.5)),
    Case("tanhshrink", "activation", normal, lambda lib, F, x: F.tanhshrink(x)),
    Case("softsign", "activation", normal, lambda lib, F, x: F.softsign(x)),
    Case("threshold", "activation", normal, lambda lib, F, x: F.threshold(x, 0.1, -1.0)),
    Case("softmin", "softmax", normal, lambda lib, F, x: F.softmin(x, -1)),
    # in place, on a clone
    Case("relu_", "activation", normal, lambda lib, F, x: F.relu_(x.clone())),
    Case("elu_", "activation", normal, lambda lib, F, x: F.elu_(x.clone())),
    Case("celu_", "activation", normal, lambda lib, F, x: F.celu_(x.clone(), 0.5)),
    Case("selu_", "activation", normal, lambda lib, F, x: F.selu_(x.clone())),
    Case("leaky_relu_", "activation", normal, lambda lib, F, x: F.leaky_relu_(x.clone(), 0.1)),
    Case("rrelu_", "activation", normal, lambda lib, F, x: F.rrelu_(x.clone())),
    Case("hardtanh_", "activation", normal, lambda lib, F, x: F.hardtanh_(x.clone(), -0.5, 0.5)),
    Case("threshold_", "activation", normal, lambda lib, F, x: F.threshold_(x.clone(), 0.1, -1.0)),
    # normalization over features
    Case("rms_norm", "norm", _with_scale, lambda lib, F, x, w: F.rms_norm(x, x.shape[-1:], w)),
    Case("normalize", "norm", normal, lambda lib, F, x: F.normalize(x, dim=-1)),
    # dropouts (training mode)
    Case("alpha_dropout", "dropout", normal, lambda lib, F, x: F.alpha_dropout(x, 0.1, training=True)),
    Case(
        "feature_alpha_dropout",
        "dropout",
        _dropout_input(2),
        lambda lib, F, x: F.feature_alpha_dropout(x, 0.1, training=True),
    ),
    Case("dropout1d", "dropout", _dropout_input(1), lambda lib, F, x: F.dropout1d(x, 0.1)),
    Case("dropout2d", "dropout", _dropout_input(2), lambda lib, F, x: F.dropout2d(x, 0.1)),
    Case("dropout3d", "dropout", _dropout_input(3), lambda lib, F, x: F.dropout3d(x, 0.1)),
]

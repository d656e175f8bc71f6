"""nn.init (nn/init.py): every initialiser's distribution, shape rules, generator, errors and deprecated aliases,
against PyTorch where the result is deterministic (gains, eye_, dirac_) and statistically where it is random."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.nn import init

torch = pytest.importorskip("torch")


def _truncnorm_moments(mean: float, std: float, a: float, b: float) -> tuple[float, float]:
    """Mean and standard deviation of N(mean, std^2) truncated to [a, b]."""
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda x: math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    m = mean + std * (pdf(alpha) - pdf(beta)) / z
    var = std**2 * (1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z - ((pdf(alpha) - pdf(beta)) / z) ** 2)
    return m, math.sqrt(var)


@pytest.mark.parametrize(
    "mean, std, a, b",
    [(0.0, 1.0, -2.0, 2.0), (0.0, 0.02, -0.04, 0.04), (1.0, 1.0, 2.5, 6.0), (0.0, 3.0, -0.5, 0.25)],
)
def test_trunc_normal_has_the_truncated_normals_moments(mean, std, a, b):
    """Both of PyTorch's samplers: redrawing normals (mass > 0.3) and uniform proposals (the last two cases)."""
    mt.manual_seed(0)
    w = init.trunc_normal_(mt.empty(200, 100, dtype=mt.float64), mean, std, a, b).numpy()
    assert w.min() >= a and w.max() <= b
    m, s = _truncnorm_moments(mean, std, a, b)
    assert abs(w.mean() - m) < 5 * s / math.sqrt(w.size) and abs(w.std() - s) < 0.02 * s
    ref = torch.nn.init.trunc_normal_(torch.empty(200, 100, dtype=torch.float64), mean, std, a, b).numpy()
    assert abs(w.mean() - ref.mean()) < 7 * s / math.sqrt(w.size)  # PyTorch's samples agree with the formulas too


def test_trunc_normal_warns_when_the_mean_is_far_outside():
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(mt.empty(10), mean=10.0, std=1.0, a=-1.0, b=1.0)


@pytest.mark.parametrize("shape, gain", [((6, 4), 1.0), ((4, 6), 2.0), ((5, 3, 2), 0.5)])
def test_orthogonal_gives_orthonormal_rows_or_columns(shape, gain):
    w = init.orthogonal_(mt.empty(*shape, dtype=mt.float64), gain=gain).numpy().reshape(shape[0], -1)
    small = min(w.shape)
    gram = w.T @ w if w.shape[0] >= w.shape[1] else w @ w.T
    np.testing.assert_allclose(gram, gain**2 * np.eye(small), atol=1e-12)


def test_sparse_zeroes_a_fraction_of_each_column():
    w = init.sparse_(mt.empty(10, 7), sparsity=0.25, std=0.5).numpy()
    assert ((w == 0).sum(axis=0) == math.ceil(0.25 * 10)).all()
    assert 0.2 < w[w != 0].std() < 0.9


@pytest.mark.parametrize("shape, groups", [((4, 4, 3), 1), ((6, 3, 3, 3), 2), ((2, 5, 3, 1, 5), 1), ((3, 4, 5), 3)])
def test_dirac_equals_pytorchs(shape, groups):
    got = init.dirac_(mt.empty(*shape), groups=groups)
    np.testing.assert_array_equal(got.numpy(), torch.nn.init.dirac_(torch.empty(shape), groups=groups).numpy())


def test_eye_equals_pytorchs():
    for shape in ((3, 3), (2, 5), (4, 1)):
        np.testing.assert_array_equal(init.eye_(mt.empty(*shape)).numpy(), torch.eye(*shape).numpy())


@pytest.mark.parametrize(
    "nonlinearity, param",
    [("linear", None), ("conv_transpose2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
     ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None)],
)  # fmt: skip
def test_calculate_gain_equals_pytorchs(nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(torch.nn.init.calculate_gain(nonlinearity, param))


@pytest.mark.parametrize(
    "fn, kwargs, std",
    [
        (init.xavier_uniform_, {"gain": 2.0}, 2.0 * math.sqrt(2 / (300 + 200))),
        (init.xavier_normal_, {}, math.sqrt(2 / (300 + 200))),
        (init.kaiming_uniform_, {"a": 0.1, "mode": "fan_out"}, math.sqrt(2 / 1.01) / math.sqrt(300)),
        (init.kaiming_normal_, {"mode": "FAN_IN", "nonlinearity": "relu"}, math.sqrt(2) / math.sqrt(200)),
        (init.normal_, {"mean": 1.0, "std": 0.3}, 0.3),
        (init.uniform_, {"a": -1.0, "b": 3.0}, 4 / math.sqrt(12)),
    ],
)
def test_random_initialisers_have_their_std_and_take_a_generator(fn, kwargs, std):
    w = fn(mt.empty(300, 200, dtype=mt.float64), **kwargs).numpy()
    assert abs(w.std() - std) < 0.02 * std
    draw = lambda: fn(mt.empty(5, 4), **kwargs, generator=mt.Generator().manual_seed(3)).tolist()  # noqa: E731
    assert draw() == draw()  # its own stream: the default generator is not touched
    before = mt.default_generator.get_state().tolist()
    draw()
    assert mt.default_generator.get_state().tolist() == before


def test_init_is_outside_the_graph_and_keeps_the_tensor():
    p = nn.Parameter(mt.zeros(3, 4))
    out = init.kaiming_uniform_(p)
    assert out is p and p.is_leaf and p.grad_fn is None and p.requires_grad and p.abs().sum().item() > 0


def test_kaiming_of_an_empty_tensor_warns_and_does_nothing():
    with pytest.warns(UserWarning, match="zero-element tensors is a no-op"):
        init.kaiming_normal_(mt.empty(0, 3))


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="2 dimensions"):
        init.eye_(mt.empty(2, 2, 2))
    with pytest.raises(ValueError, match="3, 4, or 5 dimensions"):
        init.dirac_(mt.empty(2, 2))
    with pytest.raises(ValueError, match="divisible by groups"):
        init.dirac_(mt.empty(3, 2, 3), groups=2)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        init.orthogonal_(mt.empty(3))
    with pytest.raises(ValueError, match="mode must be 'fan_in' or 'fan_out'"):
        init.kaiming_uniform_(mt.empty(2, 2), mode="fan")
    with pytest.raises(ValueError, match="at least 2 dims"):
        init.xavier_uniform_(mt.empty(3))
    with pytest.raises(ValueError, match="unsupported nonlinearity"):
        init.calculate_gain("swish")


@pytest.mark.parametrize(
    "old", ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform",
            "kaiming_normal", "orthogonal", "sparse"],
)  # fmt: skip
def test_deprecated_aliases_warn_and_work(old):
    args = {"constant": (0.5,), "sparse": (0.5,)}.get(old, ())
    w = mt.empty(3, 3, 3) if old == "dirac" else mt.empty(3, 3)
    with pytest.warns(FutureWarning, match=f"`nn.init.{old}` is now deprecated in favor of `nn.init.{old}_`"):
        assert getattr(init, old)(w, *args) is w
    assert hasattr(torch.nn.init, old)


# ------------------------------------------------------------------------- init
def test_init_functions_fill_in_place_and_return_the_tensor():
    mt.manual_seed(0)
    w = nn.Parameter(mt.empty(200, 100))
    assert nn.init.zeros_(w) is w and not w.numpy().any()
    assert nn.init.ones_(w) is w and (w.numpy() == 1).all()
    assert nn.init.constant_(w, 0.5) is w and (w.numpy() == 0.5).all()
    nn.init.uniform_(w, -2.0, 3.0)
    assert w.numpy().min() >= -2 and w.numpy().max() <= 3 and w.numpy().max() > 2.9
    nn.init.normal_(w, 1.0, 0.5)
    assert abs(w.numpy().mean() - 1) < 0.01 and abs(w.numpy().std() - 0.5) < 0.01
    assert w.grad_fn is None and w.grad is None


# A (60, 40, 3) weight: fan_in = 40 * 3 = 120, fan_out = 60 * 3 = 180.
@pytest.mark.parametrize(
    "fn, kwargs, std",
    [
        (nn.init.xavier_uniform_, {}, math.sqrt(2 / (120 + 180))),
        (nn.init.xavier_uniform_, {"gain": 2.0}, 2 * math.sqrt(2 / (120 + 180))),
        (nn.init.xavier_normal_, {}, math.sqrt(2 / (120 + 180))),
        (nn.init.kaiming_uniform_, {}, math.sqrt(2) / math.sqrt(120)),
        (nn.init.kaiming_uniform_, {"a": math.sqrt(5)}, math.sqrt(1 / 3) / math.sqrt(120)),
        (nn.init.kaiming_normal_, {"mode": "fan_out", "nonlinearity": "relu"}, math.sqrt(2) / math.sqrt(180)),
    ],
)
def test_xavier_and_kaiming_statistics(fn, kwargs, std):
    mt.manual_seed(4)
    w = mt.empty(60, 40, 3)
    assert fn(w, **kwargs) is w
    assert abs(w.numpy().std() - std) < 0.03 * std
    if fn in (nn.init.xavier_uniform_, nn.init.kaiming_uniform_):
        bound = math.sqrt(3) * std
        assert np.abs(w.numpy()).max() <= bound * (1 + 1e-6) and np.abs(w.numpy()).max() > 0.99 * bound


def test_fan_and_gain_helpers():
    assert nn.init._calculate_fan_in_and_fan_out(mt.empty(5, 3)) == (3, 5)
    assert nn.init._calculate_fan_in_and_fan_out(mt.empty(5, 3, 2, 2)) == (12, 20)
    with pytest.raises(ValueError, match="at least 2 dims"):
        nn.init._calculate_fan_in_and_fan_out(mt.empty(5))
    assert nn.init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert nn.init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.init.calculate_gain("swish")
    with pytest.raises(ValueError, match="mode"):
        nn.init.kaiming_uniform_(mt.empty(2, 2), mode="fan")

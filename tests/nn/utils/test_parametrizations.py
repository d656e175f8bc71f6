"""nn.utils.parametrizations.weight_norm and spectral_norm (nn/utils/parametrizations.py): PyTorch's state
dict keys and shapes, values, gradients and (spectral norm) power-iteration buffers with PyTorch's
weights copied in, train and eval mode, gradcheck to second order, and bad arguments."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.nn.utils import parametrizations as Q

torch = pytest.importorskip("torch")
TQ = torch.nn.utils.parametrizations


def _copied(make_ours, make_theirs, wrap_ours, wrap_theirs):
    """Wrapped float64 layers of both libraries, PyTorch's state (weights and buffers) copied into ours."""
    theirs = wrap_theirs(make_theirs())
    ours = wrap_ours(make_ours())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def _same_forward_and_gradients(ours, theirs, x):
    y, ty = ours(mt.tensor(x, dtype=mt.float64)), theirs(torch.tensor(x))
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    y.pow(2).sum().backward()
    ty.pow(2).sum().backward()
    for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)
    for (name, b), (_, tb) in zip(ours.named_buffers(), theirs.named_buffers()):
        np.testing.assert_allclose(b.numpy(), tb.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_as_pytorch(dim):
    ours, theirs = _copied(
        lambda: nn.Linear(4, 3, dtype=mt.float64),
        lambda: torch.nn.Linear(4, 3, dtype=torch.float64),
        lambda m: Q.weight_norm(m, dim=dim),
        lambda m: TQ.weight_norm(m, dim=dim),
    )
    assert repr(ours) == repr(theirs)
    g = ours.parametrizations.weight.original0
    assert g.shape == tuple(theirs.parametrizations.weight.original0.shape)
    _same_forward_and_gradients(ours, theirs, np.random.default_rng(0).standard_normal((5, 4)))


def test_weight_norm_starts_at_the_weight_and_is_differentiable_twice():
    layer = nn.Linear(4, 3, dtype=mt.float64)
    before = layer.weight.detach().numpy().copy()
    Q.weight_norm(layer)
    np.testing.assert_allclose(layer.weight.detach().numpy(), before, rtol=1e-12)
    g, v = layer.parametrizations.weight.original0, layer.parametrizations.weight.original1
    norm = Q._WeightNorm(0)
    assert gradcheck(norm, [g, v]) and gradgradcheck(norm, [g, v])


@pytest.mark.parametrize("training", [True, False])
def test_spectral_norm_as_pytorch(training):
    ours, theirs = _copied(
        lambda: nn.Linear(5, 4, dtype=mt.float64),
        lambda: torch.nn.Linear(5, 4, dtype=torch.float64),
        lambda m: Q.spectral_norm(m),
        lambda m: TQ.spectral_norm(m),
    )
    ours.train(training)
    theirs.train(training)
    assert repr(ours) == repr(theirs)
    _same_forward_and_gradients(ours, theirs, np.random.default_rng(1).standard_normal((3, 5)))


def test_spectral_norm_divides_by_the_largest_singular_value():
    mt.manual_seed(0)
    layer = Q.spectral_norm(nn.Linear(6, 4, dtype=mt.float64), n_power_iterations=30)
    w = layer.parametrizations.weight.original.numpy()
    np.testing.assert_allclose(layer.weight.detach().numpy(), w / np.linalg.svd(w, compute_uv=False)[0], rtol=1e-6)
    bias = Q.spectral_norm(nn.Linear(3, 2), name="bias")  # a 1-D tensor is normalised
    np.testing.assert_allclose(np.linalg.norm(bias.bias.detach().numpy()), 1.0, rtol=1e-6)


def test_bad_arguments_raise_naming_them():
    with pytest.raises(ValueError, match="weight_norm: module Linear has no parameter or buffer named 'kernel'"):
        Q.weight_norm(nn.Linear(2, 2), "kernel")
    with pytest.raises(ValueError, match=r"weight_norm: dim must be None or an int in \[-2, 1\], got 2"):
        Q.weight_norm(nn.Linear(2, 2), dim=2)
    with pytest.raises(ValueError, match="spectral_norm: n_power_iterations must be a positive int, got 0"):
        Q.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)


def test_docstring_examples_run():
    result = doctest.testmod(Q, extraglobs={"mt": mt, "nn": nn}, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0

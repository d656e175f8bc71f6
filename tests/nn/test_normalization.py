"""``nn/normalization.py``: ``LayerNorm`` (float64 gradcheck with and without affine and bias,
normalisation over the trailing dims, a constant row, validation); ``GroupNorm`` and
``LocalResponseNorm`` (PyTorch's state, reprs and attributes, outputs and all gradients against
PyTorch's layers); the docstring examples of the module and of ``F.group_norm``'s file."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
from helpers import assert_module_matches_torch, gradcheck_module, randn_f64, randomize_parameters

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F


@pytest.mark.parametrize("normalized_shape", [6, (2, 3)])
@pytest.mark.parametrize("affine, bias", [(True, True), (True, False), (False, True)])
def test_layer_norm_gradcheck(rng, normalized_shape, affine, bias):
    norm = randomize_parameters(
        nn.LayerNorm(normalized_shape, elementwise_affine=affine, bias=bias, dtype=mt.float64), rng
    )
    assert len(list(norm.parameters())) == (2 if affine and bias else 1 if affine else 0)
    gradcheck_module(norm, randn_f64(rng, 2, 2, 6) if normalized_shape == 6 else randn_f64(rng, 4, 2, 3))


# --------------------------------------------------------------------- LayerNorm
def test_layer_norm_normalises_trailing_dims(rng):
    norm = nn.LayerNorm((3, 4))
    x = mt.tensor(rng.standard_normal((2, 3, 4)) * 5 + 3)
    y = norm(x).numpy().reshape(2, -1)
    np.testing.assert_allclose(y.mean(1), 0, atol=1e-5)
    np.testing.assert_allclose(y.var(1), 1, rtol=1e-3)
    assert norm.weight.numpy().tolist() == [[1.0] * 4] * 3 and not norm.bias.numpy().any()


def test_layer_norm_of_a_constant_row_is_finite_with_finite_gradient():
    norm = nn.LayerNorm(4, dtype=mt.float64)
    x = mt.full((2, 4), 3.0, dtype=mt.float64, requires_grad=True)
    y = norm(x)
    assert np.isfinite(y.numpy()).all()
    (y * mt.tensor(np.arange(8.0).reshape(2, 4), dtype=mt.float64)).sum().backward()
    assert np.isfinite(x.grad.numpy()).all() and np.isfinite(norm.weight.grad.numpy()).all()


def test_layer_norm_validation():
    with pytest.raises(ValueError, match="normalized_shape"):
        nn.LayerNorm(0)
    with pytest.raises(ValueError, match="eps"):
        nn.LayerNorm(3, eps=-1.0)
    norm = nn.LayerNorm(4)
    with pytest.raises(ValueError, match=r"normalized_shape=\(4,\)"):
        norm(mt.zeros(2, 5))
    with pytest.raises(TypeError, match="float64"):
        norm(mt.zeros(2, 4, dtype=mt.float64))
    affine_free = nn.LayerNorm(4, elementwise_affine=False)
    assert affine_free.weight is None and affine_free.bias is None
    assert nn.LayerNorm(4, bias=False).bias is None


# --------------------------------------------------------------------- GroupNorm, LocalResponseNorm
@pytest.mark.parametrize("kwargs", [{}, {"affine": False}, {"bias": False, "eps": 1e-3}], ids=str)
@pytest.mark.parametrize("groups,shape", [(2, (2, 4, 3)), (1, (3, 4)), (4, (2, 4, 2, 3))])
def test_group_norm_matches_pytorch(groups, shape, kwargs) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = nn.GroupNorm(groups, 4, **kwargs).double(), torch.nn.GroupNorm(groups, 4, **kwargs).double()
    assert repr(ours) == repr(theirs) and list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal(shape) * 2 - 1
    assert_module_matches_torch(ours, theirs, x, torch)
    assert_module_matches_torch(ours.float(), theirs.float(), x.astype(np.float32), torch)


@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 6, 2, 3), (1, 3, 2, 2, 2)], ids=str)
def test_local_response_norm_matches_pytorch(shape) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = nn.LocalResponseNorm(3, alpha=0.3, beta=0.6, k=1.5), torch.nn.LocalResponseNorm(3, 0.3, 0.6, 1.5)
    assert repr(ours) == repr(theirs)
    assert_module_matches_torch(ours, theirs, np.random.default_rng(1).standard_normal(shape), torch)


@pytest.mark.parametrize("name", ["minitensor.nn.normalization", "minitensor.nn.functional.group_norm"])
def test_docstring_examples(name) -> None:
    result = doctest.testmod(importlib.import_module(name), extraglobs={"mt": mt, "nn": nn, "F": F, "np": np})
    assert result.attempted > 0 and result.failed == 0

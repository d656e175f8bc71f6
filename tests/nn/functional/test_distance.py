"""cosine_similarity, pairwise_distance, pdist, normalize (nn/functional/distance.py) and the
CosineSimilarity / PairwiseDistance layers (nn/distance.py): PyTorch's values, gradients and second
derivatives, the clamps at eps, broadcasting, repr, bad arguments."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.nn import distance as distance_layers
from minitensor.nn.functional import distance

torch = pytest.importorskip("torch")
TF = torch.nn.functional

rng = np.random.default_rng(3)
A, B = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))

CASES = [
    ("cosine_similarity", (A, B), {}),
    ("cosine_similarity", (A, B), {"dim": 0}),
    ("cosine_similarity", (A, B[0]), {"dim": -1}),  # broadcast
    ("pairwise_distance", (A, B), {}),
    ("pairwise_distance", (A, B), {"p": 1.0, "keepdim": True}),
    ("pairwise_distance", (A, B), {"p": 3.0}),
    ("pairwise_distance", (A, B[0]), {"p": np.inf}),
    ("pdist", (A,), {}),
    ("pdist", (A,), {"p": 1.5}),
    ("normalize", (A,), {}),
    ("normalize", (A,), {"p": 1.0, "dim": 0}),
]


@pytest.mark.parametrize("name,inputs,options", CASES, ids=[f"{n}{o}" for n, _, o in CASES])
def test_against_pytorch_to_second_order(name, inputs, options):
    ours, theirs = (lambda *xs: getattr(F, name)(*xs, **options)), (lambda *xs: getattr(TF, name)(*xs, **options))
    # (PyTorch's pdist has no second derivative and no forward AD)
    check_op(ours, theirs, *inputs, pytorch_second_order=name != "pdist", pytorch_jvp=name != "pdist")


def test_euclidean_pdist_op_equals_its_definition_and_gives_zero_gradient_to_equal_rows():
    from minitensor.ops.pdist import Pdist, pdist_definition

    a = np.concatenate([A, A[1:2]])  # (rows 1 and 4 equal: a zero distance)
    x = mt.tensor(a, dtype=mt.float64, requires_grad=True)
    g = mt.tensor(rng.standard_normal(10), dtype=mt.float64)
    fused, defined = Pdist.apply(x), pdist_definition(x)
    np.testing.assert_allclose(fused.detach().numpy(), defined.detach().numpy(), rtol=1e-14)
    (dx,) = mt.autograd.grad(fused, (x,), g)
    tx = torch.tensor(a, requires_grad=True)
    (tdx,) = torch.autograd.grad(torch.pdist(tx), (tx,), torch.tensor(g.numpy()))
    np.testing.assert_allclose(dx.numpy(), tdx.numpy(), rtol=1e-12, atol=1e-14)


def test_the_eps_clamps_as_pytorch():
    """Near-zero vectors: the norm is clamped on the value (cosine_similarity: the gradient stays the
    norm's own, PyTorch's no_grad clamp) or as a clamp (normalize: no gradient through the clamped norm)."""
    tiny = np.array([[1e-9, -2e-9, 0.0], [0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
    other = np.array([[1.0, 1.0, 1.0], [2.0, 0.0, 1.0], [0.5, -1.0, 2.0]])
    for name, inputs, options in (
        ("cosine_similarity", (tiny, other), {}),
        ("normalize", (tiny,), {}),
        ("pairwise_distance", (tiny, tiny), {}),
    ):
        xs = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in inputs]
        txs = [torch.tensor(a, requires_grad=True) for a in inputs]
        y, ty = getattr(F, name)(*xs, **options), getattr(TF, name)(*txs, **options)
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-15)
        w = rng.standard_normal(ty.shape)
        grads = mt.autograd.grad((y * mt.tensor(w, dtype=mt.float64)).sum(), xs)
        tgrads = torch.autograd.grad((ty * torch.tensor(w)).sum(), txs)
        for g, tg in zip(grads, tgrads):
            np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-8, atol=1e-12, err_msg=name)


def test_layers_as_pytorch():
    for ours, theirs in (
        (nn.CosineSimilarity(), torch.nn.CosineSimilarity()),
        (nn.CosineSimilarity(0, 1e-6), torch.nn.CosineSimilarity(0, 1e-6)),
        (nn.PairwiseDistance(1.0, 1e-3, True), torch.nn.PairwiseDistance(1.0, 1e-3, True)),
    ):
        assert repr(ours) == repr(theirs) and list(ours.state_dict()) == []
        np.testing.assert_allclose(
            ours(mt.tensor(A), mt.tensor(B)).numpy(), theirs(torch.tensor(A), torch.tensor(B)).numpy(), rtol=1e-6
        )
    assert nn.PairwiseDistance(3.0).norm == torch.nn.PairwiseDistance(3.0).norm


def test_bad_arguments_raise_naming_them():
    a = mt.tensor(A)
    with pytest.raises(ValueError, match=r"cosine_similarity: x1 \(4, 3\) and x2 \(2,\) cannot be broadcast"):
        F.cosine_similarity(a, mt.ones(2))
    with pytest.raises(ValueError, match=r"cosine_similarity: dim must be an int in \[-2, 1\], got 2"):
        F.cosine_similarity(a, a, dim=2)
    with pytest.raises(TypeError, match="cosine_similarity: x1 and x2 must have the same dtype"):
        F.cosine_similarity(a, mt.tensor(A, dtype=mt.float64))
    with pytest.raises(ValueError, match=r"pdist: input must be 2-D \(N, M\), got shape \(3,\)"):
        F.pdist(mt.ones(3))
    with pytest.raises(TypeError, match="pairwise_distance: p must be a number, got str"):
        F.pairwise_distance(a, a, p="2")
    with pytest.raises(TypeError, match="normalize: out= is not supported"):
        F.normalize(a, out=a)


def test_docstring_examples_run():
    for module in (distance, distance_layers):
        result = doctest.testmod(module, extraglobs={"mt": mt, "nn": nn, "F": F}, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0

"""The margin and embedding losses (nn/functional/margin_loss.py, nn/loss_margin.py): PyTorch's values,
gradients and second derivatives in every reduction (away from the hinges' kinks), float64 gradcheck,
PyTorch's gradient at the kinks, the layers' defaults, repr and state dict, the deprecated
size_average/reduce, and bad arguments."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from op_checks import check_op

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.nn import loss_margin
from minitensor.nn.functional import margin_loss

torch = pytest.importorskip("torch")
TF = torch.nn.functional

rng = np.random.default_rng(7)
X1, X2, X3 = (rng.standard_normal((4, 3)) for _ in range(3))
SIGNS = np.array([1.0, -1.0, -1.0, 1.0])
SIGN_GRID = np.sign(rng.standard_normal((4, 3)))
CLASSES = np.array([2, 0, 1, 1])
LABELS = np.array([[2, 0, -1], [1, -1, 0], [-1, 2, 2], [0, 1, 2]])  # each row: classes up to the first -1
PROBS = rng.uniform(0, 1, (4, 3))


def _both(name: str, *constants, **options):
    """(ours, theirs): the loss ``name`` of the differentiable inputs, then ``constants`` (targets)."""

    def ours(*xs):
        return getattr(F, name)(*xs, *(mt.tensor(c, dtype=mt.float64 if c.dtype.kind == "f" else None)
                                       for c in constants), **options)  # fmt: skip

    def theirs(*xs):
        return getattr(TF, name)(*xs, *(torch.tensor(c) for c in constants), **options)

    return ours, theirs


# name, differentiable inputs, targets, options
CASES = [
    ("margin_ranking_loss", (X1[:, 0], X2[:, 0]), (SIGNS,), {"margin": 0.3}),
    ("hinge_embedding_loss", (X1 * 2,), (SIGN_GRID,), {"margin": 1.5}),
    ("soft_margin_loss", (X1,), (SIGN_GRID,), {}),
    ("multilabel_soft_margin_loss", (X1,), (PROBS,), {"weight": None}),
    ("multi_margin_loss", (X1,), (CLASSES,), {"margin": 0.8}),
    ("multi_margin_loss", (X1,), (CLASSES,), {"p": 2}),
    ("multilabel_margin_loss", (X1 * 3,), (LABELS,), {}),
    ("cosine_embedding_loss", (X1, X2), (SIGNS,), {"margin": -0.9}),
    ("triplet_margin_loss", (X1, X2, X3), (), {"margin": 0.5}),
    ("triplet_margin_loss", (X1, X2, X3), (), {"margin": 0.5, "p": 1.5, "swap": True}),
]
IDS = [f"{name}{sorted(options.items())}" for name, _, _, options in CASES]
# PyTorch's kernels for these have no second derivative and no forward AD: ours are checked against
# finite differences only.
NO_PYTORCH_SECOND_ORDER = {"multi_margin_loss", "multilabel_margin_loss"}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,inputs,targets,options", CASES, ids=IDS)
def test_against_pytorch_to_second_order(name, inputs, targets, options, reduction):
    options = {k: v for k, v in options.items() if v is not None}
    ours, theirs = _both(name, *targets, reduction=reduction, **options)
    pytorch_has = name not in NO_PYTORCH_SECOND_ORDER
    check_op(ours, theirs, *inputs, pytorch_second_order=pytorch_has, pytorch_jvp=pytorch_has)


def test_weighted_multi_class_losses_against_pytorch():
    w = np.array([0.5, 2.0, 1.5])
    check_op(
        lambda x: F.multi_margin_loss(x, mt.tensor(CLASSES), weight=mt.tensor(w, dtype=mt.float64)),
        lambda x: TF.multi_margin_loss(x, torch.tensor(CLASSES), weight=torch.tensor(w)),
        X1,
        pytorch_second_order=False,
        pytorch_jvp=False,
    )
    check_op(
        lambda x, y: F.multilabel_soft_margin_loss(x, y, weight=mt.tensor(w, dtype=mt.float64), reduction="none"),
        lambda x, y: TF.multilabel_soft_margin_loss(x, y, weight=torch.tensor(w), reduction="none"),
        X1,
        PROBS,
    )


def test_triplet_margin_with_distance_loss_against_pytorch():
    check_op(
        lambda a, p, n: F.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v), margin=0.4, swap=True
        ),
        lambda a, p, n: TF.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda u, v: 1 - TF.cosine_similarity(u, v), margin=0.4, swap=True
        ),
        X1,
        X2,
        X3,
    )
    check_op(F.triplet_margin_with_distance_loss, TF.triplet_margin_with_distance_loss, X1, X2, X3)


def test_unbatched_inputs_as_pytorch():
    x, c = rng.standard_normal(5), np.array(3)
    for name, target in (("multi_margin_loss", c), ("multilabel_margin_loss", np.array([3, 0, -1, 1, 1]))):
        ours = getattr(F, name)(mt.tensor(x, dtype=mt.float64), mt.tensor(target), reduction="none")
        theirs = getattr(TF, name)(torch.tensor(x), torch.tensor(target), reduction="none")
        assert ours.shape == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    y = x[::-1].copy()
    ours = F.cosine_embedding_loss(mt.tensor(x), mt.tensor(y), mt.tensor(-1.0), reduction="none")
    theirs = TF.cosine_embedding_loss(torch.tensor(x), torch.tensor(y), torch.tensor(-1.0), reduction="none")
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_gradients_at_the_hinges_equal_pytorch():
    """``[z]+`` at z = 0: the clamp's gradient (1) where PyTorch clamps, 0 where its kernel tests z > 0."""
    x1, x2 = np.array([0.5, 1.0, 0.0]), np.array([0.2, 1.0, 0.3])  # z = -(x1 - x2) + 0.3: 0, 0.3, 0.6
    y = np.array([1.0, 1.0, 1.0])
    cases = [
        ("margin_ranking_loss", (x1, x2), (y,), {"margin": 0.3}),
        ("hinge_embedding_loss", (np.array([1.0, 0.5, 2.0]),), (-y,), {"margin": 1.0}),
        ("multi_margin_loss", (np.array([[1.0, 0.0, 0.5]]),), (np.array([0]),), {}),
        ("multilabel_margin_loss", (np.array([[1.0, 0.0, 0.5]]),), (np.array([[0, -1, 0]]),), {}),
        ("cosine_embedding_loss", (np.array([[1.0, 0.0]]), np.array([[1.0, 1.0]])), (-y[:1],), {"margin": 0.5**0.5}),
    ]
    for name, inputs, targets, options in cases:
        ours, theirs = _both(name, *targets, reduction="sum", **options)
        xs = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in inputs]
        txs = [torch.tensor(a, requires_grad=True) for a in inputs]
        grads = mt.autograd.grad(ours(*xs), xs)
        tgrads = torch.autograd.grad(theirs(*txs), txs)
        for g, tg in zip(grads, tgrads):
            np.testing.assert_allclose(g.numpy(), tg.numpy(), atol=1e-12, err_msg=name)


def test_soft_margin_loss_does_not_overflow():
    x = mt.tensor([-200.0, 200.0], requires_grad=True)
    loss = F.soft_margin_loss(x, mt.tensor([1.0, 1.0]), reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [200.0, 0.0], rtol=1e-6)  # PyTorch's float32: inf
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [-1.0, 0.0], atol=1e-30)


LAYERS = [
    ("MarginRankingLoss", (0.2,)),
    ("HingeEmbeddingLoss", (2.0,)),
    ("SoftMarginLoss", ()),
    ("MultiLabelSoftMarginLoss", ()),
    ("MultiLabelMarginLoss", ()),
    ("MultiMarginLoss", (2, 0.5)),
    ("CosineEmbeddingLoss", (0.1,)),
    ("TripletMarginLoss", (0.5, 1.0)),
    ("TripletMarginWithDistanceLoss", ()),
]


@pytest.mark.parametrize("name,args", LAYERS, ids=[name for name, _ in LAYERS])
def test_layers_repr_state_dict_and_options_as_pytorch(name, args):
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for attribute in ("reduction", "margin", "p", "eps", "swap"):
        assert getattr(ours, attribute, None) == getattr(theirs, attribute, None), attribute


def test_layers_call_the_functions_and_keep_class_weights_as_buffers():
    w = mt.tensor([0.5, 2.0, 1.5])
    layer = nn.MultiMarginLoss(weight=w, reduction="sum")
    assert list(layer.state_dict()) == ["weight"]
    expected = F.multi_margin_loss(mt.tensor(X1), mt.tensor(CLASSES), weight=w, reduction="sum")
    assert layer(mt.tensor(X1), mt.tensor(CLASSES)).item() == pytest.approx(expected.item())
    triplet = nn.TripletMarginLoss(margin=0.5, p=1.0, swap=True)
    expected = F.triplet_margin_loss(mt.tensor(X1), mt.tensor(X2), mt.tensor(X3), 0.5, 1.0, swap=True)
    assert triplet(mt.tensor(X1), mt.tensor(X2), mt.tensor(X3)).item() == pytest.approx(expected.item())


def test_size_average_and_reduce_map_to_reduction_with_pytorch_warning():
    x, y = mt.tensor(X1), mt.tensor(SIGN_GRID)
    for size_average, reduce, reduction in ((False, None, "sum"), (None, False, "none"), (True, True, "mean")):
        with pytest.warns(UserWarning, match=f"please use reduction='{reduction}' instead"):
            layer = nn.SoftMarginLoss(size_average, reduce)
        assert layer.reduction == reduction
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            value = F.soft_margin_loss(x, y, size_average, reduce)
        np.testing.assert_allclose(value.numpy(), F.soft_margin_loss(x, y, reduction=reduction).numpy())


def test_bad_arguments_raise_naming_them():
    x = mt.tensor(X1)
    with pytest.raises(ValueError, match="margin_ranking_loss: all inputs must have the same number of dims"):
        F.margin_ranking_loss(x, x, mt.ones(4))
    with pytest.raises(ValueError, match="multi_margin_loss: p must be 1 or 2, got 3"):
        F.multi_margin_loss(x, mt.tensor(CLASSES), p=3)
    with pytest.raises(ValueError, match="multi_margin_loss: target holds class index 3, outside"):
        F.multi_margin_loss(x, mt.tensor([0, 1, 2, 3]))
    with pytest.raises(TypeError, match="multi_margin_loss: target must hold int64 class indices"):
        F.multi_margin_loss(x, mt.tensor([0.0, 1, 2, 1]))
    with pytest.raises(ValueError, match=r"multi_margin_loss: weight must have shape \(3,\)"):
        F.multi_margin_loss(x, mt.tensor(CLASSES), weight=mt.ones(4))
    with pytest.raises(ValueError, match="multilabel_margin_loss: target must have shape"):
        F.multilabel_margin_loss(x, mt.tensor(CLASSES))
    with pytest.raises(ValueError, match="cosine_embedding_loss: target must have shape"):
        F.cosine_embedding_loss(x, x, mt.ones(3))
    with pytest.raises(ValueError, match="triplet_margin_loss: margin must be greater than 0, got -1.0"):
        F.triplet_margin_loss(x, x, x, margin=-1.0)
    with pytest.raises(ValueError, match="triplet_margin_loss: the anchor, positive, and negative tensors"):
        F.triplet_margin_loss(x, x, x[0])
    with pytest.raises(TypeError, match="distance_function must be callable"):
        F.triplet_margin_with_distance_loss(x, x, x, distance_function=3)
    with pytest.raises(TypeError, match="soft_margin_loss: target dtype float64 does not match input dtype float32"):
        F.soft_margin_loss(x, mt.tensor(SIGN_GRID, dtype=mt.float64))
    with pytest.raises(ValueError, match="SoftMarginLoss: reduction must be one of"):
        nn.SoftMarginLoss(reduction="avg")
    with pytest.raises(ValueError, match="MultiMarginLoss: p must be 1 or 2"):
        nn.MultiMarginLoss(p=0)


def test_docstring_examples_run():
    for module in (margin_loss, loss_margin):
        result = doctest.testmod(module, extraglobs={"mt": mt, "nn": nn, "F": F}, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0

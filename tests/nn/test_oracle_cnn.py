"""A whole CNN trained step by step in minitensor and in PyTorch from the same weights: the same
losses and the same weights after every step (issue 34: "a LeNet-5 trains for several steps with the
same losses as PyTorch").  The BatchNorm ResNet block of the same issue needs batch norm, which is not
on this branch: its test comes with the normalisation layers."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import copy_weights

import minitensor as mt

torch = pytest.importorskip("torch")


def lenet5(L):
    """LeNet-5 (LeCun et al. 1998) from library ``L`` (minitensor or torch) for 1 x 28 x 28 images:
    C1 conv 5x5 (6, padded to keep 28 x 28), S2 subsampling, C3 conv 5x5 (16), S4 subsampling, C5 conv
    5x5 (120, on 5 x 5: one pixel), F6 linear 84, output 10; tanh between.  Each subsampling layer is
    trainable, as LeNet-5's (a weight and a bias per channel on 2 x 2 sums): a depthwise 2 x 2 stride-2
    convolution, one weight per pixel of the window (pooling layers are not on this branch)."""
    nn = L.nn

    class LeNet5(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.s2 = nn.Conv2d(1, 6, 5, padding=2), nn.Conv2d(6, 6, 2, stride=2, groups=6)
            self.c3, self.s4 = nn.Conv2d(6, 16, 5), nn.Conv2d(16, 16, 2, stride=2, groups=16)
            self.c5, self.f6, self.out = nn.Conv2d(16, 120, 5), nn.Linear(120, 84), nn.Linear(84, 10)

        def forward(self, x):
            x = self.s2(self.c1(x).tanh()).tanh()
            x = self.s4(self.c3(x).tanh()).tanh()
            x = self.c5(x).tanh().reshape(x.shape[0], 120)
            return self.out(self.f6(x).tanh())

    return LeNet5()


def train(L, model, images: np.ndarray, labels: np.ndarray, dtype) -> list:
    """Five SGD steps (momentum, weight decay) over five batches; the loss of each step."""
    optimizer = L.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    losses = []
    for x, y in zip(images, labels):
        optimizer.zero_grad()
        loss = L.nn.functional.cross_entropy(model(L.tensor(x, dtype=dtype)), L.tensor(y))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("double", [True, False], ids=["float64", "float32"])
def test_lenet5_trains_with_the_same_losses_and_weights_as_pytorch(double: bool) -> None:
    rng = np.random.default_rng(5)
    images, labels = rng.standard_normal((5, 8, 1, 28, 28)), rng.integers(0, 10, (5, 8))
    torch.manual_seed(0)
    theirs, ours = lenet5(torch), lenet5(mt)
    if double:
        theirs, ours = theirs.double(), ours.double()
    copy_weights(theirs, ours)
    ours_losses = train(mt, ours, images, labels, mt.float64 if double else mt.float32)
    theirs_losses = train(torch, theirs, images, labels, torch.float64 if double else torch.float32)
    tolerance = {"rtol": 1e-10, "atol": 1e-12} if double else {"rtol": 2e-5, "atol": 2e-6}
    np.testing.assert_allclose(ours_losses, theirs_losses, **tolerance)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), err_msg=name, **tolerance)
    assert ours_losses[-1] != ours_losses[0]  # the steps changed the model

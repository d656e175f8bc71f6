"""Whole CNNs trained step by step in minitensor and in PyTorch from the same weights: the same
losses and the same weights (and running statistics) after every step: a LeNet-5, and a small
ResNet of BatchNorm blocks (conv-BN-ReLU-conv-BN plus the shortcut, a strided block with a 1x1
projection), then the same outputs in eval mode."""

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
    convolution, one weight per pixel of the window."""
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


def small_resnet(L):
    """A CIFAR-style ResNet in miniature from library ``L``: a 3x3 stem (8 channels) with batch norm,
    a basic block (conv-BN-ReLU-conv-BN, identity shortcut), a strided block to 16 channels (its
    shortcut a 1x1 strided conv with batch norm), global average pooling, a linear head."""
    nn = L.nn

    class Block(nn.Module):
        def __init__(self, c_in, c_out, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c_out)
            self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c_out)
            self.shortcut = nn.Sequential()
            if stride != 1 or c_in != c_out:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(c_in, c_out, 1, stride=stride, bias=False), nn.BatchNorm2d(c_out)
                )

        def forward(self, x):
            h = nn.functional.relu(self.bn1(self.conv1(x)))
            return nn.functional.relu(self.bn2(self.conv2(h)) + self.shortcut(x))

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
            self.blocks = nn.Sequential(Block(8, 8, 1), Block(8, 16, 2))
            self.pool, self.head = nn.AdaptiveAvgPool2d(1), nn.Linear(16, 10)

        def forward(self, x):
            return self.head(self.pool(self.blocks(self.stem(x))).flatten(1))

    return ResNet()


def test_a_batchnorm_resnet_trains_with_the_same_losses_and_statistics_as_pytorch() -> None:
    rng = np.random.default_rng(6)
    images, labels = rng.standard_normal((4, 6, 3, 12, 12)), rng.integers(0, 10, (4, 6))
    torch.manual_seed(1)
    theirs, ours = small_resnet(torch).double(), small_resnet(mt).double()
    copy_weights(theirs, ours)
    ours_losses = train(mt, ours, images, labels, mt.float64)
    theirs_losses = train(torch, theirs, images, labels, torch.float64)
    np.testing.assert_allclose(ours_losses, theirs_losses, rtol=1e-10, atol=1e-12)
    mine, reference = ours.state_dict(), theirs.state_dict()
    assert list(mine) == list(reference)  # parameters and buffers (running statistics, batches seen)
    for name, value in reference.items():
        np.testing.assert_allclose(mine[name].numpy(), value.numpy(), rtol=1e-9, atol=1e-11, err_msg=name)
    ours.eval(), theirs.eval()
    x = images[0]
    np.testing.assert_allclose(
        ours(mt.tensor(x, dtype=mt.float64)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-9
    )

"""The two networks whose training step ``bench_vision.py`` times, each written once for both
libraries: ``model(nn)`` builds it from either library's ``nn`` (minitensor mirrors PyTorch's API).

- ``lenet5``: LeNet-5 (LeCun et al. 1998) for 1 x 28 x 28 images;
- ``cifar_resnet``: a small ResNet for 3 x 32 x 32 images (He et al. 2016, the CIFAR-10 layout
  with two basic blocks per stage): a 3x3 stem, 3 stages of two BN-ReLU 3x3 blocks at 16, 32 and 64
  channels with residual adds (stride 2 and a 1x1 projection where a stage starts narrower),
  global average pooling and a linear classifier.

>>> import minitensor as mt
>>> cifar_resnet(mt.nn)(mt.zeros(2, 3, 32, 32)).shape
(2, 10)
"""

from __future__ import annotations


def lenet5(nn):
    """LeNet-5 for 1 x 28 x 28 images: the first convolution padded to keep 28 x 28, each subsampling
    layer a trainable 2 x 2 stride-2 depthwise convolution (LeNet-5's own: a weight and a bias per
    channel, here one per pixel of the window)."""

    class LeNet5(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.s2 = nn.Conv2d(1, 6, 5, padding=2), nn.Conv2d(6, 6, 2, stride=2, groups=6)
            self.c3, self.s4 = nn.Conv2d(6, 16, 5), nn.Conv2d(16, 16, 2, stride=2, groups=16)
            self.f5, self.f6, self.out = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10)
            self.relu = nn.ReLU()

        def forward(self, x):
            x = self.s2(self.relu(self.c1(x)))
            x = self.s4(self.relu(self.c3(x)))
            x = self.relu(self.f5(x.reshape(x.shape[0], -1)))
            return self.out(self.relu(self.f6(x)))

    return LeNet5()


def cifar_resnet(nn, widths: tuple = (16, 32, 64), classes: int = 10):
    """A ResNet for 3 x 32 x 32 images: stem, ``len(widths)`` stages of two basic blocks (the first
    of each later stage with stride 2), global average pool, linear: (N, 3, 32, 32) -> (N, classes)."""

    class BasicBlock(nn.Module):
        """relu(bn(conv(relu(bn(conv(x))))) + shortcut(x)), the shortcut a 1x1 convolution and batch
        norm where the shape changes, else the identity."""

        def __init__(self, cin: int, cout: int, stride: int):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.shortcut = nn.Identity()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
            self.relu = nn.ReLU()

        def forward(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            return self.relu(self.bn2(self.conv2(y)) + self.shortcut(x))

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            stem = nn.Conv2d(3, widths[0], 3, padding=1, bias=False)
            self.stem = nn.Sequential(stem, nn.BatchNorm2d(widths[0]), nn.ReLU())
            blocks, cin = [], widths[0]
            for stage, width in enumerate(widths):
                blocks += [BasicBlock(cin, width, 1 if stage == 0 else 2), BasicBlock(width, width, 1)]
                cin = width
            self.blocks = nn.Sequential(*blocks)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(widths[-1], classes)

        def forward(self, x):
            x = self.pool(self.blocks(self.stem(x)))
            return self.fc(x.reshape(x.shape[0], -1))

    return ResNet()

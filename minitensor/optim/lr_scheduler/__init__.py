"""Learning-rate schedules: change each parameter group's ``lr`` as training goes on.

Call ``scheduler.step()`` after ``optimizer.step()``::

    opt = mt.optim.SGD(model.parameters(), lr=0.1)
    sched = mt.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
    for epoch in range(100):
        train_one_epoch(model, opt)
        sched.step()          # lr: 0.1 for epochs 0-29, 0.01 for 30-59, ...

PyTorch's schedulers with its rules (``base.py`` explains the chainable form: most multiply the
current lr, so schedulers stepped together compose and an lr set by hand is kept):

- ``decay.py``: ``StepLR``, ``MultiStepLR``, ``ExponentialLR``, ``ConstantLR``, ``LinearLR``, ``PolynomialLR``;
- ``lambda_lr.py``: ``LambdaLR``, ``MultiplicativeLR``;
- ``cosine.py``: ``CosineAnnealingLR``, ``CosineAnnealingWarmRestarts``;
- ``cyclic.py``: ``CyclicLR``, ``OneCycleLR`` (stepped after every batch);
- ``plateau.py``: ``ReduceLROnPlateau`` (stepped with a metric: ``sched.step(val_loss)``);
- ``combine.py``: ``SequentialLR``, ``ChainedScheduler``;
- ``warmup.py``: ``LinearWarmup``, minitensor's (Hugging Face's linear warmup-then-decay).

``LRScheduler`` (and its old name ``_LRScheduler``) is the base for schedules of your own.
"""

from __future__ import annotations

from .base import EPOCH_DEPRECATION_WARNING, LRScheduler, _LRScheduler
from .combine import ChainedScheduler, SequentialLR
from .cosine import CosineAnnealingLR, CosineAnnealingWarmRestarts
from .cyclic import CyclicLR, OneCycleLR
from .decay import ConstantLR, ExponentialLR, LinearLR, MultiStepLR, PolynomialLR, StepLR
from .lambda_lr import LambdaLR, MultiplicativeLR
from .plateau import ReduceLROnPlateau
from .warmup import LinearWarmup

__all__ = [
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "SequentialLR",
    "CosineAnnealingLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
    "CyclicLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "PolynomialLR",
    "LRScheduler",
    "LinearWarmup",
]

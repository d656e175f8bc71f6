"""Optimizers and learning-rate schedules.

- ``optimizer.py``: ``Optimizer``, the base (parameter groups, state, state dicts).
- ``sgd.py``: ``SGD`` (momentum, Nesterov, weight decay).
- ``adam.py``: ``Adam`` and ``AdamW``; ``adamax.py``, ``nadam.py``, ``radam.py``: its variants
  ``Adamax``, ``NAdam``, ``RAdam``.
- ``adagrad.py``, ``adadelta.py``, ``rmsprop.py``: ``Adagrad``, ``Adadelta``, ``RMSprop``.
- ``rprop.py``: ``Rprop``; ``asgd.py``: ``ASGD``.
- ``lbfgs.py``: ``LBFGS`` (quasi-Newton steps on a closure).
- ``lr_scheduler/``: PyTorch's learning-rate schedules (``StepLR``, ``CosineAnnealingLR``,
  ``OneCycleLR``, ``ReduceLROnPlateau`` ...) and minitensor's ``LinearWarmup``.

Each optimizer has PyTorch's arguments, defaults, update rule (written in its module's
docstring) and state-dict layout.

A training step::

    opt = mt.optim.AdamW(model.parameters(), lr=1e-3)
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
"""

from __future__ import annotations

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["ASGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "NAdam", "Optimizer", "RAdam",
           "RMSprop", "Rprop", "SGD", "lr_scheduler"]  # fmt: skip

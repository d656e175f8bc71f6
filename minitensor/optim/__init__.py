"""Optimizers and learning-rate schedules.

- ``optimizer.py``: ``Optimizer``, the base (parameter groups, state, state dicts).
- ``sgd.py``: ``SGD`` (momentum, Nesterov, weight decay).
- ``adam.py``: ``Adam`` and ``AdamW``.
- ``lbfgs.py``: ``LBFGS`` (quasi-Newton steps on a closure).
- ``lr_scheduler.py``: ``StepLR``, ``LambdaLR``, ``LinearLR``, ``CosineAnnealingLR``, ``OneCycleLR``,
  ``ReduceLROnPlateau``, linear warmup.

A training step::

    opt = mt.optim.AdamW(model.parameters(), lr=1e-3)
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
"""

from __future__ import annotations

from . import lr_scheduler
from .adam import Adam, AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Adam", "AdamW", "LBFGS", "Optimizer", "SGD", "lr_scheduler"]

"""``minitensor.distributions``, PyTorch's ``torch.distributions``: probability distributions to sample from,
score values with (``log_prob``), and compare (``kl_divergence``).

One file per family: ``normal.py``, ``bernoulli.py``, ``categorical.py``, ``one_hot_categorical.py``,
``uniform.py``, ``multivariate_normal.py``, ``gamma.py``, ``beta.py``, ``dirichlet.py``, ``independent.py``;
``distribution.py`` (the base: shapes, validation), ``constraints.py``, ``kl.py``, ``utils.py``.

>>> import minitensor as mt
>>> _ = mt.manual_seed(0)
>>> loc = mt.zeros(2, requires_grad=True)
>>> q = Normal(loc, 1.0)
>>> z = q.rsample((1000,))                      # reparameterised: gradients flow to loc
>>> loss = -q.log_prob(z).mean() + kl_divergence(q, Normal(0.0, 1.0)).sum()
>>> loss.backward()
>>> loc.grad.shape
(2,)
"""

from __future__ import annotations

from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Categorical", "Dirichlet", "Distribution", "Gamma", "Independent", "MultivariateNormal",
    "Normal", "OneHotCategorical", "Uniform", "constraints", "kl_divergence", "register_kl",
]  # fmt: skip

# ruff: noqa: F401  (this file re-exports)
"""``nn.utils``, as PyTorch's ``torch.nn.utils``: gradient clipping and parameter <-> vector.

- ``clip_grad.py``: ``clip_grad_norm_``, ``clip_grad_value_``;
- ``convert_parameters.py``: ``parameters_to_vector``, ``vector_to_parameters``.
"""

from .clip_grad import clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters

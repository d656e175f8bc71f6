# ruff: noqa: F401  (this file re-exports)
"""``nn.utils``, as PyTorch's ``torch.nn.utils``: gradient clipping, parameter <-> vector, packed sequences.

- ``clip_grad.py``: ``clip_grad_norm_``, ``clip_grad_value_``;
- ``convert_parameters.py``: ``parameters_to_vector``, ``vector_to_parameters``;
- ``rnn.py``: ``nn.utils.rnn`` (``pad_sequence``, ``pack_padded_sequence``, ``pad_packed_sequence``,
  ``pack_sequence``, ``PackedSequence`` ...).
"""

from . import rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters

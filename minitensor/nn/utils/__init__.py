# ruff: noqa: F401  (this file re-exports)
"""``nn.utils``, as PyTorch's ``torch.nn.utils``: gradient clipping, parameter <-> vector, packed sequences,
parametrizations.

- ``clip_grad.py``: ``clip_grad_norm_``, ``clip_grad_value_``;
- ``convert_parameters.py``: ``parameters_to_vector``, ``vector_to_parameters``;
- ``rnn.py``: ``nn.utils.rnn`` (``pad_sequence``, ``pack_padded_sequence``, ``pad_packed_sequence``,
  ``pack_sequence``, ``PackedSequence`` ...);
- ``parametrize.py``: ``nn.utils.parametrize`` (``register_parametrization``, ``remove_parametrizations``,
  ``cached``, ``is_parametrized``); ``parametrizations.py``: ``weight_norm`` and ``spectral_norm`` as
  parametrizations;
- ``weight_norm.py``: the older ``weight_norm`` / ``remove_weight_norm`` (a forward pre-hook).
"""

from . import parametrizations, parametrize, rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .weight_norm import remove_weight_norm, weight_norm

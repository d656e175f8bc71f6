"""Where a minitensor ``nn`` class keeps its state differently from PyTorch's class of that name.

A whole module moves between the libraries as its ``__dict__`` (``modules.py``).  For most
classes the two dicts hold the same attributes; these hold more in PyTorch, or name a
sub-module differently:

==========================  ===============================================================
class                       PyTorch's dict has (minitensor's does not)
==========================  ===============================================================
ReLU, Dropout, ... (19)     ``inplace`` (False)
Embedding                   ``max_norm`` (None), ``norm_type`` (2.0), ``scale_grad_by_freq``,
                            ``sparse`` (False): the options minitensor does not offer
RNN, LSTM, GRU              ``proj_size`` (0), ``_flat_weights_names``, ``_all_weights``
                            (the parameter names per layer and direction), ``_flat_weights``
MultiheadAttention          ``add_zero_attn`` (False), ``bias_k``, ``bias_v`` (None)
TransformerEncoder          ``enable_nested_tensor`` (False), ``use_nested_tensor`` (False),
                            ``mask_check`` (True)
ParameterList, -Dict        ``_size`` (its length), ``_keys`` (its names)
TransformerEncoderLayer     ``activation_relu_or_gelu``; its dropouts are ``dropout`` (inside
                            the feed-forward block), ``dropout1``, ``dropout2`` (after attention
                            and after the block) where minitensor's (Lucid's layout) are
                            ``dropout2``, ``dropout1``, ``dropout3``; minitensor's also keeps
                            ``d_model``, ``nhead`` and ``batch_first``
==========================  ===============================================================

``to_torch`` adds what PyTorch's class needs to a state written by minitensor; ``from_torch``
adds what minitensor's class needs to a state written by PyTorch.  Attributes one library has
and the other ignores are carried along unchanged.
"""

from __future__ import annotations

from ...nn import functional as F
from ...nn.container import ParameterDict, ParameterList
from ...nn.module import Module
from ...nn.rnn import RNNBase
from ...nn.transformer_encoder import TransformerEncoderLayer
from .pickle_reader import CheckpointError
from .torch_names import NN_CLASS_FILE

_INPLACE = (
    "AlphaDropout CELU Dropout Dropout1d Dropout2d Dropout3d ELU FeatureAlphaDropout Hardsigmoid Hardswish Hardtanh "
    "LeakyReLU Mish RReLU ReLU ReLU6 SELU SiLU Threshold"
).split()

# PyTorch's attributes, with the values they take in minitensor, that minitensor's class does not keep.
TORCH_DEFAULTS = {
    **{name: {"inplace": False} for name in _INPLACE},
    "Embedding": {"max_norm": None, "norm_type": 2.0, "scale_grad_by_freq": False, "sparse": False},
    "MultiheadAttention": {"add_zero_attn": False, "bias_k": None, "bias_v": None},
    "RNN": {"proj_size": 0},
    "LSTM": {"proj_size": 0},
    "GRU": {"proj_size": 0},
    "TransformerEncoder": {"enable_nested_tensor": False, "use_nested_tensor": False, "mask_check": True},
}

# minitensor's encoder-layer dropouts -> PyTorch's, in the order PyTorch registers its sub-modules.
_ENCODER_ORDER = ("self_attn", "linear1", "dropout", "linear2", "norm1", "norm2", "dropout1", "dropout2")
_ENCODER_TO_TORCH = {"dropout2": "dropout", "dropout1": "dropout1", "dropout3": "dropout2"}


def to_torch(module, state: dict) -> None:
    """Add to ``state`` (PyTorch's layout, from minitensor's ``module``) what PyTorch's class needs."""
    for name, value in TORCH_DEFAULTS.get(_torch_class(module), {}).items():
        state.setdefault(name, value)
    if isinstance(module, RNNBase):
        names = list(state["_parameters"])
        groups: dict = {}
        for name in names:  # weight_ih_l0, ..., bias_hh_l1_reverse: grouped by what follows "_l"
            groups.setdefault(name.rpartition("_l")[2], []).append(name)
        state["_flat_weights_names"] = names
        state["_all_weights"] = list(groups.values())
        state["_flat_weights"] = [state["_parameters"][name] for name in names]
    elif isinstance(module, ParameterList):
        state.setdefault("_size", len(state["_parameters"]))
    elif isinstance(module, ParameterDict):
        state.setdefault("_keys", dict.fromkeys(state["_parameters"]))
    elif isinstance(module, TransformerEncoderLayer):
        own = state["_modules"]
        renamed = {_ENCODER_TO_TORCH.get(name, name): sub for name, sub in own.items()}
        state["_modules"] = {name: renamed[name] for name in _ENCODER_ORDER if name in renamed}
        state["_modules"].update((k, v) for k, v in renamed.items() if k not in _ENCODER_ORDER)
        activation = state.get("activation")
        state.setdefault("activation_relu_or_gelu", 1 if activation is F.relu else 2 if activation is F.gelu else 0)


def _torch_class(module) -> str | None:
    """The name of the first class in ``module``'s MRO that is one of minitensor's ``nn`` classes
    PyTorch also has (a user's ``class MyLSTM(nn.LSTM)`` needs what LSTM needs)."""
    for cls in type(module).__mro__:
        if cls is Module:
            return None
        if cls.__module__.startswith("minitensor.nn.") and cls.__name__ in NN_CLASS_FILE:
            return cls.__name__
    return None


def from_torch(module, attributes: dict) -> None:
    """Add to ``attributes`` (minitensor's layout, from a state PyTorch wrote) what minitensor's class needs."""
    if isinstance(module, TransformerEncoderLayer):
        own = attributes["_modules"]
        if "dropout3" not in own:
            if not all(name in own for name in _ENCODER_TO_TORCH.values()):
                raise CheckpointError("a TransformerEncoderLayer has neither minitensor's nor PyTorch's dropouts")
            back = {torch_name: name for name, torch_name in _ENCODER_TO_TORCH.items()}
            renamed = type(own)((back.get(name, name), sub) for name, sub in own.items())
            own.clear()
            own.update((name, renamed[name]) for name in sorted(renamed, key=_encoder_position))
        attention = own.get("self_attn")
        settings = attention.__dict__ if attention is not None else {}
        for name, source in (("d_model", "embed_dim"), ("nhead", "num_heads"), ("batch_first", "batch_first")):
            if name not in attributes:
                if source not in settings:
                    raise CheckpointError(f"a TransformerEncoderLayer's self_attn has no {source}")
                attributes[name] = settings[source]


_MINITENSOR_ENCODER_ORDER = ("self_attn", "linear1", "linear2", "norm1", "norm2", "dropout1", "dropout2", "dropout3")


def _encoder_position(name: str) -> int:
    return _MINITENSOR_ENCODER_ORDER.index(name) if name in _MINITENSOR_ENCODER_ORDER else len(_ENCODER_ORDER)

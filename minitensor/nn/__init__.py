# ruff: noqa: F401  (this file re-exports)
"""Neural-network layers: ``import minitensor.nn as nn``.

``Module`` is the base class; layers live one family per file and are
re-exported here.  ``nn.functional`` holds their stateless forms and
``nn.init`` the weight initialisers.
"""

from . import functional, init, utils
from .activation import GELU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Softplus, Tanh
from .attention import MultiheadAttention
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .dropout import Dropout
from .embedding import Embedding
from .fold import Fold, Unfold
from .linear import Identity, Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import Module
from .normalization import LayerNorm
from .parameter import Parameter
from .rnn import GRU, LSTM, RNN, RNNBase
from .rnn_cell import GRUCell, LSTMCell, RNNCell
from .transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

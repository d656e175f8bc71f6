"""Recurrent layers: ``RNN`` (tanh or relu), ``LSTM`` and ``GRU``, as PyTorch's.

An ``LSTM`` or ``GRU`` layer (one direction) is one graph node for the whole
sequence, ``LSTMLayer`` (``ops/lstm_layer.py``) or ``GRULayer``
(``ops/gru_layer.py``): one matmul for the input products of all steps, the
recurrence in one kernel call, and the same backwards; their step-by-step
formulas in Tensor ops give the second derivatives.  ``RNN`` loops over time
with one cell step per token, built from Tensor ops (``@``, ``tanh``/``relu``,
``+``), the input products of the whole sequence one matmul before the loop;
autograd gives its gradients of any order.

>>> lstm = nn.LSTM(input_size=10, hidden_size=20, num_layers=2)
>>> output, (h_n, c_n) = lstm(mt.randn(5, 3, 10))       # (seq, batch, feature)
>>> output.shape, h_n.shape, c_n.shape
((5, 3, 20), (2, 3, 20), (2, 3, 20))

Parameters have PyTorch's names and shapes (``weight_ih_l0`` (gates*hidden, input),
``weight_hh_l0`` (gates*hidden, hidden), ``bias_ih_l0``, ``bias_hh_l0``, ``_reverse``
for the backward direction), so ``load_state_dict`` takes a PyTorch state dict.
"""

from __future__ import annotations

import math

from ..ops import functions as fn
from ..ops.gru_layer import GRULayer
from ..ops.lstm_layer import LSTMLayer
from ..tensor import Tensor, creation
from . import functional as F
from . import init
from ._utils import check_size, empty_parameter, float_dtype
from .module import Module
from .rnn_packed import forward_packed
from .utils.rnn import PackedSequence

# Gates per cell: the rows of weight_ih are these blocks of hidden_size, in this order.
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}  # LSTM: i, f, g, o. GRU: r, z, n.


def _as_tensor(value) -> Tensor:
    """A Tensor as is; a NumPy array or list as a Tensor (as every layer accepts)."""
    return value if isinstance(value, Tensor) else Tensor(value)


def _affine(x: Tensor, weight: Tensor, bias) -> Tensor:
    """x @ weight.T + bias, from matmul and add (twice differentiable; the fused F.linear is not yet)."""
    y = x @ weight.T
    return y if bias is None else y + bias


def _hidden_product(h: Tensor, w_hh_t: Tensor, b_hh) -> Tensor:
    """h @ W_hh^T (+ b_hh); ``w_hh_t`` is W_hh transposed once per sequence, not once per step."""
    y = h @ w_hh_t
    return y if b_hh is None else y + b_hh


def _rnn_cell(x_proj: Tensor, h: Tensor, w_hh_t: Tensor, b_hh, relu: bool) -> Tensor:
    """h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh); ``x_proj`` is the input half. Shapes (N, H)."""
    pre = x_proj + _hidden_product(h, w_hh_t, b_hh)
    return fn.relu(pre) if relu else fn.tanh(pre)


class RNNBase(Module):
    """The shared machinery of ``RNN``, ``LSTM`` and ``GRU`` (use those).

    Shapes: input (L, N, H_in), or (N, L, H_in) with ``batch_first``, or unbatched
    (L, H_in); hidden state (D * num_layers, N, H) or unbatched (D * num_layers, H),
    D = 2 if bidirectional else 1. Output (L, N, D * H) (batch first if asked).

    Init (PyTorch's): every weight and bias ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).
    """

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        layer = type(self).__name__
        self.mode = mode
        self.input_size = check_size(input_size, "input_size", layer)
        self.hidden_size = check_size(hidden_size, "hidden_size", layer)
        self.num_layers = check_size(num_layers, "num_layers", layer)
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
            raise ValueError(f"{layer}: dropout must be a number in [0, 1], got {dropout!r}")
        self.bias, self.batch_first, self.bidirectional = bool(bias), bool(batch_first), bool(bidirectional)
        self.dropout = float(dropout)
        dtype = float_dtype(dtype, layer, device)
        gate_size = _GATES[mode] * self.hidden_size
        directions = 2 if self.bidirectional else 1
        for k in range(self.num_layers):
            layer_input = self.input_size if k == 0 else self.hidden_size * directions
            for suffix in ("", "_reverse")[:directions]:
                self.register_parameter(f"weight_ih_l{k}{suffix}", empty_parameter((gate_size, layer_input), dtype))
                self.register_parameter(f"weight_hh_l{k}{suffix}", empty_parameter((gate_size, hidden_size), dtype))
                if self.bias:
                    self.register_parameter(f"bias_ih_l{k}{suffix}", empty_parameter((gate_size,), dtype))
                    self.register_parameter(f"bias_hh_l{k}{suffix}", empty_parameter((gate_size,), dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every parameter ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def flatten_parameters(self) -> None:
        """Does nothing: PyTorch packs the weights into one buffer for cuDNN; minitensor has no cuDNN."""

    def _weights(self, k: int, suffix: str) -> tuple:
        get = lambda name: getattr(self, f"{name}_l{k}{suffix}", None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def _run_direction(self, x: Tensor, state, k: int, suffix: str) -> tuple:
        """Run layer ``k`` (one direction) over x (L, N, in): (outputs (L, N, H), final state)."""
        w_ih, w_hh, b_ih, b_hh = self._weights(k, suffix)
        if self.mode == "LSTM":  # one node: [h_1..h_L, c_n] (L+1, N, H)
            both = LSTMLayer.apply(x, w_ih, w_hh, b_ih, b_hh, *state, reverse=bool(suffix))
            steps = x.shape[0]
            return both[:steps], (both[0 if suffix else steps - 1], both[steps])
        if self.mode == "GRU":  # one node: h of every step (L, N, H)
            out = GRULayer.apply(x, w_ih, w_hh, b_ih, b_hh, state, reverse=bool(suffix))
            return out, out[0 if suffix else x.shape[0] - 1]
        if b_ih is not None:  # both biases only add to the pre-activation: add them once
            b_ih, b_hh = b_ih + b_hh, None
        x_proj = _affine(x, w_ih, b_ih)  # (L, N, gates * H): all input products in one matmul
        w_hh_t = w_hh.T
        steps = range(x.shape[0] - 1, -1, -1) if suffix else range(x.shape[0])
        outputs = [None] * x.shape[0]
        for t in steps:
            state = _rnn_cell(x_proj[t], state, w_hh_t, b_hh, relu=self.mode == "RNN_RELU")
            outputs[t] = state
        return fn.stack(outputs, dim=0), state

    def _check_input(self, input: Tensor) -> bool:  # noqa: A002
        """Whether the input is batched; ValueError for a wrong rank, feature size or an empty sequence."""
        layer = type(self).__name__
        if input.ndim not in (2, 3):
            raise ValueError(f"{layer}: input must be 2-D (unbatched) or 3-D (batched), got shape {input.shape}")
        if input.shape[-1] != self.input_size:
            raise ValueError(f"{layer}: input's last dim must be input_size={self.input_size}, got {input.shape}")
        if input.shape[1 if input.ndim == 3 and self.batch_first else 0] == 0:
            raise ValueError(f"{layer}: the sequence length must be at least 1, got input of shape {input.shape}")
        return input.ndim == 3

    def _initial_state(self, hx, batch: int, batched: bool, like: Tensor) -> list:
        """The per-(layer, direction) initial states, zeros when ``hx`` is None."""
        rows = self.num_layers * (2 if self.bidirectional else 1)
        expected = (rows, batch, self.hidden_size) if batched else (rows, self.hidden_size)
        parts = hx if isinstance(hx, (tuple, list)) else (hx,)
        count = 2 if self.mode == "LSTM" else 1
        if hx is None:
            parts = tuple(creation.zeros(*expected, dtype=like.dtype) for _ in range(count))
        if len(parts) != count:
            raise TypeError(f"{type(self).__name__}: hx must be {'(h_0, c_0)' if count == 2 else 'one Tensor'}")
        parts = [_as_tensor(p) for p in parts]
        for p in parts:
            if tuple(p.shape) != expected:
                raise ValueError(f"{type(self).__name__}: hidden state must have shape {expected}, got {p.shape}")
        if not batched:
            parts = [p.unsqueeze(1) for p in parts]
        states = [tuple(p[i] for p in parts) for i in range(rows)]
        return [s if count == 2 else s[0] for s in states]

    def forward(self, input: Tensor, hx=None) -> tuple:  # noqa: A002
        """(output, h_n), or (output, (h_n, c_n)) for the LSTM; shapes in the class docstring.

        A ``PackedSequence`` input gives a ``PackedSequence`` output (``rnn_packed.py``)."""
        if isinstance(input, PackedSequence):
            return forward_packed(self, input, hx)
        input = _as_tensor(input)  # noqa: A001
        batched = self._check_input(input)
        x = input if batched else input.unsqueeze(1)
        if batched and self.batch_first:
            x = x.transpose(0, 1)
        states = self._initial_state(hx, x.shape[1], batched, x)
        x, finals = self._run_layers(x, states)
        return self._pack(x, finals, batched)

    def _run_layers(self, x: Tensor, states: list) -> tuple:
        """Every layer and direction over x (L, N, in) from the initial ``states`` (one per layer and direction):
        (output (L, N, D * H), the final states in the same order)."""
        directions = ("", "_reverse") if self.bidirectional else ("",)
        finals = []
        for k in range(self.num_layers):
            if k > 0 and self.dropout > 0 and self.training:
                x = F.dropout(x, self.dropout, training=True)
            outs = []
            for d, suffix in enumerate(directions):
                out, final = self._run_direction(x, states[k * len(directions) + d], k, suffix)
                outs.append(out)
                finals.append(final)
            x = outs[0] if len(outs) == 1 else fn.cat(outs, dim=-1)
        return x, finals

    def _pack(self, output: Tensor, finals: list, batched: bool) -> tuple:
        """Stack the final states to (D * num_layers, N, H) and undo the batch-first/unbatched layout."""
        if self.mode == "LSTM":
            hidden = tuple(fn.stack([f[i] for f in finals], dim=0) for i in range(2))
        else:
            hidden = fn.stack(finals, dim=0)
        if not batched:
            output = output.squeeze(1)
            hidden = tuple(h.squeeze(1) for h in hidden) if self.mode == "LSTM" else hidden.squeeze(1)
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, hidden

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        for name, default in (("bias", True), ("batch_first", False), ("dropout", 0.0), ("bidirectional", False)):
            if getattr(self, name) != default:
                text += f", {name}={getattr(self, name)}"
        return text


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (``nonlinearity='relu'``: relu).

    Args as PyTorch's: input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0 (between layers, in training), bidirectional=False.
    Returns (output, h_n).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh", *args, **kw):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(f"RNN_{nonlinearity.upper()}", input_size, hidden_size, num_layers, *args, **kw)


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o (in that order in the weights' rows).

    Args as PyTorch's: input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False (``proj_size`` is not supported). ``forward(input, (h_0, c_0))``
    returns (output, (h_n, c_n)).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, *args, proj_size: int = 0, **kw):
        if proj_size:
            raise NotImplementedError(f"LSTM: proj_size is not supported by minitensor, got {proj_size}")
        super().__init__("LSTM", input_size, hidden_size, num_layers, *args, **kw)


class GRU(RNNBase):
    """Gated recurrent unit: gates r, z, n (in that order), h' = (1 - z) * n + z * h, as PyTorch's.

    Args as PyTorch's: input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False. Returns (output, h_n).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, *args, **kw):
        super().__init__("GRU", input_size, hidden_size, num_layers, *args, **kw)

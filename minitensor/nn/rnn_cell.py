"""One step of a recurrent layer: ``RNNCell``, ``LSTMCell`` and ``GRUCell``, as PyTorch's.

A cell maps the input of one time step and the previous state to the next
state; the caller loops over time (PyTorch's time-series example does, two
LSTM cells deep).  With ``gates = x W_ihᵀ + b_ih`` and ``hidden = h W_hhᵀ + b_hh``
(blocks of ``hidden_size`` columns, in PyTorch's order)::

    RNNCell   h' = tanh(gates + hidden)                 (or relu)
    LSTMCell  i, f, g, o = blocks of gates + hidden
              c' = σ(f) c + σ(i) tanh(g),   h' = σ(o) tanh(c')
    GRUCell   r, z, n: blocks of gates (gx) and of hidden (gh)
              r = σ(gx_r + gh_r),  z = σ(gx_z + gh_z),  n = tanh(gx_n + r gh_n)
              h' = (1 - z) n + z h

``RNNCell`` and ``GRUCell`` are built from Tensor ops, so their gradients of any order
come from those; an ``LSTMCell`` step is one graph node (``ops/lstm_cell.py``).
Shapes: input (N, input_size) or unbatched (input_size,); states (N, hidden_size)
or (hidden_size,), zeros when not given.  Parameters ``weight_ih``, ``weight_hh``,
``bias_ih``, ``bias_hh`` with PyTorch's shapes and init U(-1/sqrt(H), 1/sqrt(H)).

>>> cell = nn.LSTMCell(3, 5)
>>> h, c = cell(mt.randn(2, 3))
>>> h.shape, c.shape
((2, 5), (2, 5))
"""

from __future__ import annotations

import math

from ..ops import functions as fn
from ..ops.lstm_cell import LSTMCellStep
from ..tensor import Tensor, creation
from . import init
from ._utils import check_size, empty_parameter, float_dtype
from .module import Module


class RNNCellBase(Module):
    """The parameters and shape handling the three cells share, as PyTorch's base class (use the cells):
    ``weight_ih`` (num_chunks * hidden_size, input_size), ``weight_hh``, ``bias_ih``, ``bias_hh``.
    ``num_chunks`` is the number of gate blocks (the cells' class attribute ``gates``)."""

    gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None, dtype=None) -> None:
        super().__init__()
        name = type(self).__name__
        self.input_size = check_size(input_size, "input_size", name)
        self.hidden_size = check_size(hidden_size, "hidden_size", name)
        self.bias = bool(bias)
        dtype = float_dtype(dtype, name, device)
        rows = check_size(num_chunks, "num_chunks", name) * self.hidden_size
        self.weight_ih = empty_parameter((rows, self.input_size), dtype)
        self.weight_hh = empty_parameter((rows, self.hidden_size), dtype)
        self.bias_ih = empty_parameter((rows,), dtype) if self.bias else None
        self.bias_hh = empty_parameter((rows,), dtype) if self.bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _input(self, x) -> tuple:
        """(x as (N, input_size), whether it came unbatched)."""
        x = x if isinstance(x, Tensor) else Tensor(x)
        if x.ndim not in (1, 2) or x.shape[-1] != self.input_size:
            raise ValueError(
                f"{type(self).__name__}: input must be (N, {self.input_size}) or ({self.input_size},), got {x.shape}"
            )
        return (x.unsqueeze(0), True) if x.ndim == 1 else (x, False)

    def _state(self, h, x: Tensor, unbatched: bool, name: str = "hx") -> Tensor:
        """A state (N, hidden_size): zeros when None; an unbatched one gets its batch dim."""
        if h is None:
            return creation.zeros(x.shape[0], self.hidden_size, dtype=x.dtype)
        h = h if isinstance(h, Tensor) else Tensor(h)
        h = h.unsqueeze(0) if unbatched and h.ndim == 1 else h
        if h.shape != (x.shape[0], self.hidden_size):
            expected = (x.shape[0], self.hidden_size)
            raise ValueError(f"{type(self).__name__}: {name} must be {expected} for this input, got {h.shape}")
        return h

    def _products(self, x: Tensor, h: Tensor) -> tuple:
        """(x W_ihᵀ + b_ih, h W_hhᵀ + b_hh)."""
        gx, gh = x @ self.weight_ih.T, h @ self.weight_hh.T
        if self.bias:
            gx, gh = gx + self.bias_ih, gh + self.bias_hh
        return gx, gh

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


def _squeezed(t: Tensor, unbatched: bool) -> Tensor:
    return t.squeeze(0) if unbatched else t


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh) (``nonlinearity='relu'``: relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:  # fmt: skip
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, self.gates, device, dtype)

    def forward(self, input, hx=None) -> Tensor:  # noqa: A002
        x, unbatched = self._input(input)
        gx, gh = self._products(x, self._state(hx, x, unbatched))
        pre = gx + gh
        return _squeezed(fn.relu(pre) if self.nonlinearity == "relu" else fn.tanh(pre), unbatched)

    def extra_repr(self) -> str:
        return super().extra_repr() + ("" if self.nonlinearity == "tanh" else f", nonlinearity={self.nonlinearity}")


class LSTMCell(RNNCellBase):
    """One LSTM step: ``(h', c') = cell(x, (h, c))`` (see the module docstring)."""

    gates = 4

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, self.gates, device, dtype)

    def forward(self, input, hx=None) -> tuple:  # noqa: A002
        x, unbatched = self._input(input)
        h, c = (None, None) if hx is None else hx
        h, c = self._state(h, x, unbatched, "h"), self._state(c, x, unbatched, "c")
        # one graph node for the step (ops/lstm_cell.py); its Tensor-op form gives second derivatives
        h, c = LSTMCellStep.apply(x, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh).unbind(0)
        return _squeezed(h, unbatched), _squeezed(c, unbatched)


class GRUCell(RNNCellBase):
    """One GRU step: ``h' = cell(x, h)`` (see the module docstring)."""

    gates = 3

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, self.gates, device, dtype)

    def forward(self, input, hx=None) -> Tensor:  # noqa: A002
        x, unbatched = self._input(input)
        h = self._state(hx, x, unbatched)
        gx, gh = self._products(x, h)
        xr, xz, xn = gx.chunk(3, dim=1)
        hr, hz, hn = gh.chunk(3, dim=1)
        r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
        n = (xn + r * hn).tanh()
        return _squeezed((1 - z) * n + z * h, unbatched)

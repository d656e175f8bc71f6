"""``nn.RNN`` / ``nn.LSTM`` / ``nn.GRU`` over a ``PackedSequence``: each sequence runs for its own length only.

The sequences of a packed batch are sorted longest first, so those of equal length sit side by side.
Each such group runs through all the layers as an ordinary (unpadded) batch, truncated to its
length: the output stops at each sequence's last step, ``h_n`` is each sequence's state there, and
the reverse direction starts from each sequence's own last step, exactly as PyTorch's packed
kernels.  The outputs are packed again and ``h_n`` is put back in the batch's original order.
(A batch with many distinct lengths runs as many groups.)

>>> lstm = nn.LSTM(2, 3)
>>> packed = nn.utils.rnn.pack_sequence([mt.randn(4, 2), mt.randn(2, 2)])
>>> output, (h_n, c_n) = lstm(packed)
>>> output.data.shape, h_n.shape          # 4 + 2 steps; one state per sequence
((6, 3), (1, 2, 3))
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..ops import functions as fn
from ..tensor import Tensor, creation
from .utils.rnn import PackedSequence, pad_packed_sequence


def _int64(values) -> Tensor:
    return Tensor._make(np.asarray(values, dtype=dtypes.int64), False, None)


def _rows(state, index):
    """Rows ``index`` (an int64 Tensor or a slice) of a state: a (N, H) Tensor or an LSTM's (h, c)."""
    return tuple(s[index] for s in state) if isinstance(state, tuple) else state[index]


def forward_packed(layer, packed: PackedSequence, hx) -> tuple:
    """``layer(packed, hx)``: (PackedSequence of the outputs, h_n) (LSTM: (h_n, c_n)), h_n (D * num_layers, N, H)
    in the batch's original order, as the ``hx`` it takes."""
    name = type(layer).__name__
    if packed.data.ndim != 2 or packed.data.shape[-1] != layer.input_size:
        raise ValueError(f"{name}: packed data must be (steps, input_size={layer.input_size}), got {packed.data.shape}")
    batch_sizes = np.asarray(packed.batch_sizes.numpy(), dtype=np.int64)
    batch, steps = int(batch_sizes[0]), batch_sizes.size
    sorted_first = PackedSequence(packed.data, packed.batch_sizes, None, None)
    x, lengths = pad_packed_sequence(sorted_first)  # (steps, batch, in), longest sequence first
    lengths = lengths.numpy()
    states = layer._initial_state(hx, batch, True, x)
    if packed.sorted_indices is not None:  # hx is in the batch's order: sort it like the sequences
        states = [_rows(s, packed.sorted_indices) for s in states]
    outputs, finals = [], []
    for length in np.unique(lengths)[::-1]:  # the groups of equal length, longest first
        members = np.flatnonzero(lengths == length)
        group = slice(int(members[0]), int(members[-1]) + 1)
        out, final = layer._run_layers(x[: int(length), group], [_rows(s, group) for s in states])
        if length < steps:  # back to all the steps, for packing
            out = fn.cat([out, creation.zeros(steps - int(length), *out.shape[1:], dtype=out.dtype)], 0)
        outputs.append(out)
        finals.append(final)
    padded = fn.cat(outputs, 1)  # (steps, batch, D * H), sorted order
    rows = np.concatenate([t * batch + np.arange(size) for t, size in enumerate(batch_sizes)])
    data = padded.reshape(steps * batch, padded.shape[-1])[_int64(rows)]
    output = PackedSequence(data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
    unsorted = packed.unsorted_indices

    def gather(parts: list) -> Tensor:  # one final state per group -> (D * num_layers, N, H), original order
        h = fn.stack([fn.cat(list(per_group), 0) for per_group in zip(*parts)], 0)
        return h if unsorted is None else h[:, unsorted]

    if layer.mode == "LSTM":
        hidden = tuple(gather([[f[i] for f in group] for group in finals]) for i in range(2))
    else:
        hidden = gather(finals)
    return output, hidden

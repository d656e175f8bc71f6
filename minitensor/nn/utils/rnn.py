"""Batches of sequences of different lengths, as PyTorch's ``torch.nn.utils.rnn``.

- ``pad_sequence``: a list of (L_i, *) tensors -> one (L_max, N, *) tensor, padded with ``padding_value``;
- ``pack_padded_sequence`` / ``pack_sequence``: -> a ``PackedSequence``, the time steps of all
  sequences one after the other, longest sequence first, without the padding;
- ``pad_packed_sequence``: the way back (-> padded tensor, lengths);
- ``unpad_sequence`` / ``unpack_sequence``: -> the list of sequences.

``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` take a ``PackedSequence`` and give one back: each sequence is
run for its own length only, so ``h_n`` holds each sequence's state at its own last step.

Every function is differentiable: the data moves by gathers (indexing) and concatenation.

>>> import minitensor as mt
>>> a, b = mt.tensor([1.0, 2.0, 3.0]), mt.tensor([4.0, 5.0])
>>> pad_sequence([a, b], batch_first=True)
tensor([[1., 2., 3.],
        [4., 5., 0.]])
>>> packed = pack_sequence([a, b])
>>> packed.data.tolist(), packed.batch_sizes.tolist()          # time step 0 of both, step 1 of both, step 2 of a
([1.0, 4.0, 2.0, 5.0, 3.0], [2, 2, 1])
>>> padded, lengths = pad_packed_sequence(packed, batch_first=True)
>>> lengths.tolist()
[3, 2]
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import dtypes
from ...ops.functions import cat, stack
from ...tensor import Tensor, creation

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]


def _int64(values) -> Tensor:
    return Tensor._make(np.asarray(values, dtype=dtypes.int64), False, None)


class _PackedSequenceFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceFields):
    """The steps of a batch of sequences, packed (a named tuple, as PyTorch's).

    Fields:
        data: (sum of the lengths, *): step 0 of every sequence, then step 1 of those that have one ...,
            the sequences in decreasing order of length.
        batch_sizes: (L_max,) int64: how many sequences have each step.
        sorted_indices: (N,) int64, the batch index of the k-th longest sequence (None when the batch
            was given sorted); ``unsorted_indices`` is its inverse.

    Make one with ``pack_padded_sequence`` or ``pack_sequence``, not by hand.
    """

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None, sorted_indices=None, unsorted_indices=None):
        if batch_sizes is None:  # PackedSequence((data, batch_sizes)), as PyTorch allows
            data, batch_sizes = data
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """The data converted (``to(dtype)``); the indices stay as they are."""
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices,
                                                         self.unsorted_indices)  # fmt: skip

    def cpu(self) -> PackedSequence:
        return self

    def float(self) -> PackedSequence:
        return self.to(dtypes.float32)

    def double(self) -> PackedSequence:
        return self.to(dtypes.float64)

    def half(self) -> PackedSequence:
        return self.to(dtypes.float16)

    def long(self) -> PackedSequence:
        return self.to(dtypes.int64)

    def int(self) -> PackedSequence:
        return self.to(dtypes.int32)

    is_cuda = False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of 0..N-1 (None stays None)."""
    if permutation is None:
        return None
    perm = np.asarray(permutation, dtype=np.int64)
    inverse = np.empty_like(perm)
    inverse[perm] = np.arange(perm.size)
    return _int64(inverse)


def pad_sequence(
    sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"
) -> Tensor:
    """Stack sequences of shapes (L_i, *) into (L_max, N, *) (``batch_first``: (N, L_max, *)), padded with
    ``padding_value`` after each sequence (``padding_side='left'``: before it)."""
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise ValueError("pad_sequence: received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise ValueError(f"pad_sequence: padding_side must be 'left' or 'right', got {padding_side!r}")
    for i, s in enumerate(sequences):
        if not isinstance(s, Tensor) or s.ndim < 1 or s.shape[1:] != sequences[0].shape[1:]:
            raise ValueError(
                f"pad_sequence: sequences[{i}] must be a Tensor of shape (L, *{sequences[0].shape[1:]}), "
                f"got {getattr(s, 'shape', type(s).__name__)}"
            )
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing:
            pad = creation.full((missing, *s.shape[1:]), padding_value, dtype=s.dtype)
            s = cat([s, pad] if padding_side == "right" else [pad, s], 0)
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def _lengths(lengths, batch: int, steps: int) -> np.ndarray:
    """``lengths`` (a list or a 1-D tensor) as int64, checked against the batch size and the number of steps."""
    lengths = np.asarray(lengths.numpy() if isinstance(lengths, Tensor) else lengths).astype(np.int64).ravel()
    if lengths.size != batch:
        raise ValueError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {lengths.size} (batch_size={batch})"
        )
    if (lengths <= 0).any():
        raise ValueError(f"pack_padded_sequence: every length must be > 0, got lengths {lengths.tolist()}")
    if (lengths > steps).any():
        raise ValueError(f"pack_padded_sequence: lengths {lengths.tolist()} exceed the input's {steps} steps")
    return lengths


def _packed_rows(batch_sizes: np.ndarray, batch: int, batch_first: bool, order: np.ndarray, steps: int) -> np.ndarray:
    """For each packed row (step t of the k-th longest sequence), its row in the input seen as (steps * batch, *)
    (time-major) or (batch * steps, *) (``batch_first``); ``order[k]`` is that sequence's batch index."""
    rows = []
    for t, size in enumerate(batch_sizes):
        k = order[:size]
        rows.append(k * steps + t if batch_first else t * batch + k)
    return np.concatenate(rows)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False, enforce_sorted: bool = True):  # noqa: A002
    """Pack a padded batch (L, N, *) (``batch_first``: (N, L, *)) of sequences of the given ``lengths``.

    With ``enforce_sorted`` the lengths must be in decreasing order; otherwise the batch is sorted
    (stably) and ``sorted_indices`` records the order.
    """
    if not isinstance(input, Tensor) or input.ndim < 2:
        raise ValueError(f"pack_padded_sequence: input must be a Tensor with at least 2 dims, got {input!r:.80}")
    batch, steps = (input.shape[0], input.shape[1]) if batch_first else (input.shape[1], input.shape[0])
    lengths = _lengths(lengths, batch, steps)
    if enforce_sorted:
        if (np.diff(lengths) > 0).any():
            raise ValueError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
                "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
                "if you do not need ONNX exportability."
            )
        order, sorted_indices = np.arange(batch), None
    else:
        order = np.argsort(-lengths, kind="stable")
        lengths, sorted_indices = lengths[order], _int64(order)
    batch_sizes = (lengths[None, :] > np.arange(lengths[0])[:, None]).sum(axis=1)
    rows = _packed_rows(batch_sizes, batch, batch_first, order, steps)
    data = input.reshape(batch * steps, *input.shape[2:])[_int64(rows)]
    return PackedSequence(data, _int64(batch_sizes), sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0, total_length: int | None = None
) -> tuple:
    """Unpack: (padded (L, N, *) or (N, L, *) in the original batch order, lengths (N,) int64).

    ``total_length`` pads to that many steps (at least the longest sequence's length).
    """
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"pad_packed_sequence: sequence must be a PackedSequence, got {type(sequence).__name__}")
    batch_sizes = np.asarray(sequence.batch_sizes.numpy(), dtype=np.int64)
    steps = batch_sizes.size
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {steps}"
            )
        steps = total_length
    batch = int(batch_sizes[0])
    lengths = (batch_sizes[None, :] > np.arange(batch)[:, None]).sum(axis=1)  # of the sorted sequences
    unsorted = np.arange(batch) if sequence.unsorted_indices is None else sequence.unsorted_indices.numpy()
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)])
    pad_row = int(offsets[-1])  # one row of padding_value after the data
    k = unsorted[None, :]  # output column j holds the sorted sequence unsorted[j]
    t = np.arange(steps)[:, None]
    present = t < lengths[k]
    index = np.where(present, offsets[np.minimum(t, batch_sizes.size - 1)] + k, pad_row)  # (steps, batch)
    data = sequence.data
    source = cat([data, creation.full((1, *data.shape[1:]), padding_value, dtype=data.dtype)], 0)
    padded = source[_int64(index.T if batch_first else index)]
    return padded, _int64(lengths[unsorted])


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) tensors (with ``enforce_sorted``, longest first)."""
    sequences = list(sequences)
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """The list of sequences of a padded batch: ``padded[:, i][:lengths[i]]``."""
    lengths = np.asarray(lengths.numpy() if isinstance(lengths, Tensor) else lengths, dtype=np.int64)
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[: int(n)] for seq, n in zip(padded_sequences.unbind(0), lengths)]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences of a ``PackedSequence``, in the original batch order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

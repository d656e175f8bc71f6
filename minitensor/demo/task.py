"""The demo's task: does any token appear twice in the sequence?

A sequence is ``length`` tokens drawn from a vocabulary of ``vocab_size``
letters.  Half of the sequences have all-distinct tokens (label 0); the other
half have exactly one token written twice (label 1), so one pair of equal
positions is all that tells the two classes apart.

No token-by-token model can solve it: the answer depends on comparing every
position with every other one, which is exactly what self-attention does (a
query finds the keys that carry the same token).

>>> rng = np.random.default_rng(0)
>>> tokens, labels = make_batch(rng, 4)
>>> tokens.shape, labels.shape
((4, 8), (4,))
>>> [len(set(row)) < len(row) for row in tokens.tolist()] == labels.astype(bool).tolist()
True
"""

from __future__ import annotations

import numpy as np

LENGTH = 8
VOCAB_SIZE = 10
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def make_batch(
    rng: np.random.Generator, batch_size: int, length: int = LENGTH, vocab_size: int = VOCAB_SIZE
) -> tuple[np.ndarray, np.ndarray]:
    """Random sequences and their labels (1 = some token appears twice).

    Args:
        rng: the NumPy generator to draw from (the demo seeds it with ``--seed``).
        batch_size: N, the number of sequences.
        length: L, the tokens per sequence.
        vocab_size: V, the number of distinct tokens; at least ``length``.

    Returns:
        ``tokens`` (N, L) int64 in [0, V) and ``labels`` (N,) int64 in {0, 1}.
    """
    if not 2 <= length <= vocab_size <= len(LETTERS):
        raise ValueError(
            f"make_batch: need 2 <= length <= vocab_size <= {len(LETTERS)}, got length={length}, "
            f"vocab_size={vocab_size}"
        )
    labels = rng.integers(0, 2, batch_size)
    # A random permutation per row (argsort of random keys); its first L are distinct.
    tokens = np.argsort(rng.random((batch_size, vocab_size)), axis=1)[:, :length]
    # In the label-1 rows, overwrite one position with the token of another position.
    rows = np.flatnonzero(labels)
    source = rng.integers(0, length, rows.size)
    target = (source + rng.integers(1, length, rows.size)) % length  # never the source itself
    tokens[rows, target] = tokens[rows, source]
    return tokens.astype(np.int64), labels.astype(np.int64)


def sequence_ids(tokens: np.ndarray, vocab_size: int = VOCAB_SIZE) -> np.ndarray:
    """One integer per sequence (its tokens read as a base-``vocab_size`` number): (N, L) -> (N,).

    The demo uses it to keep the held-out sequences out of every training batch.
    """
    return tokens @ (vocab_size ** np.arange(tokens.shape[1], dtype=np.int64))


def as_text(tokens: np.ndarray) -> str:
    """The letters of a sequence of token ids: ``[0, 2, 1]`` -> ``'A C B'``."""
    return " ".join(LETTERS[t] for t in tokens)

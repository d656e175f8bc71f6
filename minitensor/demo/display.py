"""What the demo shows: a progress bar, an attention map, and small images (digits, filters) as text
(and as PNGs if matplotlib is there).

>>> print(text_heatmap(np.array([[0.8, 0.2], [0.4, 0.6]]), ["A", "B"]))
      A  B
    A @@ ::
    B == ##
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

import numpy as np

SHADES = " .:-=+*#%@"  # from the smallest weight to the largest


class ProgressBar:
    """A progress line with the loss and accuracy, redrawn in place (``\\r``) on a terminal.

    When the stream is not a terminal (a pipe, a file, a CI log) it prints a
    plain line every ``total // 10`` steps instead, so logs stay readable.

    >>> import io
    >>> bar = ProgressBar(total=20, stream=io.StringIO())
    >>> bar.update(20, loss=0.25, accuracy=0.9)
    >>> bar.stream.getvalue()
    '[########################]   20/20  loss 0.2500  acc  90.0%\\n'
    """

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 24) -> None:
        self.total = total
        self.stream = sys.stdout if stream is None else stream
        self.width = width
        self.in_place = getattr(self.stream, "isatty", lambda: False)()
        self.every = max(1, total // 10)

    def update(self, step: int, loss: float, accuracy: float) -> None:
        """Show step ``step`` of ``total`` (1-based) with the current loss and accuracy (a fraction)."""
        filled = self.width * step // self.total
        bar = "#" * filled + "." * (self.width - filled)
        line = f"[{bar}] {step:4d}/{self.total}  loss {loss:.4f}  acc {accuracy:6.1%}"
        last = step == self.total
        if self.in_place:
            self.stream.write("\r" + line + ("\n" if last else ""))
            self.stream.flush()
        elif step % self.every == 0 or last:
            self.stream.write(line + "\n")


def text_heatmap(weights: np.ndarray, labels: list[str]) -> str:
    """An (L, L) attention map as characters: rows are queries, columns are keys.

    Each cell is two characters from ``SHADES``, darker for a larger weight,
    scaled so that the map's largest weight is ``@@``; ``labels`` name the
    tokens along both axes.
    """
    levels = np.rint(weights / weights.max() * (len(SHADES) - 1)).astype(int)
    lines = ["     " + "".join(f" {label:<2}" for label in labels).rstrip()]
    for label, row in zip(labels, levels):
        cells = "".join(" " + SHADES[level] * 2 for level in row)
        lines.append(f"    {label:<1}{cells}".rstrip())
    return "\n".join(lines)


def save_png(weights: np.ndarray, labels: list[str], path: Path, title: str) -> bool:
    """Draw the map as a PNG with matplotlib; return False (and do nothing) when it is not installed."""
    try:
        from matplotlib.figure import Figure  # optional: the demo runs without it
    except ImportError:
        return False
    figure = Figure(figsize=(4.5, 4))
    axes = figure.subplots()
    image = axes.imshow(weights, cmap="viridis", vmin=0.0)
    axes.set_xticks(range(len(labels)), labels)
    axes.set_yticks(range(len(labels)), labels)
    axes.set_xlabel("key (attended to)")
    axes.set_ylabel("query")
    axes.set_title(title, fontsize=9)
    figure.colorbar(image, ax=axes, label="attention weight")
    figure.savefig(path, dpi=120, bbox_inches="tight")
    return True


def text_images(images: np.ndarray, captions: list[str], per_row: int = 8) -> str:
    """Small images (K, H, W) side by side as characters, ``per_row`` to a row, each caption above
    its image; each image is scaled alone, its smallest value blank and its largest ``@@``.

    >>> print(text_images(np.array([[[0.0, 1.0], [1.0, 0.0]]]), ["x"]))
    x
      @@
    @@
    """
    width = max(2 * images.shape[2], *(len(c) for c in captions)) + 2
    blocks = []
    for start in range(0, len(images), per_row):
        chunk = range(start, min(start + per_row, len(images)))
        lines = ["".join(f"{captions[k]:<{width}}" for k in chunk).rstrip()]
        scaled = [_levels(images[k]) for k in chunk]
        for r in range(images.shape[1]):
            lines.append("".join(f"{''.join(SHADES[v] * 2 for v in s[r]):<{width}}" for s in scaled).rstrip())
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _levels(image: np.ndarray) -> np.ndarray:
    """An image's values as indices into ``SHADES``: its minimum 0, its maximum the darkest."""
    low, span = image.min(), image.max() - image.min()
    return np.rint((image - low) / (span if span > 0 else 1.0) * (len(SHADES) - 1)).astype(int)


def save_digits_png(filters: np.ndarray, digits: np.ndarray, captions: list[str], path: Path) -> bool:
    """Draw the filters (K, h, w) in one row and the digits (M, H, W) with their captions in another;
    return False (and do nothing) when matplotlib is not installed."""
    try:
        from matplotlib.figure import Figure  # optional: the demo runs without it
    except ImportError:
        return False
    columns = max(len(filters), len(digits), 1)
    figure = Figure(figsize=(columns * 0.9, 2.4))
    axes = figure.subplots(2, columns, squeeze=False)
    for ax in axes.ravel():
        ax.set_axis_off()
    for ax, f in zip(axes[0], filters):
        limit = np.abs(f).max()
        ax.imshow(f, cmap="RdBu_r", vmin=-limit, vmax=limit)
    axes[0, 0].set_title("first-layer filters (red > 0, blue < 0)", fontsize=8, loc="left")
    for ax, d, caption in zip(axes[1], digits, captions):
        ax.imshow(d, cmap="gray_r")
        ax.set_title(caption, fontsize=7)
    figure.savefig(path, dpi=120, bbox_inches="tight")
    return True

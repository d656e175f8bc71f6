"""What the demo shows: a progress bar, and an attention map as text (and as a PNG if matplotlib is there).

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

"""``python -m minitensor.demo --task digits``: the CNN learns the shipped handwritten digits (a
short run clears a real bar), and the data, the split, the confusion matrix and the pictures are
what the demo says they are."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

from minitensor.demo import digits, run
from minitensor.demo.display import text_images


def test_the_data_set_is_shipped_small_with_its_licence() -> None:
    images, labels = digits.load_digits()
    assert images.shape == (1797, 1, 8, 8) and images.dtype == np.float32
    assert images.min() == 0.0 and images.max() == 1.0
    assert np.array_equal(np.bincount(labels), [178, 182, 177, 183, 181, 182, 181, 179, 174, 180])
    assert digits.DATA.stat().st_size < 1_000_000
    licence = (digits.DATA.parent / "digits_LICENSE.txt").read_text()
    assert "BSD 3-Clause License" in licence and "scikit-learn" in licence and "UCI" in licence


def test_the_held_out_digits_are_fixed_and_never_trained_on() -> None:
    train, held_out = digits.split(1797)
    assert len(held_out) == digits.HELD_OUT and not set(train) & set(held_out)
    assert len(train) + len(held_out) == 1797
    assert np.array_equal(digits.split(1797)[1], held_out)


def test_the_default_demo_is_still_the_transformer() -> None:
    assert run.parse_args([]).task == "repeat"
    args = run.parse_args(["--task", "digits", "--quick"])
    assert (args.steps, args.bar) == (digits.QUICK["steps"], digits.QUICK["bar"])


def test_the_confusion_matrix_counts_true_rows_and_predicted_columns() -> None:
    counts = digits.confusion_matrix(np.array([3, 3, 1, 0]), np.array([3, 5, 1, 0]))
    assert counts.sum() == 4 and counts[3, 3] == 1 and counts[3, 5] == 1 and counts[5, 3] == 0
    table = digits.format_confusion(counts).splitlines()
    assert len(table) == 11 and table[4].split() == ["3", ".", ".", ".", "1", ".", "1", ".", ".", ".", "."]


def test_text_images_scale_each_image_alone() -> None:
    text = text_images(np.array([[[0.0, 2.0]], [[-1.0, -3.0]]]), ["a", "b"])
    assert text.splitlines() == ["a     b", "  @@  @@"]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("digits")
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream):
        status = run.main(["--task", "digits", "--quick", "--seed", "0", "--out", str(out)])
    return status, stream.getvalue(), out


def test_a_short_run_learns_the_digits(quick_run) -> None:
    status, text, _ = quick_run
    assert status == 0, text
    accuracy = float(re.search(r"held-out accuracy: ([0-9.]+)% on 360 unseen digits", text).group(1))
    assert accuracy >= 100 * digits.QUICK["bar"] >= 90  # chance is 10 %
    assert "[########################]  150/150" in text and "PASS" in text


def test_the_run_prints_the_confusion_matrix_of_the_held_out_digits(quick_run) -> None:
    lines = quick_run[1].splitlines()
    start = lines.index("Confusion matrix of the held-out digits:") + 1
    assert lines[start].split()[-10:] == [str(d) for d in range(10)]
    rows = [[0 if c == "." else int(c) for c in line.split()[1:]] for line in lines[start + 1 : start + 11]]
    counts = np.array(rows)
    assert counts.shape == (10, 10) and counts.sum() == 360
    accuracy = float(re.search(r"held-out accuracy: ([0-9.]+)%", quick_run[1]).group(1))
    assert np.trace(counts) == round(accuracy * 3.6)


def test_the_run_shows_the_filters_and_the_mistakes(quick_run) -> None:
    _, text, out = quick_run
    assert "The first layer's 16 learned 3x3 filters" in text and "f15" in text
    mistakes = re.findall(r"\b(\d)->(\d)\b", text)
    assert mistakes and all(a != b for a, b in mistakes)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "digits.png not written: matplotlib is not installed" in text
    else:
        assert Path(out / "digits.png").stat().st_size > 1000

"""The demo (``python -m minitensor.demo``): the CI run clears its bar, and its parts do what they say."""

from __future__ import annotations

import doctest
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt
from minitensor.demo import display, model, run, task
from minitensor.demo.display import ProgressBar, text_heatmap
from minitensor.demo.model import RepeatDetector, sinusoidal_positions
from minitensor.demo.task import as_text, make_batch, sequence_ids

ROOT = Path(__file__).resolve().parents[1]


def _demo(*flags: str, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "minitensor.demo", *flags, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
    )


def _percent(pattern: str, text: str) -> float:
    match = re.search(pattern, text)
    assert match, f"no line matching {pattern!r} in:\n{text}"
    return float(match.group(1))


# ------------------------------------------------------------ the whole run
@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path_factory.mktemp("demo_out")
    return _demo("--quick", "--seed", "0", out=out), out


def test_quick_run_clears_its_bar(quick_run) -> None:
    result, _ = quick_run
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    accuracy = _percent(r"held-out accuracy: ([0-9.]+)% on 1000 unseen sequences", result.stdout)
    assert accuracy >= 100 * run.QUICK["bar"]
    assert "PASS" in result.stdout


def test_quick_run_reloads_the_checkpoint_with_the_same_accuracy(quick_run) -> None:
    result, out = quick_run
    accuracy = _percent(r"held-out accuracy: ([0-9.]+)%", result.stdout)
    reloaded = _percent(r"reloaded into a fresh model: held-out accuracy ([0-9.]+)%", result.stdout)
    assert reloaded == accuracy
    checkpoint = mt.load(out / "checkpoint.pt")
    assert set(checkpoint) == {"model", "optimizer", "config"}
    assert "encoder.layers.0.self_attn.in_proj_weight" in checkpoint["model"]
    assert checkpoint["optimizer"]["state"], "the optimizer state (Adam's moments) was not saved"


def test_quick_run_prints_the_attention_heatmap(quick_run) -> None:
    lines = quick_run[0].stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("The layer 1 attention"))
    tokens = lines[start].split(" on ")[-1].split()
    assert len(tokens) == task.LENGTH and len(set(tokens)) < len(tokens)  # the example repeats a letter
    header, rows = lines[start + 3], lines[start + 4 : start + 4 + task.LENGTH]
    assert header.split() == tokens
    assert [row.split()[0] for row in rows] == tokens
    cells = "".join(row[5:] for row in rows)
    assert "@@" in cells and set(cells) <= set(display.SHADES)


def test_run_below_the_bar_exits_nonzero_and_never_needs_torch(tmp_path: Path) -> None:
    block_torch = "import sys; sys.modules['torch'] = None; from minitensor.demo.run import main; sys.exit(main())"
    result = subprocess.run(
        [sys.executable, "-c", block_torch, "--quick", "--steps", "3", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert result.returncode == 1, result.stdout + result.stderr  # 3 steps cannot reach the bar
    assert "FAIL" in result.stdout and "Traceback" not in result.stderr


def test_without_out_nothing_is_left_behind_and_the_output_says_how_to_keep_it(tmp_path: Path) -> None:
    """No --out: the checkpoint round trip runs in a temporary folder that is removed at the end
    (here a short run that misses the bar: removed on failure too), and the output names --out."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # where tempfile makes its folders
    result = subprocess.run(
        [sys.executable, "-m", "minitensor.demo", "--quick", "--steps", "3"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=env,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    saved = re.search(r"checkpoint \(model \+ optimizer state\) saved to (\S+)", result.stdout)
    assert saved and Path(saved.group(1)).parent.parent == tmp_path  # it was in a temporary folder ...
    assert list(tmp_path.iterdir()) == []  # ... which is gone
    assert "removed at the end: pass --out DIR to keep the checkpoint and attention.png" in result.stdout
    assert "Traceback" not in result.stderr


def _attention_of_a_small_model(out_dir: Path | None, capsys) -> str:
    mt.manual_seed(0)
    net = RepeatDetector(vocab_size=task.VOCAB_SIZE, max_len=task.LENGTH, d_model=8, num_layers=1)
    tokens, labels = make_batch(np.random.default_rng(0), 16)
    run.show_attention(net, tokens[np.flatnonzero(labels)[0]], out_dir)
    return capsys.readouterr().out


def test_without_matplotlib_the_png_is_skipped_with_a_reason(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    out = _attention_of_a_small_model(tmp_path, capsys)
    assert "attention.png not written: matplotlib is not installed" in out
    assert not (tmp_path / "attention.png").exists()


def test_with_matplotlib_and_out_the_png_is_written(tmp_path: Path, capsys) -> None:
    pytest.importorskip("matplotlib")
    out = _attention_of_a_small_model(tmp_path, capsys)
    assert f"attention map written to {tmp_path / 'attention.png'}" in out
    assert (tmp_path / "attention.png").stat().st_size > 0


def test_without_out_no_png_is_attempted(capsys) -> None:
    out = _attention_of_a_small_model(None, capsys)
    assert "The layer 1 attention" in out and "attention.png" not in out and "attention map written" not in out


def test_flags() -> None:
    args = run.parse_args(["--quick"])
    assert (args.steps, args.lr, args.bar) == (run.QUICK["steps"], run.QUICK["lr"], run.QUICK["bar"])
    args = run.parse_args(["--steps", "7", "--d-model", "16", "--layers", "3", "--norm-first"])
    assert (args.steps, args.lr, args.bar, args.d_model, args.layers, args.norm_first) == (
        7, run.FULL["lr"], run.FULL["bar"], 16, 3, True
    )  # fmt: skip
    for bad in (["--d-model", "30"], ["--steps", "0"], ["--layers", "0"]):
        with pytest.raises(SystemExit):
            run.parse_args(bad)


# ------------------------------------------------------------ the data
def test_labels_say_whether_a_token_repeats() -> None:
    tokens, labels = make_batch(np.random.default_rng(1), 2000)
    assert tokens.shape == (2000, task.LENGTH) and tokens.dtype == np.int64 and labels.dtype == np.int64
    assert tokens.min() >= 0 and tokens.max() < task.VOCAB_SIZE
    distinct = np.array([len(set(row)) for row in tokens.tolist()])
    np.testing.assert_array_equal(labels, distinct < task.LENGTH)
    # Label 1 is exactly one repeated pair: the hardest case to spot.
    assert np.all(distinct[labels == 1] == task.LENGTH - 1)
    assert 0.45 < labels.mean() < 0.55


def test_make_batch_is_deterministic_and_checks_its_sizes() -> None:
    a, b = make_batch(np.random.default_rng(5), 50, length=5, vocab_size=6)
    c, d = make_batch(np.random.default_rng(5), 50, length=5, vocab_size=6)
    assert np.array_equal(a, c) and np.array_equal(b, d) and a.shape == (50, 5)
    with pytest.raises(ValueError, match="length=9, vocab_size=8"):
        make_batch(np.random.default_rng(0), 4, length=9, vocab_size=8)


def test_sequence_ids_tell_sequences_apart() -> None:
    tokens, _ = make_batch(np.random.default_rng(2), 3000)
    ids = sequence_ids(tokens)
    assert len(np.unique(ids)) == len({tuple(row) for row in tokens.tolist()})
    assert sequence_ids(np.array([[1, 2, 0]]), vocab_size=10).tolist() == [21]
    assert as_text(np.array([0, 2, 9])) == "A C J"


# ------------------------------------------------------------ the model and the display
@pytest.mark.parametrize("norm_first", [False, True])
def test_attention_maps_are_each_layers_attention(norm_first: bool) -> None:
    """Recompute every layer's head-averaged softmax(Q Kᵀ / sqrt(d)) from the packed weights."""
    mt.manual_seed(0)
    net = RepeatDetector(vocab_size=10, max_len=8, d_model=16, nhead=4, num_layers=2, norm_first=norm_first)
    tokens = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    maps = net.attention_maps(tokens)
    assert maps.shape == (2, 8, 8)
    np.testing.assert_allclose(maps.sum(-1), 1.0, atol=1e-5)
    with mt.no_grad():
        x = net.embed(tokens[None])
        for layer, got in zip(net.encoder.layers, maps):
            y = (layer.norm1(x) if norm_first else x).numpy()[0]  # (L, E)
            attn = layer.self_attn
            q, k, _ = np.split(y @ attn.in_proj_weight.numpy().T + attn.in_proj_bias.numpy(), 3, axis=-1)
            heads = [slice(h * 4, (h + 1) * 4) for h in range(4)]
            scores = np.stack([q[:, s] @ k[:, s].T / 2.0 for s in heads])  # (H, L, L), sqrt(d_head) = 2
            probs = np.exp(scores - scores.max(-1, keepdims=True))
            probs /= probs.sum(-1, keepdims=True)
            np.testing.assert_allclose(got, probs.mean(0), atol=1e-5)
            x = layer(x)


def test_model_shapes_and_positions() -> None:
    mt.manual_seed(0)
    net = RepeatDetector(vocab_size=10, max_len=8, d_model=8, num_layers=1)
    assert net(np.zeros((3, 6), dtype=np.int64)).shape == (3, 2)  # shorter sequences use the first rows
    assert "positions" not in net.state_dict()  # a fixed table, rebuilt rather than saved
    table = sinusoidal_positions(4, 6)
    assert table.dtype == np.float32 and table.shape == (4, 6)
    np.testing.assert_allclose(table[0], [0, 1, 0, 1, 0, 1])
    np.testing.assert_allclose(table[3, :2], [np.sin(3.0), np.cos(3.0)], rtol=1e-6)
    with pytest.raises(ValueError, match="even"):
        sinusoidal_positions(4, 5)


def test_text_heatmap() -> None:
    weights = np.array([[0.0, 0.9, 0.1], [0.45, 0.45, 0.1], [0.3, 0.3, 0.4]])
    lines = text_heatmap(weights, ["A", "B", "A"]).splitlines()
    assert lines[0].split() == ["A", "B", "A"]
    assert lines[1] == "    A    @@ .."  # 0 is blank, the largest weight is @@
    assert lines[2].split() == ["B", "==", "==", ".."]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_redraws_on_a_terminal_and_prints_lines_elsewhere() -> None:
    log = io.StringIO()
    bar = ProgressBar(total=30, stream=log)
    for step in range(1, 31):
        bar.update(step, loss=1.0 / step, accuracy=step / 30)
    lines = log.getvalue().splitlines()
    assert len(lines) == 10 and "\r" not in log.getvalue()  # one line every 3 steps
    assert lines[-1].startswith("[" + "#" * 24 + "]   30/30") and lines[-1].endswith("acc 100.0%")

    terminal = _Terminal()
    bar = ProgressBar(total=30, stream=terminal)
    for step in range(1, 31):
        bar.update(step, loss=0.5, accuracy=0.5)
    text = terminal.getvalue()
    assert text.count("\r") == 30 and text.count("\n") == 1 and text.endswith("acc  50.0%\n")


@pytest.mark.parametrize("module", [task, model, display], ids=lambda m: m.__name__)
def test_docstring_examples(module) -> None:
    result = doctest.testmod(module, extraglobs={"np": np, "mt": mt})
    assert result.attempted > 0 and result.failed == 0

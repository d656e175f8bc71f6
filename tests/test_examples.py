"""Every script in examples/ runs to completion; the quickstart and seq2seq examples print what they promise."""

from __future__ import annotations

import functools
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import GradcheckError

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# The flags that keep an example fast here (and in CI); an example not listed runs without arguments.
QUICK_FLAGS = {"seq2seq_reverse.py": ("--quick",)}


@functools.cache
def _run(script: Path, args: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Run an example once per test session (several tests read the same output)."""
    return subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, timeout=120, cwd=script.parent.parent
    )


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name.removesuffix(".py"), EXAMPLES / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("script", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.name)
def test_example_exits_cleanly(script: Path) -> None:
    result = _run(script, QUICK_FLAGS.get(script.name, ()))
    assert result.returncode == 0, f"{script.name} exited with {result.returncode}:\n{result.stderr}"


def test_quick_flags_name_existing_examples() -> None:
    for name, flags in QUICK_FLAGS.items():
        assert (EXAMPLES / name).exists(), f"QUICK_FLAGS lists {name}, which is not in examples/"
        assert all(flag in (EXAMPLES / name).read_text() for flag in flags)


def test_quickstart_output() -> None:
    out = _run(EXAMPLES / "quickstart.py").stdout
    for name, shape in [("w1", "(2, 8)"), ("b1", "(8,)"), ("w2", "(8, 1)"), ("b2", "(1,)")]:
        assert f"d loss / d {name}  shape {shape}" in out
    assert "gradcheck (float64, all 4 parameters): passed" in out
    losses = [float(v) for v in re.findall(r"step +\d+ +loss ([0-9.]+)", out)]
    assert len(losses) == 4, out
    assert losses[-1] < 0.5 * losses[0], f"training did not reduce the loss: {losses}"
    probs = [float(v) for v in re.search(r"predictions .*: \[(.*)\]", out).group(1).split()]
    assert [round(p) for p in probs] == [0, 1, 1, 0], f"XOR not learned: {probs}"


def test_quickstart_returns_1_when_gradcheck_fails(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    quickstart = _load("quickstart.py")

    def failing_gradcheck(fn, inputs):
        raise GradcheckError("gradcheck failed for input 0 at element (0, 0)")

    monkeypatch.setattr(quickstart, "gradcheck", failing_gradcheck)
    assert quickstart.main() == 1
    assert "gradcheck FAILED: gradcheck failed for input 0" in capsys.readouterr().out


# ------------------------------------------------------------ seq2seq_reverse.py
def test_seq2seq_quick_output() -> None:
    out = _run(EXAMPLES / "seq2seq_reverse.py", ("--quick",)).stdout
    losses = [float(v) for v in re.findall(r"step +\d+/30 +loss ([0-9.]+)", out)]
    assert len(losses) == 10 and losses[-1] < losses[0], out
    token_acc, seq_acc = (
        float(v) for v in re.search(r"token accuracy ([0-9.]+)%, whole sequences right ([0-9.]+)%", out).groups()
    )
    assert 0 <= seq_acc <= token_acc <= 100
    assert len(re.findall(r"^  [0-9 ]+ +->  ", out, re.M)) == 3  # three examples shown


def test_seq2seq_batches_are_padded_reversals() -> None:
    s2s = _load("seq2seq_reverse.py")
    src, tgt_in, tgt = s2s.make_batch(np.random.default_rng(0), 200)
    assert src.shape == (200, s2s.MAX_LEN) and tgt.shape == tgt_in.shape == (200, s2s.MAX_LEN + 1)
    for s, t_in, t in zip(src, tgt_in, tgt):
        n = int(np.sum(s != s2s.PAD))
        assert s2s.MIN_LEN <= n <= s2s.MAX_LEN and np.all(s[:n] < 10) and np.all(s[n:] == s2s.PAD)
        assert np.array_equal(t[:n], s[:n][::-1]) and t[n] == s2s.END and np.all(t[n + 1 :] == s2s.PAD)
        assert t_in[0] == s2s.START and np.array_equal(t_in[1:], t[:-1])  # shifted right: teacher forcing


def test_seq2seq_accuracy_counts_only_real_target_positions() -> None:
    s2s = _load("seq2seq_reverse.py")
    src, _, tgt = s2s.make_batch(np.random.default_rng(1), 4)

    class Perfect:  # a stand-in model that answers with the target, garbage after END
        def eval(self):
            return self

        def greedy_decode(self, src):
            return np.where(tgt == s2s.PAD, 7, tgt)

    assert s2s.evaluate(Perfect(), src, tgt) == (1.0, 1.0)
    Perfect.greedy_decode = lambda self, src: np.where(np.arange(tgt.shape[1]) == 0, (tgt + 1) % 10, tgt)
    token_acc, seq_acc = s2s.evaluate(Perfect(), src, tgt)  # the first digit of every row is wrong
    assert seq_acc == 0.0 and token_acc == pytest.approx(1 - 4 / np.sum(tgt != s2s.PAD))


def test_seq2seq_greedy_decode_stops_when_every_row_has_ended() -> None:
    s2s = _load("seq2seq_reverse.py")
    mt.manual_seed(0)
    model = s2s.Reverser(d_model=16, nhead=2, num_layers=1).eval()
    src, _, _ = s2s.make_batch(np.random.default_rng(2), 3)
    assert model.greedy_decode(src).shape == (3, s2s.MAX_LEN + 1)
    model.out.bias.numpy()[s2s.END] = 1e4  # now END always wins: one step, then PAD
    expected = np.full((3, s2s.MAX_LEN + 1), s2s.PAD)
    expected[:, 0] = s2s.END
    assert np.array_equal(model.greedy_decode(src), expected)

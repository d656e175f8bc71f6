"""The minitensor versions of the seed code (examples/seeds/) run and print the promised shapes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SEEDS = Path(__file__).resolve().parents[1] / "examples" / "seeds"

EXPECTED = {
    "encoder_layer_from_parts.py": [
        "input shape: (2, 10, 64)",
        "output shape (training): (2, 10, 64)",
        "output shape (inference): (2, 10, 64)",
        "nn.TransformerEncoderLayer output shape: (2, 10, 64)",
    ],
    "keras_encoder_layer.py": [
        "Input shape: (64, 50, 512)",
        "Output shape (inference): (64, 50, 512)",
        "Output shape (training): (64, 50, 512)",
        "{'name': 'my_encoder_layer', 'd_model': 512, 'num_heads': 8, 'dff': 2048, 'dropout_rate': 0.1}",
    ],
    "haiku_encoder.py": [
        "Out (2, 12, 64)",
        "Encoder out (2, 12, 64)",
        "nn.TransformerEncoder out (2, 12, 64) finite: True",
    ],
    "encoder_decoder.py": [
        "encoder output shape: (2, 10, 64)",
        "decoder output shape: (2, 7, 64)",
        "probabilities shape: (2, 7, 1000)",
        "probabilities sum to 1: True",
        "nn.Transformer output shape: (2, 7, 64)",
    ],
    "lucid_examples.py": [
        "Post-LN output shape: (20, 4, 512)",
        "Pre-LN output shape: (2, 15, 256)",
        "eval mode, dropouts training: [False, False, False]",
    ],
}


def test_every_seed_script_is_checked() -> None:
    assert sorted(p.name for p in SEEDS.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_seed_script(script: str) -> None:
    result = subprocess.run(
        [sys.executable, str(SEEDS / script)], capture_output=True, text=True, timeout=120, cwd=SEEDS.parents[1]
    )
    assert result.returncode == 0, f"{script} exited with {result.returncode}:\n{result.stderr}"
    lines = result.stdout.splitlines()
    for expected in EXPECTED[script]:
        assert expected in lines, f"{script} did not print {expected!r}; it printed:\n{result.stdout}"


def test_hand_made_layer_equals_the_library_layer() -> None:
    result = subprocess.run(
        [sys.executable, str(SEEDS / "encoder_layer_from_parts.py")], capture_output=True, text=True, timeout=120
    )
    line = next(x for x in result.stdout.splitlines() if x.startswith("max difference"))
    assert float(line.rsplit(" ", 1)[1]) < 1e-5, line

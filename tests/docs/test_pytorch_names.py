"""docs/pytorch_ops.md's generated section (what exists against PyTorch, what the switch refuses) is
what scripts/pytorch_names.py prints from the code today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "pytorch_names.py"


def test_the_generated_section_is_current() -> None:
    pytest.importorskip("torch")  # (PyTorch's names are the other side of the comparison)
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, cwd=ROOT, check=True)
    doc = (ROOT / "docs" / "pytorch_ops.md").read_text()
    assert done.stdout in doc, "docs/pytorch_ops.md is stale: run python scripts/pytorch_names.py --write"
    assert "| `torch.nn.functional` |" in done.stdout and "| `torch.fft` | refused on import" in done.stdout

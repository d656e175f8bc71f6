"""Fixtures of the pretrained tests: a tiny model directory (see ``tiny_bert_files.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_bert_files import write_model_dir


@pytest.fixture
def tiny_dir(tmp_path: Path) -> Path:
    """A fresh tiny model directory (tests may damage it)."""
    return write_model_dir(tmp_path / "tiny-bert")

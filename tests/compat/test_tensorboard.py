"""``torch.utils.tensorboard`` under the switch: ``SummaryWriter``'s scalars land in TensorBoard's own
event files (read back with TensorBoard's reader), the writer refuses what it does not write, and
without the tensorboard package the import fails as PyTorch's does."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(body))
    return path


def test_summary_writer_scalars_read_back_by_tensorboard(tmp_path: Path, run_python) -> None:
    pytest.importorskip("tensorboard")
    path = _script(
        tmp_path,
        """
        import torch
        from torch.utils.tensorboard import SummaryWriter

        with SummaryWriter(log_dir="logs") as writer:
            for step in range(3):
                loss = torch.tensor(1.0 / (step + 1))
                writer.add_scalar("Loss/train", loss.item(), step)
                writer.add_scalar("Loss/test", loss * 2, step)  # a one-element tensor
            writer.add_scalars("lr", {"a": 0.1, "b": 0.2}, 5)
            assert writer.get_logdir() == "logs"
            try:
                writer.add_image("img", torch.zeros(3, 2, 2))
            except NotImplementedError as e:
                print("refused:", "add_image" in str(e))
        """,
    )
    out = run_python(["-m", "minitensor.compat", str(path)], cwd=tmp_path).stdout
    assert out.strip() == "refused: True"
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "logs"))
    events.Reload()
    train = [(e.step, e.value) for e in events.Scalars("Loss/train")]
    test = [(e.step, e.value) for e in events.Scalars("Loss/test")]
    assert train == [(0, 1.0), (1, 0.5), (2, pytest.approx(1 / 3))]
    assert test == [(0, 2.0), (1, 1.0), (2, pytest.approx(2 / 3))]
    for tag, value in (("a", 0.1), ("b", 0.2)):
        run = EventAccumulator(str(tmp_path / "logs" / f"lr_{tag}"))
        run.Reload()
        assert [(e.step, e.value) for e in run.Scalars("lr")] == [(5, pytest.approx(value))]


def test_without_the_tensorboard_package_the_import_fails_as_pytorch(tmp_path: Path, run_python) -> None:
    path = _script(
        tmp_path,
        """
        import sys
        sys.modules["tensorboard"] = None  # as if it were not installed
        import torch
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ModuleNotFoundError as e:
            print("missing:", e.name)
        """,
    )
    out = run_python(["-m", "minitensor.compat", str(path)], cwd=tmp_path).stdout
    assert out.strip() == "missing: tensorboard"

"""Every script in examples/ runs to completion; the quickstart prints what it promises."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from minitensor.autograd import GradcheckError

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _run(script: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=script.parent.parent
    )


@pytest.mark.parametrize("script", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.name)
def test_example_exits_cleanly(script: Path) -> None:
    result = _run(script)
    assert result.returncode == 0, f"{script.name} exited with {result.returncode}:\n{result.stderr}"


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
    spec = importlib.util.spec_from_file_location("quickstart", EXAMPLES / "quickstart.py")
    quickstart = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(quickstart)

    def failing_gradcheck(fn, inputs):
        raise GradcheckError("gradcheck failed for input 0 at element (0, 0)")

    monkeypatch.setattr(quickstart, "gradcheck", failing_gradcheck)
    assert quickstart.main() == 1
    assert "gradcheck FAILED: gradcheck failed for input 0" in capsys.readouterr().out

"""README.md says what happens: its demo transcript is what the demo prints now, and the
quick start's hand-derived gradient holds for any batch size, not only the one shown."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from minitensor.demo.display import SHADES

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TRANSCRIPT_INTRO = "The output of `python -m minitensor.demo --quick`"

_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)  # as in test_docs.py
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_TIME = re.compile(r"\d+(?:\.\d+)? s\b")
_PATH = re.compile(r"(?<!\w)/\S+")
_HEATMAP_ROW = re.compile(r"^ {4}(\S) (.*)$")


def readme_transcript() -> list:
    """The lines of the ```text block that follows the transcript's introduction."""
    start = README.index(TRANSCRIPT_INTRO)
    block = next(m for m in _FENCE.finditer(README) if m.start() > start)
    assert block.group(1).strip() == "text"
    return block.group(2).splitlines()


def _normal(line: str) -> str:
    """The line with timings and paths made neutral (they change from run to run)."""
    return _PATH.sub("<path>", _TIME.sub("<t> s", line.rstrip()))


def _close(shown: str, printed: str) -> bool:
    """Same text; integers equal; decimals within float32 training noise (a few hundredths)."""
    shown, printed = _normal(shown), _normal(printed)
    if _NUMBER.sub("#", shown) != _NUMBER.sub("#", printed):
        return False
    for a, b in zip(_NUMBER.findall(shown), _NUMBER.findall(printed)):
        if "." not in a:
            if a != b:
                return False
        elif abs(float(a) - float(b)) > max(0.02, 0.01 * abs(float(a))):
            return False
    return True


def _same_heatmap_row(shown: str, printed: str) -> bool:
    """Same row label and the same picture: each cell at most three shades apart and the row's cells on
    average at most half a shade.  A weight near a shade's boundary may round either way, and on another
    CPU (other vector widths in NumPy's and numba's loops) 150 float32 training steps end a few last bits
    apart: on an AVX2 AMD EPYC against the AVX-512 Xeon the transcript was made on, one cell of 64 three
    shades, one two, eight one (row means <= 0.375)."""
    a, b = _HEATMAP_ROW.match(shown.rstrip()), _HEATMAP_ROW.match(printed.rstrip())
    if not (a and b) or a.group(1) != b.group(1):
        return False
    width = max(len(a.group(2)), len(b.group(2)))
    cells_a, cells_b = a.group(2).ljust(width), b.group(2).ljust(width)
    apart = []
    for i in range(0, width, 3):
        x, y = cells_a[i], cells_b[i]
        if x not in SHADES or y not in SHADES:
            return False
        apart.append(abs(SHADES.index(x) - SHADES.index(y)))
    return max(apart) <= 3 and sum(apart) <= len(apart) / 2


def missing_lines(shown: list, printed: list) -> list:
    """The shown (non-blank) lines not found, in order, among the printed lines; printed lines
    the README leaves out (progress lines it trims, notes added later) are allowed."""
    missing, position = [], 0
    for line in filter(str.strip, shown):
        for i in range(position, len(printed)):
            if _close(line, printed[i]) or _same_heatmap_row(line, printed[i]):
                position = i + 1
                break
        else:
            missing.append(line)
    return missing


def test_the_readme_transcript_is_what_the_quick_demo_prints(tmp_path: Path) -> None:
    # On 2 BLAS threads, as the transcript was made: OpenBLAS's last bits depend on its thread count, and
    # the thread policy would lower it whenever another process (another test worker) is busy.  On the
    # compiled kernels from the first step (JIT_WAIT), as the transcript was made: without it the run
    # starts on the NumPy references and switches when the compiled kernels arrive, which depends on
    # the cache and the load, and the reference kernels' last bits differ (the heatmap by two shades).
    env = {**os.environ, "MINITENSOR_THREAD_POLICY": "0", "OPENBLAS_NUM_THREADS": "2", "MINITENSOR_JIT_WAIT": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "minitensor.demo", "--quick", "--seed", "0", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    shown = readme_transcript()
    assert len(shown) >= 20 and any("held-out accuracy" in line for line in shown)
    missing = missing_lines(shown, result.stdout.splitlines())
    assert not missing, "README lines the demo does not print:\n" + "\n".join(missing) + "\n\n" + result.stdout


def test_the_transcript_comparison_can_fail() -> None:
    printed = ["trained in 3.1 s", "held-out accuracy: 99.30% (bar: 80%)", "    G ..    %% ## .. .."]
    assert (
        missing_lines(["trained in 12.0 s", "held-out accuracy: 99.31% (bar: 80%)", "    G ::    %% ## .. .."], printed)
        == []
    )
    assert missing_lines(["    G ..    %% ** .. .."], printed) == []  # one cell three shades apart
    assert missing_lines(["held-out accuracy: 97.30% (bar: 80%)"], printed)  # a different result
    assert missing_lines(["held-out accuracy: 99.30% (bar: 98%)"], printed)  # a different integer
    assert missing_lines(["    G @@    %% ## .. .."], printed)  # a cell four shades apart
    assert missing_lines(["    G :: .. @@ %% :: ::"], printed)  # every cell a shade apart: another picture
    assert missing_lines(["trained in 3.1 s", "held-out accuracy: 99.30% (bar: 80%)"][::-1], printed)  # order


def test_the_quick_start_gradient_by_hand_holds_for_any_batch_size() -> None:
    """The README computes d mean(y^2)/dw by hand for a batch of N = 2; with N = 3 a formula that
    left out the factor 2/N would fail."""
    blocks = [m.group(2) for m in _FENCE.finditer(README) if m.group(1).strip() == "python"]
    source = next(code for code in blocks if "by hand" in code)
    x_line = "x = mt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)"
    assert x_line in source
    three_rows = source.replace(x_line, "x = mt.tensor([[1.0, 2.0], [3.0, 4.0], [0.5, -1.0]], requires_grad=True)")
    namespace = {"__name__": "readme_quick_start"}
    exec(compile(three_rows, "README.md (quick start, N = 3)", "exec"), namespace)
    x, y = (namespace[name].numpy() for name in ("x", "y"))
    assert y.shape == (3, 1)
    np.testing.assert_allclose(namespace["w"].grad.numpy(), x.T @ (2 / 3 * y * (1 - y**2)), rtol=1e-5)
